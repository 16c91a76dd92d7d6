package ddblocal

import (
	"fmt"
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
func OpenTemplate(path string, overrides map[string]any) (*cloudformation.Template, error) {
	goformationMu.Lock()
	defer goformationMu.Unlock()
	tpl, err := goformation.OpenWithOptions(path, &intrinsics.ProcessorOptions{ParameterOverrides: overrides, EvaluateConditions: true})
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return tpl, nil
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
