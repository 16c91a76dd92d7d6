// Package ddbtest gives a test binary one DynamoDB Local, started on first use and stopped by
// Main, with fresh tables created from template.yaml. A test that needs it fails, never skips,
// when it cannot start: the integration tests are part of the suite, in CI and everywhere else.
// A package that uses it must call Main from its TestMain (Local fails a test otherwise), so
// that no DynamoDB Local outlives the package's tests.
package ddbtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/ddblocal"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

var (
	once   sync.Once
	local  *ddblocal.Local
	client *dynamodb.Client
	root   string
	err    error
	tables atomic.Int64
	// inMain is set by Main: without it nothing would stop DynamoDB Local after the tests.
	inMain bool
)

// Main runs the package's tests and stops DynamoDB Local afterwards, then runs after (the
// package's own cleanup), whatever the tests' outcome; call it from TestMain.
func Main(m *testing.M, after ...func()) {
	inMain = true
	code := m.Run()
	if local != nil {
		_ = local.Stop()
	}
	for _, f := range after {
		f()
	}
	os.Exit(code)
}

func start() {
	var dir string
	if root, dir, err = ddblocal.Installed(); err != nil {
		err = fmt.Errorf("DynamoDB Local is needed (make deps): %w", err)
		return
	}
	ctx := context.Background()
	if local, err = ddblocal.Start(ctx, dir, 0); err != nil {
		return
	}
	c, cerr := store.NewDynamoClient(ctx, store.ClientOptions{Endpoint: local.Endpoint, HTTPTimeout: 10 * time.Second})
	if err = cerr; err != nil {
		return
	}
	// Every test of a package shares this client. On a loaded machine DynamoDB Local answers
	// slowly; the production client's one-second timeout and the retryer's client-side quota
	// (which stops retrying after a run of timeouts, to spare the real service) would fail tests
	// that are not about either, so this client waits longer and always retries.
	client = dynamodb.New(c.Options(), func(o *dynamodb.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 5
			so.RateLimiter = ratelimit.None
		})
	})
}

// Local returns the running DynamoDB Local and a client for it, starting it on first use.
func Local(t testing.TB) (*ddblocal.Local, *dynamodb.Client) {
	t.Helper()
	if !inMain {
		t.Fatal("ddbtest: the package's TestMain must call ddbtest.Main, which stops DynamoDB Local after the tests")
	}
	once.Do(start)
	if err != nil {
		t.Fatal(err)
	}
	return local, client
}

// NewTable creates a fresh table with template.yaml's definition and returns its name.
func NewTable(t testing.TB, prefix string) string {
	t.Helper()
	_, c := Local(t)
	name := fmt.Sprintf("%s-%d", prefix, tables.Add(1))
	def, terr := ddblocal.TableFromTemplate(filepath.Join(root, "template.yaml"), ddblocal.TableLogicalID, name)
	if terr != nil {
		t.Fatal(terr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cerr := ddblocal.CreateTable(ctx, c, def); cerr != nil {
		t.Fatal(cerr)
	}
	return name
}
