package diff

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/openshift/refresh-agent/api"
)

// diffMachine compares the reboot-class fields. Every view the desired payload carries is compared
// with the current payload's view from the same source (or its first view, or the zero view when it
// has none), so a change in either embedded metadata file counts. A desired payload with no
// MachineConfig at all asks for no reboot-class change.
func diffMachine(cur, des []MachineView) []Change {
	var out []Change
	seen := map[string]bool{}
	add := func(kind Kind, detail string) {
		if !seen[string(kind)+detail] {
			seen[string(kind)+detail] = true
			out = append(out, Change{Kind: kind, Op: OpModify, Detail: detail})
		}
	}
	for _, d := range des {
		c := counterpart(cur, d.Source)
		if c.OSImageURL != d.OSImageURL {
			add(KindOSImage, "osImageURL "+quoteBrief(c.OSImageURL)+" -> "+quoteBrief(d.OSImageURL))
		}
		if c.ExtensionsImage != d.ExtensionsImage {
			add(KindOSImage, "baseOSExtensionsContainerImage "+quoteBrief(c.ExtensionsImage)+" -> "+quoteBrief(d.ExtensionsImage))
		}
		if !slices.Equal(c.KernelArguments, d.KernelArguments) {
			add(KindKernelArguments, "kernelArguments "+quoteList(argNames(c.KernelArguments))+" -> "+quoteList(argNames(d.KernelArguments)))
		}
		if !slices.Equal(c.IgnitionKernelArguments, d.IgnitionKernelArguments) {
			add(KindKernelArguments, d.Source+" spec.config kernelArguments "+quoteList(argNames(c.IgnitionKernelArguments))+" -> "+quoteList(argNames(d.IgnitionKernelArguments)))
		}
		if c.FIPS != d.FIPS {
			add(KindFIPS, fmt.Sprintf("%t -> %t", c.FIPS, d.FIPS))
		}
		if c.KernelType != d.KernelType {
			add(KindKernelType, quoteBriefPlain(c.KernelType)+" -> "+quoteBriefPlain(d.KernelType))
		}
		if !slices.Equal(c.Extensions, d.Extensions) {
			add(KindExtensions, quoteList(c.Extensions)+" -> "+quoteList(d.Extensions))
		}
	}
	return out
}

func counterpart(cur []MachineView, source string) MachineView {
	for _, c := range cur {
		if c.Source == source {
			return c
		}
	}
	if len(cur) > 0 {
		return cur[0]
	}
	return MachineView{KernelType: "default"}
}

// What a change's detail quotes of a payload's values is bounded: a MachineConfig may carry
// thousands of kernel arguments or a megabyte-long image reference within the payload budget, and
// the detail is in the plan, the refusal reason, node annotations and Events. A list shows its first
// items then "… and N more"; a value its first bytes then "…".
const (
	briefValue = 256  // bytes of one value quoted
	briefList  = 2048 // bytes of one list's items quoted, about
)

// quoteBrief is strconv.Quote of s cut to briefValue bytes (a cut value ends in "…").
func quoteBrief(s string) string { return strconv.Quote(api.Truncate(s, briefValue)) }

// quoteBriefPlain is s cut to briefValue bytes, quoted only when it does not print plainly.
func quoteBriefPlain(s string) string { return quote(api.Truncate(s, briefValue)) }

// argNames are kernel arguments shown by their names, each value as "=…": a value may be a
// credential (dracut's netroot=iscsi:USER:PASSWORD@…, a token), and the node's current arguments
// would reach the refusal, its annotation and Event, on any added argument (adversary r23 c/01).
func argNames(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if name, _, ok := strings.Cut(a, "="); ok {
			a = name + "=…"
		}
		out[i] = a
	}
	return out
}

// quoteList formats xs as fmt's %q does (["a" "b"]), each item cut as quoteBrief cuts it, and
// only as many items as fit about briefList bytes, the rest counted ("… and 19998 more").
func quoteList(xs []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			if b.Len() > briefList {
				fmt.Fprintf(&b, " … and %d more", len(xs)-i)
				break
			}
			b.WriteByte(' ')
		}
		b.WriteString(quoteBrief(x))
	}
	b.WriteByte(']')
	return b.String()
}
