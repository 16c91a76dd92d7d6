package app

import (
	"net/http"
	"time"
)

// RequestTimeout bounds one request of the local API (`make local`, `make load`).
const RequestTimeout = 10 * time.Second

// Server is the HTTP server of the local API on addr: every route of a (Handler), each request
// bounded by RequestTimeout, with read, write and idle timeouts so that no client holds it.
// cmd/local listens with it; cmd/loadtest serves it on a loopback listener of its own.
func (a *App) Server(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           a.Handler.HTTP(RequestTimeout),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      15 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
}
