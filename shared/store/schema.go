package store

import (
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"go.yaml.in/yaml/v3"
)

// TableLogicalID is the table's logical id in template.yaml.
const TableLogicalID = "KnowledgeTable"

// TableDefinition is a table as template.yaml defines it, ready to create in DynamoDB Local.
type TableDefinition struct {
	Create dynamodb.CreateTableInput
	// TTLAttribute is the TTL attribute, empty when TTL is off.
	TTLAttribute string
}

type cfnTable struct {
	Type       string `yaml:"Type"`
	Properties struct {
		BillingMode          string `yaml:"BillingMode"`
		AttributeDefinitions []struct {
			AttributeName string `yaml:"AttributeName"`
			AttributeType string `yaml:"AttributeType"`
		} `yaml:"AttributeDefinitions"`
		KeySchema []struct {
			AttributeName string `yaml:"AttributeName"`
			KeyType       string `yaml:"KeyType"`
		} `yaml:"KeySchema"`
		TimeToLiveSpecification struct {
			AttributeName string `yaml:"AttributeName"`
			Enabled       bool   `yaml:"Enabled"`
		} `yaml:"TimeToLiveSpecification"`
	} `yaml:"Properties"`
}

// TableFromTemplate reads the table definition from a SAM template, so that DynamoDB Local gets
// exactly the table the deployed stack gets; name is the local table name.
func TableFromTemplate(path, logicalID, name string) (TableDefinition, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return TableDefinition{}, fmt.Errorf("read template: %w", err)
	}
	var doc struct {
		Resources map[string]yaml.Node `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return TableDefinition{}, fmt.Errorf("parse %s: %w", path, err)
	}
	node, ok := doc.Resources[logicalID]
	if !ok {
		return TableDefinition{}, fmt.Errorf("%s: no resource %s", path, logicalID)
	}
	var t cfnTable
	if err := node.Decode(&t); err != nil {
		return TableDefinition{}, fmt.Errorf("%s: resource %s: %w", path, logicalID, err)
	}
	if t.Type != "AWS::DynamoDB::Table" || len(t.Properties.KeySchema) == 0 {
		return TableDefinition{}, fmt.Errorf("%s: %s is not a DynamoDB table with a key schema", path, logicalID)
	}
	in := dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingMode(t.Properties.BillingMode)}
	for _, a := range t.Properties.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
			AttributeName: aws.String(a.AttributeName), AttributeType: types.ScalarAttributeType(a.AttributeType)})
	}
	for _, k := range t.Properties.KeySchema {
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)})
	}
	def := TableDefinition{Create: in}
	if t.Properties.TimeToLiveSpecification.Enabled {
		def.TTLAttribute = t.Properties.TimeToLiveSpecification.AttributeName
	}
	return def, nil
}
