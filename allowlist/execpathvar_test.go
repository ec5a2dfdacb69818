package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/openshift/refresh-agent/allowlist"
)

// A unit's shell never runs without a PATH, or with one the payload can fill: without PATH bash
// searches its default path, which ends in "." (a bare name runs a file from the working
// directory). Environment=PATH= is refused whatever its value. The unit-level form of round 8's
// UnsetEnvironment=PATH (checked through the CLI before).
func TestUnitShellNeverRunsWithoutAPath(t *testing.T) {
	for _, c := range []struct {
		lines   []string
		changed bool // refused in changed lines only (the node's own lines are the node's)
	}{
		{lines: []string{"UnsetEnvironment=PATH", `ExecStart=/bin/sh -c 'myapp-helper'`}},
		{lines: []string{"UnsetEnvironment=PATH=/usr/bin:/bin", `ExecStart=/bin/sh -c 'myapp-helper'`}},
		{lines: []string{"UnsetEnvironment=HOME PATH", `ExecStart=/bin/sh -c 'myapp-helper'`}},
		{lines: []string{"Environment=PATH=", `ExecStart=/bin/sh -c 'myapp-helper'`}},
		{lines: []string{"Environment=PATH=.:/usr/bin", `ExecStart=/bin/sh -c 'myapp-helper'`}},
		{lines: []string{"Environment=PATH=/usr/bin::/bin", `ExecStart=/bin/sh -c 'myapp-helper'`}},
		{lines: []string{"Environment=PATH=/run/myapp:/usr/bin", `ExecStart=/bin/sh -c 'myapp-helper'`}},
		{lines: []string{`ExecStart=/usr/bin/env -u PATH /bin/sh -c 'myapp-helper'`}, changed: true},
		{lines: []string{`ExecStart=/usr/bin/env -i /bin/sh -c 'myapp-helper'`}, changed: true},
		{lines: []string{`ExecStart=/usr/bin/env PATH= /bin/sh -c 'myapp-helper'`}, changed: true},
	} {
		for _, changed := range []bool{true, false} {
			if c.changed && !changed {
				continue
			}
			p := unitOfLines(t, changed, c.lines...)
			p.Programs = []string{"myapp-helper"} // the unit's own: only PATH is wrong
			assert.ErrorContains(t, allowlist.JudgeUnit(p), "PATH", "changed=%v %q", changed, c.lines)
		}
	}
	for _, lines := range [][]string{
		{"UnsetEnvironment=HOME", `ExecStart=/bin/sh -c 'echo x > /run/myapp/y'`},
		{`ExecStart=/usr/bin/env -u HOME /bin/sh -c 'echo x > /run/myapp/y'`},
	} {
		assert.NoError(t, allowlist.JudgeUnit(unitOfLines(t, true, lines...)), "%q", lines)
	}
}
