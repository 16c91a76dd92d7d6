// Package domain is the vocabulary that crosses package lines and the transport: the bodies of
// GET /status and GET /health, a manifest sync run, a sync report and its outcome. It imports no
// other package of the service, so that the API adapter can name these shapes without linking
// the services or the store behind them.
package domain
