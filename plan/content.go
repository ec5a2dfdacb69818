package plan

import (
	"fmt"

	"github.com/openshift/refresh-agent/allowlist"
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
	data, err := op.Contents()
	if err == nil {
		err = judge(data)
	}
	if err != nil {
		return fmt.Sprintf("file %s: %v", op.Path, err)
	}
	return ""
}
