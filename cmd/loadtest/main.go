// Command loadtest is the load and fault harness behind `make load`: it serves the local API's
// handler on loopback in three setups (in-memory store; DynamoDB Local; the fake RAGcore, in
// process), sends lookups from concurrent clients in phases, injects faults between them
// (DynamoDB Local killed and restarted; RAGcore hanging past the timeout, answering 500,
// stopped, then back), and prints per phase the throughput, p50/p99 latency, status codes, l1 statuses, and
// the traces written and read back from the store. It stops by itself: every phase is bounded
// in time and requests, and the whole run by -total. It reports figures; it passes or fails
// nothing but its own start-up.
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
	flag.DurationVar(&o.Total, "total", 60*time.Second, "bound of the whole run, start-ups included")
	flag.IntVar(&o.ReadBack, "read-back", 50, "traces read back per phase")
	flag.DurationVar(&o.RAGcoreTimeout, "ragcore-timeout", time.Second, "RAGCORE_TIMEOUT_MS of the ragcore setup")
	flag.IntVar(&o.BreakerFailures, "breaker-failures", 0, "RAGCORE_BREAKER_FAILURES of the ragcore setup (0: the default, 5)")
	flag.DurationVar(&o.BreakerCooldown, "breaker-cooldown", 2*time.Second, "RAGCORE_BREAKER_COOLDOWN_MS of the ragcore setup")
	flag.Parse()
	o.Setups = strings.Split(*setups, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Printf("load: %d clients, phases of %s (at most %d lookups each), %s in all; RAGcore timeout %s, breaker cool-down %s\n",
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
