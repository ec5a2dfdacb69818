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

// MaxPlanText bounds each text of a plan (a change's detail and reason, a refusal's reason, a
// warning, a drain reason): what a payload puts in one (a list of values, a name, a line of a unit)
// is quoted briefly where it is worded (diff's details show a list's first items and "and N more"),
// and this is the backstop: a text that is still longer keeps its start and its end (which says how
// to fix it) around a count of the bytes cut. A refusal reason is printed, logged, written to the
// record and, cut again, to the node's annotations and Events: megabytes of it would cost every node
// of a pool what the payload budget was meant to spare.
const MaxPlanText = 8 << 10

// MaxPlanTexts bounds the texts of a plan's changes and refusals together (their paths, names,
// details and reasons): each is bounded, but a payload may hold thousands (adversary r15 d/01: 7 000
// refused files of 2 000-byte paths, a 111 KB ConfigMap, made 100 MB of output and 870 MiB of
// RSS). Past it the rest are counted, not listed (ChangesOmitted, RefusedOmitted), and a last
// refusal says so; the plan's verdict is made before, on every change.
const MaxPlanTexts = 1 << 20

// boundTexts cuts every text of the plan to MaxPlanText bytes, and the lists of changes and
// refusals to MaxPlanTexts bytes of text together.
func (p *Plan) boundTexts() {
	defer p.boundLists()
	for i := range p.Changes {
		p.Changes[i].Detail = boundText(p.Changes[i].Detail)
		p.Changes[i].Reason = boundText(p.Changes[i].Reason)
	}
	for i := range p.Refused {
		p.Refused[i].Reason = boundText(p.Refused[i].Reason)
	}
	for i := range p.Warnings {
		p.Warnings[i] = boundText(p.Warnings[i])
	}
	for i := range p.DrainReasons {
		p.DrainReasons[i] = boundText(p.DrainReasons[i])
	}
}

// boundText is s when at most MaxPlanText bytes, else its first 6 KiB and last 1 KiB (valid UTF-8,
// no rune split) around "… (N bytes cut) …".
func boundText(s string) string {
	if len(s) <= MaxPlanText {
		return s
	}
	head, tail := MaxPlanText*3/4, MaxPlanText/8
	h := strings.ToValidUTF8(s[:head], "")
	t := strings.ToValidUTF8(s[len(s)-tail:], "")
	return fmt.Sprintf("%s … (%d bytes cut) … %s", h, len(s)-len(h)-len(t), t)
}

// boundLists keeps the changes and then the refusals whose texts fit MaxPlanTexts together (the
// refusals get what the changes leave, and at least the first refusal), and counts the rest.
func (p *Plan) boundLists() {
	left := MaxPlanTexts
	keep := func(n int) bool {
		left -= n
		return left >= 0
	}
	for i, c := range p.Changes {
		if !keep(len(c.Path) + len(c.Unit) + len(c.User) + len(c.Detail) + len(c.Reason) + len(c.Skipped) + 64) {
			p.ChangesOmitted = len(p.Changes) - i
			p.Changes = p.Changes[:i:i]
			break
		}
	}
	left = max(left, MaxPlanText*2)
	for i, r := range p.Refused {
		if i > 0 && !keep(len(r.Path)+len(r.Unit)+len(r.User)+len(r.Reason)+32) {
			p.RefusedOmitted = len(p.Refused) - i
			p.Refused = append(p.Refused[:i:i], Refusal{Kind: r.Kind, Reason: fmt.Sprintf(
				"… and %d more refusals, and %d more changes, not listed: a plan lists its changes and refusals up to %d bytes of text together",
				p.RefusedOmitted, p.ChangesOmitted, MaxPlanTexts)})
			return
		}
	}
	if p.ChangesOmitted > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d more changes not listed: a plan lists its changes and refusals up to %d bytes of text together", p.ChangesOmitted, MaxPlanTexts))
	}
}
