// Command sync is the sync Lambda function: POST /sync (manifest sync) and POST /sync-reports
// (the central sync workflow's reports) behind API Gateway (HTTP API, payload 2.0), and the
// EventBridge schedule that refreshes the verification cache of every language.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/app"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
)

func main() {
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	a, err := app.New(context.Background(), cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "init:", err)
		os.Exit(1)
	}
	lambda.Start(a.FunctionHandler(app.FunctionSync).LambdaWithSchedule(a.Refresh))
}
