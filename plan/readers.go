package plan

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
)

// checkReaders refuses every file the refresh writes or removes that a unit reads as root: the
// node's units and the payload's, whichever rule allowed the path and whatever action it says
// (allowlist.ReadIndex: an environment file, a program or script, a watched path, a credential).
// The unit files and drop-ins the plan writes for a unit rule are judged as units (unitjudge.go).
func (p *Plan) checkReaders() error {
	var files []FileOp
	for _, f := range p.Files {
		if f.Unit == "" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil
	}
	reads, err := p.view.unitReads()
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		// An I/O error (no descriptor left, EIO) proves nothing about the payload: the plan
		// fails, to be retried, rather than refusing (adversary r21 b2/06's rule).
		return fmt.Errorf("%w: %w", ErrNodeRead, err)
	}
	if err != nil {
		p.Refused = append(p.Refused, Refusal{Kind: diff.KindFile, Reason: fmt.Sprintf(
			"storage.files: a file a unit reads as root is never written, and the node's unit files cannot all be read to say which: %v", err)})
		return nil
	}
	x := allowlist.IndexReads(reads)
	if !x.Judgeable(len(files)) {
		p.Refused = append(p.Refused, Refusal{Kind: diff.KindFile, Reason: fmt.Sprintf(
			"storage.files: %d files against the units' patterned reads (a template's %%i, a type drop-in's %%n) are too many to judge together: split the change", len(files))})
		return nil
	}
	for _, f := range files {
		if rs := x.ReadersOf(f.Path); len(rs) > 0 {
			p.refuseFile(f.Path, allowlist.FileReadWhy(f.Path, rs))
		}
	}
	return nil
}

// ErrNodeRead marks a plan that could not read the node's unit files for a reason that proves
// nothing about the payload (an I/O error): retried, never a refusal.
var ErrNodeRead = errors.New("the node's unit files could not be read")

// refuseFile refuses the planned change of the file at path after it was planned.
func (p *Plan) refuseFile(path, reason string) {
	for i := range p.Changes {
		if p.Changes[i].Kind == diff.KindFile && p.Changes[i].Path == path {
			p.Changes[i].Eligible = false
		}
	}
	p.Refused = append(p.Refused, Refusal{Kind: diff.KindFile, Path: path, Reason: reason})
}
