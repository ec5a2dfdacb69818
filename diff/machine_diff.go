package diff

import (
	"fmt"
	"slices"
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
			add(KindOSImage, fmt.Sprintf("osImageURL %q -> %q", c.OSImageURL, d.OSImageURL))
		}
		if c.ExtensionsImage != d.ExtensionsImage {
			add(KindOSImage, fmt.Sprintf("baseOSExtensionsContainerImage %q -> %q", c.ExtensionsImage, d.ExtensionsImage))
		}
		if !slices.Equal(c.KernelArguments, d.KernelArguments) {
			add(KindKernelArguments, fmt.Sprintf("kernelArguments %q -> %q", c.KernelArguments, d.KernelArguments))
		}
		if !slices.Equal(c.IgnitionKernelArguments, d.IgnitionKernelArguments) {
			add(KindKernelArguments, fmt.Sprintf("%s spec.config kernelArguments %q -> %q", d.Source, c.IgnitionKernelArguments, d.IgnitionKernelArguments))
		}
		if c.FIPS != d.FIPS {
			add(KindFIPS, fmt.Sprintf("%t -> %t", c.FIPS, d.FIPS))
		}
		if c.KernelType != d.KernelType {
			add(KindKernelType, fmt.Sprintf("%s -> %s", c.KernelType, d.KernelType))
		}
		if !slices.Equal(c.Extensions, d.Extensions) {
			add(KindExtensions, fmt.Sprintf("%q -> %q", c.Extensions, d.Extensions))
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
