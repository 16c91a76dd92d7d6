// Package domain is the vocabulary that crosses package lines and the transport: the bodies of
// GET /status and GET /health, a manifest sync run, a sync report and its outcome, the RAGcore
// namespace, metrics and the not-found sentinel. It imports no other package of the service, so
// that adapters (api, store, obs, ragcore) can name these shapes without linking the services
// behind them.
package domain
