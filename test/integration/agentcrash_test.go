package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/kubetest"
)

// TestAgentCrashAndRestart kills the agent (`refresh-agent run`) with SIGKILL at a random step of a
// refresh, restarts it, and checks that the node ends all-new, with a clean journal, annotations
// that match the files, and crio reloaded for the committed state. REFRESH_AGENT_CRASH_TRIALS sets
// the number of trials (make crash-test: 200; make test: 12).
func TestAgentCrashAndRestart(t *testing.T) {
	trials := 12
	if v := os.Getenv("REFRESH_AGENT_CRASH_TRIALS"); v != "" {
		trials, _ = strconv.Atoi(v)
	}
	e := newAgentEnv(t, false)
	mgr := systemdtestManager(t)
	bin := agentBinary(t)
	kubeconfig, err := e.kube.Kubeconfig(kubetest.AgentUser)
	require.NoError(t, err)
	ctx := context.Background()
	steps := []string{"journal", "temp", "backup", "rename", "action", "record", "finish"}
	rng := rand.New(rand.NewPCG(42, uint64(trials)))
	crashed, completed := 0, 0

	for trial := 0; trial < trials; trial++ {
		n := []int{1, 5, 20}[trial%3]
		v1, v2, managed := crashPayloads(n)
		root := t.TempDir()
		require.NoError(t, fixture.NodeRoot(root))
		prepareV1(t, bin, root, v1)
		reset, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
			api.AnnotationCurrent: "v1", api.AnnotationDesired: "v1", api.AnnotationState: api.StateDone, api.AnnotationReason: ""}}})
		_, err := e.admin.CoreV1().Nodes().Patch(ctx, e.node, types.MergePatchType, reset, metav1.PatchOptions{})
		require.NoError(t, err)
		e.publishRaw(t, v1.JSON(), "v1")
		mgr.ResetMarkers(t)

		step := steps[rng.IntN(len(steps))]
		at := 1 + rng.IntN(map[string]int{"journal": 4, "temp": n + 1, "backup": n + 1, "rename": n + 1}[step]+1)
		start := func(env ...string) *exec.Cmd {
			cmd := exec.Command(bin, "run", "--node-name", e.node, "--root", root, "--namespace", e.ns, "--configmap", e.cm,
				"--systemd", "user", "--kubeconfig", kubeconfig, "--metrics-addr", "", "--health-addr", "")
			cmd.Env = append(os.Environ(), env...)
			cmd.Stderr = e
			require.NoError(t, cmd.Start())
			return cmd
		}
		hash := fmt.Sprintf("t%03d", trial)
		cmd := start(fmt.Sprintf("%s=%s:%d", crashEnv, step, at))
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		e.waitState(t, "v1", api.StateDone, 30*time.Second)
		e.publishRaw(t, v2.JSON(), hash)
		select {
		case err := <-exited:
			require.True(t, killed(err), "trial %d (%s:%d): agent exited without the crash: %v", trial, step, at, err)
			crashed++
		case <-time.After(8 * time.Second):
			_ = cmd.Process.Kill() // the step came fewer times than `at`: the refresh completed
			<-exited
			completed++
		}

		restarted := start()
		ann := e.waitState(t, hash, api.StateDone, 60*time.Second)
		require.Equal(t, hash, ann[api.AnnotationCurrent], "trial %d (%s:%d)", trial, step, at)
		_ = restarted.Process.Signal(os.Interrupt)
		_ = restarted.Wait()

		require.Equal(t, "v2", version(t, root, v1, v2, managed), "trial %d (%s:%d): files all new", trial, step, at)
		state := filepath.Join(root, "var/lib/refresh-agent")
		require.Equal(t, hash, apply.CurrentHash(state), "trial %d: record matches the annotations", trial)
		_, jerr := os.Stat(filepath.Join(state, "journal.json"))
		require.True(t, os.IsNotExist(jerr), "trial %d: journal clean", trial)
		requireNoTemps(t, root)
		reloads := mgr.Reloads(crio)
		require.GreaterOrEqual(t, reloads, 1, "trial %d (%s:%d): crio reloaded for the committed state", trial, step, at)
		require.LessOrEqual(t, reloads, 2, "trial %d (%s:%d)", trial, step, at)
	}
	t.Logf("agent crash trials: %d (killed mid-refresh: %d, after completion: %d); every node ended all-new, clean and reported", trials, crashed, completed)
}

func (e *agentEnv) publishRaw(t *testing.T, payload []byte, hash string) {
	_, err := publishData(e, payload, hash)
	require.NoError(t, err)
}
