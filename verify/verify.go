// Package verify proves a node healthy after a refresh's unit actions and before the refresh is
// reported Done: the units and pods it acted on answer (crio's CRI, kubelet's healthz, a restarted
// static pod's containers, a node policy's HTTP probes) and stay answering for a window, and the
// agent's Node stays Ready. A refresh that fails its verification is rolled back like one whose
// reload failed. NixOS's `switch-to-configuration test` and Talos's try mode are the models.
package verify

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/plan"
)

// DefaultWindow is how long the probes must stay healthy. RHCOS restarts a failed kubelet after 10 s
// (RestartSec=10) and kubelet posts the Node's status every 10 s (nodeStatusUpdateFrequency), so a
// kubelet or crio that starts and then dies, or a Node that kubelet turns NotReady, shows within 15 s.
// Longer costs every node of a paced pool that much more; 0 turns verification off.
const DefaultWindow = 15 * time.Second

// DefaultKubeletHealthz is kubelet's healthz endpoint on RHCOS (healthzBindAddress, healthzPort).
const DefaultKubeletHealthz = "http://127.0.0.1:10248/healthz"

// Kinds of check.
const (
	KindCRI  = "cri"  // the container runtime answers the CRI Version call
	KindHTTP = "http" // a loopback URL answers with the expected status
	KindPod  = "pod"  // a static pod has a ready sandbox whose containers all run
)

// Check is one thing a verified refresh proves, as the plan shows it.
type Check struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Expect int    `json:"expect,omitempty"`
	// For names the unit or pod whose action asked for the check.
	For string `json:"for"`
}

func (c Check) String() string {
	if c.Kind == KindHTTP {
		return fmt.Sprintf("%s (GET %s expects %d)", c.Name, c.Target, c.Expect)
	}
	return fmt.Sprintf("%s (%s %s)", c.Name, c.Kind, c.Target)
}

// Options are the node's probe endpoints.
type Options struct {
	// Window is how long the checks must stay healthy after the actions; 0 turns verification off.
	Window time.Duration
	// CRISocket is crio's socket ("" when the node has no CRI client: crio is then not probed, and
	// the plan says so).
	CRISocket string
	// KubeletHealthz is kubelet's healthz URL (DefaultKubeletHealthz when empty).
	KubeletHealthz string
}

// For returns the checks a refresh with these actions runs, in the actions' order, and what cannot
// be checked (notes for the plan's warnings). Actions on other units prove nothing by themselves: a
// unit rule's probe says what to ask.
func For(actions []plan.UnitAction, probes map[string][]allowlist.Probe, o Options) (checks []Check, notes []string) {
	if o.Window <= 0 {
		return nil, nil
	}
	add := func(c Check) {
		if !slices.ContainsFunc(checks, func(x Check) bool { return x.Kind == c.Kind && x.Target == c.Target }) {
			checks = append(checks, c)
		}
	}
	for _, a := range actions {
		if a.Action == allowlist.ActionNone || a.Action == allowlist.ActionDaemonReload {
			continue
		}
		switch {
		case a.Pod != "":
			add(Check{Name: "pod " + a.Pod, Kind: KindPod, Target: a.Pod, For: a.Pod})
		case a.Unit == allowlist.UnitCrio:
			if o.CRISocket == "" {
				notes = append(notes, "crio.service is not verified: no CRI socket (--cri-socket none)")
			} else {
				add(Check{Name: "crio", Kind: KindCRI, Target: o.CRISocket, For: a.Unit})
			}
		case a.Unit == allowlist.UnitKubelet:
			add(Check{Name: "kubelet", Kind: KindHTTP, Target: o.kubelet(), Expect: 200, For: a.Unit})
		}
		key := a.Unit
		if a.Pod != "" {
			key = a.Pod
		}
		for _, p := range probes[key] {
			add(Check{Name: "probe " + p.HTTP, Kind: KindHTTP, Target: p.HTTP, Expect: p.Expect, For: key})
		}
	}
	return checks, notes
}

func (o Options) kubelet() string {
	if o.KubeletHealthz != "" {
		return o.KubeletHealthz
	}
	return DefaultKubeletHealthz
}

// Failure is a failed verification: which check and what it saw.
type Failure struct {
	Check Check
	Saw   string
}

func (f *Failure) Error() string {
	return fmt.Sprintf("verification failed: %s: %s", f.Check.Name, f.Saw)
}

// String lists checks for a log line or a plan's text.
func String(cs []Check) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, ", ")
}
