package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/controller"
)

// Registered here rather than in main's map literal, whose alignment would change with this name.
func init() { commands["controller"] = runController }

func runController(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("controller")
	mgmtKC := fs.String("management-kubeconfig", "", "kubeconfig of the management cluster (default: in-cluster)")
	guestKC := fs.String("guest-kubeconfig", "", "kubeconfig of the guest cluster (required)")
	namespace := fs.String("namespace", os.Getenv("POD_NAMESPACE"), "the hosted control plane namespace: MachineDeployments, MachineSets, Machines, token Secrets (default $POD_NAMESPACE)")
	npNamespace := fs.String("nodepool-namespace", "", "the NodePools' namespace (default --namespace)")
	clusterName := fs.String("cluster-name", "", "only NodePools whose spec.clusterName is this (default: all in --nodepool-namespace)")
	guestNamespace := fs.String("guest-namespace", "refresh-agent", "the agents' namespace in the guest cluster")
	template := fs.String("configmap-template", api.DefaultConfigMapTemplate, "each pool's ConfigMap name; {pool} is the NodePool's name")
	workers := fs.Int("workers", 2, "pools reconciled at once")
	healthAddr := fs.String("health-addr", ":9466", "/healthz address (empty: off)")
	elect := fs.Bool("leader-elect", true, "hold a Lease so that one of several replicas works")
	leaseName := fs.String("leader-elect-lease-name", "refresh-agent-controller", "the Lease's name")
	leaseNamespace := fs.String("leader-elect-namespace", "", "the Lease's namespace (default --namespace)")
	leaseDuration := fs.Duration("leader-elect-lease-duration", 15*time.Second, "how long a Lease not renewed stays held")
	renewDeadline := fs.Duration("leader-elect-renew-deadline", 10*time.Second, "how long the leader retries renewing before it stops leading")
	retryPeriod := fs.Duration("leader-elect-retry-period", 2*time.Second, "how often to renew or try to acquire the Lease")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *guestKC == "" {
		return fail(stderr, exitInvalid, "controller: --guest-kubeconfig is required")
	}
	if *namespace == "" {
		return fail(stderr, exitInvalid, "controller: --namespace (or $POD_NAMESPACE) is required")
	}
	if !(*retryPeriod > 0 && *retryPeriod < *renewDeadline && *renewDeadline < *leaseDuration) {
		return fail(stderr, exitInvalid, "controller: need 0 < --leader-elect-retry-period < --leader-elect-renew-deadline < --leader-elect-lease-duration")
	}
	if *leaseNamespace == "" {
		*leaseNamespace = *namespace
	}

	log := newLogger(stderr, slog.LevelInfo)
	klog.SetSlogLogger(log)
	mgmt, err := restConfig(*mgmtKC)
	if err != nil {
		return fail(stderr, exitInvalid, "controller: --management-kubeconfig: %v", err)
	}
	guest, err := restConfig(*guestKC)
	if err != nil {
		return fail(stderr, exitInvalid, "controller: --guest-kubeconfig: %v", err)
	}
	cfg := controller.Config{Management: mgmt, Guest: guest, Namespace: *namespace, NodePoolNamespace: *npNamespace,
		ClusterName: *clusterName, GuestNamespace: *guestNamespace, ConfigMapTemplate: *template, Workers: *workers, Log: log}
	if _, err := controller.New(cfg); err != nil { // checks the configuration before campaigning
		return fail(stderr, exitInvalid, "%v", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if *healthAddr != "" {
		srv := &http.Server{Addr: *healthAddr, ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/healthz" {
				http.NotFound(w, r)
				return
			}
			_, _ = io.WriteString(w, "ok\n")
		})}
		go func() {
			if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
				log.Error("health server", "err", err)
			}
		}()
		defer srv.Close()
	}

	lead := func(ctx context.Context) {
		c, err := controller.New(cfg) // a fresh queue and caches for every term
		if err == nil {
			err = c.Run(ctx)
		}
		if err != nil && ctx.Err() == nil {
			log.Error("controller", "err", err)
		}
	}
	if !*elect {
		lead(ctx)
		return exitOK
	}
	dyn, err := dynamic.NewForConfig(mgmt)
	if err != nil {
		return fail(stderr, exitInvalid, "controller: %v", err)
	}
	host, _ := os.Hostname()
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	e := &controller.Elector{Client: dyn, Namespace: *leaseNamespace, Name: *leaseName, Identity: host + "_" + hex.EncodeToString(suffix),
		LeaseDuration: *leaseDuration, RenewDeadline: *renewDeadline, RetryPeriod: *retryPeriod, Log: log}
	e.Run(ctx, lead)
	return exitOK
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "refresh-agent-controller/" + version
	cfg.QPS, cfg.Burst = 20, 40
	return cfg, nil
}
