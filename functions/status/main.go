// Command status is the status Lambda function: GET /status (the three measurements of seed
// 004, with exact verification) and GET /health behind API Gateway (HTTP API, payload 2.0).
package main

import "github.com/northstar-mobility/mobilityops-knowledge/shared/app"

func main() { app.Start(app.FunctionStatus) }
