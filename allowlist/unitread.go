package allowlist

import (
	"errors"
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
		return nil, fmt.Errorf("not a unit file systemd reads: %s", lexerWhy(err))
	}
	return opts, nil
}

// lexerWhy words the lexer's error without the unit's text: go-systemd quotes what follows a
// section header's "]" (found garbage after section name S: "…"), which may be a line of the
// file, a secret among them (adversary r23 c/07). Its other errors quote nothing.
func lexerWhy(err error) string {
	msg := err.Error()
	if errors.Is(err, unit.ErrLineTooLong) {
		return msg
	}
	for _, safe := range []string{"unable to find end of section", "unexpected newline encountered while parsing option name", "unit file misparse: option before section"} {
		if msg == safe {
			return msg
		}
	}
	if strings.HasPrefix(msg, "found garbage after section name") {
		return "text after a section header's closing \"]\" (not shown: it may be any line of the file)"
	}
	return fmt.Sprintf("the lexer refuses it (%d bytes of message, not shown: it may quote the file)", len(msg))
}
