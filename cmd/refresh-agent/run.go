package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/openshift/refresh-agent/agent"
	"github.com/openshift/refresh-agent/kube"
	"github.com/openshift/refresh-agent/metricsserver"
)

func runAgent(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run")
	nf := addNodeFlags(fs)
	nodeName := fs.String("node-name", os.Getenv("NODE_NAME"), "this node's name (default $NODE_NAME)")
	source := fs.String("source", "api", "where the desired payload comes from: api or volume")
	namespace := fs.String("namespace", "", "the ConfigMap's namespace (--source api)")
	configMap := fs.String("configmap", "", "the ConfigMap's name (--source api)")
	watchDir := fs.String("watch-dir", "", "the directory the ConfigMap is mounted at (--source volume)")
	var kf kube.ConfigFlags
	kf.AddFlags(fs)
	metricsAddr := fs.String("metrics-addr", ":9464", "Prometheus metrics address, HTTPS for authorized tokens only (empty: off)")
	metricsCertDir := fs.String("metrics-cert-dir", "", "directory with the metrics serving tls.crt and tls.key (default or absent: self-signed)")
	newLog := addLogLevel(fs, "info")
	healthAddr := fs.String("health-addr", ":9465", "/healthz and /readyz address (empty: off)")
	grace := fs.Duration("shutdown-grace", 90*time.Second, "how long a refresh in progress may finish after SIGTERM")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *nodeName == "" {
		return fail(stderr, exitInvalid, "run: --node-name (or $NODE_NAME) is required")
	}
	var src agent.Source
	switch *source {
	case "api":
		if *namespace == "" || *configMap == "" {
			return fail(stderr, exitInvalid, "run: --source api needs --namespace and --configmap")
		}
	case "volume":
		if *watchDir == "" {
			return fail(stderr, exitInvalid, "run: --source volume needs --watch-dir")
		}
		src = &agent.VolumeSource{Dir: *watchDir}
	default:
		return fail(stderr, exitInvalid, "run: --source must be api or volume, not %q", *source)
	}

	if os.Getenv("GOGC") == "" {
		// The agent idles between rare refreshes: trade a little CPU during a refresh for a peak heap
		// closer to the payload's size (every node pays for the peak in its memory limit).
		debug.SetGCPercent(25)
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
		src = &agent.APISource{Client: client, Namespace: *namespace, Name: *configMap}
	}
	node, err := nf.open(ctx, log)
	if err != nil {
		return fail(stderr, exitInvalid, "run: %v", err)
	}
	defer node.Root.Close()
	defer node.Units.Close()
	recorder, stopEvents := agent.NewRecorder(client, *nodeName)
	defer stopEvents()
	metrics := agent.NewMetrics(version)
	a := agent.New(agent.Config{NodeName: *nodeName, Client: client, Source: src, Node: node, Recorder: recorder,
		Metrics: metrics, Log: log, ShutdownGrace: *grace})
	if *metricsAddr != "" {
		if err := metricsserver.Serve(ctx, metricsserver.Config{Addr: *metricsAddr, Gatherer: metrics.Registry,
			Reviewer: client, CertDir: *metricsCertDir, Log: log}); err != nil {
			return fail(stderr, exitFailed, "run: %v", err)
		}
	}
	if err := a.Serve(ctx, "", *healthAddr); err != nil { // metrics: metricsserver above
		return fail(stderr, exitFailed, "run: %v", err)
	}
	log.Info("refresh-agent starting", "version", version, "source", *source, "root", node.Root.Dir, "stateDir", node.StateDir)
	if err := a.Run(ctx); err != nil {
		return fail(stderr, exitFailed, "run: %v", err)
	}
	log.Info("refresh-agent stopped")
	return exitOK
}
