package apply

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/openshift/refresh-agent/actions"
)

// lock takes the node lock (actions.LockFile) for a refresh or a recovery, exclusive, or shared for
// a dry run. It is taken before the journal is read and held until the record and the clean-up are
// done, so that no second process (a hand-run recover beside the agent, two applies, an agent
// restarted while the old one still exits) ever acts on a live transaction. On a node with no state
// dir yet there is nothing to recover and nothing is created (a refused or invalid request writes
// nothing at all): the returned function is nil, and lockLate takes the lock before the first write.
func (h Host) lock(ctx context.Context, exclusive bool) (func(), error) {
	if _, err := os.Lstat(h.StateDir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var l *actions.Lock
	var err error
	if exclusive {
		l, err = actions.LockState(ctx, h.StateDir, h.LockWait)
	} else {
		l, err = actions.LockStateShared(ctx, h.StateDir, h.LockWait)
	}
	if err != nil {
		return nil, err
	}
	return func() {
		if err := l.Unlock(); err != nil {
			h.logger().Warn("releasing the node lock", "err", err)
		}
	}, nil
}

// errStateAppeared says another process created the node's state between the start of a refresh on a
// node without one and its first write: the refresh starts over, under the lock.
var errStateAppeared = errors.New("the node's state appeared meanwhile")

// lockLate creates the state dir and takes the lock before a refresh's first write, on a node that
// had no state dir when the refresh started. Anything another process wrote in between (a journal, a
// record) makes it return errStateAppeared, with the lock released: what was planned may be stale.
func (h Host) lockLate(ctx context.Context) (func(), error) {
	l, err := actions.LockState(ctx, h.StateDir, h.LockWait)
	if err != nil {
		return nil, err
	}
	unlock := func() {
		if err := l.Unlock(); err != nil {
			h.logger().Warn("releasing the node lock", "err", err)
		}
	}
	for _, f := range []string{"journal.json", currentFile} {
		if _, err := os.Lstat(filepath.Join(h.StateDir, f)); !errors.Is(err, fs.ErrNotExist) {
			unlock()
			return nil, errStateAppeared
		}
	}
	return unlock, nil
}

// peek says what a recovery that could not take the node lock found, without acting on it: the
// journal is replaced atomically, so reading it beside its holder is safe.
func (h Host) peek(cause error) Recovery {
	rec := Recovery{Reason: "not acted on: " + cause.Error()}
	if phase, meta, err := actions.Peek(h.StateDir); err != nil {
		rec.Reason += fmt.Sprintf("; the journal cannot be read: %v", err)
	} else if phase != "" {
		rec.Found, rec.Phase, rec.Hash = true, phase, meta.Hash
	}
	return rec
}
