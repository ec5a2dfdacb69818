package diff

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/coreos/go-systemd/v22/unit"
)

// Every unit file and dropin text the agent parses is checked by CheckUnitText first (the judges
// read them through allowlist.UnitOptions). go-systemd's lexer has no bound but its physical line
// length, and its cost grows with what it emits, not with bytes: each section and setting is a
// goroutine hand-off and several allocations (measured: a 60 MB dropin of "[S]" lines allocated
// 1.4 GiB over 19 s, 20 M "A=" lines 3.3 GiB). So the text is held to the judged-file size, and its
// lines, sections and settings are counted, before the lexer sees it. A unit file of the MCO's or
// systemd's is a few KiB, a handful of sections and under a hundred settings; the bounds leave room
// for long commented units and scripts. It lives here, below the judges, because Ignition's own
// validation of a payload parses every unit and dropin with that lexer too: the decode checks the
// bounds first (boundedUnits).

// MaxJudgedFile is the most a file whose contents a judge reads may hold (allowlist.MaxJudgedFile):
// a unit file or dropin, a static pod manifest, a credential provider config, nmstate's state.
const MaxJudgedFile = 128 << 10

const (
	maxUnitLine     = unit.SYSTEMD_LINE_MAX - 1 // bytes of one physical line, without its end (the lexer's)
	maxUnitLines    = 32768
	maxUnitSections = 256
	maxUnitOptions  = 4096
)

type unitBounds struct{ size, line, lines, sections, options int }

var defaultUnitBounds = unitBounds{MaxJudgedFile, maxUnitLine, maxUnitLines, maxUnitSections, maxUnitOptions}

// UnitBoundError says which bound a unit file or dropin exceeds: the text is not parsed.
type UnitBoundError struct {
	What   string // "bytes", "lines", "sections", "settings", or "bytes in line N"
	N, Max int
}

func (e *UnitBoundError) Error() string {
	return fmt.Sprintf("too large to judge: %d %s, more than the %d a unit file or dropin may hold", e.N, e.What, e.Max)
}

// MaxUnitTexts bounds a unit's texts together, its unit file and all its dropins: each is bounded by
// CheckUnitText, and a unit is read whole (every dropin lexed, every Exec*= line split), so 270
// dropins of 128 KiB each (34 MB of continued ExecStartPre= lines) cost the plan near 1 GB before
// the word bound (allowlist.MaxExecWords) refused them. The MCO's largest units, with their dropins,
// are a few KiB.
const MaxUnitTexts = 1 << 20

// UnitTextsError says a unit's texts together exceed MaxUnitTexts: none of them is parsed.
type UnitTextsError struct{ N, Dropins int }

func (e *UnitTextsError) Error() string {
	return fmt.Sprintf("too large to judge: %d bytes in the unit file and its %d dropins together, more than the %d a unit may hold", e.N, e.Dropins, MaxUnitTexts)
}

// CheckUnitTexts refuses, before anything parses them, a unit whose file (contents, nil for none)
// and dropin texts together exceed MaxUnitTexts bytes (a *UnitTextsError). Every reader of a whole
// unit (the plan's judges, the decode's validation) calls it, and CheckUnitText on each text.
// A single text over MaxJudgedFile is named as CheckUnitText names it.
func CheckUnitTexts(contents *string, dropins []*string) error {
	n := 0
	for _, t := range append([]*string{contents}, dropins...) {
		if t == nil {
			continue
		}
		if len(*t) > MaxJudgedFile {
			return &UnitBoundError{What: "bytes", N: len(*t), Max: MaxJudgedFile}
		}
		n += len(*t)
	}
	if n > MaxUnitTexts {
		return &UnitTextsError{N: n, Dropins: len(dropins)}
	}
	return nil
}

// CheckUnitText refuses, before anything parses it, a unit file or dropin text over MaxJudgedFile
// bytes, with a physical line over 2047 bytes (the lexer's), more than 32768 lines, 256 sections or
// 4096 settings (a *UnitBoundError naming the bound). allowlist.UnitOptions and every other reader
// of unit texts (the systemd-exact reading of the unit-key judge, the decode's validation) call it.
func CheckUnitText(text string) error { return checkUnitText(text, defaultUnitBounds) }

// checkUnitText applies the size and line bounds, then counts the sections and settings the lexer
// would emit, in one pass without allocating.
func checkUnitText(text string, b unitBounds) error {
	if len(text) > b.size {
		return &UnitBoundError{What: "bytes", N: len(text), Max: b.size}
	}
	for start := 0; start <= len(text); {
		end := strings.IndexAny(text[start:], "\n\r")
		if end < 0 {
			end = len(text) - start
		}
		if end > b.line {
			return &UnitBoundError{What: fmt.Sprintf("bytes in line %d", strings.Count(text[:start], "\n")+1), N: end, Max: b.line}
		}
		start += end + 1
	}
	lines := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") && text != "" {
		lines++
	}
	if lines > b.lines {
		return &UnitBoundError{What: "lines", N: lines, Max: b.lines}
	}
	sections, options := countUnit(text)
	if sections > b.sections {
		return &UnitBoundError{What: "sections", N: sections, Max: b.sections}
	}
	if options > b.options {
		return &UnitBoundError{What: "settings", N: options, Max: b.options}
	}
	return nil
}

// countUnit counts the sections and settings go-systemd's lexer emits for text, following its
// states (deserialize.go: lexNextSection, lexSectionName, lexNextSectionOrOption, lexOptionName,
// lexOptionValue, ignoreLine). Where the lexer would fail, it stops: the lexer then refuses the
// text itself, so the counts are exact for every text the lexer reads (FuzzUnitOptions checks it).
func countUnit(text string) (sections, options int) {
	i, inSection := 0, false
	// toEOL returns the line from i (without its \n) and where the next one starts.
	toEOL := func(i int) (string, int) {
		if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
			return text[i : i+j], i + j + 1
		}
		return text[i:], len(text)
	}
	for i < len(text) {
		r, w := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '[':
			j := strings.IndexByte(text[i+1:], ']')
			if j < 0 {
				return // "unable to find end of section"
			}
			garbage, next := toEOL(i + 1 + j + 1)
			if strings.TrimSpace(garbage) != "" {
				return // "found garbage after section name"
			}
			sections++
			i, inSection = next, true
		case r == '#' || r == ';':
			for {
				var line string
				line, i = toEOL(i)
				if !strings.HasSuffix(strings.TrimSuffix(line, " "), `\`) || i == len(text) {
					break
				}
			}
		case !inSection, unicode.IsSpace(r):
			i += w // before the first section anything else is skipped, rune by rune
		default:
			eq := strings.IndexAny(text[i:], "=\n\r")
			if eq < 0 || text[i+eq] != '=' {
				return // "unexpected newline" or EOF in an option name
			}
			i += eq + 1
			for {
				var line string
				line, i = toEOL(i)
				if strings.TrimSpace(line) == "" || !strings.HasSuffix(line, `\`) || i == len(text) {
					break
				}
			}
			options++
		}
	}
	return
}
