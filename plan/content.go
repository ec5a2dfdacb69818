package plan

import (
	"fmt"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
)

// judgeContents says why a file write's contents must not be written, naming the file and the
// field, or "": the node policy's rule allowed the path, and for the files whose root readers would
// take code or power from them (allowlist.ContentJudge) what they say is judged too. The refusal is
// the plan's, so diff, apply --dry-run and apply refuse alike.
func judgeContents(op FileOp) string {
	judge := allowlist.ContentJudge(op.Path)
	if judge == nil || op.Remove {
		return ""
	}
	data, err := judgedContents(op)
	if err == nil {
		err = judge(data)
	}
	if err != nil {
		return fmt.Sprintf("file %s: %v", op.Path, err)
	}
	return ""
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
