// Command sync is the sync Lambda function: POST /sync (manifest sync) and POST /sync-reports
// (the central sync workflow's reports) behind API Gateway (HTTP API, payload 2.0), and the
// EventBridge schedule that refreshes the verification cache of every language.
package main

import "github.com/northstar-mobility/mobilityops-knowledge/shared/app"

func main() { app.Start(app.FunctionSync) }
