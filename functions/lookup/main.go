// Command lookup is the lookup Lambda function: POST /lookup, POST /ask and
// GET /invocations/{invocation_id} behind API Gateway (HTTP API, payload 2.0), and the catch-all
// route that answers 404 and 405 for the whole API.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire/sidecarwire"
)

func main() {
	ctx := context.Background()
	p := wire.Must(wire.New(ctx, wire.FromEnv(), os.Stdout, true))
	side, health := sidecarwire.New(ctx, p)
	h := p.Handler(api.Services{Lookup: p.Lookup(side)})
	p.Initialised(ctx, health.Status)
	lambda.Start(h.Lambda)
}
