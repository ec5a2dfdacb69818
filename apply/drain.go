package apply

import (
	"context"
	"fmt"
	"time"
)

// Drainer cordons the node and evicts its pods (Drain), and makes it schedulable again (Uncordon).
// kube.Drainer implements it over the Eviction API.
type Drainer interface {
	Drain(ctx context.Context) error
	Uncordon(ctx context.Context) error
}

// drain drains the node; when that fails it uncordons again before returning, so a refused or failed
// drain never leaves the node unschedulable.
func (n Node) drain(ctx context.Context) error {
	n.logger().Info("draining the node before the refresh")
	if err := n.Drainer.Drain(ctx); err != nil {
		uerr := n.uncordonNow(ctx)
		if uerr != nil {
			return fmt.Errorf("drain: %w; uncordon: %v", err, uerr)
		}
		return fmt.Errorf("drain: %w (uncordoned again, nothing written)", err)
	}
	return nil
}

// uncordon makes the node schedulable again after the refresh, applied or rolled back; a failure is
// added to the result's reason and the outcome becomes failed, since the node stays cordoned.
func (n Node) uncordon(ctx context.Context, res *Result) {
	if err := n.uncordonNow(ctx); err != nil {
		res.Outcome = OutcomeFailed
		if res.Reason != "" {
			res.Reason += "; "
		}
		res.Reason += "uncordon: " + err.Error()
	}
}

// uncordonNow runs under its own deadline: the caller's context may be cancelled already.
func (n Node) uncordonNow(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	return n.Drainer.Uncordon(ctx)
}
