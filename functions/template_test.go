package functions_test

import (
	"context"
	"encoding/json"
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
)

// functionsOf maps each function's logical id in template.yaml to its name in the code.
var functionsOf = map[string]string{
	"LookupFunction": app.FunctionLookup, "StatusFunction": app.FunctionStatus, "SyncFunction": app.FunctionSync,
}

// dynamoActions are the only table actions each function may use: the store calls it makes.
var dynamoActions = map[string][]string{
	"LookupFunction": {"dynamodb:GetItem", "dynamodb:PutItem"},
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

// TestTemplateRoutesMatchTheHandlers keeps each function's HttpApi routes and its handler's
// routes the same, with the catch-all on one function.
func TestTemplateRoutesMatchTheHandlers(t *testing.T) {
	tpl := openTemplate(t, nil)
	def, _ := config.FromEnv(func(string) string { return "" })
	a, err := app.New(context.Background(), def, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\{[a-z_]+\}`)
	catchAll := 0
	for logicalID, function := range functionsOf {
		f, err := tpl.GetServerlessFunctionWithName(logicalID)
		if err != nil {
			t.Fatal(err)
		}
		var routes []string
		for _, ev := range f.Events {
			if ev.Type != "HttpApi" {
				continue
			}
			h := ev.Properties.HttpApiEvent
			if h.Method == nil || h.Path == nil {
				t.Fatalf("%s: HttpApi event without method or path", logicalID)
			}
			if *h.Method == "ANY" && *h.Path == api.BasePath+"/{proxy+}" {
				catchAll++
				continue
			}
			routes = append(routes, *h.Method+" "+param.ReplaceAllString(*h.Path, "{}"))
		}
		want := a.FunctionHandler(function).Routes()
		slices.Sort(routes)
		slices.Sort(want)
		if len(want) == 0 || !slices.Equal(routes, want) {
			t.Errorf("%s: template routes %v, handler routes %v", logicalID, routes, want)
		}
		if md, _ := f.AWSCloudFormationMetadata["BuildMethod"].(string); md != "makefile" {
			t.Errorf("%s: BuildMethod %q, want makefile", logicalID, md)
		}
		if f.Timeout == nil || *f.Timeout < 5 {
			t.Errorf("%s: no explicit timeout", logicalID)
		}
	}
	if catchAll != 1 {
		t.Errorf("%d catch-all routes, want exactly one: API Gateway answers wrong methods and paths otherwise", catchAll)
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
