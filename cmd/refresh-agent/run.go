package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/openshift/refresh-agent/agent"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/kube"
)

func runAgent(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nf := addNodeFlags(fs)
	nodeName := nf.nodeName // --node-name, shared with apply (static pods are found by it)
	source := fs.String("source", "api", "where the desired payload comes from: api or volume")
	namespace := fs.String("namespace", "", "the ConfigMap's namespace (--source api)")
	configMap := fs.String("configmap", "", "the ConfigMap's name (--source api)")
	watchDir := fs.String("watch-dir", "", "the directory the ConfigMap is mounted at (--source volume)")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: in-cluster)")
	metricsAddr := fs.String("metrics-addr", ":9464", "Prometheus metrics address (empty: off)")
	healthAddr := fs.String("health-addr", ":9465", "/healthz and /readyz address (empty: off)")
	grace := fs.Duration("shutdown-grace", 90*time.Second, "how long a refresh in progress may finish after SIGTERM")
	fs.Int64Var(&diff.MaxPayloadSize, "max-payload-bytes", diff.MaxPayloadSize, maxPayloadUsage)
	if err := fs.Parse(args); err != nil {
		return exitInvalid
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
	log := slog.New(slog.NewJSONHandler(stderr, nil)).With("node", *nodeName)
	klog.SetSlogLogger(log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	restCfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fail(stderr, exitInvalid, "run: kubeconfig: %v", err)
	}
	restCfg.UserAgent = "refresh-agent/" + version
	// A refresh costs about three requests (two patches, an Event). client-go's default limiter (5/s,
	// burst 10) added ~600 ms to every refresh after a burst of five; this still caps a runaway loop.
	restCfg.QPS, restCfg.Burst = 20, 40
	client, err := kube.New(restCfg)
	if err != nil {
		return fail(stderr, exitInvalid, "run: %v", err)
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
	if node.Pods != nil {
		defer node.Pods.Close()
	}
	node.Drainer = &kube.Drainer{Client: client, Node: *nodeName, Log: log} // plans that need a drain
	recorder, stopEvents := agent.NewRecorder(client, *nodeName)
	defer stopEvents()
	metrics := agent.NewMetrics(version)
	a := agent.New(agent.Config{NodeName: *nodeName, Client: client, Source: src, Node: node, Recorder: recorder,
		Metrics: metrics, Log: log, ShutdownGrace: *grace})
	if err := a.Serve(ctx, *metricsAddr, *healthAddr); err != nil {
		return fail(stderr, exitFailed, "run: %v", err)
	}
	log.Info("refresh-agent starting", "version", version, "source", *source, "root", node.Root.Dir, "stateDir", node.StateDir)
	if err := a.Run(ctx); err != nil {
		return fail(stderr, exitFailed, "run: %v", err)
	}
	log.Info("refresh-agent stopped")
	return exitOK
}
