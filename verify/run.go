package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/openshift/refresh-agent/allowlist"
)

// Runtime is what the CRI checks ask of the container runtime (actions.CRI).
type Runtime interface {
	Version(ctx context.Context) error
	PodRunning(ctx context.Context, ref string) error
}

// Env is what Run asks: the runtime, an HTTP client, and (for the agent) the Node's readiness.
type Env struct {
	Runtime Runtime
	HTTP    *http.Client
	// NodeReady, when set, says whether the node's Ready condition is True (nil) or not (what it
	// shows); Changed wakes the check as soon as the Node changes (the agent's Node watch).
	NodeReady func() error
	Changed   <-chan struct{}
	// Interval is how often the checks are asked during the window (default 1 s).
	Interval time.Duration
}

// Run asks every check until each has answered healthy once and the window has passed since start,
// and fails as soon as one that answered healthy answers badly, one has not answered healthy when
// the window ends, or the Node stops being Ready. A check gets the whole window to come up: a
// restarted kubelet takes seconds to serve. Nothing is asked when there is nothing to check and no
// Node to watch.
func Run(ctx context.Context, checks []Check, window time.Duration, env Env) error {
	if window <= 0 || (len(checks) == 0 && env.NodeReady == nil) {
		return nil
	}
	interval := env.Interval
	if interval <= 0 {
		interval = time.Second
	}
	if env.HTTP == nil {
		env.HTTP = probeClient()
	}
	end := time.NewTimer(window)
	defer end.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	healthy := make([]bool, len(checks))
	last := make([]string, len(checks))
	round := func() error {
		if env.NodeReady != nil {
			if err := env.NodeReady(); err != nil {
				return &Failure{Check: Check{Name: "node Ready", Kind: "node"}, Saw: err.Error()}
			}
		}
		for i, c := range checks {
			err := ask(ctx, env, c, interval)
			switch {
			case err == nil:
				healthy[i] = true
			case ctx.Err() != nil:
				return ctx.Err()
			case healthy[i]:
				return &Failure{Check: c, Saw: "healthy after the actions, then " + err.Error()}
			default:
				last[i] = err.Error()
			}
		}
		return nil
	}
	for {
		if err := round(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-env.Changed:
		case <-tick.C:
		case <-end.C:
			if err := round(); err != nil {
				return err
			}
			for i, c := range checks {
				if !healthy[i] {
					return &Failure{Check: c, Saw: fmt.Sprintf("not healthy within %s after the actions: %s", window, last[i])}
				}
			}
			return nil
		}
	}
}

// ask runs one check once, bounded by the interval (at least a second).
func ask(ctx context.Context, env Env, c Check, interval time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, max(interval, time.Second))
	defer cancel()
	switch c.Kind {
	case KindCRI:
		if env.Runtime == nil {
			return errors.New("no CRI client")
		}
		return env.Runtime.Version(ctx)
	case KindPod:
		if env.Runtime == nil {
			return errors.New("no CRI client")
		}
		return env.Runtime.PodRunning(ctx, c.Target)
	case KindHTTP:
		return askHTTP(ctx, env.HTTP, c)
	}
	return fmt.Errorf("unknown check kind %q", c.Kind)
}

// probeClient is the checks' HTTP client: a short timeout, and a redirect followed only to another
// loopback URL (a probe never leaves the node, not even through a redirect).
func probeClient() *http.Client {
	return &http.Client{Timeout: 2 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		return allowlist.LoopbackURL(req.URL.String())
	}}
}

func askHTTP(ctx context.Context, client *http.Client, c Check) error {
	if err := allowlist.LoopbackURL(c.Target); err != nil {
		return err // never asked: a probe leaves the node only by a bug
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Target, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode != c.Expect {
		return fmt.Errorf("GET %s answered %d, expected %d", c.Target, resp.StatusCode, c.Expect)
	}
	return nil
}

// Key names a check in the journal (kind and target; never a secret).
func (c Check) Key() string { return c.Kind + " " + c.Target }

// NodeKey is the journal's key for the Node's readiness.
const NodeKey = "node Ready"

// Baseline asks every check once before the actions run and keeps those that answer healthy: a
// verified refresh proves that it broke nothing that worked, so a check that did not answer before
// (a stand-in kubelet with no healthz, crio already down) is not held against it and is said in
// notes. The Node's readiness is kept when it is Ready now.
func Baseline(ctx context.Context, checks []Check, env Env) (kept []Check, keys []string, notes []string) {
	if env.HTTP == nil {
		env.HTTP = probeClient()
	}
	for _, c := range checks {
		if err := ask(ctx, env, c, time.Second); err != nil {
			notes = append(notes, fmt.Sprintf("%s is not verified: it was not healthy before the refresh (%v)", c.Name, err))
			continue
		}
		kept = append(kept, c)
		keys = append(keys, c.Key())
	}
	if env.NodeReady != nil {
		if err := env.NodeReady(); err != nil {
			notes = append(notes, fmt.Sprintf("the Node's readiness is not verified: it was not Ready before the refresh (%v)", err))
		} else {
			keys = append(keys, NodeKey)
		}
	}
	return kept, keys, notes
}

// Kept returns the checks whose keys a baseline kept (recovery, from the journal), and whether it kept
// the Node's readiness.
func Kept(checks []Check, keys []string) (kept []Check, node bool) {
	for _, c := range checks {
		if slices.Contains(keys, c.Key()) {
			kept = append(kept, c)
		}
	}
	return kept, slices.Contains(keys, NodeKey)
}
