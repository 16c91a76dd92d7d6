# MobilityOps Knowledge. `make local` runs the API on the embedded default; `make test` runs
# every check CI runs. Both work on a fresh clone with Go, Node.js/npm and Java 17.

GO        ?= go
LOCAL_ADDR ?= 127.0.0.1:3000
DYNAMODB_LOCAL_PORT ?= 8000
RAGCORE_FAKE_ADDR ?= 127.0.0.1:8089
GOARCH_LAMBDA ?= arm64
LDFLAGS   := -s -w
FUNCTIONS := lookup status sync
DDB_DIR   := tools/dynamodb-local
MCP_CLIENT_DIR := tools/mcp-client
REDOCLY_DIR := tools/redocly

.PHONY: local test lint load bench bench-compare bench-instructions bench-test eval golden calibrate synonyms fuzz build clean init-duration mem-limit deps dynamodb-local ragcore-fake build-LookupFunction build-StatusFunction build-SyncFunction $(addprefix build-,$(FUNCTIONS))

## local: the local API on LOCAL_ADDR (default 127.0.0.1:3000), demo provider, in-memory store,
## actor from the X-Actor-Id / X-Actor-Scope headers.
local:
	AUTH_MODE=local-headers LOCAL_ADDR=$(LOCAL_ADDR) $(GO) run ./cmd/local

## test: formatting, vet, staticcheck, the bench module's vet and short tests, then every test with
## the race detector.
test: lint deps bench-test
	$(GO) test -race -count=1 ./...

## deps: DynamoDB Local (Amazon's jar, pinned in tools/dynamodb-local) for the integration tests, and
## the official MCP TypeScript SDK (pinned in tools/mcp-client) for the test of /mcp with a client
## that is not the Go SDK; Redocly CLI (pinned in tools/redocly) for make lint.
deps: $(DDB_DIR)/node_modules/.package-lock.json $(MCP_CLIENT_DIR)/node_modules/.package-lock.json \
	$(REDOCLY_DIR)/node_modules/.package-lock.json

$(DDB_DIR)/node_modules/.package-lock.json: $(DDB_DIR)/package.json $(DDB_DIR)/package-lock.json
	npm ci --prefix $(DDB_DIR) --no-audit --no-fund --loglevel=error

$(MCP_CLIENT_DIR)/node_modules/.package-lock.json: $(MCP_CLIENT_DIR)/package.json $(MCP_CLIENT_DIR)/package-lock.json
	npm ci --prefix $(MCP_CLIENT_DIR) --no-audit --no-fund --loglevel=error

$(REDOCLY_DIR)/node_modules/.package-lock.json: $(REDOCLY_DIR)/package.json $(REDOCLY_DIR)/package-lock.json
	npm ci --prefix $(REDOCLY_DIR) --no-audit --no-fund --loglevel=error

## dynamodb-local: DynamoDB Local on port DYNAMODB_LOCAL_PORT (default 8000) with the table of template.yaml, in the
## foreground; then `DYNAMODB_ENDPOINT=http://127.0.0.1:8000 make local` uses it.
dynamodb-local: deps
	$(GO) run ./cmd/dynamodb-local -port $(DYNAMODB_LOCAL_PORT)

## ragcore-fake: the fake RAGcore (docs/ragcore.md) on RAGCORE_FAKE_ADDR (default 127.0.0.1:8089) with the corpus published, token
## local-token; then `KNOWLEDGE_PROVIDER=ragcore RAGCORE_BASE_URL=http://127.0.0.1:8089
## RAGCORE_TOKEN=local-token make local` uses it.
ragcore-fake:
	$(GO) run ./cmd/ragcore-fake -addr $(RAGCORE_FAKE_ADDR) -token local-token

## lint: gofmt, go vet, staticcheck, cfn-lint on the template, and Redocly CLI (redocly.yaml, every
## warning an error) on the two OpenAPI documents, offline (no telemetry, no update notice).
lint: $(REDOCLY_DIR)/node_modules/.package-lock.json
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	cfn-lint template.yaml
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_NOTIFICATIONS=true $(REDOCLY_DIR)/node_modules/.bin/redocly lint \
		--format=stylish docs/openapi.yaml docs/bedrock-lookup.yaml

## bench: the in-process lookup benchmarks and the verification of 1,000 sources (figures in docs/retrieval.md),
## then the bench module's lookup, BM25 and bleve benchmarks and its day-view and as_of-cycling ones
## on generated corpora of 22 and 2,200 procedures (BENCH_SIZES=22,2200,10000 for others).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./shared/retrieval
	$(GO) test -run '^$$' -bench Verify1000 -benchtime 3x -count 3 ./shared/status
	cd bench && $(GO) test -run '^$$' -bench . -benchmem -count 5 .

## bench-compare: the project beside bleve on generated corpora of 22, 220, 2,200 and 10,000
## procedures (bench/cmd/compare): build, latency, allocations, heap, accuracy; prints the table
## and writes bench/results.json (figures in BENCHMARKS.md). About five minutes on two idle cores.
bench-compare:
	cd bench && $(GO) run ./cmd/compare -sizes 22,220,2200,10000 -runs 5 -out results.json

## bench-instructions: the instructions, conditional branches and mispredicted branches of one
## lookup, counted by valgrind's callgrind over INSTR_LOOKUPS (default 1000) evaluation questions
## asked in turn on the embedded corpus, the caches warm, the demo provider and the in-memory trace
## store (cmd/inturn): counts with no timing noise, to compare two builds (figures in BENCHMARKS.md).
## Needs valgrind (apt-get install valgrind).
INSTR_LOOKUPS ?= 1000
bench-instructions: SHELL := /bin/bash
bench-instructions:
	@command -v valgrind >/dev/null || { echo "bench-instructions: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
	@set -eo pipefail; dir=$$(mktemp -d); trap 'rm -rf "$$dir"' EXIT; \
	$(GO) build -o "$$dir/inturn" ./cmd/inturn; \
	GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --branch-sim=yes \
		--toggle-collect='*main.askInTurn*' --callgrind-out-file="$$dir/callgrind.out" \
		"$$dir/inturn" -n $(INSTR_LOOKUPS) -eval eval 2>&1 | \
	awk -v n=$(INSTR_LOOKUPS) '/Collected :/ { printf "per lookup (%d in turn): %.0f instructions, %.0f conditional branches, %.0f mispredicted (callgrind'"'"'s predictor)\n", n, $$4/n, $$5/n, $$6/n; found = 1 } END { exit !found }'

## bench-test: vet and the short tests of the bench module, a module of its own that `./...` does
## not reach (so that bleve never enters the root module).
bench-test:
	cd bench && $(GO) vet ./... && $(GO) test -short -count=1 ./...

## init-duration: the Init Duration of each function beside a hello-world Go function and
## hello-world linking the mandated X-Ray SDK and AWS clients (the floor), all built the same way,
## under aws-lambda-rie: INIT_RUNS cold starts each (default 15), one emulator at a time, medians
## (figures in BENCHMARKS.md). INIT_KNOWLEDGE_DIR=<corpus with index.bin> adds the lookup and
## status functions on that corpus. The test's own exit status decides (pipefail, hence bash).
INIT_RUNS ?= 15
init-duration: SHELL := /bin/bash
init-duration: deps
	set -o pipefail; INIT_RUNS=$(INIT_RUNS) INIT_KNOWLEDGE_DIR=$(INIT_KNOWLEDGE_DIR) $(GO) test -count=1 -v -timeout 30m \
		-run '^TestInitDurations$$' ./functions | grep 'INIT '

## mem-limit: the lookup function's bootstrap under aws-lambda-rie in a cgroup (v1 memory controller)
## of MEM_LIMIT_MB (default 256), page cache included, no swap, with
## AWS_LAMBDA_FUNCTION_MEMORY_SIZE=MEM_LIMIT_MB and KNOWLEDGE_DIR=MEM_KNOWLEDGE_DIR (a corpus with its
## index.bin): MEM_LOOKUPS lookups (default 300; as of the days of MEM_AS_OF in turn, comma-separated,
## when set), each compared with the same lookup outside the
## limit; prints the cgroup's peak usage, failcnt, OOM kills and the bootstrap's peak RSS (figures
## in BENCHMARKS.md). Needs root and cgroup v1; skips otherwise (fails under CI). `make test` runs it too,
## on the embedded corpus with 30 lookups.
MEM_LIMIT_MB ?= 256
MEM_LOOKUPS ?= 300
mem-limit: SHELL := /bin/bash
mem-limit: deps
	@if [ -z "$(MEM_KNOWLEDGE_DIR)" ]; then echo "mem-limit: set MEM_KNOWLEDGE_DIR=<corpus with index.bin>" >&2; exit 1; fi
	set -o pipefail; MEM_KNOWLEDGE_DIR=$(abspath $(MEM_KNOWLEDGE_DIR)) MEM_LIMIT_MB=$(MEM_LIMIT_MB) MEM_LOOKUPS=$(MEM_LOOKUPS) MEM_AS_OF=$(MEM_AS_OF) \
		$(GO) test -count=1 -v -timeout 30m -run '^TestMemoryLimit$$' ./functions | grep -E 'MEM |SKIP|FAIL|ok|---|differs|status'

## fuzz: every fuzz target for FUZZTIME (default 60s) each; a failing input is written under the
## package's testdata/fuzz/<target>/ and fails the run. Go 1.26's fuzzing can also end a run that
## found nothing with "context deadline exceeded" at the time limit: without a failing input, that
## is reported and not counted as a failure.
FUZZTIME ?= 60s
FUZZ_TARGETS := shared/api:FuzzRequestBody shared/api:FuzzMCPMessage shared/api:FuzzEventPath shared/textproc:FuzzGroups knowledge:FuzzParse \
	shared/ragcore:FuzzResponse shared/sidecar:FuzzMapping internal/ragcorefake:FuzzSplitSections \
	internal/ragcorefake:FuzzRequestBodies shared/mcp:FuzzToolArguments shared/lexical:FuzzPrebuilt \
	shared/textproc:FuzzAnswerScans shared/tracelog:FuzzReplay shared/textproc:FuzzNormalizedLen \
	shared/textproc:FuzzAnalyseQuestionTokens
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=./$${t%%:*}; name=$${t##*:}; echo "== $$name ($$pkg, $(FUZZTIME))"; \
		out=$$($(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg 2>&1); rc=$$?; \
		echo "$$out" | tail -n 4; \
		if [ $$rc -ne 0 ]; then \
			if echo "$$out" | grep -q 'Failing input written' || ! echo "$$out" | grep -q '^    context deadline exceeded$$'; then exit 1; fi; \
			echo "   (deadline at the time limit, no failing input: not a finding)"; \
		fi; \
	done

## load: the load and fault harness (cmd/loadtest) on loopback: the local API's handler with the
## in-memory store (and a batch flood on /mcp), DynamoDB Local (frozen, let go on, killed,
## restarted, the logged traces replayed) and the fake RAGcore, faults injected between phases;
## prints per phase, under labelled columns and a legend, throughput, latencies, HTTP and l1
## statuses, traces stored, logged and read back. About two minutes.
load: deps
	$(GO) run ./cmd/loadtest

## eval: retrieval quality on every evaluation set (cmd/evaluate), a table per path: the semantic
## path over the ideal and over the realistic RAGcore stand-in, the demo provider with and without
## the language field; then the development and the held-out sets pooled. EVAL_FLAGS=-v lists the
## misses. A few seconds.
EVAL_SETS := natural-dev natural-dev2 natural-dev3 natural-dev4 natural-dev5 natural-dev6 natural-dev7 \
	natural-dev8 natural-dev9 natural-dev10 natural-holdout dev holdout fresh keyword2 keyword3 probe \
	confusable-dev confusable-holdout styles-holdout multipart-dev multipart-holdout
eval:
	$(GO) run ./cmd/evaluate $(EVAL_FLAGS) $(addprefix eval/,$(addsuffix .yaml,$(EVAL_SETS)))

## golden: every question of every evaluation set (YAML and JSON Lines) through Lookup and Ask on
## the demo provider with and without the language field and on the ideal and realistic semantic
## stand-ins (cmd/golden), one JSON line per question written to GOLDEN (default golden.jsonl),
## invocation ids and latencies left out; GOLDEN_BASE=<an earlier recording> compares the two byte
## for byte. A refactoring records on its base commit, then compares after each step.
GOLDEN ?= golden.jsonl
golden:
	$(GO) run ./cmd/golden -o $(GOLDEN) eval/*.yaml eval/*.jsonl
	@if [ -n "$(GOLDEN_BASE)" ]; then cmp $(GOLDEN_BASE) $(GOLDEN) && echo "$(GOLDEN): identical to $(GOLDEN_BASE)"; fi

## calibrate: precision and recall of `grounded` over a grid of L1_GROUNDED_COSINE and
## L1_SUPPORTED_COSINE, and a recommended pair (docs/operations.md), on eval/calibrate-*.jsonl and
## eval/*.yaml; the sets named *holdout* are measured at the configured and recommended pairs,
## never used to choose. CALIBRATE_FLAGS (default -fake: the fake RAGcore in the process);
## `make calibrate CALIBRATE_FLAGS=` measures the provider the environment configures.
CALIBRATE_FLAGS ?= -fake
CALIBRATE_SETS := $(wildcard eval/calibrate-*.jsonl) $(wildcard eval/*.yaml)
CALIBRATE_HOLDOUT := $(filter %holdout.jsonl %holdout.yaml,$(CALIBRATE_SETS))
calibrate:
	$(GO) run ./cmd/calibrate $(CALIBRATE_FLAGS) $(addprefix -holdout ,$(CALIBRATE_HOLDOUT)) \
		$(filter-out $(CALIBRATE_HOLDOUT),$(CALIBRATE_SETS))

## synonyms: the generated synonym files, knowledge/synonyms/en/wordnet.txt from WordNet 3.0 and
## knowledge/synonyms/de/openthesaurus.txt from OpenThesaurus, filtered to the procedures'
## words. Needs the Debian packages wordnet-base and openthesaurus-de-text; the output is
## committed, so nothing else needs them.
synonyms:
	$(GO) run ./cmd/synonyms-build

## build: the Lambda bootstrap binaries for $(GOARCH_LAMBDA) under bin/<function>/bootstrap.
build: $(addprefix build-,$(FUNCTIONS))

$(addprefix build-,$(FUNCTIONS)): build-%:
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA) $(GO) build -trimpath -ldflags='$(LDFLAGS)' -tags lambda.norpc \
		-o bin/$*/bootstrap ./functions/$*

## build-LookupFunction, build-StatusFunction, build-SyncFunction: the targets `sam build` calls
## (BuildMethod: makefile) with ARTIFACTS_DIR: the bootstrap, and collector.yaml for the ADOT
## collector layer (Tracing=otel).
## Without ARTIFACTS_DIR the target refuses to run (it would write /bootstrap).
build-LookupFunction build-StatusFunction build-SyncFunction: build-%Function:
	@if [ -z "$(ARTIFACTS_DIR)" ]; then echo "build-$*Function: ARTIFACTS_DIR is not set (sam build sets it; by hand use make build-$(shell echo $* | tr A-Z a-z))" >&2; exit 1; fi
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA) $(GO) build -trimpath -ldflags='$(LDFLAGS)' -tags lambda.norpc \
		-o $(ARTIFACTS_DIR)/bootstrap ./functions/$(shell echo $* | tr A-Z a-z)
	cp collector.yaml $(ARTIFACTS_DIR)/collector.yaml

clean:
	rm -rf bin .aws-sam
