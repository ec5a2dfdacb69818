package apply_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/plan"
)

// diff and apply --dry-run say each action the same way (one printer, plan.UnitAction.String), and
// apply says what it did in the same words.
func TestDiffAndDryRunPrintActionsAlike(t *testing.T) {
	p := &plan.Plan{Eligible: true, Actions: []plan.UnitAction{
		{Unit: "systemd", Action: allowlist.ActionDaemonReload},
		{Unit: "crio.service", Action: allowlist.ActionReload},
		{Unit: "kubelet.service", Action: allowlist.ActionRestart},
		{Pod: "kube-system/kube-apiserver-proxy", Action: allowlist.ActionRestart},
	}}
	var diffOut, dryOut, applied bytes.Buffer
	require.NoError(t, p.WriteText(&diffOut))
	require.NoError(t, (&apply.Result{Plan: p, Outcome: api.OutcomePlanned, Hash: "h"}).WriteText(&dryOut))
	require.NoError(t, (&apply.Result{Plan: p, Outcome: api.OutcomeApplied, Applied: true, Hash: "h"}).WriteText(&applied))
	want := []string{
		"would daemon-reload systemd",
		"would reload crio.service",
		"would restart kubelet.service",
		"would restart static pod kube-system/kube-apiserver-proxy (through the CRI)",
	}
	assert.Equal(t, want, lines(diffOut.String(), "would "))
	assert.Equal(t, want, lines(dryOut.String(), "would "))
	assert.Equal(t, []string{
		"applied: daemon-reloaded systemd",
		"applied: reloaded crio.service",
		"applied: restarted kubelet.service",
		"applied: restarted static pod kube-system/kube-apiserver-proxy",
	}, lines(applied.String(), "applied: "))
}

func lines(s, prefix string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}
