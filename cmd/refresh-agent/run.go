package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/openshift/refresh-agent/agent"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/kube"
	"github.com/openshift/refresh-agent/metricsserver"
	"github.com/openshift/refresh-agent/pacing"
)

func runAgent(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run")
	nf := addNodeFlags(fs)
	nodeName := nf.nodeName // --node-name, shared with apply (static pods are found by it)
	source := fs.String("source", "api", "where the desired payload comes from: api or volume")
	namespace := fs.String("namespace", "", "the ConfigMap's namespace (--source api)")
	configMap := fs.String("configmap", "", "the ConfigMap of a node without the "+api.LabelNodePool+" label (--source api)")
	template := fs.String("configmap-template", api.DefaultConfigMapTemplate, "the NodePool's ConfigMap name; {pool} is the node's "+api.LabelNodePool+" label (--source api)")
	maxAttempts := fs.Int("max-attempts", 3, "failed attempts at one payload before the node stays Degraded until the content or the "+api.AnnotationRetry+" annotation changes")
	maxConcurrent := fs.String("max-concurrent", "1", "nodes of a pool refreshing at once: N, or P% of the pool's nodes; 0: unpaced (see docs/pacing.md)")
	slotTTL := fs.Duration("slot-ttl", pacing.DefaultTTL, "a pacing slot whose holder stopped renewing for this long is taken over")
	spread := fs.Duration("spread", 500*time.Millisecond, "random delay before a node's first attempt at a pacing slot for new content")
	drift := fs.String("drift", agent.DriftReport, "recorded files changed on the node: report, heal (write them back) or off")
	watchDir := fs.String("watch-dir", "", "the directory the ConfigMap is mounted at (--source volume)")
	var kf kube.ConfigFlags
	kf.AddFlags(fs)
	metricsAddr := fs.String("metrics-addr", ":9464", "Prometheus metrics address, HTTPS for authorized tokens only (empty: off)")
	metricsCertDir := fs.String("metrics-cert-dir", "", "directory with the metrics serving tls.crt and tls.key (default or absent: self-signed)")
	newLog := addLogLevel(fs, "info")
	healthAddr := fs.String("health-addr", ":9465", "/healthz and /readyz address (empty: off)")
	grace := fs.Duration("shutdown-grace", 90*time.Second, "how long a refresh in progress may finish after SIGTERM")
	fs.Int64Var(&diff.MaxPayloadSize, "max-payload-bytes", diff.MaxPayloadSize, maxPayloadUsage)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *nodeName == "" {
		return fail(stderr, exitInvalid, "run: --node-name (or $NODE_NAME) is required")
	}
	var src agent.Source
	switch *source {
	case "api":
		if *namespace == "" {
			return fail(stderr, exitInvalid, "run: --source api needs --namespace")
		}
		if !strings.Contains(*template, "{pool}") {
			return fail(stderr, exitInvalid, "run: --configmap-template %q must contain {pool}", *template)
		}
	case "volume":
		if *watchDir == "" {
			return fail(stderr, exitInvalid, "run: --source volume needs --watch-dir")
		}
		src = &agent.VolumeSource{Dir: *watchDir}
	default:
		return fail(stderr, exitInvalid, "run: --source must be api or volume, not %q", *source)
	}
	if *maxAttempts < 1 {
		return fail(stderr, exitInvalid, "run: --max-attempts must be at least 1, not %d", *maxAttempts)
	}
	limit, err := pacing.ParseLimit(*maxConcurrent)
	if err != nil {
		return fail(stderr, exitInvalid, "run: %v", err)
	}
	if !limit.Unpaced() && *namespace == "" {
		if fs.Changed("max-concurrent") {
			return fail(stderr, exitInvalid, "run: --max-concurrent %s needs --namespace (the pacing slots' Leases live there; 0: unpaced)", limit)
		}
		limit = pacing.Limit{} // --source volume without a namespace: the default cannot pace
	}
	if *slotTTL < 3*time.Second || *spread < 0 {
		return fail(stderr, exitInvalid, "run: --slot-ttl must be at least 3s and --spread not negative")
	}
	switch *drift {
	case agent.DriftReport, agent.DriftHeal, agent.DriftOff:
	default:
		return fail(stderr, exitInvalid, "run: --drift must be report, heal or off, not %q", *drift)
	}

	refreshGC := 0
	if os.Getenv("GOGC") == "" {
		// The agent idles between rare refreshes: trade a little CPU during a refresh for a peak heap
		// closer to the payload's size (every node pays for the peak in its memory limit): a large
		// payload's refresh holds about the payload once and the embedded MachineConfig while it is
		// read, so a target of 10 keeps the peak within twice the payload (25 did not: docs/
		// performance.md; the heap is mostly payload bytes, which the GC does not scan). A small
		// payload's refresh (the common case: a pull secret, a mirror) runs with a target of 200
		// until the agent is idle again: its peak stays small, and a pool's nodes refreshing at once
		// spend a quarter less CPU (docs/performance.md).
		debug.SetGCPercent(10)
		refreshGC = 200
	}
	log, err := newLog(stderr)
	if err != nil {
		return fail(stderr, exitInvalid, "run: %v", err)
	}
	log = log.With("node", *nodeName)
	klog.SetSlogLogger(log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	restCfg, err := kf.RESTConfig("refresh-agent/" + version)
	if err != nil {
		return fail(stderr, exitInvalid, "run: %v", err)
	}
	// A refresh costs about three requests (two patches, an Event). client-go's default limiter (5/s,
	// burst 10) added ~600 ms to every refresh after a burst of five; this still caps a runaway loop.
	restCfg.QPS, restCfg.Burst = 20, 40
	client, err := kube.New(restCfg)
	if err != nil {
		return fail(stderr, exitInvalid, "run: %v", err)
	}
	if err := client.Ping(ctx, 5*time.Second); err != nil {
		log.Error("API server unreachable at start-up; retrying in the background", "server", restCfg.Host, "err", err)
	}
	if src == nil {
		src = &agent.APISource{Client: client, Namespace: *namespace, Name: *configMap, Template: *template}
	}
	host, err := nf.open(ctx, log)
	if err != nil {
		return fail(stderr, exitInvalid, "run: %v", err)
	}
	defer host.Root.Close()
	defer host.Units.Close()
	if host.Pods != nil {
		defer host.Pods.Close()
	}
	host.Drainer = &kube.Drainer{Client: client, Node: *nodeName, Log: log} // plans that need a drain
	recorder, stopEvents := agent.NewRecorder(client, *nodeName)
	defer stopEvents()
	metrics := agent.NewMetrics(version)
	var pacer *pacing.Pacer
	if !limit.Unpaced() {
		leases, err := kube.NewLeases(restCfg)
		if err != nil {
			return fail(stderr, exitInvalid, "run: %v", err)
		}
		pacer = pacing.New(pacing.Config{Leases: leases, Watch: leases, Nodes: client, Namespace: *namespace, Node: *nodeName,
			Limit: limit, TTL: *slotTTL, Spread: *spread, Log: log})
	}
	a := agent.New(agent.Config{NodeName: *nodeName, Client: client, Source: src, Host: host, Recorder: recorder,
		Metrics: metrics, Log: log, ShutdownGrace: *grace, MaxAttempts: *maxAttempts, Drift: *drift, Pacer: pacer,
		RefreshGCPercent: refreshGC})
	if *metricsAddr != "" {
		if err := metricsserver.Serve(ctx, metricsserver.Config{Addr: *metricsAddr, Gatherer: metrics.Registry,
			Reviewer: client, CertDir: *metricsCertDir, Log: log}); err != nil {
			return fail(stderr, exitFailed, "run: %v", err)
		}
	}
	if err := a.Serve(ctx, "", *healthAddr); err != nil { // metrics: metricsserver above
		return fail(stderr, exitFailed, "run: %v", err)
	}
	log.Info("refresh-agent starting", "version", version, "source", *source, "root", host.Root.Dir, "stateDir", host.StateDir)
	if err := a.Run(ctx); err != nil {
		return fail(stderr, exitFailed, "run: %v", err)
	}
	log.Info("refresh-agent stopped")
	return exitOK
}
