package ddblocal

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/awslabs/goformation/v7"
)

// TableLogicalID is the table's logical id in template.yaml.
const TableLogicalID = "KnowledgeTable"

// TableDefinition is a table as template.yaml defines it, ready to create in DynamoDB Local.
type TableDefinition struct {
	Create dynamodb.CreateTableInput
	// TTLAttribute is the TTL attribute, empty when TTL is off.
	TTLAttribute string
}

// TableFromTemplate reads the table definition from the SAM template with goformation (the
// parser the template tests use), so that DynamoDB Local gets exactly the table the deployed
// stack gets; name is the local table name. It lives here, not in the store, so that no
// function binary links the template parser.
func TableFromTemplate(path, logicalID, name string) (TableDefinition, error) {
	tpl, err := goformation.Open(path)
	if err != nil {
		return TableDefinition{}, fmt.Errorf("parse %s: %w", path, err)
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
