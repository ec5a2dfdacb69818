package apply

import (
	"fmt"
	"io"
	"strings"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/diff"
)

// WriteText prints what the refresh did, without file contents.
func (r *Result) WriteText(w io.Writer) error {
	if r.Outcome == api.OutcomeRefused {
		return r.Plan.WriteText(w)
	}
	if r.Outcome == api.OutcomePlanned || r.Outcome == api.OutcomeNoop && !r.Applied {
		return r.writeDryRun(w)
	}
	var b strings.Builder
	// Only an applied refresh wrote or removed anything that stays: a failed one says what it
	// would have done (rolled back, or refused before any write).
	verb := map[bool]string{true: "wrote", false: "would have written"}[r.Applied]
	removed := map[bool]string{true: "removed", false: "would have removed"}[r.Applied]
	for _, c := range r.Changes {
		switch {
		case c.Kind == diff.KindFile && c.Op == diff.OpRemove:
			fmt.Fprintf(&b, "%s: %s %s\n", r.Outcome, removed, c.Path)
		case c.Kind == diff.KindFile:
			fmt.Fprintf(&b, "%s: %s %s (%s)\n", r.Outcome, verb, c.Path, c.Op)
		case c.Kind == diff.KindSSHKeys:
			fmt.Fprintf(&b, "%s: %s SSH authorized keys for %s\n", r.Outcome, verb, c.User)
		}
	}
	if r.Applied {
		for _, a := range r.Actions {
			why := "--systemd none"
			if a.Pod != "" {
				why = "--cri-socket none"
			}
			if r.ActionsSkipped {
				fmt.Fprintf(&b, "%s: skipped %s %s (%s)\n", r.Outcome, a.Verb(), a.Target(), why)
			} else {
				fmt.Fprintf(&b, "%s: %sed %s\n", r.Outcome, a.Verb(), a.Target())
			}
		}
	}
	for _, wr := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wr)
	}
	switch r.Outcome {
	case api.OutcomeApplied:
		fmt.Fprintf(&b, "result: applied %s (%d files, %s, no reboot)\n", api.Short(r.Hash), r.FilesWritten, r.actionsSummary())
		if r.CleanupPending {
			fmt.Fprintf(&b, "result: %s\n", r.Reason)
		}
	case api.OutcomeNoop:
		fmt.Fprintf(&b, "result: nothing to do; %s recorded as current\n", api.Short(r.Hash))
	default:
		fmt.Fprintf(&b, "result: failed: %s\n", r.Reason)
		if r.RolledBack && r.CleanupPending {
			fmt.Fprintf(&b, "result: every original is back; the clean-up is pending (the next apply, recover or agent start finishes it)\n")
		}
		if r.RollbackIncomplete {
			fmt.Fprintf(&b, "result: rollback incomplete: journal and backups kept; run `refresh-agent recover` (every later apply retries it first)\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// actionsSummary counts the unit actions as what they were: run, or skipped (--systemd none).
func (r *Result) actionsSummary() string {
	if r.ActionsSkipped {
		return fmt.Sprintf("%d unit actions skipped (--systemd none)", len(r.Actions))
	}
	return fmt.Sprintf("%d unit actions", r.ActionsRun)
}

// writeDryRun prints the plan resolved against the node: every write with its mode and owner, then
// the actions. Nothing was done.
func (r *Result) writeDryRun(w io.Writer) error {
	var b strings.Builder
	for _, wr := range r.Writes {
		if wr.Remove {
			fmt.Fprintf(&b, "would remove %s (%s)\n", wr.Path, wr.For)
			continue
		}
		fmt.Fprintf(&b, "would write %s mode %s owner %d:%d (%s)\n", wr.Path, wr.Mode, wr.UID, wr.GID, wr.For)
	}
	for _, c := range r.Changes {
		if c.Skipped != "" {
			fmt.Fprintf(&b, "skip %s (%s): %s\n", c.Path, c.Op, c.Skipped)
		}
		if c.Delegated {
			fmt.Fprintf(&b, "delegated %s (%s): %s\n", c.Path, c.Op, c.Reason)
		}
	}
	for _, a := range r.Actions {
		fmt.Fprintf(&b, "would %s\n", a)
	}
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "would verify %s for %s (if healthy before the actions)\n", c, r.VerifyWindow)
	}
	for _, wr := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wr)
	}
	if r.Outcome == api.OutcomeNoop {
		b.WriteString("result: dry run: nothing to do\n")
	} else {
		fmt.Fprintf(&b, "result: dry run: would apply %s (%d writes, %d actions, no reboot); nothing was done\n", api.Short(r.Hash), len(r.Writes), len(r.Actions))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
