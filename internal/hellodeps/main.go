// Command hellodeps is hello-world that links what every function must carry (the X-Ray SDK
// and the DynamoDB and SSM clients) and does nothing with it: the floor of Init Duration that
// package initialisation alone sets, measured beside the real functions.
package main

import (
	"context"
	"net/http"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-xray-sdk-go/instrumentation/awsv2"
	"github.com/aws/aws-xray-sdk-go/xray"
)

// The references keep the packages (and their init work) in the binary.
var (
	_ = dynamodb.New
	_ = ssm.New
	_ = awsv2.AWSV2Instrumentor
	_ = xray.Client(http.DefaultClient)
)

func main() {
	lambda.Start(func(context.Context, map[string]any) (map[string]string, error) {
		return map[string]string{"hello": "world"}, nil
	})
}
