// Command lookup is the lookup Lambda function: POST /lookup, POST /ask and
// GET /invocations/{invocation_id} behind API Gateway (HTTP API, payload 2.0), and the catch-all
// route that answers 404 and 405 for the whole API.
package main

import "github.com/northstar-mobility/mobilityops-knowledge/shared/app"

func main() { app.Start(app.FunctionLookup) }
