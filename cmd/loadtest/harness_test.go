package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestTinyRun runs the harness on a few requests per phase (no DynamoDB Local: that setup is
// `make load`'s) and checks that its counts agree with each other and with the faults injected.
// Its timeout and cool-down leave a loaded machine room: every steady lookup must reach RAGcore
// within the timeout, and the lookups of the 500s phase after the breaker opened must come
// before its cool-down ends (the slow phase hangs for a minute, past any timeout).
func TestTinyRun(t *testing.T) {
	const perPhase, floodCalls = 4, 3
	rs, err := Run(context.Background(), Options{Setups: []string{"memory", "ragcore"}, Clients: 2,
		Phase: 30 * time.Second, Requests: perPhase, Total: 2 * time.Minute, ReadBack: 3,
		RAGcoreTimeout: 2 * time.Second, BreakerCooldown: 10 * time.Second, FloodCalls: floodCalls})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rs {
		names = append(names, r.Setup+"/"+r.Phase)
		if r.Flood {
			// Whatever /mcp answers a batch, the phase counts it: a batch taken runs every call
			// in it (one trace each), a batch refused runs none.
			codes := 0
			for _, n := range r.Codes {
				codes += n
			}
			if r.Requests != perPhase || codes != perPhase || r.FloodCalls != floodCalls ||
				r.FloodLookups != r.Codes[200]*floodCalls || r.TracesWritten+r.TracesToLog != r.FloodLookups {
				t.Errorf("batch flood: %d requests, codes %v, %d lookups run, traces %d stored %d logged",
					r.Requests, r.Codes, r.FloodLookups, r.TracesWritten, r.TracesToLog)
			}
			continue
		}
		codes := 0
		for _, n := range r.Codes {
			codes += n
		}
		l1 := 0
		for _, n := range r.L1 {
			l1 += n
		}
		if r.Skipped || r.Requests != perPhase || codes != r.Requests || r.Codes[200] != r.Requests || l1 != r.Codes[200] {
			t.Errorf("%s/%s: %d requests, codes %v, l1 %v", r.Setup, r.Phase, r.Requests, r.Codes, r.L1)
		}
		if r.TracesWritten+r.TracesToLog != r.Codes[200] || r.TracesToLog != 0 || r.ReadChecked != 3 || r.TracesRead != 3 {
			t.Errorf("%s/%s: traces %d written, %d to the log, %d of %d read back", r.Setup, r.Phase,
				r.TracesWritten, r.TracesToLog, r.TracesRead, r.ReadChecked)
		}
		if r.P50 <= 0 || r.P50 > r.P99 || r.Elapsed <= 0 || r.Throughput() <= 0 {
			t.Errorf("%s/%s: p50 %v p99 %v over %v", r.Setup, r.Phase, r.P50, r.P99, r.Elapsed)
		}
	}
	want := "memory/steady memory/batch flood ragcore/steady ragcore/ragcore slow ragcore/ragcore 500s ragcore/ragcore stopped ragcore/ragcore recovered"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("phases %s", got)
	}
	steady, slow, errors, stopped := rs[2], rs[3], rs[4], rs[5]
	if steady.L1["ok"] != perPhase || steady.RAGcoreRequests < perPhase || steady.BreakerOpen {
		t.Errorf("ragcore steady: l1 %v, %d requests at the fake, breaker open %v", steady.L1, steady.RAGcoreRequests, steady.BreakerOpen)
	}
	// Four timeouts: one short of the five failures that open the breaker.
	if slow.L1["failed"] != perPhase || slow.RAGcoreRequests != perPhase || slow.BreakerOpen {
		t.Errorf("ragcore slow: l1 %v, %d requests at the fake, breaker open %v", slow.L1, slow.RAGcoreRequests, slow.BreakerOpen)
	}
	// The first 500 is the fifth failure: the breaker opens, and the lookups after the one or two
	// (two clients) in flight never reach RAGcore.
	if !errors.BreakerOpen || errors.RAGcoreRequests < 1 || errors.RAGcoreRequests > 2 || errors.L1["unavailable"] < perPhase-2 {
		t.Errorf("ragcore 500s: l1 %v, %d requests at the fake, breaker open %v", errors.L1, errors.RAGcoreRequests, errors.BreakerOpen)
	}
	if stopped.L1["unavailable"] != perPhase || stopped.RAGcoreRequests != 0 {
		t.Errorf("ragcore stopped: l1 %v, %d requests at the fake", stopped.L1, stopped.RAGcoreRequests)
	}
	var out bytes.Buffer
	Table(&out, rs)
	for _, s := range []string{"ragcore slow", "req/s", "p99 ms", "200:4", "breaker open", "breaker closed",
		"HTTP status", "stored", "logged", "read back", "p50 11-30", "3/3", "batch of 3 lookup_knowledge calls",
		"logged       traces written whole to the log"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, out.String())
		}
	}
}

// TestDynamoDBOutageLosesNoTrace: DynamoDB Local frozen (SIGSTOP) under load and let go on,
// then killed and started again. While it hangs, the trace store's breaker opens and every
// lookup is answered with its trace whole in the log; once it answers again traces are stored;
// the replay puts every logged trace into the table.
func TestDynamoDBOutageLosesNoTrace(t *testing.T) {
	const perPhase = 12
	rs, err := Run(context.Background(), Options{Setups: []string{"dynamodb"}, Clients: 3,
		Phase: 60 * time.Second, Requests: perPhase, Total: 4 * time.Minute, ReadBack: 3,
		TraceWait: 1500 * time.Millisecond, BreakerCooldown: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rs {
		names = append(names, r.Phase)
	}
	if got := strings.Join(names, ","); got != "steady,ddb frozen,ddb thawed,ddb killed,ddb restarted,replayed" {
		t.Fatalf("phases %s", got)
	}
	up, frozen, thawed, down, again, replayed := rs[0], rs[1], rs[2], rs[3], rs[4], rs[5]
	for _, r := range rs[:5] {
		if r.Codes[200] != perPhase {
			t.Errorf("%s: codes %v: every lookup must be answered", r.Phase, r.Codes)
		}
	}
	// With the table up, traces are stored; a write slower than the wait (a loaded machine, the
	// emulator's JVM) goes whole to the log instead, by design, and the replay stores it: what
	// is asserted is that none is lost, not how fast DynamoDB Local answers.
	logged := 0
	for _, r := range []Result{up, thawed, again} {
		logged += r.TracesToLog
		// A trace read back may be one of those logged, not stored (yet).
		if r.TracesWritten == 0 || r.TracesWritten+r.TracesToLog != perPhase || r.TracesRead < r.ReadChecked-r.TracesToLog || r.BreakerOpen {
			t.Errorf("table up (%s): %d traces written, %d to the log, %d of %d read back, store breaker open %v", r.Phase,
				r.TracesWritten, r.TracesToLog, r.TracesRead, r.ReadChecked, r.BreakerOpen)
		}
	}
	for _, r := range []Result{frozen, down} {
		logged += r.TracesToLog
		if r.TracesToLog != perPhase || r.TracesWritten != 0 || !r.BreakerOpen {
			t.Errorf("table %s: %d traces to the log, %d written, store breaker open %v; want all %d to the log and the breaker open",
				r.Phase, r.TracesToLog, r.TracesWritten, r.BreakerOpen, perPhase)
		}
	}
	// A write still running when its wait ran out may land once the table goes on: it is then
	// both in the table and in the log, and the replay finds it there already.
	if replayed.ReplayChecked != logged || replayed.ReplayMissing != 0 || replayed.ReplayOther != 0 ||
		replayed.ReplayStored+replayed.ReplayPresent != logged {
		t.Errorf("replay: %d stored, %d present, %d other, %d checked, %d missing", replayed.ReplayStored, replayed.ReplayPresent,
			replayed.ReplayOther, replayed.ReplayChecked, replayed.ReplayMissing)
	}
	var out bytes.Buffer
	Table(&out, rs)
	if !strings.Contains(out.String(), "0 missing from the table now") || !strings.Contains(out.String(), "store breaker open") {
		t.Errorf("table:\n%s", out.String())
	}
}
