package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/test/fixture"
)

// dashboardQueries returns every panel's queries from the console dashboard, by panel title.
func dashboardQueries(t *testing.T) (map[string][]string, corev1.ConfigMap) {
	raw, err := os.ReadFile("../../deploy/components/monitoring/dashboard.yaml")
	require.NoError(t, err)
	var cm corev1.ConfigMap
	require.NoError(t, yaml.UnmarshalStrict(raw, &cm))
	var dash struct {
		Panels []struct {
			Title   string
			Type    string
			Targets []struct{ Expr string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(cm.Data["refresh-agent.json"]), &dash), "Grafana JSON")
	out := map[string][]string{}
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		assert.Contains(t, []string{"graph", "table", "singlestat", "row"}, p.Type, "a panel type the OpenShift console draws: %s", p.Title)
		for _, tg := range p.Targets {
			out[p.Title] = append(out[p.Title], tg.Expr)
		}
	}
	return out, cm
}

// forPromtool replaces the dashboard's variables as Grafana would: every pool, a 5m rate window.
func forPromtool(expr string) string {
	return strings.NewReplacer("$__rate_interval", "5m", `"$pool"`, `".*"`).Replace(expr)
}

// promtool is Debian's promtool, unpacked by test/promrules/promtool.sh; the test skips without it.
func promtool(t *testing.T) string {
	out, err := exec.Command("bash", "../promrules/promtool.sh").Output()
	if err != nil {
		t.Skipf("promtool unavailable (Debian's prometheus package): %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestDashboardQueries drives a real agent through a refresh of each kind (applied, noop, refused,
// failed, drift found), scrapes its /metrics, and checks every panel of the console dashboard:
// each query is valid PromQL (promtool check rules), names only series that scrape exposes, and,
// evaluated by promtool over those very series (labelled as the ServiceMonitor's scrape labels
// them), returns data.
func TestDashboardQueries(t *testing.T) {
	queries, cm := dashboardQueries(t)
	assert.Equal(t, "openshift-config-managed", cm.Namespace)
	assert.Equal(t, "true", cm.Labels["console.openshift.io/dashboard"])
	tool := promtool(t)

	const pool = "dash"
	e := newAgentEnvNode(t, false, "", poolLabel(pool))
	mgr := systemdtestManager(t)
	cmName := api.ConfigMapName("", pool)
	e.publishTo(t, cmName, base(), "v1")
	e.start(t)
	e.waitState(t, "v1", api.StateDone, 30*time.Second)
	e.publishTo(t, cmName, base().File(registries, []byte("# v2 mirrors"), 0o644), "v2") // applied, crio reloaded
	e.waitState(t, "v2", api.StateDone, 30*time.Second)
	e.publishTo(t, cmName, base().File(registries, []byte("# v2 mirrors"), 0o644), "v2b") // noop
	e.waitState(t, "v2b", api.StateDone, 30*time.Second)
	m := fixture.DefaultMachine()
	m.FIPS = true
	e.publishTo(t, cmName, base().EmbedMachine(m).File(registries, []byte("# v3"), 0o644), "v3") // refused
	e.waitState(t, "v3", api.StateUnreconcilable, 30*time.Second)
	mgr.StandIn(t, crio, true)
	e.publishTo(t, cmName, base().File(registries, []byte("# v4 mirrors"), 0o644), "v4") // failed, rolled back
	e.waitState(t, "v4", api.StateDegraded, 30*time.Second)
	mgr.StandIn(t, crio, false)
	// The failed refresh is retried (with backoff) and now succeeds: only then is a hand edit drift
	// (before, the retry would write over it).
	e.waitState(t, "v4", api.StateDone, 60*time.Second)
	require.NoError(t, os.WriteFile(filepath.Join(e.root, registries), []byte("# by hand"), 0o644)) // drift
	e.waitAnnotations(t, "drift", 30*time.Second, func(a map[string]string) bool { return a[api.AnnotationDrift] != "" })

	// The scrape, as Prometheus stores it: each series with the target labels the ServiceMonitor adds.
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(e.scrape(t)))
	require.NoError(t, err)
	exposed := map[string]bool{}
	var series []string
	target := fmt.Sprintf(`job="refresh-agent-metrics",namespace="refresh-agent",pod="refresh-agent-x1",node=%q,instance="10.0.0.1:9464"`, e.node)
	for name, f := range families {
		if !strings.HasPrefix(name, "refresh_agent_") {
			continue
		}
		vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, f)
		require.NoError(t, err)
		for _, s := range vec {
			metric := string(s.Metric[model.MetricNameLabel])
			exposed[metric] = true
			labels := []string{target}
			for k, v := range s.Metric {
				if k != model.MetricNameLabel {
					labels = append(labels, fmt.Sprintf("%s=%q", k, v))
				}
			}
			sort.Strings(labels[1:])
			values := fmt.Sprintf("%gx20", float64(s.Value)) // a gauge holds its value
			if f.GetType().String() != "GAUGE" {
				values = fmt.Sprintf("0+%gx20", float64(s.Value)) // a counter grows by it every minute
			}
			series = append(series, fmt.Sprintf("      - series: '%s{%s}'\n        values: '%s'", metric, strings.Join(labels, ","), values))
		}
	}
	require.True(t, exposed["refresh_agent_pool_info"], "the agent says its pool")

	// Names: a metric name is an identifier followed by a selector or a range, or any refresh_agent_ one.
	selector := regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\s*[{\[]`)
	ours := regexp.MustCompile(`refresh_agent_[a-zA-Z0-9_:]+`)
	var rules, tests []string
	titles := slices.Sorted(func(yield func(string) bool) {
		for k := range queries {
			if !yield(k) {
				return
			}
		}
	})
	i := 0
	for _, title := range titles {
		for _, q := range queries[title] {
			expr := forPromtool(q)
			for _, m := range selector.FindAllStringSubmatch(expr, -1) {
				if !slices.Contains([]string{"by", "on", "without", "ignoring", "group_left", "group_right"}, m[1]) {
					assert.True(t, exposed[m[1]], "%s: %q is no series the agent exposes", title, m[1])
				}
			}
			for _, name := range ours.FindAllString(expr, -1) {
				assert.True(t, exposed[name], "%s: %q is no series the agent exposes", title, name)
			}
			rules = append(rules, fmt.Sprintf("      - record: panel_%d\n        expr: %q", i, expr))
			tests = append(tests, fmt.Sprintf("      - expr: 'count(%s) > bool 0'\n        eval_time: 15m\n        exp_samples: [{labels: '{}', value: 1}]",
				strings.ReplaceAll(expr, "'", "''")))
			i++
		}
	}
	dir := t.TempDir()
	ruleFile := filepath.Join(dir, "panels.yaml")
	require.NoError(t, os.WriteFile(ruleFile, []byte("groups:\n  - name: panels\n    rules:\n"+strings.Join(rules, "\n")+"\n"), 0o644))
	out, err := exec.Command(tool, "check", "rules", ruleFile).CombinedOutput()
	require.NoError(t, err, "every query is valid PromQL:\n%s", out)
	testFile := filepath.Join(dir, "panels_test.yaml")
	require.NoError(t, os.WriteFile(testFile, []byte("rule_files: []\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n"+
		strings.Join(series, "\n")+"\n    promql_expr_test:\n"+strings.Join(tests, "\n")+"\n"), 0o644))
	out, err = exec.Command(tool, "test", "rules", testFile).CombinedOutput()
	require.NoError(t, err, "every panel shows data for the agent's series:\n%s", out)
}
