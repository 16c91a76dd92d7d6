package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/awslabs/goformation/v7/cloudformation"
	"go.yaml.in/yaml/v3"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/app"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/obs"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/retrieval"
)

// functionsOf maps each function's logical id in template.yaml to the function in the code,
// whose routes api's route tables declare.
var functionsOf = map[string]api.Function{
	"LookupFunction": api.FunctionLookup, "StatusFunction": api.FunctionStatus, "SyncFunction": api.FunctionSync,
}

// dynamoActions are the only table actions each function may use: the store calls it makes.
var dynamoActions = map[string][]string{
	"LookupFunction": {"dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem"},
	"StatusFunction": {"dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem"},
	"SyncFunction":   {"dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"},
}

func openTemplate(t *testing.T, overrides map[string]any) *cloudformation.Template {
	t.Helper()
	root, err := ddblocal.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := ddblocal.OpenTemplate(filepath.Join(root, "template.yaml"), overrides)
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// catchAllPath is the path of the catch-all routes: every path the other routes do not take.
const catchAllPath = "/{proxy+}"

// catchAllMethods are the methods the catch-all routes take: every method of an HTTP API route
// but OPTIONS, which the gateway answers itself when CORS is on.
var catchAllMethods = []string{"DELETE", "GET", "HEAD", "PATCH", "POST", "PUT"}

// declared are the routes api's route tables give function, "METHOD /path" as the template
// writes them, with the scopes of each and the public ones.
func declared(function api.Function) (routes []string, scopes map[string][]string, public []string) {
	scopes = map[string][]string{}
	for _, r := range api.Routes(function) {
		key := r.Method + " " + r.Path
		routes = append(routes, key)
		scopes[key] = r.Scopes
		if r.Public {
			public = append(public, key)
		}
	}
	return routes, scopes, public
}

// TestTemplateRoutesMatchTheHandlers keeps each function's HttpApi routes and the routes api's
// route tables declare for it the same, with the catch-all routes on one function, and the
// schedule on the function the declaration says it invokes. The app's handler of each function
// (the services its main wires, served as the declaration says) serves every declared route.
func TestTemplateRoutesMatchTheHandlers(t *testing.T) {
	tpl := openTemplate(t, nil)
	def, _ := config.FromEnv(func(string) string { return "" })
	a, err := app.New(context.Background(), def, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\{[a-z_]+\}`)
	catchAll := map[string][]string{} // function: methods
	for logicalID, function := range functionsOf {
		f, err := tpl.GetServerlessFunctionWithName(logicalID)
		if err != nil {
			t.Fatal(err)
		}
		var routes []string
		scheduled := false
		for _, ev := range f.Events {
			if ev.Type == "Schedule" {
				scheduled = true
			}
			if ev.Type != "HttpApi" {
				continue
			}
			h := ev.Properties.HttpApiEvent
			if h.Method == nil || h.Path == nil {
				t.Fatalf("%s: HttpApi event without method or path", logicalID)
			}
			if *h.Path == catchAllPath {
				catchAll[logicalID] = append(catchAll[logicalID], *h.Method)
				continue
			}
			routes = append(routes, *h.Method+" "+*h.Path)
		}
		want, _, _ := declared(function)
		if len(want) == 0 || !equalSets(routes, want) {
			t.Errorf("%s: template routes %v, the routes declared for %s %v", logicalID, routes, function, want)
		}
		var anonymous []string
		for _, r := range want {
			anonymous = append(anonymous, param.ReplaceAllString(r, "{}"))
		}
		if served := a.FunctionHandler(function).Routes(); !equalSets(served, anonymous) {
			t.Errorf("%s: app.FunctionHandler serves %v, the declared routes are %v", logicalID, served, anonymous)
		}
		if function.Scheduled() != scheduled {
			t.Errorf("%s: a Schedule event %v, %s declared scheduled %v", logicalID, scheduled, function, function.Scheduled())
		}
		if md, _ := f.AWSCloudFormationMetadata["BuildMethod"].(string); md != "makefile" {
			t.Errorf("%s: BuildMethod %q, want makefile", logicalID, md)
		}
		if f.Timeout == nil || *f.Timeout < 5 {
			t.Errorf("%s: no explicit timeout", logicalID)
		}
	}
	// One function takes every method but OPTIONS on every other path: a wrong method or path
	// gets the contract's 405 or 404, not the gateway's bare 404.
	methods := catchAll["LookupFunction"]
	slices.Sort(methods)
	if len(catchAll) != 1 || !slices.Equal(methods, catchAllMethods) {
		t.Errorf("catch-all routes %v, want %v on LookupFunction alone", catchAll, catchAllMethods)
	}
}

func TestTemplateGlobalsAndBuildTargets(t *testing.T) {
	tpl := openTemplate(t, nil)
	raw, _ := json.Marshal(tpl.Globals["Function"])
	var g struct {
		Runtime, Handler, Tracing string
		Architectures             []string
		Environment               struct{ Variables map[string]string }
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if g.Runtime != "provided.al2023" || g.Handler != "bootstrap" || !slices.Equal(g.Architectures, []string{"arm64"}) || g.Tracing != "Active" {
		t.Errorf("globals %+v", g)
	}
	// Every variable the template sets is one the configuration reads.
	def, _ := config.FromEnv(func(string) string { return "" })
	for name := range g.Environment.Variables {
		got, _ := config.FromEnv(func(k string) string {
			if k == name {
				return "7"
			}
			return ""
		})
		if got == def {
			t.Errorf("template sets %s, which the configuration does not read", name)
		}
	}
	root, _ := ddblocal.RepoRoot()
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for logicalID := range functionsOf {
		if !strings.Contains(string(mk), "build-"+logicalID) {
			t.Errorf("Makefile has no build-%s target for sam build", logicalID)
		}
	}
	for _, out := range []string{"ApiUrl", "TableName"} {
		if _, ok := tpl.Outputs[out]; !ok {
			t.Errorf("no output %s", out)
		}
	}
}

// statements returns each IAM statement of a function's policies as (actions, resource).
func statements(t *testing.T, tpl *cloudformation.Template, logicalID string) (actions []string, resources []string) {
	t.Helper()
	f, err := tpl.GetServerlessFunctionWithName(logicalID)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(f.Policies)
	var policies []struct {
		Statement []struct {
			Effect   string
			Action   any
			Resource any
		}
	}
	if err := json.Unmarshal(raw, &policies); err != nil {
		t.Fatalf("%s: policies are not IAM statements: %s", logicalID, raw)
	}
	for _, p := range policies {
		for _, s := range p.Statement {
			if s.Effect != "Allow" {
				t.Errorf("%s: effect %q", logicalID, s.Effect)
			}
			switch a := s.Action.(type) {
			case string:
				actions = append(actions, a)
			case []any:
				for _, x := range a {
					actions = append(actions, x.(string))
				}
			}
			r, _ := json.Marshal(s.Resource)
			resources = append(resources, string(r))
		}
	}
	slices.Sort(actions)
	return actions, resources
}

func TestTemplateLeastPrivilege(t *testing.T) {
	// Without a token parameter (the demo provider): table actions only, each function its own.
	tpl := openTemplate(t, nil)
	for logicalID, want := range dynamoActions {
		got, _ := statements(t, tpl, logicalID)
		if !slices.Equal(got, want) {
			t.Errorf("%s: actions %v, want %v", logicalID, got, want)
		}
	}
	// With one: each function may also read exactly that parameter, nothing more.
	tpl = openTemplate(t, map[string]any{"RagcoreTokenParameter": "/mobilityops/ragcore-token", "KnowledgeProvider": "ragcore"})
	for logicalID, want := range dynamoActions {
		got, resources := statements(t, tpl, logicalID)
		want = append(slices.Clone(want), "ssm:GetParameter")
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s with a token parameter: actions %v, want %v", logicalID, got, want)
		}
		if !strings.Contains(strings.Join(resources, " "), ":parameter/mobilityops/ragcore-token") {
			t.Errorf("%s: the SSM statement does not name the parameter: %v", logicalID, resources)
		}
		for _, a := range got {
			if strings.Contains(a, "*") || strings.HasPrefix(a, "bedrock:") {
				t.Errorf("%s: action %s", logicalID, a)
			}
		}
	}
}

// TestTemplateTableAndSchedule checks the table (TTL, on-demand, point-in-time recovery) is the
// one the integration tests create, and the schedule.
func TestTemplateTableAndSchedule(t *testing.T) {
	tpl := openTemplate(t, nil)
	tb, err := tpl.GetDynamoDBTableWithName(ddblocal.TableLogicalID)
	if err != nil {
		t.Fatal(err)
	}
	if tb.BillingMode == nil || *tb.BillingMode != "PAY_PER_REQUEST" || tb.TimeToLiveSpecification == nil ||
		!tb.TimeToLiveSpecification.Enabled || tb.PointInTimeRecoverySpecification == nil ||
		tb.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled == nil || !*tb.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled {
		t.Errorf("table %+v", tb)
	}
	root, _ := ddblocal.RepoRoot()
	def, err := ddblocal.TableFromTemplate(filepath.Join(root, "template.yaml"), ddblocal.TableLogicalID, "t")
	if err != nil {
		t.Fatal(err)
	}
	if def.TTLAttribute != "expires_at" || len(def.Create.KeySchema) != 2 || *def.Create.KeySchema[0].AttributeName != "pk" ||
		*def.Create.KeySchema[1].AttributeName != "sk" || string(def.Create.BillingMode) != "PAY_PER_REQUEST" {
		t.Errorf("the integration tests' table %+v", def)
	}
	f, _ := tpl.GetServerlessFunctionWithName("SyncFunction")
	found := false
	for _, ev := range f.Events {
		if ev.Type == "Schedule" && ev.Properties.ScheduleEvent != nil && ev.Properties.ScheduleEvent.Schedule == "rate(5 minutes)" {
			found = true
		}
	}
	if !found {
		t.Error("SyncFunction has no rate(5 minutes) schedule")
	}
}

// TestSamconfigNamesTemplateParameters keeps the parameter overrides of samconfig.toml's
// environments to parameters the template has.
func TestSamconfigNamesTemplateParameters(t *testing.T) {
	tpl := openTemplate(t, nil)
	root, _ := ddblocal.RepoRoot()
	raw, err := os.ReadFile(filepath.Join(root, "samconfig.toml"))
	if err != nil {
		t.Fatal(err)
	}
	envs := 0
	for _, m := range regexp.MustCompile(`(?m)^parameter_overrides = "(.*)"$`).FindAllStringSubmatch(string(raw), -1) {
		envs++
		for _, kv := range strings.Fields(m[1]) {
			name, _, _ := strings.Cut(kv, "=")
			if _, ok := tpl.Parameters[name]; !ok {
				t.Errorf("samconfig.toml overrides %s, which template.yaml does not declare", name)
			}
		}
	}
	if envs < 2 || !strings.Contains(string(raw), "[prod.deploy.parameters]") {
		t.Errorf("samconfig.toml should configure default and prod deployments")
	}
}

// TestSidecarPermissionOnlyWhenOn: off (the default), no function may call Bedrock; on, the
// lookup function alone may call Retrieve on the one knowledge base.
func TestSidecarPermissionOnlyWhenOn(t *testing.T) {
	off := openTemplate(t, nil)
	for logicalID := range functionsOf {
		if got, _ := statements(t, off, logicalID); slices.ContainsFunc(got, func(a string) bool { return strings.HasPrefix(a, "bedrock:") }) {
			t.Errorf("sidecar off: %s may %v", logicalID, got)
		}
	}
	on := openTemplate(t, map[string]any{"SidecarEnabled": "true", "BedrockKnowledgeBaseId": "KB12345678"})
	for logicalID := range functionsOf {
		got, resources := statements(t, on, logicalID)
		has := slices.Contains(got, "bedrock:Retrieve")
		if has != (logicalID == "LookupFunction") {
			t.Errorf("sidecar on: %s actions %v", logicalID, got)
		}
		if has && !strings.Contains(strings.Join(resources, " "), ":knowledge-base/KB12345678") {
			t.Errorf("the Bedrock statement does not name the knowledge base: %v", resources)
		}
	}
}

// TestTemplateRulesRefuseStacksThatCannotStart: goformation does not model Rules, so they are
// read from the YAML itself.
func TestTemplateRulesRefuseStacksThatCannotStart(t *testing.T) {
	root, _ := ddblocal.RepoRoot()
	raw, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rules map[string]struct {
			Assertions []struct {
				AssertDescription string `yaml:"AssertDescription"`
			} `yaml:"Assertions"`
		} `yaml:"Rules"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"RagcoreNeedsUrlAndToken":   {"RagcoreBaseUrl", "RagcoreTokenParameter"},
		"SidecarNeedsKnowledgeBase": {"BedrockKnowledgeBaseId"},
	}
	for rule, params := range want {
		r, ok := doc.Rules[rule]
		if !ok || len(r.Assertions) != len(params) {
			t.Errorf("rule %s: %+v", rule, r)
			continue
		}
		for i, p := range params {
			if !strings.Contains(r.Assertions[i].AssertDescription, p) {
				t.Errorf("rule %s does not require %s", rule, p)
			}
		}
	}
}

// rawTemplate is template.yaml with its intrinsic functions unresolved, to check what refers to
// what ({"Ref": "LookupFunction"}), which goformation resolves to nothing.
func rawTemplate(t *testing.T) map[string]any {
	t.Helper()
	root, _ := ddblocal.RepoRoot()
	doc, err := ddblocal.RawTemplate(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// at walks a raw template by keys.
func at(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func asJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestTemplateRouteScopes: every route's AuthorizationScopes are the scopes its handler admits,
// so that the gateway refuses a token without them before a function runs; the catch-all
// routes, which serve only 404 and 405, admit any scope of the API and nothing else. The
// handler's public routes (GET /health) have no authorizer.
func TestTemplateRouteScopes(t *testing.T) {
	tpl := openTemplate(t, nil)
	def, _ := config.FromEnv(func(string) string { return "" })
	a, err := app.New(context.Background(), def, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for logicalID, function := range functionsOf {
		_, want, publicRoutes := declared(function)
		f, _ := tpl.GetServerlessFunctionWithName(logicalID)
		for name, ev := range f.Events {
			if ev.Type != "HttpApi" {
				continue
			}
			h := ev.Properties.HttpApiEvent
			var got []string
			route := *h.Method + " " + *h.Path
			public := slices.Contains(publicRoutes, route)
			if h.Auth != nil {
				got = h.Auth.AuthorizationScopes
				switch {
				case public && (h.Auth.Authorizer == nil || *h.Auth.Authorizer != "NONE"):
					t.Errorf("%s.%s: the public %s keeps the authorizer", logicalID, name, route)
				case !public && h.Auth.Authorizer != nil:
					t.Errorf("%s.%s: authorizer %q overrides the default JWT authorizer", logicalID, name, *h.Auth.Authorizer)
				}
			}
			switch {
			case public:
				if len(got) != 0 {
					t.Errorf("%s: the public %s has scopes %v", logicalID, route, got)
				}
			case *h.Path == catchAllPath:
				if !equalSets(got, []string{api.ScopeRead, api.ScopeSync, api.ScopeSyncReport, api.ScopeAdmin}) {
					t.Errorf("%s %s: catch-all scopes %v, want every scope of the API", logicalID, route, got)
				}
			case len(got) == 0 || !slices.Equal(got, want[route]):
				t.Errorf("%s %s: gateway scopes %v, handler scopes %v", logicalID, route, got, want[route])
			}
		}
	}
	// The contract's scopes, route by route.
	for route, scopes := range map[string][]string{
		"POST /api/v1/knowledge/lookup": {api.ScopeRead}, "POST /api/v1/knowledge/sync": {api.ScopeSync},
		"POST /api/v1/knowledge/sync-reports": {api.ScopeSyncReport}, "GET /api/v1/knowledge/health": {api.ScopeRead},
	} {
		if got := a.Handler.RouteScopes()[route]; !slices.Equal(got, scopes) {
			t.Errorf("%s: handler scopes %v, want %v", route, got, scopes)
		}
	}
}

func TestTemplateApiThrottlingAndAccessLogs(t *testing.T) {
	tpl := openTemplate(t, nil)
	h, err := tpl.GetServerlessHttpApiWithName("KnowledgeApi")
	if err != nil {
		t.Fatal(err)
	}
	rs := h.DefaultRouteSettings
	if rs == nil || rs.ThrottlingRateLimit == nil || *rs.ThrottlingRateLimit != 50 || rs.ThrottlingBurstLimit == nil || *rs.ThrottlingBurstLimit != 100 {
		t.Fatalf("default route throttling %+v", rs)
	}
	tuned := openTemplate(t, map[string]any{"ApiThrottlingRateLimit": 7, "ApiThrottlingBurstLimit": 9})
	if th, _ := tuned.GetServerlessHttpApiWithName("KnowledgeApi"); *th.DefaultRouteSettings.ThrottlingRateLimit != 7 || *th.DefaultRouteSettings.ThrottlingBurstLimit != 9 {
		t.Errorf("throttling is not the parameters: %+v", th.DefaultRouteSettings)
	}
	if h.AccessLogSetting == nil || h.AccessLogSetting.Format == nil {
		t.Fatal("no access log settings")
	}
	var format map[string]string
	if err := json.Unmarshal([]byte(*h.AccessLogSetting.Format), &format); err != nil {
		t.Fatalf("access log format is not JSON: %v", err)
	}
	for key, v := range map[string]string{"requestId": "$context.requestId", "routeKey": "$context.routeKey",
		"status": "$context.status", "integrationLatency": "$context.integrationLatency"} {
		if format[key] != v {
			t.Errorf("access log %s = %q, want %q", key, format[key], v)
		}
	}
	raw := rawTemplate(t)
	dest := at(raw, "Resources", "KnowledgeApi", "Properties", "AccessLogSettings", "DestinationArn")
	if d := asJSON(dest); d != `{"Fn::GetAtt":["ApiAccessLogGroup","Arn"]}` && d != `{"Fn::GetAtt":"ApiAccessLogGroup.Arn"}` {
		t.Errorf("access logs go to %s", asJSON(dest))
	}
	if lg, err := tpl.GetLogsLogGroupWithName("ApiAccessLogGroup"); err != nil || lg.RetentionInDays == nil || *lg.RetentionInDays != 30 {
		t.Errorf("access log group %+v %v", lg, err)
	}
}

func TestTemplateReservedConcurrency(t *testing.T) {
	for _, c := range []struct {
		value any
		want  int // 0: unreserved
	}{{nil, 0}, {"", 0}, {"0", 0}, {5, 5}} {
		o := map[string]any{}
		if c.value != nil {
			for _, p := range []string{"LookupReservedConcurrency", "StatusReservedConcurrency", "SyncReservedConcurrency"} {
				o[p] = c.value
			}
		}
		tpl := openTemplate(t, o)
		for logicalID := range functionsOf {
			f, _ := tpl.GetServerlessFunctionWithName(logicalID)
			got := 0
			if f.ReservedConcurrentExecutions != nil {
				got = *f.ReservedConcurrentExecutions
				if got == 0 {
					t.Errorf("%s: reserved concurrency 0 would stop the function", logicalID)
				}
			}
			if got != c.want {
				t.Errorf("%s with %v: reserved %d, want %d", logicalID, c.value, got, c.want)
			}
		}
	}
}

// TestTemplateLogGroups: each function logs to its own log group with the retention parameter,
// retained on deletion (failed traces wait there for replay).
func TestTemplateLogGroups(t *testing.T) {
	raw := rawTemplate(t)
	for _, days := range []int{30, 90} {
		tpl := openTemplate(t, map[string]any{"LogRetentionDays": days})
		for logicalID := range functionsOf {
			ref := at(raw, "Resources", logicalID, "Properties", "LoggingConfig", "LogGroup")
			group, _ := at(ref, "Ref").(string)
			lg, err := tpl.GetLogsLogGroupWithName(group)
			if err != nil {
				t.Fatalf("%s logs to %s: %v", logicalID, asJSON(ref), err)
			}
			if lg.RetentionInDays == nil || *lg.RetentionInDays != days || lg.AWSCloudFormationDeletionPolicy != "Retain" {
				t.Errorf("%s: log group %s retention %v, deletion policy %q; want %d days, Retain", logicalID, group, lg.RetentionInDays, lg.AWSCloudFormationDeletionPolicy, days)
			}
		}
	}
	if d := at(raw, "Parameters", "LogRetentionDays", "Default"); d != 30.0 {
		t.Errorf("LogRetentionDays default %v", d)
	}
}

func TestTemplateTableIsRetained(t *testing.T) {
	tb, err := openTemplate(t, nil).GetDynamoDBTableWithName(ddblocal.TableLogicalID)
	if err != nil {
		t.Fatal(err)
	}
	if tb.AWSCloudFormationDeletionPolicy != "Retain" || tb.AWSCloudFormationUpdateReplacePolicy != "Retain" {
		t.Errorf("table policies %q / %q", tb.AWSCloudFormationDeletionPolicy, tb.AWSCloudFormationUpdateReplacePolicy)
	}
}

// TestTemplateAlarms: each alarm watches a metric the service emits, under its namespace and
// dimensions, and notifies the SNS topic only when one is given.
func TestTemplateAlarms(t *testing.T) {
	raw := rawTemplate(t)
	alarms := []string{"Api5xxAlarm", "L1FailuresAlarm", "TraceWriteFailuresAlarm", "LambdaThrottlesAlarm", "BreakerOpenAlarm"}
	plain := openTemplate(t, nil)
	topic := "arn:aws:sns:eu-central-1:123456789012:fleet-ops"
	notified := openTemplate(t, map[string]any{"AlarmTopicArn": topic})
	for _, name := range alarms {
		a, err := plain.GetCloudWatchAlarmWithName(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(a.AlarmActions) != 0 || len(a.OKActions) != 0 {
			t.Errorf("%s notifies without a topic: %v", name, a.AlarmActions)
		}
		n, _ := notified.GetCloudWatchAlarmWithName(name)
		if !slices.Equal(n.AlarmActions, []string{topic}) || !slices.Equal(n.OKActions, []string{topic}) {
			t.Errorf("%s with a topic: actions %v / %v", name, n.AlarmActions, n.OKActions)
		}
	}
	// TraceWriteFailures: obs.EMF's Count, dimensions service and function_name (the lookup function).
	tw, _ := plain.GetCloudWatchAlarmWithName("TraceWriteFailuresAlarm")
	if *tw.Namespace != obs.Namespace || *tw.MetricName != "TraceWriteFailures" || len(tw.Dimensions) != 2 ||
		tw.Dimensions[0].Name != "service" || tw.Dimensions[0].Value != obs.Service || tw.Dimensions[1].Name != "function_name" {
		t.Errorf("trace write alarm %+v", tw)
	}
	if v := asJSON(at(raw, "Resources", "TraceWriteFailuresAlarm", "Properties", "Dimensions")); !strings.Contains(v, `{"Name":"function_name","Value":{"Ref":"LookupFunction"}}`) {
		t.Errorf("trace write alarm dimensions %s", v)
	}
	// The Metrics Insights queries name the namespace, the metric and, for L1Failures, the exact
	// dimension set the service emits it with (service, function_name, layer, provider).
	queries := map[string]string{}
	for _, name := range []string{"L1FailuresAlarm", "BreakerOpenAlarm"} {
		ms, _ := at(raw, "Resources", name, "Properties", "Metrics").([]any)
		if len(ms) != 1 {
			t.Fatalf("%s metrics %s", name, asJSON(ms))
		}
		q, _ := at(ms[0], "Expression", "Fn::Sub").(string)
		queries[name] = strings.Join(strings.Fields(q), " ")
	}
	if q := queries["L1FailuresAlarm"]; !strings.Contains(q, "SUM(L1Failures) FROM SCHEMA(\""+obs.Namespace+"\", function_name, layer, provider, service)") ||
		!strings.Contains(q, "function_name = '${LookupFunction}'") {
		t.Errorf("L1 failures query %q", q)
	}
	if q := queries["BreakerOpenAlarm"]; !strings.Contains(q, "MAX(BreakerOpen) FROM \""+obs.Namespace+"\"") || !strings.Contains(q, "function_name = '${LookupFunction}'") {
		t.Errorf("breaker query %q", q)
	}
	th := asJSON(at(raw, "Resources", "LambdaThrottlesAlarm", "Properties", "Metrics"))
	for logicalID := range functionsOf {
		if !strings.Contains(th, `"MetricName":"Throttles"`) || !strings.Contains(th, `{"Ref":"`+logicalID+`"}`) {
			t.Errorf("throttles alarm does not watch %s: %s", logicalID, th)
		}
	}
	five := asJSON(at(raw, "Resources", "Api5xxAlarm", "Properties", "Metrics"))
	if !strings.Contains(five, `"MetricName":"5xx"`) || !strings.Contains(five, `"MetricName":"Count"`) || !strings.Contains(five, `{"Ref":"KnowledgeApi"}`) {
		t.Errorf("5xx alarm %s", five)
	}
}

// TestTemplateDashboard: the dashboard is valid JSON and shows what the service emits: latency
// by layer, every evidence state, L1 failures and the breaker, the verification cache, trace
// writes.
func TestTemplateDashboard(t *testing.T) {
	d, err := openTemplate(t, nil).GetCloudWatchDashboardWithName("KnowledgeDashboard")
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Widgets []struct {
			Properties struct {
				Title   string `json:"title"`
				Metrics []any  `json:"metrics"`
			} `json:"properties"`
		} `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(d.DashboardBody), &body); err != nil {
		t.Fatalf("dashboard body is not JSON: %v", err)
	}
	shown := map[string]string{}                                // metric: widget title
	name := regexp.MustCompile(`MetricName=\\*"([A-Za-z0-9]+)`) // in a search expression
	for _, w := range body.Widgets {
		for _, m := range w.Properties.Metrics {
			row, _ := m.([]any)
			if len(row) >= 2 {
				if ns, _ := row[0].(string); ns == obs.Namespace {
					shown[row[1].(string)] = w.Properties.Title
				}
			}
			for _, match := range name.FindAllStringSubmatch(asJSON(m), -1) {
				shown[match[1]] = w.Properties.Title
			}
		}
	}
	want := []string{"LookupLatency", "L1Failures", "BreakerOpen", "VerificationCacheHits", "VerificationCacheMisses", "TraceWriteFailures", "StoreHealthFailures"}
	for _, m := range retrieval.EvidenceMetrics {
		want = append(want, m)
	}
	want = append(want, retrieval.ClarifyingMetrics.Offered, retrieval.ClarifyingMetrics.Confirmed, retrieval.ClarifyingMetrics.ConfirmedGrounded)
	for _, m := range want {
		if shown[m] == "" {
			t.Errorf("the dashboard does not show %s (shown: %v)", m, shown)
		}
	}
	if !strings.Contains(shown["LookupLatency"], "layer") {
		t.Errorf("latency widget %q is not by layer", shown["LookupLatency"])
	}
	if !strings.Contains(d.DashboardBody, "{"+obs.Namespace+",function_name,layer,provider,service}") {
		t.Error("the latency search does not name the dimensions the service emits")
	}
}

// TestTemplateCORS: no origin by default (no CORS); with origins, exactly those, and the
// headers and methods the console sends (the preflights themselves: TestTemplateRoutesNeedATokenButHealth).
func TestTemplateCORS(t *testing.T) {
	off := openTemplate(t, nil)
	h, _ := off.GetServerlessHttpApiWithName("KnowledgeApi")
	if h.CorsConfiguration != nil {
		t.Errorf("CORS on by default: %+v", h.CorsConfiguration)
	}
	on := openTemplate(t, map[string]any{"CorsAllowedOrigins": "https://console.example.org,https://ops.example.org"})
	h, _ = on.GetServerlessHttpApiWithName("KnowledgeApi")
	raw, _ := json.Marshal(h.CorsConfiguration)
	var cors struct {
		AllowOrigins, AllowHeaders, AllowMethods []string
	}
	if err := json.Unmarshal(raw, &cors); err != nil {
		t.Fatalf("CORS %s: %v", raw, err)
	}
	if !slices.Equal(cors.AllowOrigins, []string{"https://console.example.org", "https://ops.example.org"}) ||
		!slices.Contains(cors.AllowHeaders, "authorization") || !slices.Contains(cors.AllowMethods, "POST") {
		t.Errorf("CORS %s", raw)
	}
}

// gatewayRoute is one route of the HTTP API, from a function's HttpApi event or an
// AWS::ApiGatewayV2::Route resource.
type gatewayRoute struct {
	source     string // where the template defines it
	key        string // "METHOD /path", or "$default"
	authorizer bool   // the JWT authorizer checks a token
	scopes     []string
}

// gatewayRoutes lists every route of the HTTP API that tpl defines.
func gatewayRoutes(t *testing.T, tpl *cloudformation.Template) []gatewayRoute {
	t.Helper()
	var out []gatewayRoute
	for logicalID, f := range tpl.GetAllServerlessFunctionResources() {
		for name, ev := range f.Events {
			if ev.Type != "HttpApi" {
				continue
			}
			h := ev.Properties.HttpApiEvent
			r := gatewayRoute{source: logicalID + "." + name, key: "$default", authorizer: true}
			if h.Method != nil && h.Path != nil { // an event without them is SAM's $default route
				r.key = strings.ToUpper(*h.Method) + " " + *h.Path
			}
			if h.Auth != nil {
				r.scopes = h.Auth.AuthorizationScopes
				r.authorizer = h.Auth.Authorizer == nil || *h.Auth.Authorizer != "NONE"
			}
			out = append(out, r)
		}
	}
	for logicalID, rt := range tpl.GetAllApiGatewayV2RouteResources() {
		out = append(out, gatewayRoute{source: logicalID, key: rt.RouteKey, scopes: rt.AuthorizationScopes,
			authorizer: rt.AuthorizationType != nil && *rt.AuthorizationType != "NONE"})
	}
	return out
}

// TestTemplateRoutesNeedATokenButHealth, with CORS off and on: every route of the HTTP API has
// the JWT authorizer and AuthorizationScopes, so that a token without one of the API's scopes
// never reaches a function, except the handlers' public routes (GET /health, the uptime
// probe), which have no authorizer. No route can take OPTIONS (ANY, OPTIONS, $default): with
// CORS on, the gateway answers a preflight itself only when no route matches it, and a
// preflight carries no token. And no route hides in an OpenAPI definition of the API.
func TestTemplateRoutesNeedATokenButHealth(t *testing.T) {
	def, _ := config.FromEnv(func(string) string { return "" })
	a, err := app.New(context.Background(), def, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	public := a.Handler.PublicRoutes()
	if !slices.Equal(public, []string{"GET " + api.BasePath + "/health"}) {
		t.Errorf("the handlers' public routes %v, want GET /health alone", public)
	}
	for _, overrides := range []map[string]any{nil, {"CorsAllowedOrigins": "https://console.example.org"}} {
		tpl := openTemplate(t, overrides)
		cors := overrides != nil
		if h, _ := tpl.GetServerlessHttpApiWithName("KnowledgeApi"); (h.CorsConfiguration != nil) != cors ||
			h.DefinitionBody != nil || h.DefinitionUri != nil {
			t.Fatalf("CORS %v: HTTP API %+v", cors, h)
		}
		routes := gatewayRoutes(t, tpl)
		if len(routes) < 10 {
			t.Fatalf("CORS %v: %d routes", cors, len(routes))
		}
		for _, r := range routes {
			method, _, _ := strings.Cut(r.key, " ")
			switch {
			case r.key == "$default" || method == "ANY" || method == "OPTIONS":
				t.Errorf("CORS %v: %s is route %q, which takes preflights (OPTIONS, no token) to a function", cors, r.source, r.key)
			case slices.Contains(public, r.key):
				if r.authorizer || len(r.scopes) != 0 {
					t.Errorf("CORS %v: the public %s (%s) keeps the authorizer or scopes %v", cors, r.key, r.source, r.scopes)
				}
			case !r.authorizer:
				t.Errorf("CORS %v: %s (%s) has no authorizer", cors, r.key, r.source)
			case len(r.scopes) == 0:
				t.Errorf("CORS %v: %s (%s) has no AuthorizationScopes: a token without any scope of the API reaches the function", cors, r.key, r.source)
			}
		}
	}
}

func equalSets(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestLintRunsCfnLint(t *testing.T) {
	root, _ := ddblocal.RepoRoot()
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	_, lint, _ := strings.Cut(string(mk), "\nlint:")
	lint, _, _ = strings.Cut(lint, "\n\n")
	if !strings.Contains(lint, "cfn-lint template.yaml") {
		t.Errorf("make lint does not run cfn-lint template.yaml:%s", lint)
	}
}

// TestTemplateTracing: Tracing chooses the tracer (TRACING); with otel, every function has the
// ADOT collector layer, the OTLP exporter and the collector's configuration from the bundle,
// which the build copies there, and which receives OTLP on localhost and exports to X-Ray.
func TestTemplateTracing(t *testing.T) {
	type globals struct {
		Tracing     string
		Layers      []string
		Environment struct{ Variables map[string]string }
	}
	read := func(overrides map[string]any) globals {
		raw, _ := json.Marshal(openTemplate(t, overrides).Globals["Function"])
		var g globals
		if err := json.Unmarshal(raw, &g); err != nil {
			t.Fatalf("%v: %v in %s", overrides, err, raw)
		}
		return g
	}
	g := read(nil)
	if v := g.Environment.Variables; g.Tracing != "Active" || len(g.Layers) != 0 || v["TRACING"] != "xray" ||
		v["OTEL_TRACES_EXPORTER"] != "" || v["OPENTELEMETRY_COLLECTOR_CONFIG_URI"] != "" {
		t.Errorf("default (xray): %+v", g)
	}
	if g := read(map[string]any{"Tracing": "off"}); g.Tracing != "PassThrough" || len(g.Layers) != 0 || g.Environment.Variables["TRACING"] != "off" {
		t.Errorf("off: %+v", g)
	}
	g = read(map[string]any{"Tracing": "otel"})
	v := g.Environment.Variables
	// The template reader leaves AWS::Partition empty; CloudFormation fills it in.
	if g.Tracing != "Active" || len(g.Layers) != 1 || !regexp.MustCompile(`^arn:[a-z-]*:lambda:[a-z0-9-]+:901920570463:layer:aws-otel-collector-arm64-ver-0-117-0:1$`).MatchString(g.Layers[0]) ||
		v["TRACING"] != "otel" || v["OTEL_TRACES_EXPORTER"] != "otlp" || v["OPENTELEMETRY_COLLECTOR_CONFIG_URI"] != "/var/task/collector.yaml" {
		t.Errorf("otel: %+v", g)
	}
	// The configuration accepts what the template sets (the collector's variable is the layer's).
	if cfg, err := config.FromEnv(func(k string) string { return v[k] }); err != nil || cfg.Tracing != "otel" || cfg.OTelTracesExporter != "otlp" {
		t.Errorf("configuration of the otel template: %+v %v", cfg, err)
	}
	arn := "arn:aws:lambda:eu-central-1:123456789012:layer:my-collector:7"
	if g := read(map[string]any{"Tracing": "otel", "AdotCollectorLayerArn": arn}); !slices.Equal(g.Layers, []string{arn}) {
		t.Errorf("layer given: %v", g.Layers)
	}

	root, _ := ddblocal.RepoRoot()
	mk, _ := os.ReadFile(filepath.Join(root, "Makefile"))
	if !strings.Contains(string(mk), "cp collector.yaml $(ARTIFACTS_DIR)/collector.yaml") {
		t.Error("the sam build targets do not copy collector.yaml into the bundle")
	}
	raw, err := os.ReadFile(filepath.Join(root, "collector.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var col struct {
		Receivers struct {
			OTLP struct {
				Protocols struct {
					HTTP struct{ Endpoint string }
				}
			} `yaml:"otlp"`
		}
		Exporters map[string]struct {
			IndexedAttributes []string `yaml:"indexed_attributes"`
		}
		Service struct {
			Pipelines map[string]struct{ Receivers, Exporters []string }
		}
	}
	if err := yaml.Unmarshal(raw, &col); err != nil {
		t.Fatal(err)
	}
	p := col.Service.Pipelines["traces"]
	if col.Receivers.OTLP.Protocols.HTTP.Endpoint != "localhost:4318" || !slices.Equal(p.Receivers, []string{"otlp"}) ||
		!slices.Equal(p.Exporters, []string{"awsxray"}) {
		t.Errorf("collector configuration %+v", col)
	}
	if got := col.Exporters["awsxray"].IndexedAttributes; !slices.Equal(got, []string{"provider", "evidence_state", "language", "layer", "invocation_id"}) {
		t.Errorf("indexed attributes %v", got)
	}
}

// TestTemplateAndMakefileDefaults: every environment variable a template parameter feeds
// defaults, in the template, to the default the code falls back on (config.Defaults), unless it
// is set to a value of its own for the deployed functions (AUTH_MODE: jwt); and the Makefile's
// defaults of the variables the code reads are the code's.
func TestTemplateAndMakefileDefaults(t *testing.T) {
	defaults := config.Defaults()
	raw := rawTemplate(t)
	vars, _ := at(raw, "Globals", "Function", "Environment", "Variables").(map[string]any)
	checked := 0
	for name, v := range vars {
		ref, _ := at(v, "Ref").(string)
		want, known := defaults[name]
		if ref == "" || !known || at(raw, "Parameters", ref) == nil {
			continue // a literal, a resource (TABLE_NAME), or a variable without a default
		}
		def := at(raw, "Parameters", ref, "Default")
		if def == nil {
			t.Errorf("template.yaml: parameter %s (%s) has no default, the code's is %q", ref, name, want)
			continue
		}
		if got := fmt.Sprint(def); got != want {
			t.Errorf("template.yaml: parameter %s (%s) defaults to %q, the code to %q", ref, name, got, want)
		}
		checked++
	}
	if checked < 10 {
		t.Errorf("only %d template parameters compared with the code's defaults", checked)
	}

	root, _ := ddblocal.RepoRoot()
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range strings.Split(string(makefile), "\n") {
		name, value, ok := strings.Cut(line, "?=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if want, known := defaults[name]; ok && known {
			seen++
			if value != want {
				t.Errorf("Makefile: %s ?= %s, the code's default is %s", name, value, want)
			}
		}
	}
	if seen == 0 {
		t.Error("the Makefile sets no default of a variable the code reads (LOCAL_ADDR)")
	}
}
