package plan

import (
	"fmt"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
)

// judgeContents says why a file write's contents must not be written, naming the file and the
// field, or "": the node policy's rule allowed the path, and for the files whose root readers would
// take code or power from them (allowlist.ContentJudge) what they say is judged too. The refusal is
// the plan's, so diff, apply --dry-run and apply refuse alike. judged counts the YAML nodes the
// plan's judges have been given so far: together they are bounded (MaxJudgedNodesTogether).
func judgeContents(op FileOp, judged *int) string {
	judge := allowlist.ContentJudge(op.Path)
	if judge == nil || op.Remove {
		return ""
	}
	data, err := judgedContents(op)
	if err == nil {
		err = chargeJudged(data, judged)
	}
	if err == nil {
		err = judge(data)
	}
	if err != nil {
		// A judge's parser quotes the value or key it refuses (yaml: cannot decode !!str `…`,
		// duplicate key "…"): a long one is shown by its length (adversary r25 c/03, c/04).
		return fmt.Sprintf("file %s: %s", op.Path, diff.QuotedCut(err.Error()))
	}
	return ""
}

// MaxJudgedNodesTogether bounds the YAML nodes of every judged file of one payload together. Each
// judged file is bounded (allowlist.MaxJudgedFile, 8 000 nodes), but a payload may hold thousands
// (adversary r14 d/01-02: 2 500 nmstate files of 8 000 nested nodes each, 574 KB of payload, took
// 149 s of CPU to plan on every node of the pool, before any pacing slot). A node costs the judges
// 1.5 µs to parse (5 µs nested 8 000 deep), so the bound keeps the worst payload's judging near a
// second; HyperShift's and the MCO's payloads judge a few hundred nodes (a static pod, a credential
// provider config, the pull secrets). Past it every further judged file is refused unparsed.
const MaxJudgedNodesTogether = 200_000

// chargeJudged charges data's YAML nodes (counted by what can start one, unparsed) against what
// the plan's judges may parse together.
func chargeJudged(data []byte, judged *int) error {
	*judged += diff.YAMLNodes(data)
	if *judged > MaxJudgedNodesTogether {
		return fmt.Errorf("the payload's judged files (static pods, credential providers, pull secrets, nmstate state) hold more than %d YAML nodes together up to this one, more than the judges parse for one payload: refused unparsed", MaxJudgedNodesTogether)
	}
	return nil
}

// judgedContents decodes a judged file's contents up to allowlist.MaxJudgedFile bytes: a judge
// reads no more, and a gzip stream (a 1 KiB payload can hold 60 MB of dropin) is cut there before
// anything past it is allocated.
func judgedContents(op FileOp) ([]byte, error) {
	if op.Unit != "" {
		if len(op.inline) > allowlist.MaxJudgedFile {
			return nil, fmt.Errorf("%d bytes, more than the %d a judged file may hold", len(op.inline), allowlist.MaxJudgedFile)
		}
		return op.inline, nil
	}
	data, err := diff.FileContentsUpTo(op.source, allowlist.MaxJudgedFile)
	if err != nil {
		return nil, fmt.Errorf("%w (the most a judged file may hold)", err)
	}
	return data, nil
}
