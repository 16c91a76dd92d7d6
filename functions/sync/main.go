// Command sync is the sync Lambda function: the routes shared/api declares for api.FunctionSync
// (sync_routes.go: manifest sync and the central sync workflow's reports) behind API Gateway
// (HTTP API, payload 2.0), and the EventBridge schedule that refreshes the verification cache of
// every language (api.FunctionSync.Scheduled, Services.Schedule).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire"
)

func main() {
	ctx := context.Background()
	p := wire.Must(wire.New(ctx, wire.FromEnv(), os.Stdout, wire.Needs{Raw: true}))
	health := p.SidecarHealth()
	st := wire.Must(p.Status(health))
	sy := p.Sync(st)
	h := p.Handler(api.FunctionSync, api.Services{Sync: sy, Schedule: wire.Refresh(sy)})
	p.Initialised(ctx, health.Status)
	lambda.Start(h.Entry())
}
