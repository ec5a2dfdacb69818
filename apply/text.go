package apply

import (
	"fmt"
	"io"
	"strings"

	"github.com/openshift/refresh-agent/diff"
)

// WriteText prints what the refresh did, without file contents.
func (r *Result) WriteText(w io.Writer) error {
	if r.Outcome == OutcomeRefused {
		return r.Plan.WriteText(w)
	}
	var b strings.Builder
	verb := map[bool]string{true: "wrote", false: "would have written"}[r.Applied]
	for _, c := range r.Changes {
		switch {
		case c.Kind == diff.KindFile && c.Op == diff.OpRemove:
			fmt.Fprintf(&b, "%s: removed %s\n", r.Outcome, c.Path)
		case c.Kind == diff.KindFile:
			fmt.Fprintf(&b, "%s: %s %s (%s)\n", r.Outcome, verb, c.Path, c.Op)
		case c.Kind == diff.KindSSHKeys:
			fmt.Fprintf(&b, "%s: %s SSH authorized keys for %s\n", r.Outcome, verb, c.User)
		}
	}
	if r.Applied {
		for _, a := range r.Actions {
			if r.ActionsSkipped {
				fmt.Fprintf(&b, "%s: skipped %s %s (--systemd none)\n", r.Outcome, strings.ToLower(string(a.Action)), a.Unit)
			} else {
				fmt.Fprintf(&b, "%s: %s %s\n", r.Outcome, strings.ToLower(string(a.Action))+"ed", a.Unit)
			}
		}
	}
	for _, wr := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", wr)
	}
	switch r.Outcome {
	case OutcomeApplied:
		fmt.Fprintf(&b, "result: applied %s (%d files, %s, no reboot)\n", short(r.Hash), r.FilesWritten, r.actionsSummary())
	case OutcomeNoop:
		fmt.Fprintf(&b, "result: nothing to do; %s recorded as current\n", short(r.Hash))
	default:
		fmt.Fprintf(&b, "result: failed: %s\n", r.Reason)
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

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
