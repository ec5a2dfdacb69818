package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/verify"
)

// EnvRoot names the environment variable that gives --root its default.
const EnvRoot = "REFRESH_AGENT_ROOT"

// defaultStateDir is the state dir on the node when --state-dir is not given (denied in the audit).
const defaultStateDir = actions.DefaultStateDir

// nodeFlags are the flags every command acting on a node shares.
type nodeFlags struct {
	root, stateDir, policy, systemd, cri, nodeName *string
	lockTimeout, verifyWindow                      *time.Duration
	kubeletHealthz                                 *string
}

func addNodeFlags(fs *pflag.FlagSet) nodeFlags {
	return nodeFlags{
		// The DaemonSet sets $REFRESH_AGENT_ROOT=/host, so that `oc exec ds/refresh-agent --
		// refresh-agent recover` acts on the host, not on the container's own filesystem.
		root:        fs.String("root", os.Getenv(EnvRoot), "the node's filesystem root (default $"+EnvRoot+"; /host in the DaemonSet's pods)"),
		stateDir:    fs.String("state-dir", "", "the agent's state directory (default <root>/var/lib/refresh-agent)"),
		policy:      fs.String("policy", "", "node-local policy file (YAML or JSON); default: built-in"),
		systemd:     fs.String("systemd", "system", "systemd manager for unit actions: system, user or none"),
		cri:         fs.String("cri-socket", actions.DefaultCRISocket, "CRI runtime socket for static pod restarts, or none"),
		nodeName:    fs.String("node-name", os.Getenv("NODE_NAME"), "the node's name, to find its static pods' sandboxes (default $NODE_NAME)"),
		lockTimeout: fs.Duration("lock-timeout", time.Minute, "how long to wait for the node lock another refresh-agent process holds (0: do not wait)"),
		verifyWindow: fs.Duration("verify-window", verify.DefaultWindow, "after the unit actions, how long crio, kubelet, restarted static pods and the policy's probes must stay healthy "+
			"(and, for run, the Node Ready) before the refresh is applied; a failure rolls back (0: off)"),
		kubeletHealthz: fs.String("kubelet-healthz", verify.DefaultKubeletHealthz, "kubelet's healthz URL (a loopback address), asked after a kubelet restart"),
	}
}

// open builds the apply.Host the flags describe. The systemd connection is made only when a unit
// action needs it.
func (f nodeFlags) open(ctx context.Context, log *slog.Logger) (apply.Host, error) {
	if *f.root == "" {
		return apply.Host{}, errors.New("--root is required (or $" + EnvRoot + "; inside the agent's pod it is /host)")
	}
	switch *f.systemd {
	case "system", "user", "none":
	case testUnitsMode:
	default:
		return apply.Host{}, fmt.Errorf("--systemd must be system, user or none, not %q", *f.systemd)
	}
	root, err := actions.OpenRoot(*f.root)
	if err != nil {
		return apply.Host{}, err
	}
	stateDir := *f.stateDir
	if stateDir == "" {
		stateDir = filepath.Join(root.Dir, defaultStateDir)
	}
	pol := allowlist.Default()
	if *f.policy != "" {
		if pol, err = allowlist.LoadPolicy(*f.policy); err != nil {
			return apply.Host{}, err
		}
	}
	// The state dir, wherever --state-dir puts it inside the root, is refused to every rule and
	// ceiling, and the node's unit links are the units they link to (apply.Host.NodePolicy); a
	// policy rule reaching the state dir or naming a link is an error now, not at a refresh.
	if pol, err = (apply.Host{Root: root, StateDir: stateDir, Policy: pol, PolicyFile: *f.policy}).NodePolicy(); err != nil {
		return apply.Host{}, fmt.Errorf("--root %s, --state-dir %s: %w", root.Dir, stateDir, err)
	}
	mode := *f.systemd
	var units actions.Units = actions.NoUnits{}
	if mode == testUnitsMode && testUnits != nil {
		units = testUnits(root.Dir) // a build with -tags refreshtest only
	} else if mode != "none" {
		// The connection outlives a cancelled ctx: a refresh in progress at SIGTERM must still be able
		// to wait for its jobs and roll back.
		dialCtx := context.WithoutCancel(ctx)
		units = &actions.LazyUnits{Connect: func() (actions.Units, error) { return actions.ConnectUnits(dialCtx, mode) }}
	}
	var pods *actions.CRI
	if *f.cri != "none" && *f.cri != "" {
		if pods, err = actions.DialCRI(*f.cri, *f.nodeName); err != nil {
			return apply.Host{}, err
		}
	}
	if *f.verifyWindow < 0 {
		return apply.Host{}, fmt.Errorf("--verify-window must not be negative, not %s", *f.verifyWindow)
	}
	if err := allowlist.LoopbackURL(*f.kubeletHealthz); err != nil {
		return apply.Host{}, fmt.Errorf("--kubelet-healthz: %w", err)
	}
	vo := verify.Options{Window: *f.verifyWindow, CRISocket: *f.cri, KubeletHealthz: *f.kubeletHealthz}
	return apply.Host{Root: root, StateDir: stateDir, Units: units, Pods: pods, Policy: pol, PolicyFile: *f.policy, Log: log, LockWait: *f.lockTimeout, Verify: vo}, nil
}

func runApply(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("apply")
	nf := addNodeFlags(fs)
	desired := fs.String("desired", "", "the desired payload")
	current := fs.String("current", "", "override the recorded current payload")
	rules := fs.String("no-reboot-paths", "", "the ConfigMap's no-reboot-paths JSON")
	hash := fs.String("hash", "", "the desired payload's hash (default: its sha256)")
	output := fs.StringP("output", "o", "text", "text or json")
	dryRun := fs.Bool("dry-run", false, "plan against the node (owners, paths, symlinks) and stop before any effect")
	drained := fs.Bool("drained", false, "the node is cordoned and drained already: apply a plan that needs a drain (apply has no API client to drain with)")
	fs.Int64Var(&diff.MaxPayloadSize, "max-payload-bytes", diff.MaxPayloadSize, maxPayloadUsage)
	newLog := addLogLevel(fs, "warn")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *desired == "" {
		return fail(stderr, exitInvalid, "apply: --desired is required")
	}
	if *output != "text" && *output != "json" {
		return fail(stderr, exitInvalid, "apply: --output must be text or json, not %q", *output)
	}
	// SIGINT and SIGTERM never kill a transaction midway: they cancel the waits for unit jobs, and a
	// refresh in progress then either finishes or rolls back under its own deadline before exiting.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log, err := newLog(stderr)
	if err != nil {
		return fail(stderr, exitInvalid, "apply: %v", err)
	}
	host, err := nf.open(ctx, log)
	if err != nil {
		return fail(stderr, exitInvalid, "apply: %v", err)
	}
	host.Drained = *drained
	defer host.Root.Close()
	defer host.Units.Close()
	if host.Pods != nil {
		defer host.Pods.Close()
	}

	raw, err := readInput(*desired, diff.MaxPayloadSize)
	if err != nil {
		return fail(stderr, exitInvalid, "%v", err)
	}
	req := apply.Request{Desired: raw, Hash: *hash, DryRun: *dryRun}
	if *current != "" {
		if req.Current, err = decodeFile(*current); err != nil {
			return fail(stderr, exitInvalid, "%v", err)
		}
	}
	if *rules != "" {
		if req.NoRebootPaths, err = loadRules(*rules); err != nil {
			return fail(stderr, exitInvalid, "%v", err)
		}
	}
	res, err := apply.Run(ctx, host, req)
	var inv *apply.InvalidError
	switch {
	case errors.As(err, &inv):
		return fail(stderr, exitInvalid, "%s: %v", *desired, err)
	case err != nil:
		return fail(stderr, exitFailed, "apply: %v", err)
	}
	if *output == "json" {
		err = writeJSON(stdout, res)
	} else {
		err = res.WriteText(stdout)
	}
	if err != nil {
		return fail(stderr, exitFailed, "writing output: %v", err)
	}
	switch {
	case res.Outcome == api.OutcomeRefused:
		return exitRefused
	case res.Outcome == api.OutcomeFailed, res.CleanupPending:
		return exitFailed // applied with a step after the commit failed: said in the output
	}
	return exitOK
}

// runRecover finishes or undoes an interrupted refresh and exits.
func runRecover(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("recover")
	nf := addNodeFlags(fs)
	newLog := addLogLevel(fs, "info")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	log, err := newLog(stderr)
	if err != nil {
		return fail(stderr, exitInvalid, "recover: %v", err)
	}
	host, err := nf.open(context.Background(), log)
	if err != nil {
		return fail(stderr, exitInvalid, "recover: %v", err)
	}
	defer host.Root.Close()
	defer host.Units.Close()
	if host.Pods != nil {
		defer host.Pods.Close()
	}
	rec, err := apply.Recover(context.Background(), host)
	if werr := writeJSON(stdout, rec); werr != nil {
		return exitFailed
	}
	if err != nil {
		return fail(stderr, exitFailed, "recover: %v", err)
	}
	return exitOK
}
