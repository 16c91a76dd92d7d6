package ddblocal

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/intrinsics"
)

// TableLogicalID is the table's logical id in template.yaml.
const TableLogicalID = "KnowledgeTable"

// TableDefinition is a table as template.yaml defines it, ready to create in DynamoDB Local.
type TableDefinition struct {
	Create dynamodb.CreateTableInput
	// TTLAttribute is the TTL attribute, empty when TTL is off.
	TTLAttribute string
}

// goformationMu serialises goformation: it registers its YAML tag resolvers in a global map on
// every parse, which races when parallel tests parse at once.
var goformationMu sync.Mutex

// OpenTemplate parses a SAM template with goformation, resolving parameters (defaults, or
// overrides) and evaluating conditions. It is safe for concurrent use.
//
// goformation lags the template in three ways, bridged here before it parses: under
// EvaluateConditions it replaces a resource that has a Condition with the condition's value, so
// resource conditions are taken out first and a resource whose condition is false is dropped
// after; it names the HttpApi's AccessLogSettings AccessLogSetting; and it does not know a
// function's LoggingConfig, which is left out (the template tests read it from the YAML).
func OpenTemplate(path string, overrides map[string]any) (*cloudformation.Template, error) {
	goformationMu.Lock()
	defer goformationMu.Unlock()
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	long, err := intrinsics.ProcessYAML(raw, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(long, &doc); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	conditional := map[string]string{} // resource: its condition
	resources, _ := doc["Resources"].(map[string]any)
	for name, r := range resources {
		res, _ := r.(map[string]any)
		if c, ok := res["Condition"].(string); ok {
			conditional[name] = c
			delete(res, "Condition")
		}
		props, _ := res["Properties"].(map[string]any)
		switch res["Type"] {
		case "AWS::Serverless::HttpApi":
			if v, ok := props["AccessLogSettings"]; ok {
				props["AccessLogSetting"] = v
				delete(props, "AccessLogSettings")
			}
		case "AWS::Serverless::Function":
			delete(props, "LoggingConfig")
		}
	}
	bridged, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	tpl, err := goformation.ParseJSONWithOptions(bridged, &intrinsics.ProcessorOptions{ParameterOverrides: overrides, EvaluateConditions: true})
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	for name, c := range conditional {
		on, ok := tpl.Conditions[c].(bool)
		if !ok {
			return nil, fmt.Errorf("parse %s: resource %s: condition %s does not evaluate", path, name, c)
		}
		if !on {
			delete(tpl.Resources, name)
		}
	}
	return tpl, nil
}

// RawTemplate is a SAM template as JSON with its intrinsic functions in long form, unresolved
// ({"Ref": "LookupFunction"}), for checks of what refers to what. It is safe for concurrent use.
func RawTemplate(path string) (map[string]any, error) {
	goformationMu.Lock()
	defer goformationMu.Unlock()
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	long, err := intrinsics.ProcessYAML(raw, &intrinsics.ProcessorOptions{NoProcess: true})
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(long, &doc); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return doc, nil
}

// TableFromTemplate reads the table definition from the SAM template with goformation (the
// parser the template tests use), so that DynamoDB Local gets exactly the table the deployed
// stack gets; name is the local table name. It lives here, not in the store, so that no
// function binary links the template parser.
func TableFromTemplate(path, logicalID, name string) (TableDefinition, error) {
	tpl, err := OpenTemplate(path, nil)
	if err != nil {
		return TableDefinition{}, err
	}
	t, err := tpl.GetDynamoDBTableWithName(logicalID)
	if err != nil {
		return TableDefinition{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(t.KeySchema) == 0 {
		return TableDefinition{}, fmt.Errorf("%s: %s has no key schema", path, logicalID)
	}
	in := dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingMode(aws.ToString(t.BillingMode))}
	for _, a := range t.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
			AttributeName: aws.String(a.AttributeName), AttributeType: types.ScalarAttributeType(a.AttributeType)})
	}
	for _, k := range t.KeySchema {
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)})
	}
	def := TableDefinition{Create: in}
	if ttl := t.TimeToLiveSpecification; ttl != nil && ttl.Enabled {
		def.TTLAttribute = aws.ToString(ttl.AttributeName)
	}
	return def, nil
}
