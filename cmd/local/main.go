// Command local serves the API on LOCAL_ADDR (default 127.0.0.1:3000) with the same
// http.Handler the Lambda functions use, every function's routes; there, each API Gateway event
// is converted to an *http.Request first (api.EventRequest). `make local` runs it with
// AUTH_MODE=local-headers.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/app"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "local:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := app.New(ctx, cfg, os.Stdout)
	if err != nil {
		return err
	}
	srv := a.Server(cfg.LocalAddr)
	// Bind first, then say so: "local API listening" is logged only once the port is bound (a
	// port in use fails here, before the line), and names the address actually bound (":0"
	// picks a free port).
	ln, err := net.Listen("tcp", cfg.LocalAddr)
	if err != nil {
		return fmt.Errorf("listen on LOCAL_ADDR %s: %w", cfg.LocalAddr, err)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	a.Log.Info("local API listening", "addr", "http://"+ln.Addr().String()+"/api/v1/knowledge", "auth_mode", cfg.AuthMode)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
