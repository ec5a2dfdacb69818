package actions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/plan"
)

// DefaultCRISocket is CRI-O's socket, reached through the host's /run in the pod.
const DefaultCRISocket = "/run/crio/crio.sock"

// Static pods carry this annotation (kubelet copies a pod's annotations onto its sandbox).
const configSourceAnnotation = "kubernetes.io/config.source"

// CRI restarts static pods through the container runtime: it stops the pod's sandbox, and kubelet,
// which owns static pods, creates a new one from the manifest on disk. Nothing is deleted, and
// kubelet decides how the pod comes back, exactly as after a runtime hiccup.
type CRI struct {
	conn *grpc.ClientConn
	rt   cri.RuntimeServiceClient
	// NodeName, when set, pins the sandbox name (kubelet names a static pod "<name>-<node>").
	NodeName string
	// Timeout bounds the wait for the new sandbox; Poll is how often the runtime is asked.
	Timeout, Poll time.Duration
}

// DialCRI connects to a CRI runtime on a unix socket. No request is made until a pod is restarted.
func DialCRI(socket, nodeName string) (*CRI, error) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("CRI %s: %w", socket, err)
	}
	return &CRI{conn: conn, rt: cri.NewRuntimeServiceClient(conn), NodeName: nodeName,
		Timeout: 2 * time.Minute, Poll: 250 * time.Millisecond}, nil
}

// Close closes the connection.
func (c *CRI) Close() { _ = c.conn.Close() }

// RestartPod stops the ready sandbox of the static pod ref ("namespace/name") and waits until
// kubelet has a new one ready. A pod with no ready sandbox is not running: kubelet will start it
// from the new files by itself, so there is nothing to restart.
func (c *CRI) RestartPod(ctx context.Context, ref string) error {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok {
		return fmt.Errorf("restart pod %q: not namespace/name", ref)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	old, err := c.ready(ctx, ns, name)
	if err != nil {
		return fmt.Errorf("restart pod %s: listing sandboxes: %w", ref, err)
	}
	if len(old) == 0 {
		return nil
	}
	stopped := map[string]bool{}
	names := map[string]bool{} // the pod comes back under the same name, in a new sandbox
	for _, sb := range old {
		names[sb.Metadata.Name] = true
		if _, err := c.rt.StopPodSandbox(ctx, &cri.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			return fmt.Errorf("restart pod %s: stopping sandbox %s: %w", ref, api.Short(sb.Id), err)
		}
		stopped[sb.Id] = true
	}
	tick := time.NewTicker(c.Poll)
	defer tick.Stop()
	for {
		now, err := c.ready(ctx, ns, name)
		if err == nil {
			for _, sb := range now {
				if !stopped[sb.Id] && names[sb.Metadata.Name] {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("restart pod %s: no new sandbox ready within %s (kubelet recreates static pods)", ref, c.Timeout)
			}
			return fmt.Errorf("restart pod %s: %w", ref, ctx.Err())
		case <-tick.C:
		}
	}
}

// Version asks the runtime's Version: the CRI answers (a verified refresh's crio check).
func (c *CRI) Version(ctx context.Context) error {
	v, err := c.rt.Version(ctx, &cri.VersionRequest{})
	if err != nil {
		return fmt.Errorf("CRI Version: %w", err)
	}
	if v.GetRuntimeApiVersion() == "" {
		return errors.New("CRI Version: no runtime API version in the answer")
	}
	return nil
}

// PodRunning says whether static pod ref ("namespace/name") has a ready sandbox whose containers
// all run (a verified refresh's check of a restarted pod).
func (c *CRI) PodRunning(ctx context.Context, ref string) error {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok {
		return fmt.Errorf("pod %q: not namespace/name", ref)
	}
	sbs, err := c.ready(ctx, ns, name)
	if err != nil {
		return fmt.Errorf("listing sandboxes: %w", err)
	}
	if len(sbs) == 0 {
		return errors.New("no ready sandbox")
	}
	for _, sb := range sbs {
		resp, err := c.rt.ListContainers(ctx, &cri.ListContainersRequest{Filter: &cri.ContainerFilter{PodSandboxId: sb.Id}})
		if err != nil {
			return fmt.Errorf("listing containers: %w", err)
		}
		if len(resp.Containers) == 0 {
			return fmt.Errorf("sandbox %s has no container", api.Short(sb.Id))
		}
		for _, ct := range resp.Containers {
			if ct.State != cri.ContainerState_CONTAINER_RUNNING {
				return fmt.Errorf("container %s of sandbox %s is %s", ct.GetMetadata().GetName(), api.Short(sb.Id), strings.TrimPrefix(ct.State.String(), "CONTAINER_"))
			}
		}
	}
	return nil
}

// ready lists the ready sandboxes of static pod ns/name on this node.
func (c *CRI) ready(ctx context.Context, ns, name string) ([]*cri.PodSandbox, error) {
	// Filtered here, by the sandbox's own metadata: labels are kubelet's convention, not the CRI's.
	resp, err := c.rt.ListPodSandbox(ctx, &cri.ListPodSandboxRequest{Filter: &cri.PodSandboxFilter{
		State: &cri.PodSandboxStateValue{State: cri.PodSandboxState_SANDBOX_READY},
	}})
	if err != nil {
		return nil, err
	}
	var exact, static, prefixed []*cri.PodSandbox
	for _, sb := range resp.Items {
		if sb.Metadata == nil || sb.Metadata.Namespace != ns || sb.State != cri.PodSandboxState_SANDBOX_READY {
			continue
		}
		switch n := sb.Metadata.Name; {
		case c.NodeName != "" && n == name+"-"+c.NodeName, n == name:
			exact = append(exact, sb)
		case c.NodeName == "" && strings.HasPrefix(n, name+"-") && sb.Annotations[configSourceAnnotation] == "file":
			static = append(static, sb)
		case c.NodeName == "" && strings.HasPrefix(n, name+"-"):
			prefixed = append(prefixed, sb)
		}
	}
	// Kubelet names a static pod "<name>-<node>" and marks it as from a file. Without the node's
	// name, a sandbox with that prefix is taken only when it is marked static, or when it is the
	// only one: never a guess between several pods.
	switch {
	case len(exact) > 0:
		return exact, nil
	case len(static) > 0:
		return static, nil
	case len(prefixed) == 1:
		return prefixed, nil
	case len(prefixed) > 1:
		return nil, fmt.Errorf("%d sandboxes could be static pod %s/%s and none is marked static: set --node-name", len(prefixed), ns, name)
	}
	return nil, nil
}

// Runner runs a plan's actions: systemd jobs on Units, static pod restarts on Pods. Either may be
// nil: its actions are then skipped, as with --systemd none.
type Runner struct {
	Units Units
	Pods  *CRI
}

// Run runs one action.
func (r Runner) Run(ctx context.Context, a plan.UnitAction) error {
	if a.Pod != "" {
		if r.Pods == nil {
			return nil
		}
		return r.Pods.RestartPod(ctx, a.Pod)
	}
	if r.Units == nil {
		return nil
	}
	return r.Units.Run(ctx, a)
}

// SkipsAction reports whether a will not run: a pod restart without a CRI, a unit job without a
// manager (--systemd none).
func (r Runner) SkipsAction(a plan.UnitAction) bool {
	if a.Pod != "" {
		return r.Pods == nil
	}
	return r.Units == nil || Skips(r.Units)
}

// Close closes both.
func (r Runner) Close() {
	if r.Units != nil {
		r.Units.Close()
	}
	if r.Pods != nil {
		r.Pods.Close()
	}
}
