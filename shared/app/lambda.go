package app

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
)

// Start is a Lambda function's main: it reads the configuration and builds the application once
// per cold start, then serves the function's routes (and, for the sync function, the schedule).
// A bad configuration or a failed start-up ends the process with the reason on stderr, which
// Lambda reports as an init error.
func Start(function string) {
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	a, err := NewFunction(context.Background(), cfg, os.Stdout, function)
	if err != nil {
		fmt.Fprintln(os.Stderr, "init:", err)
		os.Exit(1)
	}
	h := a.FunctionHandler(function)
	if function == FunctionSync {
		lambda.Start(h.LambdaWithSchedule(a.Refresh))
		return
	}
	lambda.Start(h.Lambda)
}
