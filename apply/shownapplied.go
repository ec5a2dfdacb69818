package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
)

// A journal that rolls forward proves, entry by entry, only the files it names (each the agent's
// new file by inode and contents); an empty list proves nothing, and a forged one names what it
// likes (adversary round 7a F6: {"phase":"committed","entries":[]} and a payload saved under its
// own hash were recorded as current, and the next apply said nothing to do over the old files).
// So recovery records a payload only once the node's files show it applied: every file the payload
// defines under the node's policy (inline contents, no append; units' files and dropins) holds the
// payload's contents. When
// one does not, the transaction still rolls forward (its files are the agent's), but the record
// stays where it was: the next apply plans the payload again against it and writes what differs. Not
// recording is always safe; recording wrongly is what must never happen.

// ErrNotShownApplied marks a recovered transaction rolled forward but not recorded: the node's
// files do not show its payload applied.
var ErrNotShownApplied = errors.New("rolled forward, but not recorded: the node's files do not show the payload applied")

// shownApplied returns nil when every file the payload file pf defines under the node's policy holds
// the payload's contents on the node, else an error naming the first that does not.
func (h Host) shownApplied(pf string) error {
	if pf == "" {
		return errors.New("the journal names no payload file")
	}
	raw, err := actions.ReadStateFile(h.StateDir, pf)
	if err != nil {
		return fmt.Errorf("payload file %s: %w", pf, err)
	}
	des, err := diff.Decode(raw)
	if err != nil {
		return fmt.Errorf("payload file %s: %w", pf, err)
	}
	may := h.trust(context.Background()).Path // Path asks nothing of the manager
	holds := func(p string, data []byte) error {
		if may(p) != nil {
			return nil // not a file the agent may write on this node
		}
		sum := sha256.Sum256(data)
		got, err := h.Root.HashFile(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if got != hex.EncodeToString(sum[:]) {
			return fmt.Errorf("%s does not hold the payload's contents", p)
		}
		return nil
	}
	for _, f := range des.Config.Storage.Files {
		if len(f.Append) > 0 {
			continue // not a file the agent writes whole
		}
		data, err := diff.FileContents(f)
		if errors.Is(err, diff.ErrRemoteSource) {
			continue
		}
		if err == nil {
			err = holds(f.Path, data)
		}
		if err != nil {
			return err
		}
	}
	// Units' files and dropins, where the plan writes them (plan.UnitDir), as they are in the payload.
	for _, u := range des.Config.Systemd.Units {
		if u.Contents != nil && (u.Mask == nil || !*u.Mask) {
			if err := holds(path.Join(plan.UnitDir, u.Name), []byte(*u.Contents)); err != nil {
				return err
			}
		}
		for _, d := range u.Dropins {
			if d.Contents != nil {
				if err := holds(path.Join(plan.UnitDir, u.Name+".d", d.Name), []byte(*d.Contents)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
