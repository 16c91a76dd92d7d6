// Command trace-replay puts invocation traces that could not be stored back into the table. A
// lookup or ask whose trace write failed logs the trace whole, as one JSON line whose key "trace"
// holds the table item (retrieval.TraceItem); this command reads such lines and stores each
// trace with a conditional put on its invocation id, so that replaying a log twice, or a trace
// whose write did succeed after all, stores it once.
//
// Input, from a file or stdin ("-"), in any of these forms (-format auto tells them apart):
//
//   - lines: the function's log as written (the slog JSON handler's lines, one per line; text
//     before the first "{" of a line, such as a timestamp, is ignored);
//   - csv: a CloudWatch Logs Insights export as CSV, with a header row naming the @message column;
//   - json: a Logs Insights export as JSON: an array of rows with "@message", or the results of
//     GetQueryResults ({"results": [[{"field": "@message", "value": ...}, ...], ...]}).
//
// Lines or messages without a "trace" key are other log lines and are skipped; a trace line that
// cannot be decoded is counted unreadable. Puts are paced to -rate per second, each bounded by
// -timeout (retries included), the whole run by -deadline. The counts are printed as one JSON
// line; the exit status is 1 when a trace was unreadable or could not be stored.
//
//	trace-replay -table mobilityops-knowledge-knowledge export.csv
//	trace-replay -endpoint http://127.0.0.1:8000 -table knowledge < lookup.log
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/tracelog"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("trace-replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	table := fs.String("table", getenv("TABLE_NAME"), "DynamoDB table (default $TABLE_NAME)")
	endpoint := fs.String("endpoint", getenv("DYNAMODB_ENDPOINT"), "DynamoDB endpoint override, e.g. DynamoDB Local (default $DYNAMODB_ENDPOINT)")
	format := fs.String("format", "auto", "input format: auto, lines, csv or json")
	rate := fs.Float64("rate", 50, "puts per second at most")
	workers := fs.Int("workers", 4, "puts in flight at most")
	timeout := fs.Duration("timeout", 5*time.Second, "deadline of one put, retries included")
	deadline := fs.Duration("deadline", 15*time.Minute, "deadline of the whole run; what is left then is counted failed")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	if *table == "" {
		log.Error("no table: give -table or set TABLE_NAME")
		return 2
	}
	if *rate <= 0 || *workers <= 0 || *timeout <= 0 || *deadline <= 0 {
		log.Error("-rate, -workers, -timeout and -deadline must be positive")
		return 2
	}
	in := stdin
	name := "stdin"
	if fs.NArg() > 1 {
		log.Error("give one input file, or none for stdin")
		return 2
	}
	if fs.NArg() == 1 && fs.Arg(0) != "-" {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			log.Error("open input", "error", err.Error())
			return 2
		}
		defer f.Close()
		in, name = f, fs.Arg(0)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *deadline)
	defer cancel()
	client, err := store.NewDynamoClient(ctx, store.ClientOptions{Endpoint: *endpoint, MaxAttempts: 5, HTTPTimeout: *timeout})
	if err != nil {
		log.Error("DynamoDB client", "error", err.Error())
		return 2
	}
	r := tracelog.Replayer{Store: store.NewDynamo(client, *table, *timeout, nil), Rate: *rate, Workers: *workers, Log: log}
	counts, err := r.Replay(ctx, in, *format)
	b, _ := json.Marshal(counts)
	fmt.Fprintln(stdout, string(b))
	if err != nil {
		log.Error("replay stopped", "input", name, "error", err.Error())
		return 1
	}
	if counts.Unreadable > 0 || counts.Failed > 0 {
		return 1
	}
	return 0
}
