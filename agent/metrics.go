package agent

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/plan"
)

// Metrics are the agent's Prometheus metrics, on a registry of their own.
type Metrics struct {
	Registry     *prometheus.Registry
	refreshes    *prometheus.CounterVec
	duration     prometheus.Histogram
	refused      *prometheus.CounterVec
	unitActions  *prometheus.CounterVec
	filesWritten prometheus.Counter
	drift        prometheus.Counter
	state        *prometheus.GaugeVec
	lastSuccess  prometheus.Gauge
	pool         *prometheus.GaugeVec
}

// NewMetrics registers every metric (prefix refresh_agent_) plus Go and process collectors.
func NewMetrics(version string) *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "refresh_agent_refreshes_total",
			Help: "Refreshes by result: applied, refused, failed, noop, deferred."}, []string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "refresh_agent_refresh_duration_seconds",
			Help: "Time from picking up a payload to the end of its refresh.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 16)}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "refresh_agent_refused_changes_total",
			Help: "Refused changes by kind (fips, kernelArguments, file, ...)."}, []string{"kind"}),
		unitActions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "refresh_agent_unit_actions_total",
			Help: "Unit actions by unit, action and result (success, failure)."}, []string{"unit", "action", "result"}),
		filesWritten: prometheus.NewCounter(prometheus.CounterOpts{Name: "refresh_agent_files_written_total",
			Help: "Files written or removed by applied refreshes."}),
		drift: prometheus.NewCounter(prometheus.CounterOpts{Name: "refresh_agent_drift_detected_total",
			Help: "Planned files found changed on the node by hand."}),
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "refresh_agent_state",
			Help: "1 for the node's current refresh state (Done, Working, Degraded, Unreconcilable)."}, []string{"state"}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{Name: "refresh_agent_last_success_timestamp_seconds",
			Help: "When the node last completed a refresh (applied or nothing to do); at start, when its record was written."}),
		// The pool is the Node's label, which no scrape sees: dashboards join on this series.
		pool: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "refresh_agent_pool_info",
			Help: "1, labelled with the NodePool whose payload the node follows (its " + api.LabelNodePool + " label)."}, []string{"pool"}),
	}
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "refresh_agent_build_info",
		Help: "Build information."}, []string{"version"})
	info.WithLabelValues(version).Set(1)
	m.Registry.MustRegister(m.refreshes, m.duration, m.refused, m.unitActions, m.filesWritten, m.drift,
		m.state, m.lastSuccess, m.pool, info, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, r := range []api.Outcome{api.OutcomeApplied, api.OutcomeRefused, api.OutcomeFailed, api.OutcomeNoop, api.OutcomeDeferred} {
		m.refreshes.WithLabelValues(string(r))
	}
	return m
}

func (m *Metrics) setState(s string) {
	for _, st := range []string{api.StateDone, api.StateWorking, api.StateDegraded, api.StateUnreconcilable} {
		v := 0.0
		if st == s {
			v = 1
		}
		m.state.WithLabelValues(st).Set(v)
	}
}

// setPool says which pool the node follows ("" for none: the series goes). Nil-safe.
func (m *Metrics) setPool(pool string) {
	if m == nil {
		return
	}
	m.pool.Reset()
	if pool != "" {
		m.pool.WithLabelValues(pool).Set(1)
	}
}

// countingUnits records every unit action's result.
type countingUnits struct {
	actions.Units
	m *Metrics
}

func (c countingUnits) Run(ctx context.Context, a plan.UnitAction) error {
	err := c.Units.Run(ctx, a)
	result := "success"
	if err != nil {
		result = "failure"
	}
	c.m.unitActions.WithLabelValues(a.Unit, string(a.Action), result).Inc()
	return err
}

// observe counts a refresh by result and, when started is set, its duration. Nil-safe: the agent
// runs without metrics in some tests.
func (m *Metrics) observe(result api.Outcome, started time.Time) {
	if m == nil {
		return
	}
	m.refreshes.WithLabelValues(string(result)).Inc()
	if !started.IsZero() {
		m.duration.Observe(time.Since(started).Seconds())
	}
}

// Ping forwards to the wrapped Units when it can ping (readiness).
func (c countingUnits) Ping(ctx context.Context) error {
	if p, ok := c.Units.(pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}
