package plan

import (
	"fmt"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
)

// checkReaders refuses every file the refresh writes or removes that a unit reads as root: the
// node's units and the payload's, whichever rule allowed the path and whatever action it says
// (allowlist.ReadIndex: an environment file, a program or script, a watched path, a credential).
// The unit files and drop-ins the plan writes for a unit rule are judged as units (unitjudge.go).
func (p *Plan) checkReaders() {
	var files []FileOp
	for _, f := range p.Files {
		if f.Unit == "" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return
	}
	reads, err := p.view.unitReads()
	if err != nil {
		p.Refused = append(p.Refused, Refusal{Kind: diff.KindFile, Reason: fmt.Sprintf(
			"storage.files: a file a unit reads as root is never written, and the node's unit files cannot all be read to say which: %v", err)})
		return
	}
	x := allowlist.IndexReads(reads)
	if !x.Judgeable(len(files)) {
		p.Refused = append(p.Refused, Refusal{Kind: diff.KindFile, Reason: fmt.Sprintf(
			"storage.files: %d files against the units' patterned reads (a template's %%i, a type drop-in's %%n) are too many to judge together: split the change", len(files))})
		return
	}
	for _, f := range files {
		if rs := x.ReadersOf(f.Path); len(rs) > 0 {
			p.refuseFile(f.Path, allowlist.FileReadWhy(f.Path, rs))
		}
	}
}

// refuseFile refuses the planned change of the file at path after it was planned.
func (p *Plan) refuseFile(path, reason string) {
	for i := range p.Changes {
		if p.Changes[i].Kind == diff.KindFile && p.Changes[i].Path == path {
			p.Changes[i].Eligible = false
		}
	}
	p.Refused = append(p.Refused, Refusal{Kind: diff.KindFile, Path: path, Reason: reason})
}
