// Command lookup is the lookup Lambda function: the routes shared/api declares for
// api.FunctionLookup (routes.go: lookup, ask, invocations, the MCP endpoint) behind API Gateway
// (HTTP API, payload 2.0), and the catch-all routes that answer 404 and 405 for the whole API.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/api"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire/mcpwire"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/wire/sidecarwire"
)

func main() {
	ctx := context.Background()
	p := wire.Must(wire.New(ctx, wire.FromEnv(), os.Stdout, wire.Needs{Index: true}))
	side, health := sidecarwire.New(ctx, p)
	st := wire.Must(p.Status(health)) // knowledge_status, the MCP tool
	svc := p.Lookup(side)
	h := p.Handler(api.FunctionLookup, api.Services{Lookup: svc, MCP: mcpwire.New(svc, st, p.Log)})
	p.Initialised(ctx, health.Status)
	lambda.Start(h.Entry())
}
