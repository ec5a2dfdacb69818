package plan

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/diff"
)

// WriteText prints the plan as a dry run: what would be written, removed, reloaded and restarted, or
// why the payload is refused. It never prints file contents or keys.
func (p *Plan) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, r := range p.Refused {
		fmt.Fprintf(&b, "refused: %s\n", r.Reason)
	}
	verb := "would"
	if !p.Eligible {
		verb = "held back, would" // eligible alone, but the payload is refused whole
	}
	for _, c := range p.Changes {
		if !c.Eligible || c.Skipped != "" {
			continue
		}
		switch c.Kind {
		case diff.KindFile:
			what := "write"
			if c.Op == diff.OpRemove {
				what = "remove"
			}
			fmt.Fprintf(&b, "%s %s %s (%s%s)%s\n", verb, what, c.Path, c.Op, detail(c.Detail), unitsNote(c))
		case diff.KindUnit:
			fmt.Fprintf(&b, "%s write unit %s (%s%s)%s\n", verb, c.Unit, c.Op, detail(c.Detail), unitsNote(c))
		case diff.KindSSHKeys:
			fmt.Fprintf(&b, "%s write SSH authorized keys for %s (%s%s)\n", verb, c.User, c.Op, detail(c.Detail))
		}
	}
	for _, c := range p.Changes {
		if c.Skipped != "" {
			fmt.Fprintf(&b, "skip %s (%s): %s\n", c.Path, c.Op, c.Skipped)
		}
	}
	if p.Drain {
		fmt.Fprintf(&b, "would drain the node first and uncordon it after: %s\n", strings.Join(p.DrainReasons, "; "))
	}
	for _, a := range p.Actions {
		fmt.Fprintf(&b, "would %s\n", a)
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	switch {
	case !p.Eligible:
		fmt.Fprintf(&b, "result: refused (%d refused of %s): nothing would be applied\n", len(p.Refused), api.Count(len(p.Changes), "change"))
	case len(p.Changes) == 0:
		b.WriteString("result: no changes\n")
	default:
		fmt.Fprintf(&b, "result: eligible (%s, %s, no reboot)\n", api.Count(len(p.Changes), "change"), api.Count(len(p.Actions), "unit action"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func detail(d string) string {
	if d == "" {
		return ""
	}
	return ": " + d
}

func unitsNote(c Change) string {
	if c.Action == "" || c.Action == string(allowlist.ActionNone) {
		return ", no unit action"
	}
	targets := slices.Clone(c.Services)
	for _, p := range c.Pods {
		targets = append(targets, "static pod "+p)
	}
	return fmt.Sprintf(", %s %s", strings.ToLower(c.Action), strings.Join(targets, ", "))
}
