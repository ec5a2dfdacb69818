package integration

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
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

// pacedNode is one node of a paced pool: a temp root whose unit actions fail while the registries
// file holds fixture.FailMarker, and an agent with a pacer.
type pacedNode struct {
	name  string
	root  string
	units *fixture.MarkerUnits
	logs  *syncLog
}

type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// poolWatch follows the pool's Nodes and keeps the most nodes ever seen refreshing (Working without
// the waiting reason) at once.
type poolWatch struct {
	mu          sync.Mutex
	states      map[string]wireStatus
	maxWorking  int
	worst       string // the states when maxWorking was reached
	waitingSeen bool
}

func watchPool(t *testing.T, admin kubernetes.Interface, pool string) *poolWatch {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := admin.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: api.LabelNodePool + "=" + pool})
	require.NoError(t, err)
	pw := &poolWatch{states: map[string]wireStatus{}}
	go func() {
		for ev := range w.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			pw.mu.Lock()
			pw.states[n.Name] = wireStatus{Current: n.Annotations[api.AnnotationCurrent], Desired: n.Annotations[api.AnnotationDesired],
				State: n.Annotations[api.AnnotationState], Reason: n.Annotations[api.AnnotationReason]}
			working := 0
			for _, s := range pw.states {
				if s.State == api.StateWorking && !strings.HasPrefix(s.Reason, api.ReasonWaitingPrefix) && !strings.HasPrefix(s.Reason, "deferred") {
					working++
				}
				if strings.HasPrefix(s.Reason, api.ReasonWaitingPrefix) {
					pw.waitingSeen = true
				}
			}
			if working > pw.maxWorking {
				pw.worst = fmt.Sprint(pw.states)
			}
			pw.maxWorking = max(pw.maxWorking, working)
			pw.mu.Unlock()
		}
	}()
	return pw
}

func (pw *poolWatch) count(f func(wireStatus) bool) int {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	n := 0
	for _, s := range pw.states {
		if f(s) {
			n++
		}
	}
	return n
}

// pacedPoolEnv is a pool of agents with pacers against the real API server.
type pacedPoolEnv struct {
	admin kubernetes.Interface
	nodes []*pacedNode
	pw    *poolWatch
	pub   func(c *fixture.Config, hash string)
	all   func(hash, state string) func() bool
}

// pacedPool starts size agents in pool (--max-concurrent slots, --slot-ttl ttl), every node Done at
// v1 from the start. Extra Nodes of the pool (not run by an agent) are created first.
func pacedPool(t *testing.T, ns, pool string, size, slots int, ttl time.Duration, extra ...string) *pacedPoolEnv {
	kubeSrv := requireKube(t)
	admin, err := kubernetes.NewForConfig(kubeSrv.Config(kubetest.AdminUser))
	require.NoError(t, err)
	publisher, err := kube.New(kubeSrv.Config(kubetest.AdminUser))
	require.NoError(t, err)
	cm := api.ConfigMapName("", pool)
	ctx := context.Background()
	e := &pacedPoolEnv{admin: admin, pw: watchPool(t, admin, pool)}
	empty, err := diff.Decode(fixture.Ignition("3.2.0").EmbedMachine(fixture.DefaultMachine()).JSON())
	require.NoError(t, err)
	e.pub = func(c *fixture.Config, hash string) {
		_, err := publish.Publish(ctx, publisher, ns, cm, c.JSON(), nil, hash)
		require.NoError(t, err)
	}
	e.pub(base(), "v1")
	for _, name := range extra {
		_, err = admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels:      map[string]string{api.LabelNodePool: pool},
			Annotations: map[string]string{api.AnnotationCurrent: "v1", api.AnnotationDesired: "v1", api.AnnotationState: api.StateDone}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	for i := 0; i < size; i++ {
		n := &pacedNode{name: fmt.Sprintf("%s-%d", pool, i), root: t.TempDir(), logs: &syncLog{}}
		require.NoError(t, fixture.NodeRoot(n.root))
		n.units = &fixture.MarkerUnits{Root: n.root, Path: registries}
		host := hostAt(t, n.root, n.units, nil)
		res, err := apply.Run(ctx, host, apply.Request{Desired: base().JSON(), Hash: "v1", Current: empty})
		require.NoError(t, err)
		require.Equal(t, api.OutcomeApplied, res.Outcome, res.Reason)
		_, err = admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name,
			Labels:      map[string]string{api.LabelNodePool: pool},
			Annotations: map[string]string{api.AnnotationCurrent: "v1", api.AnnotationDesired: "v1", api.AnnotationState: api.StateDone}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(context.Background(), n.name, metav1.DeleteOptions{}) })

		agentCfg := kubeSrv.Config(kubetest.AgentUser)
		agentCfg.UserAgent = "refresh-agent/" + n.name // tells the agents apart in the audit log
		client, err := kube.New(agentCfg)
		require.NoError(t, err)
		leases, err := kube.NewLeases(agentCfg)
		require.NoError(t, err)
		log := slog.New(slog.NewTextHandler(n.logs, nil)).With("node", n.name)
		limit, _ := pacing.ParseLimit(fmt.Sprint(slots))
		pacer := pacing.New(pacing.Config{Leases: leases, Watch: leases, Nodes: client, Namespace: ns, Node: n.name,
			Limit: limit, TTL: ttl, Spread: 200 * time.Millisecond, Log: log})
		rec, stop := agent.NewRecorder(client, n.name)
		t.Cleanup(stop)
		a := agent.New(agent.Config{NodeName: n.name, Client: client, Source: &agent.APISource{Client: client, Namespace: ns},
			Host: host, Recorder: rec, Log: log, MaxAttempts: 1, Drift: agent.DriftOff, Pacer: pacer})
		actx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Run(actx) }()
		t.Cleanup(func() {
			cancel()
			<-done
			if t.Failed() {
				t.Logf("%s log:\n%s", n.name, n.logs.b.String())
			}
		})
		e.nodes = append(e.nodes, n)
	}
	e.all = func(hash, state string) func() bool {
		return func() bool {
			return e.pw.count(func(s wireStatus) bool { return s.Current == hash && s.State == state }) == size+len(extra)
		}
	}
	return e
}

func TestPacedPoolHaltsOnFailuresAndCompletesOnTheFix(t *testing.T) {
	const ns, pool, size, slots = "refresh-pacing", "paced", 6, 2
	e := pacedPool(t, ns, pool, size, slots, 30*time.Second)
	admin, nodes, pw, pub, all := e.admin, e.nodes, e.pw, e.pub, e.all
	ctx := context.Background()
	require.True(t, kubetest.WaitFor(ctx, 60*time.Second, all("v1", api.StateDone)), "all Done v1")

	// New content: every node refreshes, never more than two at once.
	v2 := base().File(registries, []byte("# v2 mirrors"), 0o644)
	pub(v2, "v2")
	require.True(t, kubetest.WaitFor(ctx, 60*time.Second, all("v2", api.StateDone)), "all Done v2")
	for _, n := range nodes {
		assert.Equal(t, "# v2 mirrors", read(t, n.root, registries), n.name)
	}

	// A refused payload touches nothing and needs no slot: every node says so at once.
	m := fixture.DefaultMachine()
	m.FIPS = true
	pub(base().EmbedMachine(m).File(registries, []byte("# fips mirrors"), 0o644), "fips")
	require.True(t, kubetest.WaitFor(ctx, 60*time.Second, func() bool {
		return pw.count(func(s wireStatus) bool { return s.Desired == "fips" && s.State == api.StateUnreconcilable }) == size
	}), "all Unreconcilable")
	assert.Empty(t, holders(t, admin, ns, pool), "slots held for a refused payload")

	// A payload whose reload fails: two nodes try, fail, roll back and keep their slots; the pool halts.
	bad := base().File(registries, []byte("# v3 "+fixture.FailMarker), 0o644)
	pub(bad, "v3")
	degradedV3 := func(s wireStatus) bool { return s.Desired == "v3" && s.State == api.StateDegraded }
	halted := func(s wireStatus) bool {
		return s.State == api.StateWorking && strings.Contains(s.Reason, fmt.Sprintf("halted: %d nodes failed", slots))
	}
	require.True(t, kubetest.WaitFor(ctx, 60*time.Second, func() bool {
		return pw.count(degradedV3) == slots && pw.count(halted) == size-slots
	}), "halted: %d Degraded, %d waiting", pw.count(degradedV3), pw.count(halted))
	time.Sleep(2 * time.Second) // nothing else moves
	touched := 0
	for _, n := range nodes {
		if n.units.Failures.Load() > 0 {
			touched++
			assert.Equal(t, "# v2 mirrors", read(t, n.root, registries), "%s rolled back", n.name)
		}
	}
	assert.Equal(t, slots, touched, "nodes that tried the failing payload")
	assert.Equal(t, slots, pw.count(degradedV3))
	var waiting []string
	pw.mu.Lock()
	for name, s := range pw.states {
		if s.State == api.StateWorking {
			waiting = append(waiting, name+": "+s.Reason)
		}
	}
	pw.mu.Unlock()
	t.Logf("halted pool: %v", waiting)

	// The fix: the failed nodes give their slots back and the pool completes, still two at a time.
	fixed := base().File(registries, []byte("# v4 mirrors"), 0o644)
	pub(fixed, "v4")
	require.True(t, kubetest.WaitFor(ctx, 90*time.Second, all("v4", api.StateDone)), "all Done v4")
	for _, n := range nodes {
		assert.Equal(t, "# v4 mirrors", read(t, n.root, registries), n.name)
	}
	pw.mu.Lock()
	maxWorking, waited := pw.maxWorking, pw.waitingSeen
	pw.mu.Unlock()
	assert.LessOrEqual(t, maxWorking, slots, "nodes refreshing at once: %s", pw.worst)
	assert.True(t, waited, "no node ever reported waiting for a slot")
	t.Logf("most nodes refreshing at once: %d of %d slots", maxWorking, slots)

	// Every slot is free again once all are Done.
	require.True(t, kubetest.WaitFor(ctx, 10*time.Second, func() bool { return len(holders(t, admin, ns, pool)) == 0 }),
		"slots still held: %v", holders(t, admin, ns, pool))
}

// holders lists the nodes holding one of pool's slots.
func holders(t *testing.T, admin kubernetes.Interface, ns, pool string) []string {
	l, err := admin.CoordinationV1().Leases(ns).List(context.Background(), metav1.ListOptions{LabelSelector: api.LabelSlotPool + "=" + pool})
	require.NoError(t, err)
	var out []string
	for _, le := range l.Items {
		if le.Spec.HolderIdentity != nil && *le.Spec.HolderIdentity != "" {
			out = append(out, le.Name+"="+*le.Spec.HolderIdentity)
		}
	}
	return out
}

// A node that died holding its slot mid-refresh (its Lease no longer renewed, its Node left
// Working) blocks its pool for --slot-ttl only: then the next node takes the slot over, and the pool
// completes without it.
func TestPacedPoolTakesOverADeadHoldersSlot(t *testing.T) {
	const ns, pool, dead, ttl = "refresh-pacing-ttl", "ttl", "a-dead-ttl", 4 * time.Second
	e := pacedPool(t, ns, pool, 3, 1, ttl, dead) // the dead node's name sorts first in the order
	ctx := context.Background()
	require.True(t, kubetest.WaitFor(ctx, 60*time.Second, e.all("v1", api.StateDone)), "all Done v1")

	// The dead node took slot 0 for v2 and said Working, then stopped.
	_, err := e.admin.CoreV1().Nodes().Patch(ctx, dead, "application/merge-patch+json",
		[]byte(`{"metadata":{"annotations":{"`+api.AnnotationDesired+`":"v2","`+api.AnnotationState+`":"Working"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	secs, holder, now := int32(ttl/time.Second), dead, metav1.NewMicroTime(time.Now())
	_, err = e.admin.CoordinationV1().Leases(ns).Create(ctx, &coordv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: api.SlotName(pool, 0), Namespace: ns, Labels: map[string]string{api.LabelSlotPool: pool},
			Annotations: map[string]string{api.AnnotationSlotHash: "v2", api.AnnotationSlotTurn: "0/v2"}},
		Spec: coordv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now}}, metav1.CreateOptions{})
	require.NoError(t, err)
	created := time.Now()
	e.pub(base().File(registries, []byte("# v2 mirrors"), 0o644), "v2")

	agentsDone := func() int {
		return e.pw.count(func(s wireStatus) bool { return s.Current == "v2" && s.State == api.StateDone })
	}
	require.True(t, kubetest.WaitFor(ctx, 5*time.Second, func() bool {
		return e.pw.count(func(s wireStatus) bool { return strings.HasPrefix(s.Reason, api.ReasonWaitingPrefix+" (1/1 in use)") }) == 3
	}), "the agents wait for the dead node's slot")
	require.True(t, kubetest.WaitFor(ctx, 30*time.Second, func() bool { return agentsDone() > 0 }), "no node took the slot over")
	assert.GreaterOrEqual(t, time.Since(created), ttl, "the slot was taken before its holder's TTL ran out")
	require.True(t, kubetest.WaitFor(ctx, 30*time.Second, func() bool { return agentsDone() == 3 }), "the pool did not complete")
	for _, n := range e.nodes {
		assert.Equal(t, "# v2 mirrors", read(t, n.root, registries), n.name)
	}
	require.True(t, kubetest.WaitFor(ctx, 10*time.Second, func() bool { return len(holders(t, e.admin, ns, pool)) == 0 }),
		"slots still held: %v", holders(t, e.admin, ns, pool))
}

// wireStatus is a Node's refresh annotations as they are on the wire (the reason text unparsed):
// these tests check what the agents write, not how api reads it.
type wireStatus struct{ Current, Desired, State, Reason string }
