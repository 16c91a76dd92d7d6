// Command trace-replay puts invocation traces that could not be stored back into the table. A
// lookup or ask whose trace write failed logs the trace whole, as one JSON line whose key "trace"
// holds the table item (lookup.TraceItem); this command reads such lines and stores each
// trace with a conditional put on its invocation id, so that replaying a log twice, or a trace
// whose write did succeed after all, stores it once.
//
// The input, from a file or stdin ("-"), is read line by line, and each line by what it holds:
//
//   - a log line as the function writes it (the slog JSON handler's lines; text before the first
//     "{" of a line, such as a timestamp, is ignored);
//   - a row of a CloudWatch Logs Insights export as CSV (any field holding a log line);
//   - a line of a Logs Insights export as JSON: an array of rows with "@message" on one line, a
//     "@message" or "value" member of an indented export, a GetQueryResults document on one line.
//
// Lines without a trace are skipped. A line that holds a trace, or what is left of one, but
// cannot be read (cut short, damaged, longer than 4 MiB, a record indented over several lines:
// pass it through jq -c) is counted unreadable with its line number, and the lines after it are
// read all the same. A trace whose invocation id the table holds with other content is counted
// conflicting and named; the table keeps its copy. Puts are paced to -rate per second, each
// bounded by -timeout (retries included), the whole run by -deadline. The counts are printed as
// one JSON line; the exit status is 1 when a line was unreadable, a trace conflicting or not
// stored.
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
	counts, err := r.Replay(ctx, in)
	b, _ := json.Marshal(counts)
	fmt.Fprintln(stdout, string(b))
	if err != nil {
		log.Error("replay stopped", "input", name, "error", err.Error())
		return 1
	}
	if counts.Unreadable > 0 || counts.Failed > 0 || counts.Conflicting > 0 {
		return 1
	}
	return 0
}
