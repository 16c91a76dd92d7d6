// Command hellolambda is the smallest Go Lambda function, built like the real ones, so that the
// emulator test can report their Init Duration beside a baseline measured in the same run.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, map[string]any) (map[string]string, error) {
		return map[string]string{"hello": "world"}, nil
	})
}
