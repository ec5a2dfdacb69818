package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vincent-petithory/dataurl"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/openshift/refresh-agent/agent"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/kube"
	"github.com/openshift/refresh-agent/pacing"
	"github.com/openshift/refresh-agent/publish"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/kubetest"
)

// A node provisioned with the payload, with no record of the agent's yet and a Node that says
// nothing: its first refresh changes nothing, so it shows Done in one Node patch, never Working,
// unpaced and paced (a no-op needs no slot). A refresh that writes shows Working, then Done.
func TestAFirstRefreshThatChangesNothingPatchesTheNodeOnce(t *testing.T) {
	kubeSrv := requireKube(t)
	admin, err := kubernetes.NewForConfig(kubeSrv.Config(kubetest.AdminUser))
	require.NoError(t, err)
	publisher, err := kube.New(kubeSrv.Config(kubetest.AdminUser))
	require.NoError(t, err)
	for _, slots := range []int{0, 1} {
		t.Run(fmt.Sprintf("max-concurrent-%d", slots), func(t *testing.T) {
			ctx := context.Background()
			ns, pool := fmt.Sprintf("refresh-startup-%d", slots), fmt.Sprintf("startup%d", slots)
			name := pool + "-node"
			cm := api.ConfigMapName("", pool)
			_, err := publish.Publish(ctx, publisher, ns, cm, base().JSON(), nil, "v1")
			require.NoError(t, err)

			// Provisioned with v1: its files, and no record of the agent's.
			dir := t.TempDir()
			require.NoError(t, fixture.NodeRoot(dir))
			units := &fixture.MarkerUnits{Root: dir, Path: registries}
			host := hostAt(t, dir, units, nil)
			stateDir := host.StateDir
			empty, err := diff.Decode(fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).JSON())
			require.NoError(t, err)
			res, err := apply.Run(ctx, host, apply.Request{Desired: base().JSON(), Hash: "v1", Current: empty})
			require.NoError(t, err)
			require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
			require.NoError(t, os.RemoveAll(stateDir))
			require.NoError(t, os.MkdirAll(stateDir, 0o700))
			require.Empty(t, apply.CurrentHash(stateDir))
			// What Ignition wrote at first boot besides: the machine-config server's record of the
			// content it served (the agent's current state when it has no record of its own).
			writePayloadFile(t, dir, base().JSON(), diff.MachineConfigContentPath)

			_, err = admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
				Labels: map[string]string{api.LabelNodePool: pool}}}, metav1.CreateOptions{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
			states := watchStates(t, admin, name)
			a0, err := kubeSrv.Audit()
			require.NoError(t, err)

			client, err := kube.New(kubeSrv.Config(kubetest.AgentUser))
			require.NoError(t, err)
			logs := &syncLog{}
			log := slog.New(slog.NewTextHandler(logs, nil))
			cfg := agent.Config{NodeName: name, Client: client, Source: &agent.APISource{Client: client, Namespace: ns},
				Host: host, Log: log, Drift: agent.DriftOff}
			if slots > 0 {
				leases, err := kube.NewLeases(kubeSrv.Config(kubetest.AgentUser))
				require.NoError(t, err)
				limit, err := pacing.ParseLimit(fmt.Sprint(slots))
				require.NoError(t, err)
				cfg.Pacer = pacing.New(pacing.Config{Leases: leases, Watch: leases, Nodes: client, Namespace: ns, Node: name,
					Limit: limit, Spread: 200 * time.Millisecond, Log: log})
			}
			actx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- agent.New(cfg).Run(actx) }()
			t.Cleanup(func() {
				cancel()
				<-done
				if t.Failed() {
					t.Logf("agent log:\n%s", logs.b.String())
				}
			})

			doneAt := func(hash string) func() bool {
				return func() bool {
					n, err := admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
					return err == nil && n.Annotations[api.AnnotationCurrent] == hash && n.Annotations[api.AnnotationState] == api.StateDone
				}
			}
			require.True(t, kubetest.WaitFor(ctx, 30*time.Second, doneAt("v1")), "Done v1")
			assert.Equal(t, "v1", apply.CurrentHash(stateDir), "the record moved to v1")
			assert.Zero(t, units.Failures.Load())
			time.Sleep(2 * time.Second) // a second patch, if any, lands
			assert.Equal(t, 1, nodePatches(t, kubeSrv, a0, name), "Node patches at start-up")
			assert.Equal(t, []string{"@", "Done@v1"}, states.seen(), "states the Node showed")

			// A refresh that writes says so first.
			_, err = publish.Publish(ctx, publisher, ns, cm, base().File(registries, []byte("# v2 mirrors"), 0o644).JSON(), nil, "v2")
			require.NoError(t, err)
			require.True(t, kubetest.WaitFor(ctx, 30*time.Second, doneAt("v2")), "Done v2")
			seen := states.seenUntil("Done@v2")
			require.NotEmpty(t, seen)
			assert.Equal(t, "Done@v2", seen[len(seen)-1], "states the Node showed: %v", seen)
			assert.Contains(t, seen, "Working@v2", "states the Node showed: %v", seen)
		})
	}
}

// writePayloadFile writes payload's file path under root, as Ignition would.
func writePayloadFile(t *testing.T, root string, payload []byte, path string) {
	var cfg struct {
		Storage struct {
			Files []struct {
				Path     string `json:"path"`
				Contents struct {
					Source string `json:"source"`
				} `json:"contents"`
			} `json:"files"`
		} `json:"storage"`
	}
	require.NoError(t, json.Unmarshal(payload, &cfg))
	for _, f := range cfg.Storage.Files {
		if f.Path == path {
			u, err := dataurl.DecodeString(f.Contents.Source)
			require.NoError(t, err)
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, path)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, path), u.Data, 0o644))
			return
		}
	}
	t.Fatalf("no %s in the payload", path)
}

// nodePatches counts the agent's patches of Node name in the audit log since event from.
func nodePatches(t *testing.T, s *kubetest.Server, from []kubetest.AuditEvent, name string) int {
	ev, err := s.Audit()
	require.NoError(t, err)
	n := 0
	for _, e := range ev[len(from):] {
		if e.Verb == "patch" && e.ObjectRef.Resource == "nodes" && strings.Contains(e.RequestURI, "/nodes/"+name) {
			n++
		}
	}
	return n
}
