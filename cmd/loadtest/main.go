// Command loadtest is the load and fault harness behind `make load`: it serves the local API's
// handler on loopback in three setups (in-memory store; DynamoDB Local; the fake RAGcore, in
// process), sends lookups from concurrent clients in phases, injects faults between them
// (a batch flood: JSON-RPC batches of lookup_knowledge calls to POST /mcp; DynamoDB Local frozen
// with SIGSTOP and let go on, then killed and restarted, and the traces logged meanwhile
// replayed; RAGcore hanging past the timeout, answering 500, stopped, then back), and prints per
// phase the throughput, latencies (the median of lookups 11 to 30 among them), HTTP statuses,
// l1 statuses, the traces stored, logged and read back, under labelled columns and a legend.
// It stops by itself: every phase is bounded in time and requests, and the whole run by -total.
// It reports figures; it passes or fails nothing but its own start-up.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	o := Options{}
	setups := flag.String("setups", "memory,dynamodb,ragcore", "setups to run, comma-separated")
	flag.IntVar(&o.Clients, "clients", 16, "concurrent clients")
	flag.DurationVar(&o.Phase, "phase", 4*time.Second, "length of one phase")
	flag.IntVar(&o.Requests, "requests", 50000, "most lookups sent in one phase")
	flag.DurationVar(&o.Total, "total", 3*time.Minute, "bound of the whole run, start-ups included")
	flag.IntVar(&o.ReadBack, "read-back", 50, "traces read back per phase")
	flag.DurationVar(&o.RAGcoreTimeout, "ragcore-timeout", time.Second, "RAGCORE_TIMEOUT_MS of the ragcore setup")
	flag.IntVar(&o.BreakerFailures, "breaker-failures", 0, "RAGCORE_BREAKER_FAILURES of the ragcore setup (0: the default, 5)")
	flag.DurationVar(&o.BreakerCooldown, "breaker-cooldown", 2*time.Second, "RAGCORE_BREAKER_COOLDOWN_MS of the ragcore setup and DYNAMODB_BREAKER_COOLDOWN_MS of the dynamodb setup")
	flag.DurationVar(&o.TraceWait, "trace-wait", 1500*time.Millisecond, "DYNAMODB_TRACE_WAIT_MS of the dynamodb setup (0: the service's default, 250 ms); "+
		"the default holds a write DynamoDB Local accepts on a busy machine")
	flag.IntVar(&o.FloodCalls, "flood-calls", 60, "lookup_knowledge calls in one batch of the batch flood")
	flag.Parse()
	o.Setups = strings.Split(*setups, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Printf("load: %d clients, phases of %s (at most %d requests each), %s in all; RAGcore timeout %s, breakers' cool-down %s\n",
		o.Clients, o.Phase, o.Requests, o.Total, o.RAGcoreTimeout, o.BreakerCooldown)
	if o.BreakerFailures > 0 {
		fmt.Printf("breaker opens after %d failures\n", o.BreakerFailures)
	}
	rs, err := Run(ctx, o)
	Table(os.Stdout, rs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}
