// Command dynamodb-local runs Amazon DynamoDB Local (installed by `make deps`) in memory on
// 127.0.0.1:8000 (-port) with the table of template.yaml created as TABLE_NAME, until
// interrupted. `make dynamodb-local` runs it; then `DYNAMODB_ENDPOINT=http://127.0.0.1:8000 make
// local` stores traces there.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/config"
)

func main() {
	port := flag.Int("port", 8000, "port on 127.0.0.1")
	table := flag.String("table", config.DefaultTableName, "table name (the service's TABLE_NAME)")
	flag.Parse()
	if err := run(*port, *table); err != nil {
		fmt.Fprintln(os.Stderr, "dynamodb-local:", err)
		os.Exit(1)
	}
}

func run(port int, table string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root, dir, err := ddblocal.Installed()
	if err != nil {
		return err
	}
	local, err := ddblocal.Start(ctx, dir, port)
	if err != nil {
		return err
	}
	defer local.Stop()
	if err := local.CreateTemplateTable(ctx, root, table); err != nil {
		return err
	}
	fmt.Printf("DynamoDB Local on %s with table %s (in memory; stop with Ctrl-C)\n", local.Endpoint, table)
	fmt.Printf("use it: DYNAMODB_ENDPOINT=%s make local\n", local.Endpoint)
	select {
	case <-ctx.Done():
	case <-local.Done():
		return fmt.Errorf("DynamoDB Local exited:\n%s", local.Logs())
	}
	return nil
}
