package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/publish"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/kubetest"
)

// stallRun: n nodes at limit (2 slots), five of them failing on the payload (the test build with
// --systemd test-marker), all in one slot's queue of the pool's order (positions 10, 30, …, 90: the
// order sorts the names, and these are even): a failure must not idle the other slot, so the pool
// goes on until 2 nodes failed, then halts. Then the fix.
func (h *harness) stallRun(pool, bin, testBin string, n int, limit string) ([]string, error) {
	names, roots, err := h.pool(pool, n)
	if err != nil {
		return nil, err
	}
	pw, err := h.watchPool(pool)
	if err != nil {
		return nil, err
	}
	defer pw.cancel()
	slots, _ := strconv.Atoi(limit)
	var failing []int
	for i := 10; i < n && len(failing) < 5; i += 20 {
		failing = append(failing, i)
	}
	bad := map[int]bool{}
	for _, i := range failing {
		bad[i] = true
	}
	var okNames, okRoots, badNames, badRoots []string
	for i := range names {
		if bad[i] {
			badNames, badRoots = append(badNames, names[i]), append(badRoots, roots[i])
		} else {
			okNames, okRoots = append(okNames, names[i]), append(okRoots, roots[i])
		}
	}
	fmt.Fprintf(os.Stderr, "scale: stall: %d agents, --max-concurrent %s, failing at positions %v\n", n, limit, failing)
	flags := []string{"--max-concurrent", limit, "--max-attempts", "1"}
	cmds, _, err := h.startUp(bin, okNames, okRoots, "none", flags...)
	defer stop(cmds)
	if err != nil {
		return nil, err
	}
	badCmds, _, err := h.startUp(testBin, badNames, badRoots, "test-marker", flags...)
	defer stop(badCmds)
	if err != nil {
		return nil, err
	}
	pw.reset()
	start := time.Now()
	if _, err := publish.Publish(context.Background(), h.publisher, ns, api.ConfigMapName("", pool), base("# v1 "+fixture.FailMarker).JSON(), nil, "v1"); err != nil {
		return nil, err
	}
	haltedReason := fmt.Sprintf("halted: %d nodes failed", slots)
	degraded, done, halted := isState(api.StateDegraded), doneAt("v1"), haltedBy(slots)
	ok := kubetest.WaitFor(context.Background(), 600*time.Second, func() bool {
		return pw.count(degraded) == slots && pw.count(done)+pw.count(halted) == n-slots
	})
	elapsed := time.Since(start)
	nDone, nDegraded, nHalted := pw.count(done), pw.count(degraded), pw.count(halted)
	fixStart := time.Now()
	if _, err := publish.Publish(context.Background(), h.publisher, ns, api.ConfigMapName("", pool), base("# v2 mirrors").JSON(), nil, "v2"); err != nil {
		return nil, err
	}
	fixed := h.waitAll(pw, pool, n, 600*time.Second, doneAt("v2"))
	fixElapsed := time.Since(fixStart)
	return []string{
		row(fmt.Sprintf("stall: %d nodes, --max-concurrent %s, %d failing nodes all in one slot's queue (positions %v)", n, limit, len(failing), failing),
			fmt.Sprintf("settled in %.1f s: %d Done, %d Degraded, %d waiting \"…%s\"", elapsed.Seconds(), nDone, nDegraded, nHalted, haltedReason),
			fmt.Sprintf("goes on until %d failed, then halts (no slot idles)", slots), ok && nDegraded == slots),
		row("stall: fix published → the pool completes", fmt.Sprintf("all %d Done in %.1f s", n, fixElapsed.Seconds()), "completes", fixed),
	}, nil
}

// watchEvents reads the API server's apiserver_watch_events_total, summed by resource.
func (h *harness) watchEvents() (map[string]float64, error) {
	raw, err := h.admin.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "apiserver_watch_events_total{") {
			continue
		}
		labels, value, ok := strings.Cut(strings.TrimPrefix(line, "apiserver_watch_events_total{"), "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		res := ""
		for _, l := range strings.Split(labels, ",") {
			if k, val, ok := strings.Cut(l, "="); ok && (k == "resource" || (k == "kind" && res == "")) {
				res = strings.ToLower(strings.Trim(val, `"`))
			}
		}
		switch res {
		case "lease":
			res = "leases"
		case "node":
			res = "nodes"
		case "configmap":
			res = "configmaps"
		}
		out[res] += v
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no apiserver_watch_events_total in /metrics")
	}
	return out, nil
}
