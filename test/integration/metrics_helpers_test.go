package integration

import "github.com/prometheus/client_golang/prometheus"

// newTestRegistry stands in for the agent's registry (a metric named as the agent names its own).
func newTestRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "refresh_agent_build_info", Help: "Build information."}, []string{"version"})
	g.WithLabelValues("test").Set(1)
	r.MustRegister(g)
	return r
}
