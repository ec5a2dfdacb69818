package verify_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/critest"
	"github.com/openshift/refresh-agent/verify"
)

// healthz serves 200 while healthy is true, 500 after.
func healthz(t *testing.T) (url string, healthy *atomic.Bool, asked *atomic.Int32) {
	healthy, asked = &atomic.Bool{}, &atomic.Int32{}
	healthy.Store(true)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		if !healthy.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(s.Close)
	return s.URL + "/healthz", healthy, asked
}

var fast = verify.Env{Interval: 20 * time.Millisecond}

func TestHealthyThroughTheWindow(t *testing.T) {
	url, _, asked := healthz(t)
	checks := []verify.Check{{Name: "kubelet", Kind: verify.KindHTTP, Target: url, Expect: 200}}
	require.NoError(t, verify.Run(context.Background(), checks, 200*time.Millisecond, fast))
	require.Greater(t, asked.Load(), int32(2), "asked through the window, not once")
}

func TestHealthyThenBadFails(t *testing.T) {
	url, healthy, asked := healthz(t)
	checks := []verify.Check{{Name: "kubelet", Kind: verify.KindHTTP, Target: url, Expect: 200}}
	go func() {
		for asked.Load() < 2 {
			time.Sleep(5 * time.Millisecond)
		}
		healthy.Store(false)
	}()
	err := verify.Run(context.Background(), checks, 10*time.Second, fast)
	var f *verify.Failure
	require.ErrorAs(t, err, &f)
	require.Equal(t, "kubelet", f.Check.Name)
	require.Contains(t, err.Error(), "healthy after the actions, then GET")
	require.Contains(t, err.Error(), "answered 500, expected 200")
}

func TestNeverHealthyFailsAtTheWindowsEnd(t *testing.T) {
	url, healthy, _ := healthz(t)
	healthy.Store(false)
	checks := []verify.Check{{Name: "kubelet", Kind: verify.KindHTTP, Target: url, Expect: 200}}
	err := verify.Run(context.Background(), checks, 150*time.Millisecond, fast)
	require.ErrorContains(t, err, "verification failed: kubelet: not healthy within 150ms after the actions: GET")
}

func TestSlowToComeUpIsHealthy(t *testing.T) {
	url, healthy, asked := healthz(t)
	healthy.Store(false)
	go func() {
		for asked.Load() < 3 {
			time.Sleep(5 * time.Millisecond)
		}
		healthy.Store(true)
	}()
	checks := []verify.Check{{Name: "kubelet", Kind: verify.KindHTTP, Target: url, Expect: 200}}
	require.NoError(t, verify.Run(context.Background(), checks, 400*time.Millisecond, fast))
}

func TestCRIChecks(t *testing.T) {
	rt := critest.Start(t)
	rt.AddPod("kube-system", "haproxy", true)
	c, err := actions.DialCRI(rt.Socket, "")
	require.NoError(t, err)
	t.Cleanup(c.Close)
	env := fast
	env.Runtime = c
	checks := []verify.Check{
		{Name: "crio", Kind: verify.KindCRI, Target: rt.Socket},
		{Name: "pod kube-system/haproxy", Kind: verify.KindPod, Target: "kube-system/haproxy"},
	}
	require.NoError(t, verify.Run(context.Background(), checks, 100*time.Millisecond, env))

	rt.SetFailVersion(true)
	err = verify.Run(context.Background(), checks, 100*time.Millisecond, env)
	require.ErrorContains(t, err, "verification failed: crio: not healthy within 100ms after the actions: CRI Version")
	rt.SetFailVersion(false)

	// A restarted pod whose new sandbox's containers exited.
	rt.SetExited(true)
	require.NoError(t, c.RestartPod(context.Background(), "kube-system/haproxy"))
	err = verify.Run(context.Background(), checks, 100*time.Millisecond, env)
	require.ErrorContains(t, err, "verification failed: pod kube-system/haproxy: not healthy within 100ms after the actions: container haproxy of sandbox")
	require.ErrorContains(t, err, "is EXITED")
}

func TestNodeNotReadyDuringTheWindowFails(t *testing.T) {
	var ready atomic.Bool
	ready.Store(true)
	changed := make(chan struct{}, 1)
	env := verify.Env{Interval: time.Hour, Changed: changed, NodeReady: func() error {
		if !ready.Load() {
			return errors.New("Ready is False (KubeletNotReady: container runtime is down)")
		}
		return nil
	}}
	done := make(chan error, 1)
	go func() { done <- verify.Run(context.Background(), nil, 10*time.Second, env) }()
	time.Sleep(20 * time.Millisecond)
	ready.Store(false)
	changed <- struct{}{} // the Node watch wakes the check at once: no polling of the API
	select {
	case err := <-done:
		require.ErrorContains(t, err, "verification failed: node Ready: Ready is False (KubeletNotReady")
	case <-time.After(5 * time.Second):
		t.Fatal("a Node turned NotReady did not end the window")
	}
}

func TestOffAndNothingToCheck(t *testing.T) {
	require.NoError(t, verify.Run(context.Background(), []verify.Check{{Name: "x", Kind: verify.KindHTTP, Target: "http://127.0.0.1:1/", Expect: 200}}, 0, fast))
	start := time.Now()
	require.NoError(t, verify.Run(context.Background(), nil, time.Hour, fast), "nothing to check and no Node: no window")
	require.Less(t, time.Since(start), time.Minute)
}

func TestNonLoopbackIsNeverAsked(t *testing.T) {
	checks := []verify.Check{{Name: "evil", Kind: verify.KindHTTP, Target: "http://10.0.0.1/healthz", Expect: 200}}
	err := verify.Run(context.Background(), checks, 50*time.Millisecond, fast)
	require.ErrorContains(t, err, "host must be a loopback address")
}

func TestARedirectNeverLeavesTheNode(t *testing.T) {
	s := httptest.NewServer(http.RedirectHandler("http://10.0.0.1/healthz", http.StatusFound))
	t.Cleanup(s.Close)
	checks := []verify.Check{{Name: "redirect", Kind: verify.KindHTTP, Target: s.URL, Expect: 200}}
	_, _, notes := verify.Baseline(context.Background(), checks, verify.Env{})
	require.Len(t, notes, 1)
	require.Contains(t, notes[0], "host must be a loopback address")
}

func TestForDerivesChecksFromTheActions(t *testing.T) {
	acts := []plan.UnitAction{
		{Unit: "systemd", Action: allowlist.ActionDaemonReload},
		{Unit: allowlist.UnitCrio, Action: allowlist.ActionReload},
		{Unit: allowlist.UnitKubelet, Action: allowlist.ActionRestart},
		{Pod: "openshift-kube-apiserver/kube-apiserver-proxy", Action: allowlist.ActionRestart},
		{Unit: "chronyd.service", Action: allowlist.ActionRestart},
	}
	probes := map[string][]allowlist.Probe{"chronyd.service": {{HTTP: "http://127.0.0.1:9999/ok", Expect: 204}}}
	checks, notes := verify.For(acts, probes, verify.Options{Window: time.Second, CRISocket: "/run/crio/crio.sock"})
	require.Empty(t, notes)
	var names []string
	for _, c := range checks {
		names = append(names, c.String())
	}
	require.Equal(t, []string{
		"crio (cri /run/crio/crio.sock)",
		"kubelet (GET http://127.0.0.1:10248/healthz expects 200)",
		"pod openshift-kube-apiserver/kube-apiserver-proxy (pod openshift-kube-apiserver/kube-apiserver-proxy)",
		"probe http://127.0.0.1:9999/ok (GET http://127.0.0.1:9999/ok expects 204)",
	}, names)

	checks, notes = verify.For(acts[:2], nil, verify.Options{Window: time.Second})
	require.Empty(t, checks)
	require.Equal(t, []string{"crio.service is not verified: no CRI socket (--cri-socket none)"}, notes)

	checks, _ = verify.For(acts, probes, verify.Options{})
	require.Empty(t, checks, "window 0 turns verification off")
}

func TestPolicyProbesAreLoopbackOnlyAndNodeSideOnly(t *testing.T) {
	for doc, want := range map[string]string{
		`{"paths":[{"path":"/etc/x.conf","action":"Restart","services":["crio.service"],"probe":{"http":"http://10.1.2.3/healthz"}}]}`:               "host must be a loopback address",
		`{"paths":[{"path":"/etc/x.conf","action":"Restart","services":["crio.service"],"probe":{"http":"file:///etc/shadow"}}]}`:                    "scheme must be http or https",
		`{"paths":[{"path":"/etc/x.conf","action":"Restart","services":["crio.service"],"probe":{"http":"http://u:p@127.0.0.1/"}}]}`:                 "no user info",
		`{"paths":[{"path":"/etc/x.conf","action":"Restart","services":["crio.service"],"probe":{"http":"http://127.0.0.1/","expect":42}}]}`:         "not an HTTP status code",
		`{"paths":[{"path":"/etc/x.conf","action":"None","probe":{"http":"http://127.0.0.1/"}}]}`:                                                    "action None runs nothing to verify",
		`{"paths":[{"path":"/etc/x.conf","action":"Restart","services":["crio.service"],"probe":{"http":"http://localhost.evil.example/healthz"}}]}`: "host must be a loopback address",
	} {
		_, err := allowlist.ParsePolicy([]byte(doc))
		require.ErrorContains(t, err, want, doc)
	}
	p, err := allowlist.ParsePolicy([]byte(`{"paths":[{"path":"/etc/x.conf","action":"Restart","services":["crio.service"],"probe":{"http":"http://[::1]:8080/ok"}}]}`))
	require.NoError(t, err)
	require.Equal(t, map[string][]allowlist.Probe{"crio.service": {{HTTP: "http://[::1]:8080/ok", Expect: 200}}}, p.Probes())

	_, err = allowlist.ParseRules([]byte(`[{"path":"/etc/x.conf","action":"Restart","services":["crio.service"],"probe":{"http":"http://127.0.0.1/"}}]`))
	require.ErrorContains(t, err, "probe is a node policy field, not a no-reboot-paths one")
}
