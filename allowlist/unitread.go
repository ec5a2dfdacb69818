package allowlist

import (
	"fmt"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/openshift/refresh-agent/diff"
)

// UnitOptions reads a unit file or dropin as go-systemd's lexer does (unit.DeserializeOptions), at a
// bounded cost: every unit text the judges read goes through it. The lexer's cost grows with the
// sections and settings it emits, not with bytes (a 60 MB dropin of "[S]" lines allocated 1.4 GiB
// over 19 s): a text over MaxJudgedFile bytes, with a physical line over 2047 bytes, more than 32768
// lines, 256 sections or 4096 settings is refused (a *diff.UnitBoundError naming the bound) before
// the lexer runs (diff.CheckUnitText). A text the lexer refuses is "not a unit file systemd reads".
func UnitOptions(text string) ([]*unit.UnitOption, error) {
	if err := diff.CheckUnitText(text); err != nil {
		return nil, err
	}
	opts, err := unit.DeserializeOptions(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("not a unit file systemd reads: %v", err)
	}
	return opts, nil
}
