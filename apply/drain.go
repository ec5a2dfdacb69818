package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
)

// cordonMarker, in the state dir, says the agent cordoned the node and has not uncordoned it yet: a
// crash in between is settled by the next Recover, which uncordons. A node cordoned by someone else
// has no marker and stays cordoned.
const cordonMarker = "cordoned"

// Drainer cordons the node and evicts its pods (Drain), and makes it schedulable again (Uncordon).
// kube.Drainer implements it over the Eviction API.
type Drainer interface {
	Drain(ctx context.Context) error
	Uncordon(ctx context.Context) error
}

// drain drains the node; when that fails it uncordons again before returning, so a refused or failed
// drain never leaves the node unschedulable.
// The evictions run under dctx (cancelled when the refresh must not go on: its pacing slot was
// lost), the rest under ctx.
func (h Host) drain(ctx, dctx context.Context) error {
	h.logger().Info("draining the node before the refresh")
	if err := actions.EnsureStateDir(h.StateDir); err != nil {
		return fmt.Errorf("drain: state: %w", err)
	}
	if err := actions.WriteFileAtomic(h.StateDir, cordonMarker, nil, 0o600); err != nil {
		return fmt.Errorf("drain: state: %w", err)
	}
	if err := h.Drainer.Drain(dctx); err != nil {
		uerr := h.uncordonNow(ctx)
		if uerr != nil {
			return fmt.Errorf("drain: %w; uncordon: %v", err, uerr)
		}
		return fmt.Errorf("drain: %w (uncordoned again, nothing written)", err)
	}
	return nil
}

// uncordon makes the node schedulable again after the refresh, applied or rolled back; a failure is
// added to the result's reason and the outcome becomes failed, since the node stays cordoned.
func (h Host) uncordon(ctx context.Context, res *Result) {
	if err := h.uncordonNow(ctx); err != nil {
		res.Outcome = api.OutcomeFailed
		if res.Reason != "" {
			res.Reason += "; "
		}
		res.Reason += "uncordon: " + err.Error()
	}
}

// uncordonNow runs under its own deadline: the caller's context may be cancelled already.
func (h Host) uncordonNow(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := h.Drainer.Uncordon(ctx); err != nil {
		return err
	}
	if err := actions.RemoveStateFile(h.StateDir, cordonMarker, true); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return nil
}

// uncordonLeftover uncordons a node the agent cordoned before a crash (the marker is there).
func (h Host) uncordonLeftover(ctx context.Context) error {
	if h.Drainer == nil {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(h.StateDir, cordonMarker)); err != nil {
		return nil
	}
	h.logger().Warn("uncordoning the node a crashed refresh left cordoned")
	if err := h.uncordonNow(ctx); err != nil {
		return fmt.Errorf("uncordon after a crash: %w", err)
	}
	return nil
}
