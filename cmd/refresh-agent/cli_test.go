package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/fleet"
)

func cli(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpPrintsToStdoutAndExitsZero(t *testing.T) {
	for _, s := range synopses {
		for _, h := range []string{"--help", "-h"} {
			code, out, stderr := cli(s.name, h)
			assert.Equal(t, exitOK, code, "%s %s", s.name, h)
			assert.Empty(t, stderr, "%s %s", s.name, h)
			assert.Contains(t, out, "usage: refresh-agent "+s.name, "%s %s", s.name, h)
			assert.Contains(t, out, s.text)
		}
	}
	code, out, stderr := cli("--help")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	for _, s := range synopses {
		assert.Contains(t, out, s.name)
	}
	code, out, _ = cli("status", "--help")
	require.Equal(t, exitOK, code)
	for _, f := range []string{"--kubeconfig", "--context", "--pool", "--configmap-template", "--configmap", "-o, --output", "--hash", "--selector"} {
		assert.Contains(t, out, f)
	}
	_, out, _ = cli("publish", "--help")
	for _, f := range []string{"--kubeconfig", "--context", "--pool", "--create-namespace", "--configmap"} {
		assert.Contains(t, out, f)
	}
	_, out, _ = cli("run", "--help")
	for _, f := range []string{"--kubeconfig", "--context", "--log-level", "--metrics-cert-dir"} {
		assert.Contains(t, out, f)
	}
	for _, c := range []string{"apply", "recover"} {
		_, out, _ = cli(c, "--help")
		assert.Contains(t, out, "--log-level", c)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, stderr := cli(args...)
		assert.Equal(t, exitOK, code)
		assert.Equal(t, version+"\n", out)
		assert.Empty(t, stderr)
	}
}

func TestUnknownFlagOrStrayArgumentIsUsageError(t *testing.T) {
	cases := map[string][]string{
		"unknown flag":        {"status", "--pool", "p", "--nope"},
		"stray argument":      {"diff", "--current", "a", "--desired", "b", "extra"},
		"stray before flags":  {"publish", "payload.ign", "--pool", "p"},
		"unknown shorthand":   {"apply", "-q"},
		"missing flag value":  {"run", "--node-name"},
		"bad duration":        {"run", "--shutdown-grace", "soon"},
		"version takes none":  {"version", "x"},
		"recover stray":       {"recover", "--root", "/", "now"},
		"unknown command":     {"upgrade"},
		"no command":          {},
		"single-dash longopt": {"status", "-pool", "p"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := cli(args...)
			assert.Equal(t, exitInvalid, code)
			assert.Empty(t, out)
			assert.Contains(t, stderr, "usage: refresh-agent")
		})
	}
	_, _, stderr := cli("diff", "--current", "a", "--desired", "b", "extra")
	assert.Contains(t, stderr, `unexpected argument "extra"`)
	_, _, stderr = cli("status", "--nope")
	assert.Contains(t, stderr, "unknown flag: --nope")
}

func TestStatusAndPublishNeedAPoolOrName(t *testing.T) {
	code, _, stderr := cli("status")
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, "--pool")
	code, _, stderr = cli("status", "--selector", "a=b")
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, "--hash is required")
	// Issue 24: --help lists -o table, so it is accepted (it is the default); others are not.
	code, _, stderr = cli("status", "--pool", "p", "-o", "tabel")
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, "--output must be table, wide, json or yaml")
	code, _, stderr = cli("publish", "--payload", "x")
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, "--pool")
	code, _, stderr = cli("run", "--node-name", "n", "--source", "volume", "--watch-dir", "/nonexistent", "--log-level", "loud")
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, "--log-level")
	code, _, stderr = cli("recover", "--root", t.TempDir(), "--systemd", "none", "--log-level", "chatty")
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, `--log-level must be debug, info, warn or error, not "chatty"`)
}

func TestPoolFlagsNameTheConfigMap(t *testing.T) {
	fs := newFlags("status")
	pf := addPoolFlags(fs)
	require.NoError(t, fs.Parse([]string{"--pool", "workers"}))
	assert.Equal(t, api.ConfigMapName("", "workers"), pf.name())
	assert.Equal(t, "workers-refresh", pf.name())
	require.NoError(t, fs.Parse([]string{"--configmap-template", "rc-{pool}"}))
	assert.Equal(t, "rc-workers", pf.name())
	require.NoError(t, fs.Parse([]string{"--configmap", "explicit"}))
	assert.Equal(t, "explicit", pf.name(), "--configmap overrides the template")
}

func node(name string, created time.Time, ann map[string]string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created),
		Labels: map[string]string{api.LabelNodePool: "workers"}, Annotations: ann}}
}

func TestStatusTable(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := strings.Repeat("a", 64)
	nodes := []corev1.Node{
		node("n-done", now.Add(-49*time.Hour), map[string]string{api.AnnotationCurrent: h, api.AnnotationDesired: h, api.AnnotationState: api.StateDone,
			api.AnnotationDrift: "/etc/containers/registries.conf,/var/lib/kubelet/config.json"}),
		node("n-bad", now.Add(-90*time.Minute), map[string]string{api.AnnotationCurrent: "old", api.AnnotationDesired: h,
			api.AnnotationState: api.StateUnreconcilable, api.AnnotationReason: "kernelArguments: change requires a reboot\tand " + strings.Repeat("x", 80)}),
		node("n-new", now.Add(-time.Minute), nil),
	}
	out := statusOutput{Hash: h, ConfigMap: "refresh-agent/workers-refresh", Conditions: fleet.Conditions(nodes, h, nil, now),
		Nodes: statusNodes(nodes, h)}
	var b bytes.Buffer
	require.NoError(t, writeStatusTable(&b, out, false, now))
	lines := strings.Split(b.String(), "\n")
	assert.Regexp(t, `^NODE\s+STATE\s+CURRENT\s+DESIRED\s+DRIFT\s+AGE\s+REASON$`, lines[0])
	assert.Regexp(t, `^n-bad\s+Unreconcilable\s+old\s+aaaaaaaaaaaa\s+<none>\s+90m\s+kernelArguments: change requires a reboot and x+\.\.\.$`, lines[1])
	assert.Regexp(t, `^n-done\s+Done\s+aaaaaaaaaaaa\s+aaaaaaaaaaaa\s+/etc/containers/registries.conf \(\+1\)\s+2d1h\s*$`, lines[2])
	assert.Regexp(t, `^n-new\s+<none>\s+<none>\s+<none>\s+<none>\s+60s\s*$`, lines[3], "a node without an agent is not Refreshing")
	assert.Contains(t, b.String(), "Desired hash aaaaaaaaaaaa (ConfigMap refresh-agent/workers-refresh)")
	assert.NotContains(t, b.String(), h, "the table prints short hashes only, in the messages too")
	assert.Regexp(t, `(?m)^CONDITION\s+STATUS\s+REASON\s+MESSAGE$`, b.String())
	assert.Regexp(t, `(?m)^ConfigRefreshDegraded\s+True\s+NodesUnreconcilable\s+1 node failed to refresh: n-bad`, b.String())
	assert.Regexp(t, `(?m)^ConfigRefreshProgressing\s+Unknown\s+NodesNotReporting\s+1/3 nodes not reporting .*: n-new$`, b.String())

	b.Reset()
	require.NoError(t, writeStatusTable(&b, out, true, now))
	lines = strings.Split(b.String(), "\n")
	assert.Regexp(t, `^NODE\s+STATE\s+CURRENT\s+DESIRED\s+DRIFT\s+AGE\s+REASON\s+PHASE\s+POOL$`, lines[0])
	assert.Contains(t, lines[2], h, "wide prints whole hashes")
	assert.Contains(t, lines[2], "/etc/containers/registries.conf,/var/lib/kubelet/config.json", "wide prints the whole drift list")
	assert.Regexp(t, `\sComplete\s+workers$`, lines[2])
	assert.Regexp(t, `^n-new\s+<none>.*\sNoAgent\s+workers$`, lines[3])
	assert.Contains(t, lines[1], strings.Repeat("x", 80), "wide prints the whole reason")
	assert.Contains(t, b.String(), "Desired hash "+h)
	assert.Equal(t, "NoAgent", out.Nodes[2].Phase)
	assert.Equal(t, "Unreconcilable", out.Nodes[0].Phase)
}

func TestStatusTableWithoutNodes(t *testing.T) {
	now := time.Now()
	out := statusOutput{Hash: "h1", Selector: api.LabelNodePool + "=typo", Conditions: fleet.Conditions(nil, "h1", nil, now), Nodes: statusNodes(nil, "h1")}
	var b bytes.Buffer
	require.NoError(t, writeStatusTable(&b, out, false, now))
	assert.Contains(t, b.String(), "(no nodes match "+api.LabelNodePool+"=typo)")
	assert.Regexp(t, `(?m)^ConfigRefreshComplete\s+False\s+NoNodes\s`, b.String(), "no nodes is never Complete")
	assert.NotContains(t, b.String(), "All 0 nodes")
}

func TestLogDurationsInSeconds(t *testing.T) {
	var b bytes.Buffer
	newLogger(&b, slog.LevelInfo).Info("refresh concluded", "duration", 1500*time.Millisecond)
	var line struct{ Duration float64 }
	require.NoError(t, json.Unmarshal(b.Bytes(), &line), b.String())
	assert.Equal(t, 1.5, line.Duration)
}
