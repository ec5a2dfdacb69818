package apply

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/openshift/refresh-agent/actions"
)

// nodeLock is the node lock a refresh or a recovery holds: the root's (actions.LockRoot: every
// refresh-agent process on this root, whatever its --state-dir) and, once the state dir exists, the
// state dir's (actions.LockFile), always taken in that order.
type nodeLock struct {
	h         Host
	root      *actions.RootLock
	state     *actions.Lock
	stateHeld bool // the state dir's lock is held (a shared one with no lock file yet is a nil *Lock)
}

// lock takes the node lock for a refresh or a recovery, exclusive, or shared for a dry run. It is
// taken before the journal is read and held until the record and the clean-up are done, so that no
// second process (a hand-run recover beside the agent, two applies, an agent restarted while the
// old one still exits, one with another --state-dir) ever acts on a live transaction. With the lock
// held, a root whose owner is another state dir with its journal pending refuses
// (actions.CheckRootOwner): nothing is read, swept or written beside that transaction. On a node
// with no state dir yet nothing is created (a refused or invalid request writes nothing at all):
// only the root's lock is held, and late takes the state dir's before the first write.
func (h Host) lock(ctx context.Context, exclusive bool) (*nodeLock, error) {
	start := time.Now()
	rl, err := actions.LockRoot(ctx, h.Root, h.StateDir, h.LockWait, exclusive)
	if err != nil {
		return nil, err
	}
	l := &nodeLock{h: h, root: rl}
	// Under the root's lock, before the state dir's lock file is even created: a refused process
	// writes nothing.
	if err := actions.CheckRootOwner(h.Root, h.StateDir); err != nil {
		l.release()
		return nil, err
	}
	if _, err := os.Lstat(h.StateDir); !errors.Is(err, fs.ErrNotExist) {
		wait := h.LockWait - time.Since(start) // one wait for both locks
		if exclusive {
			l.state, err = actions.LockState(ctx, h.StateDir, wait)
		} else {
			l.state, err = actions.LockStateShared(ctx, h.StateDir, wait)
		}
		if err != nil {
			l.release()
			return nil, err
		}
		l.stateHeld = true
	}
	return l, nil
}

// release gives both locks back; it is safe to call more than once.
func (l *nodeLock) release() {
	if l == nil {
		return
	}
	if err := l.state.Unlock(); err != nil {
		l.h.logger().Warn("releasing the node lock", "err", err)
	}
	if err := l.root.Unlock(); err != nil {
		l.h.logger().Warn("releasing the node root's lock", "err", err)
	}
	l.state, l.root, l.stateHeld = nil, nil, false
}

// errStateAppeared says another process created the node's state between the start of a refresh on a
// node without one and its first write: the refresh starts over, under the lock.
var errStateAppeared = errors.New("the node's state appeared meanwhile")

// late creates the state dir and takes its lock before a refresh's first write, on a node that had
// no state dir when the refresh started (the root's lock held since). Anything another process wrote
// in between (one with the same state dir on another root: a journal, a record) makes it return
// errStateAppeared, the state dir's lock released: what was planned may be stale.
func (l *nodeLock) late(ctx context.Context) error {
	s, err := actions.LockState(ctx, l.h.StateDir, l.h.LockWait)
	if err != nil {
		return err
	}
	for _, f := range []string{"journal.json", currentFile} {
		if _, err := os.Lstat(filepath.Join(l.h.StateDir, f)); !errors.Is(err, fs.ErrNotExist) {
			if err := s.Unlock(); err != nil {
				l.h.logger().Warn("releasing the node lock", "err", err)
			}
			return errStateAppeared
		}
	}
	l.state, l.stateHeld = s, true
	return nil
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
