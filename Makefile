# refresh-agent: the two commands that do everything are `make demo` and `make test`.
GO      ?= go
BIN     := bin/refresh-agent
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: build build-fips test demo fuzz vet lint-docker bench crash-test image image-fips push

# The image the DaemonSet pins (deploy/base/daemonset.yaml; TestImageReferenceIsTheMakefiles keeps
# the two equal). Build and push your own with IMAGE=REGISTRY/NAME:TAG, then pin it (docs/operations.md).
IMAGE     ?= quay.io/openshift/refresh-agent:v0.1.0
CONTAINER ?= podman

# The Dockerfile's default (static, scratch) image, and its FIPS variant.
image:
	$(CONTAINER) build --build-arg VERSION=$(VERSION) -t $(IMAGE) .
image-fips:
	$(CONTAINER) build --target fips --build-arg VERSION=$(VERSION) -t $(IMAGE)-fips .

# Pushes IMAGE and writes its digest to bin/image.digest, for pinning by digest.
push:
	@mkdir -p bin
	$(CONTAINER) push --digestfile bin/image.digest $(IMAGE)
	@echo "pushed $(IMAGE)@$$(cat bin/image.digest); pin it with kustomize's images: (docs/operations.md, Image)"

# The same command the Dockerfile's build stage runs: a static, trimmed binary.
build:
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/refresh-agent

# The Dockerfile's fips target's command: CGO on, dynamically linked, FIPS crypto (BoringCrypto by
# default; FIPS_GOEXPERIMENT=strictfipsruntime with Red Hat's Go toolset). Symbols kept for check-payload.
FIPS_GOEXPERIMENT ?= boringcrypto
build-fips:
	CGO_ENABLED=1 GOEXPERIMENT=$(FIPS_GOEXPERIMENT) GOOS=linux $(GO) build -trimpath -ldflags "-X main.version=$(VERSION)" -o $(BIN)-fips ./cmd/refresh-agent

# Lints the Dockerfile with dockerfilelint from the npm registry (hadolint is not packaged here).
lint-docker:
	test/dockerfile/lint.sh

vet:
	$(GO) vet ./...

# All tests: unit tests, fuzz seed corpora, and the integration tests against real systemd and a
# real kube-apiserver (built from source on first use, cached outside the repository).
test: vet lint-docker
	$(GO) test -count=1 -timeout 60m ./...

# The main job on built-in example payloads: the CLI on example files, then the agent end to end
# (real kube-apiserver+etcd, built on first use; real systemd user manager; temp node root).
demo: build
	@BIN=$(BIN) test/demo/demo.sh
	@echo; echo "== end to end: the agent on a node, driven through the API server"
	@$(GO) run ./test/demo
	@echo; echo "== the controller: a NodePool driven across two clusters (management and guest)"
	@BIN=$(BIN) $(GO) run ./test/demo/controller

# Benchmarks with baselines measured in the same run (each decode size's baseline right after it, five
# runs of the whole list, so that each pair shares the machine's load); writes docs/performance.md (and the raw,
# benchstat-friendly output to docs/bench-raw.txt). Takes about 20 minutes (60 s idle windows, five
# 40 s API server outages), the last part a pool of SCALE_NODES agent processes (test/scale; its
# failing nodes run a build with -tags refreshtest, never shipped).
SCALE_NODES ?= 100
bench: build
	$(GO) test -c -o bin/plan.test ./plan
	for i in 1 2 3 4 5; do bin/plan.test -test.run '^$$' -test.bench 'BenchmarkPlan' -test.benchmem -test.benchtime 1x -test.timeout 60m; done | tee docs/bench-raw.txt
	$(GO) test -run '^$$' -bench 'BenchmarkTransaction|BenchmarkBaselineWriteFsyncRename' -benchmem -count 5 -benchtime 5x ./actions | tee -a docs/bench-raw.txt
	$(GO) run ./test/bench -go-bench docs/bench-raw.txt -bin $(BIN)
	CGO_ENABLED=0 $(GO) build -tags refreshtest -trimpath -ldflags "$(LDFLAGS)" -o bin/refresh-agent-test ./cmd/refresh-agent
	$(GO) run ./test/scale -bin $(BIN) -test-bin bin/refresh-agent-test -nodes $(SCALE_NODES)

# Long crash and fault injection, on the binary built with -tags refreshtest (its crash points): SIGKILL
# at every step of apply (TestCrashAtEveryStep, 300+ trials) and of recover, at random steps of the
# agent's refreshes with restarts (TestAgentCrashAndRestart, 200 trials), a tmpfs root too small by
# size and by inodes at every step, read-only remounts and ext4 power cuts (loop device,
# EXT4_IOC_SHUTDOWN) at every step, fsync failing (EIO, EROFS; strace's fault injection) at every call, two
# processes racing on one root, and the adversary's cases (hostile journals, state-dir names taken, stale
# side files). `make test` runs a subset.
crash-test:
	REFRESH_AGENT_CRASH_TRIALS=200 $(GO) test -count=1 -timeout 60m -run 'TestCrashAtEveryStep|TestCrashAtPreparedWithATamperedBackup|TestAgentCrashAndRestart|TestFault(TmpfsFull|ReadOnly|PowerCut|SyncFails)AtEveryStep|TestCrashDuringRecover|TestSecondFaultDuringRecovery|TestTwoProcesses|TestAdversary' -v ./test/integration/ | grep -E '^(=== RUN|--- |PASS|FAIL|ok)|trials|by (size|inodes)'

# Each fuzz target for FUZZTIME (default 30s).
FUZZTIME ?= 30s
fuzz:
	$(GO) test ./diff -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME)
	$(GO) test ./diff -run '^$$' -fuzz '^FuzzDiff$$' -fuzztime $(FUZZTIME)
	$(GO) test ./plan -run '^$$' -fuzz '^FuzzPlan$$' -fuzztime $(FUZZTIME)
	$(GO) test ./plan -run '^$$' -fuzz '^FuzzTOMLBounds$$' -fuzztime $(FUZZTIME)
	$(GO) test ./allowlist -run '^$$' -fuzz '^FuzzParseRules$$' -fuzztime $(FUZZTIME)
	$(GO) test ./allowlist -run '^$$' -fuzz '^FuzzParsePolicy$$' -fuzztime $(FUZZTIME)
	$(GO) test ./allowlist -run '^$$' -fuzz '^FuzzJudgeStaticPod$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./allowlist -run '^$$' -fuzz '^FuzzJudgeCredentialProvider$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s
	$(GO) test ./allowlist -run '^$$' -fuzz '^FuzzNormalizeUnit$$' -fuzztime $(FUZZTIME)
	$(GO) test ./allowlist -run '^$$' -fuzz '^FuzzPatternMayBeSecretName$$' -fuzztime $(FUZZTIME)
