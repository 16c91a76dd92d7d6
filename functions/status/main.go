// Command status is the status Lambda function: the routes shared/api declares for
// api.FunctionStatus (status_routes.go: GET /status, with the source document count, the counts
// the sync workflow reported and the count verified by exact identity lookups, and GET /health)
// behind API Gateway (HTTP API, payload 2.0). It links no Bedrock client: /health reports the
// sidecar's state from its configuration.
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
	p := wire.Must(wire.New(ctx, wire.FromEnv(), os.Stdout, wire.Needs{}))
	health := p.SidecarHealth()
	st := wire.Must(p.Status(health))
	h := p.Handler(api.FunctionStatus, api.Services{Status: st})
	p.Initialised(ctx, health.Status)
	lambda.Start(h.Entry())
}
