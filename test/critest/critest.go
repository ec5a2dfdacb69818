// Package critest serves the CRI's RuntimeService on a unix socket for tests, with the part of
// kubelet that matters to a static pod restart: a stopped sandbox of a static pod is replaced by a
// new, ready one after a short delay, as kubelet's pod workers do.
package critest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Runtime is a fake container runtime plus kubelet's recreate loop.
type Runtime struct {
	cri.UnimplementedRuntimeServiceServer
	Socket string

	mu        sync.Mutex
	sandboxes []*cri.PodSandbox
	next      int
	// Stops counts StopPodSandbox calls per pod name.
	stops map[string]int
	// exited marks sandboxes whose containers are exited.
	exited map[string]bool
	// NoRecreate makes "kubelet" leave stopped pods down (a pod that never comes back).
	NoRecreate bool
	// FailStop makes StopPodSandbox fail.
	FailStop bool
	// RecreateDelay is how long "kubelet" takes to bring a stopped static pod back.
	RecreateDelay time.Duration
	// FailVersion makes the Version call fail (a runtime that no longer answers); so does the
	// existence of the file FailVersionIf names (a stand-in crio unit breaks its runtime on reload).
	FailVersion   bool
	FailVersionIf string
	// Exited makes the containers of sandboxes created from now on (a restarted pod's) exited.
	Exited bool
}

// Start serves a runtime on a socket in a temp dir until the test ends.
func Start(t testing.TB) *Runtime {
	t.Helper()
	r, stop, err := Serve(filepath.Join(t.TempDir(), "crio.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return r
}

// Serve serves a runtime on socket until stop is called (for the demo; tests use Start).
func Serve(socket string) (r *Runtime, stop func(), err error) {
	r = &Runtime{Socket: socket, stops: map[string]int{}, exited: map[string]bool{}, RecreateDelay: 50 * time.Millisecond}
	l, err := net.Listen("unix", r.Socket)
	if err != nil {
		return nil, nil, err
	}
	srv := grpc.NewServer()
	cri.RegisterRuntimeServiceServer(srv, r)
	go func() { _ = srv.Serve(l) }()
	return r, srv.Stop, nil
}

// AddPod adds a ready sandbox. static marks it as kubelet marks static pods.
func (r *Runtime) AddPod(ns, name string, static bool) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.add(ns, name, static, 0)
}

func (r *Runtime) add(ns, name string, static bool, attempt uint32) string {
	r.next++
	id := fmt.Sprintf("%064d", r.next)
	ann := map[string]string{}
	if static {
		ann["kubernetes.io/config.source"] = "file"
	}
	r.exited[id] = r.Exited
	r.sandboxes = append(r.sandboxes, &cri.PodSandbox{Id: id, State: cri.PodSandboxState_SANDBOX_READY,
		Metadata:    &cri.PodSandboxMetadata{Name: name, Namespace: ns, Uid: "uid-" + name, Attempt: attempt},
		Labels:      map[string]string{"io.kubernetes.pod.namespace": ns, "io.kubernetes.pod.name": name},
		Annotations: ann, CreatedAt: time.Now().UnixNano()})
	return id
}

// Stops returns how many times pod name's sandboxes were stopped.
func (r *Runtime) Stops(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stops[name]
}

// Ready returns the IDs of pod name's ready sandboxes.
func (r *Runtime) Ready(name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, sb := range r.sandboxes {
		if sb.Metadata.Name == name && sb.State == cri.PodSandboxState_SANDBOX_READY {
			ids = append(ids, sb.Id)
		}
	}
	return ids
}

// Version answers the CRI handshake.
func (r *Runtime) Version(context.Context, *cri.VersionRequest) (*cri.VersionResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := os.Stat(r.FailVersionIf); r.FailVersion || (r.FailVersionIf != "" && err == nil) {
		return nil, status.Error(codes.Unavailable, "runtime not answering (injected)")
	}
	return &cri.VersionResponse{Version: "0.1.0", RuntimeName: "critest", RuntimeVersion: "0", RuntimeApiVersion: "v1"}, nil
}

// ListPodSandbox applies the state and label filters as CRI-O does.
func (r *Runtime) ListPodSandbox(_ context.Context, req *cri.ListPodSandboxRequest) (*cri.ListPodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*cri.PodSandbox
	for _, sb := range r.sandboxes {
		if f := req.GetFilter(); f != nil {
			if f.Id != "" && f.Id != sb.Id {
				continue
			}
			if f.State != nil && f.State.State != sb.State {
				continue
			}
			match := true
			for k, v := range f.LabelSelector {
				if sb.Labels[k] != v {
					match = false
				}
			}
			if !match {
				continue
			}
		}
		out = append(out, sb)
	}
	return &cri.ListPodSandboxResponse{Items: out}, nil
}

// SetFailVersion and SetExited change the knobs under the runtime's lock.
func (r *Runtime) SetFailVersion(v bool) { r.mu.Lock(); r.FailVersion = v; r.mu.Unlock() }
func (r *Runtime) SetExited(v bool)      { r.mu.Lock(); r.Exited = v; r.mu.Unlock() }

// ListContainers lists one container per sandbox, running unless its sandbox was made with Exited.
func (r *Runtime) ListContainers(_ context.Context, req *cri.ListContainersRequest) (*cri.ListContainersResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*cri.Container
	for _, sb := range r.sandboxes {
		if f := req.GetFilter(); f != nil && f.PodSandboxId != "" && f.PodSandboxId != sb.Id {
			continue
		}
		st := cri.ContainerState_CONTAINER_RUNNING
		if r.exited[sb.Id] || sb.State != cri.PodSandboxState_SANDBOX_READY {
			st = cri.ContainerState_CONTAINER_EXITED
		}
		out = append(out, &cri.Container{Id: "c" + sb.Id[1:], PodSandboxId: sb.Id, State: st,
			Metadata: &cri.ContainerMetadata{Name: sb.Metadata.Name}})
	}
	return &cri.ListContainersResponse{Containers: out}, nil
}

// StopPodSandbox marks the sandbox not ready; "kubelet" then creates a new one for a static pod.
func (r *Runtime) StopPodSandbox(_ context.Context, req *cri.StopPodSandboxRequest) (*cri.StopPodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.FailStop {
		return nil, status.Error(codes.Internal, "stop failed (injected)")
	}
	for _, sb := range r.sandboxes {
		if sb.Id != req.PodSandboxId {
			continue
		}
		r.stops[sb.Metadata.Name]++
		if sb.State == cri.PodSandboxState_SANDBOX_NOTREADY {
			return &cri.StopPodSandboxResponse{}, nil
		}
		sb.State = cri.PodSandboxState_SANDBOX_NOTREADY
		if !r.NoRecreate {
			md, static := sb.Metadata, sb.Annotations["kubernetes.io/config.source"] == "file"
			time.AfterFunc(r.RecreateDelay, func() {
				r.mu.Lock()
				defer r.mu.Unlock()
				r.add(md.Namespace, md.Name, static, md.Attempt+1)
			})
		}
		return &cri.StopPodSandboxResponse{}, nil
	}
	return nil, status.Errorf(codes.NotFound, "sandbox %s not found", req.PodSandboxId)
}
