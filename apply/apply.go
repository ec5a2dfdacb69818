// Package apply runs one refresh on a node: recover any interrupted transaction, load the current
// state, plan, stage and commit the files, run the unit actions, roll back on failure, and record
// the result. The agent loop and the `apply` command both call it.
package apply

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/verify"
)

// Host is what a refresh acts on: the machine (its root, state dir, systemd, CRI and node policy),
// as against the Kubernetes Node object, which apply never reads.
type Host struct {
	Root     *actions.Root
	StateDir string
	Units    actions.Units
	// Pods restarts static pods through the CRI; nil skips pod actions.
	Pods   *actions.CRI
	Policy *allowlist.Policy
	// PolicyFile is the host path Policy was loaded from (--policy), "" for the built-in one: when it
	// lies inside the root, NodePolicy refuses it to every rule, ceiling and unit command.
	PolicyFile string
	Log        *slog.Logger
	// Drainer cordons and drains the node before a plan that needs it, and uncordons after; nil
	// (the apply command, which has no API client) skips the drain and says so (Result.DrainSkipped).
	Drainer Drainer
	// Drained says the operator drained the node already (apply --drained).
	Drained bool
	// RollbackTimeout bounds a rollback (restore, unit actions again, cleanup), which runs under its
	// own context: the caller's may be cancelled already (SIGTERM, shutdown grace over). Default 5m.
	RollbackTimeout time.Duration
	// Decoded keeps the recorded payload decoded between refreshes (nil: decode it every time).
	Decoded *Decoded
	// Verify says how a refresh proves the node healthy after its unit actions (package verify):
	// the window (0: off) and the probe endpoints; VerifyEnv adds the agent's Node readiness.
	Verify    verify.Options
	VerifyEnv verify.Env
	// LockWait bounds the wait for the node lock another process holds (zero: no wait); see
	// actions.LockFile.
	LockWait time.Duration
}

// Request is one desired state.
type Request struct {
	Desired       []byte // the payload as received
	Hash          string // the ConfigMap's hash; the payload's sha256 when empty
	NoRebootPaths []allowlist.Rule
	// Delegated maps paths someone else owns on the node to the reason (plan.Inputs.Delegated).
	Delegated map[string]string
	// Current overrides the recorded current state (the --current flag).
	Current *diff.Payload
	// Heal says the current state is the record without these files (a drift heal: exactly they are
	// written back). The record is read under the node lock, as for any refresh.
	Heal []string
	// DryRun plans against the node (owners, paths, symlinks, the daemon's record) and stops before
	// any effect: no recovery, no write, no action, no record (apply --dry-run).
	DryRun bool
}

// Result is the plan as it applies to the node, plus what happened. Its JSON form is the CLI's output.
type Result struct {
	// Plan is plan.Build's plan as it applies to this node (see onNode): the same, or a copy with what
	// only the node can tell added. The built plan is never edited.
	*plan.Plan
	// Writes is what the refresh does on the node, resolved against its root (owners from its
	// /etc/passwd and /etc/group, core's keys file under its home, the machine-config daemon's
	// current config kept coherent); also with --dry-run.
	Writes  []plan.Write `json:"writes,omitempty"`
	Outcome api.Outcome  `json:"outcome"`
	Applied bool         `json:"applied"`
	// RolledBack says a failed refresh was undone completely: every original verified back in place,
	// the unit actions run again on them, the backups and journal removed.
	RolledBack bool `json:"rolledBack"`
	// RollbackIncomplete says a failed refresh could not be undone completely (Reason names the path
	// or unit): the node may hold new files under the old record, the journal and every backup are
	// kept, and the rollback is retried by the next Run or Recover, which refuse anything else until it
	// succeeds. The outcome is failed (the agent reports Degraded).
	RollbackIncomplete bool   `json:"rollbackIncomplete,omitempty"`
	Hash               string `json:"hash"`
	Reason             string `json:"reason,omitempty"`
	// FilesWritten counts the files written or removed (metrics).
	FilesWritten int `json:"filesWritten"`
	// Drift counts planned files found changed by hand (metrics).
	Drift int `json:"drift"`
	// ActionsSkipped is set when no systemd manager was asked to run the actions (--systemd none):
	// none of them ran, forward or on rollback.
	ActionsSkipped bool `json:"actionsSkipped,omitempty"`
	// DrainSkipped is set when the plan asked for a drain and nothing could drain (apply without an
	// API client and without --drained).
	DrainSkipped bool `json:"drainSkipped,omitempty"`
	// ActionsRun counts the planned unit actions that ran successfully on the new content (0 when
	// skipped; fewer than len(Actions) when one failed).
	ActionsRun int `json:"actionsRun"`
	// Recorded says the record (current.json) names Hash: set with every applied or no-op outcome
	// whose record was written, false when writing it failed.
	Recorded bool `json:"recorded"`
	// CleanupPending says a step after the commit point failed (marking the journal done, the
	// record, removing the backups and the journal): every file is new and stays new (Applied), and
	// the next apply, recover or agent start finishes what is left (the unit actions when the journal
	// still says committed, the record, the clean-up). Reason names the failure; the exit code is 1.
	// Set with applied false, it says a refresh failed before its commit point with no target
	// touched, and what it had written (temp files, the journal: a full disk) is kept for the next
	// recover, which removes it.
	CleanupPending bool `json:"cleanupPending,omitempty"`
	// Checks are what the refresh asks of the node after its actions before it says applied
	// (package verify), for the verification window; also with --dry-run.
	Checks       []verify.Check `json:"checks,omitempty"`
	VerifyWindow string         `json:"verifyWindow,omitempty"`
	// Desired is the decoded desired payload (the agent's drift watch reads its files from it rather
	// than decoding the payload a second time).
	Desired *diff.Payload `json:"-"`
}

// InvalidError marks input that cannot be planned at all (exit 2).
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

func invalid(format string, args ...any) error {
	return &InvalidError{Err: fmt.Errorf(format, args...)}
}

// transact stages and commits the files, runs the unit actions and records; on any failure it
// rolls back (see rollback).
func (h Host) transact(ctx context.Context, res *Result, ops []actions.Op, meta actions.Meta, raw []byte) (*Result, error) {
	// Whatever happens next, no planned action runs when the node's manager is "none".
	res.ActionsSkipped = h.skips(meta.Actions)
	meta.Verify = h.baseline(ctx, meta.Actions)
	txn, err := actions.Prepare(h.Root, h.StateDir, ops, meta)
	if actions.IsRefusal(err) && !errors.Is(err, actions.ErrLeftovers) {
		return refuseOnNode(res, fileRefusal(err)), nil // changed on the node since Prepare checked it
	}
	if err != nil {
		// No target was touched; what Prepare wrote is gone, or (a full disk, a directory swapped
		// for a symlink half way) kept with the journal for the next recovery, and said so: never
		// a refusal, which says nothing was written (adversary r15 a/04).
		res.Outcome, res.Reason, res.CleanupPending = api.OutcomeFailed, err.Error(), errors.Is(err, actions.ErrLeftovers)
		return res, nil
	}
	// The payload is saved before the commit, so that recovery can record it after a crash.
	if _, err := savePayload(h.StateDir, raw); err != nil {
		return h.failed(ctx, res, txn, fmt.Errorf("state: %w", err)), nil
	}
	if err := txn.Commit(); err != nil {
		return h.failed(ctx, res, txn, err), nil
	}
	ran, err := actions.RunAll(ctx, h.runner(), meta.Actions)
	res.ActionsRun = ran
	if err != nil {
		return h.failed(ctx, res, txn, err), nil
	}
	// Done only once the node is seen healthy on the new content: a failed check is a failure like a
	// failed reload (rolled back, the actions run again on the old content).
	if err := h.verify(ctx, meta.Actions, meta.Verify); err != nil {
		return h.failed(ctx, res, txn, err), nil
	}
	// The commit point is behind: whatever fails from here on, every file is new and stays new, and
	// the result says what is on disk.
	res.Outcome, res.Applied, res.FilesWritten = api.OutcomeApplied, true, txn.Len()
	recorded, err := h.finish(txn)
	res.Recorded = recorded
	if err != nil {
		res.CleanupPending = true
		res.Reason = postCommitReason(recorded, err)
		h.logger().Error("refresh applied, but a step after the commit failed", "hash", meta.Hash, "recorded", recorded, "reason", res.Reason)
		return res, nil
	}
	h.logger().Info("refresh applied", "hash", meta.Hash, "files", txn.Len(), "actions", len(meta.Actions), "actionsRun", ran)
	return res, nil
}

// postCommitReason says what a failure after the commit point left to do.
func postCommitReason(recorded bool, err error) string {
	if recorded {
		return "applied and recorded, but the clean-up failed: " + err.Error() + "; the next apply, recover or agent start finishes it"
	}
	return "applied, but recording it failed: " + err.Error() + "; every file is new, and the next apply, recover or agent start records it and cleans up"
}

// failed rolls back after cause and fills res honestly: rolled back only when the rollback completed.
func (h Host) failed(ctx context.Context, res *Result, txn *actions.Txn, cause error) *Result {
	res.Outcome = api.OutcomeFailed
	if err := h.rollback(ctx, txn); errors.Is(err, ErrCleanupPending) {
		// Every original is back and checked: rolled back, only side files and the journal remain
		// (adversary r18 d/03: a full disk failing the clean-up's journal write said incomplete).
		res.RolledBack, res.CleanupPending, res.Reason = true, true, cleanupAfterRollback(cause, err)
		h.logger().Warn("refresh failed and rolled back; the clean-up is pending", "hash", txn.Meta().Hash, "reason", res.Reason)
		return res
	} else if err != nil {
		res.RollbackIncomplete = true
		res.Reason = fmt.Sprintf("%v; %v", cause, err)
		h.logger().Error("refresh failed and its rollback is incomplete", "hash", txn.Meta().Hash, "reason", res.Reason)
		return res
	}
	res.RolledBack = true
	res.Reason = cause.Error() + "; rolled back"
	h.logger().Warn("refresh failed and rolled back", "hash", txn.Meta().Hash, "reason", res.Reason)
	return res
}

// ErrRollbackPending marks a rollback that could not complete: the journal and the backups are kept,
// and nothing else may start until a later recovery completes it.
var ErrRollbackPending = errors.New("rollback incomplete; the journal and backups are kept and recovery is retried")

// ErrCleanupPending marks a rollback that completed (every original back and checked, the unit
// actions run again on them) whose clean-up failed: side files and the journal remain, and the next
// apply, recover or agent start removes them. Not ErrRollbackPending: nothing is left to undo.
var ErrCleanupPending = errors.New("the clean-up after the rollback failed")

// cleanupAfterRollback is the reason of a refresh that failed with cause and rolled back, its
// clean-up failing with err (ErrCleanupPending).
func cleanupAfterRollback(cause, err error) string {
	return fmt.Sprintf("%v; rolled back, but %v; the next apply, recover or agent start finishes it", cause, err)
}

// rollback puts every original back and checks it, runs the unit actions again when they may have
// run on the new content, and only then removes the backups and the journal. On any failure it
// returns an error wrapping ErrRollbackPending, naming the path or unit, and leaves the journal for
// the next recovery. It runs under its own context and deadline, not the caller's.
func (h Host) rollback(ctx context.Context, txn *actions.Txn) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.rollbackTimeout())
	defer cancel()
	if err := txn.Rollback(); err != nil {
		return fmt.Errorf("%w: %w", ErrRollbackPending, err)
	}
	if _, err := actions.RunAll(ctx, h.runner(), plan.Rollback(txn.Rerun())); err != nil {
		return fmt.Errorf("%w: files restored, but the unit actions on them failed: %w", ErrRollbackPending, err)
	}
	if err := txn.Finish(); errors.Is(err, actions.ErrNotDurable) {
		h.logger().Warn("rolled back", "warning", err.Error())
	} else if err != nil {
		return fmt.Errorf("%w: %w", ErrCleanupPending, err)
	}
	if err := dropPayload(h.StateDir, txn.Meta().PayloadFile); err != nil {
		return fmt.Errorf("%w: %w", ErrCleanupPending, err)
	}
	return nil
}

func (h Host) rollbackTimeout() time.Duration {
	if h.RollbackTimeout > 0 {
		return h.RollbackTimeout
	}
	return 5 * time.Minute
}

// finish marks the actions done, records the new state and cleans up; recorded says the record
// names the new state, also when a step failed. The record is written even when the journal could
// not be marked done (a full or read-only state dir may still take it): the journal then still says
// committed, and recovery runs the unit actions again before it records and cleans up.
func (h Host) finish(txn *actions.Txn) (recorded bool, err error) {
	derr := txn.MarkDone()
	if derr != nil {
		derr = fmt.Errorf("marking the journal done: %w", derr)
	}
	m := txn.Meta()
	if err := writeRecord(h.StateDir, m.Hash, m.PayloadFile); err != nil {
		// The rename may have landed before the failure (the state dir's fsync): recorded says
		// what a read of the record shows now, never less.
		recorded := readsAs(h.StateDir, m.Hash, m.PayloadFile)
		if recorded {
			err = fmt.Errorf("the record names it, but making it durable failed (a power cut may lose it): %w", err)
		}
		return recorded, errors.Join(derr, fmt.Errorf("state: writing the record: %w", err))
	}
	if derr != nil {
		return true, derr
	}
	if err := txn.Finish(); errors.Is(err, actions.ErrNotDurable) {
		h.logger().Warn("refresh applied", "warning", err.Error())
	} else if err != nil {
		return true, fmt.Errorf("removing the backups and the journal: %w", err)
	}
	if err := prunePayloads(h.StateDir, m.PayloadFile); err != nil {
		return true, fmt.Errorf("removing the previous payload: %w", err)
	}
	return true, nil
}

func (h Host) record(raw []byte, hash string) error {
	if CurrentHash(h.StateDir) == hash {
		return nil
	}
	f, err := savePayload(h.StateDir, raw)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if err := writeRecord(h.StateDir, hash, f); err != nil {
		return err
	}
	if err := prunePayloads(h.StateDir, f); err != nil {
		return fmt.Errorf("%w: %w", ErrPrunePending, err)
	}
	return nil
}

// ErrPrunePending marks a record that moved (and is durable) whose older saved payloads could not
// be removed: the next apply's or recover's sweep removes them.
var ErrPrunePending = errors.New("the record moved, but removing the previous payload failed")

// Recovery says what Recover found.
type Recovery struct {
	Found   bool          `json:"found"`
	Phase   actions.Phase `json:"phase,omitempty"`
	Outcome api.Outcome   `json:"outcome,omitempty"` // applied (rolled forward) or failed (rolled back); empty when nothing was found
	Hash    string        `json:"hash,omitempty"`
	// RolledBack, RollbackIncomplete, Recorded and CleanupPending mean what they mean in Result;
	// Reason says why it rolled back or what is still pending.
	RolledBack         bool   `json:"rolledBack,omitempty"`
	RollbackIncomplete bool   `json:"rollbackIncomplete,omitempty"`
	Recorded           bool   `json:"recorded,omitempty"`
	CleanupPending     bool   `json:"cleanupPending,omitempty"`
	Reason             string `json:"reason,omitempty"`
	// KeptSideFiles lists side files (backups, a restore's copies) beside managed files that no
	// journal accounts for and that are not their file's own copy: each may be an original, so it is
	// kept, and a refresh of its file is refused until it is compared and removed by hand. After a
	// rollback refused a backup that is not provably the original (actions.ErrHostileBackup), it
	// lists those backups, kept with the files beside them as they are.
	KeptSideFiles []string `json:"keptSideFiles,omitempty"`
}

// Recover finishes an interrupted refresh: committed ones roll forward (the pending unit actions
// run, then the record), ones interrupted earlier or while rolling back roll back. A rollback that
// cannot complete returns an error wrapping ErrRollbackPending (and the Recovery says so): the
// journal stays, and Run refuses to start anything until a later Recover completes it.
func Recover(ctx context.Context, h Host) (Recovery, error) {
	if err := h.Root.CheckStateDir(h.StateDir); err != nil {
		return Recovery{}, err
	}
	l, err := h.lock(ctx, true)
	if err != nil {
		return h.peek(err), err
	}
	defer l.release()
	if !l.stateHeld {
		return Recovery{}, nil // no state dir: nothing was ever started here
	}
	rec, err := h.recoverLocked(ctx)
	if err == nil {
		cur, cerr := h.LoadCurrent()
		if cerr == nil {
			rec.KeptSideFiles = h.sweepSides(cur.Payload)
		}
	}
	return rec, err
}

// recoverLocked is Recover with the node lock held.
func (h Host) recoverLocked(ctx context.Context) (Recovery, error) {
	// Whatever happens, the state dir's temp files and unreferenced payloads go (none is anyone
	// else's under the lock).
	defer h.sweepState()
	phase, meta, _ := actions.Peek(h.StateDir)
	txn, err := actions.Recover(h.Root, h.StateDir, h.trust(ctx))
	if err != nil {
		// Said as found, when a journal is there (one refused as not the agent's too): it stays, and
		// recovery is retried.
		_, jerr := os.Lstat(filepath.Join(h.StateDir, "journal.json")) // Lstat: a symlink there is found, not followed
		rec := Recovery{Found: phase != "" || jerr == nil, Phase: phase, Hash: meta.Hash, Reason: err.Error()}
		if phase == actions.PhasePreparing {
			rec.Outcome, rec.CleanupPending = api.OutcomeFailed, true
			rec.Reason = "interrupted while preparing: no file on the node had changed, but the clean-up failed: " + err.Error() +
				"; the journal stays until it is done"
		}
		return rec, err
	}
	if txn == nil {
		if phase != "" {
			// Interrupted while preparing: no target had changed; the temp files, backups and
			// created directories were removed. Found, and undone.
			return Recovery{Found: true, Phase: actions.PhasePreparing, Outcome: api.OutcomeFailed, RolledBack: true,
				Reason: "interrupted while preparing; no file on the node had changed; cleaned up (a directory made for a new file just before the journal named it may remain, empty)"}, h.uncordonLeftover(ctx)
		}
		return Recovery{}, h.uncordonLeftover(ctx)
	}
	// The transaction is settled first (rolled forward or back), then the node uncordoned.
	defer func() {
		if err := h.uncordonLeftover(ctx); err != nil {
			h.logger().Error("recovery", "reason", err.Error())
		}
	}()
	rec := Recovery{Found: true, Phase: txn.Phase(), Hash: txn.Meta().Hash}
	h.logger().Info("recovering an interrupted refresh", "phase", txn.Phase(), "hash", rec.Hash)
	cause := fmt.Errorf("interrupted in phase %s", txn.Phase())
	switch txn.Phase() {
	case actions.PhaseRollingBack, actions.PhaseRolledBack:
		cause = fmt.Errorf("an incomplete rollback resumed (phase %s)", txn.Phase())
	case actions.PhaseDone:
		return h.rollForward(rec, txn)
	case actions.PhaseCommitted:
		// The actions may not all have run, or ran and were never verified: both again.
		_, err := actions.RunAll(ctx, h.runner(), txn.Meta().Actions)
		if err == nil {
			err = h.verify(ctx, txn.Meta().Actions, txn.Meta().Verify)
		}
		if err == nil {
			return h.rollForward(rec, txn)
		}
		cause = err
	}
	rec.Outcome = api.OutcomeFailed
	if err := h.rollback(ctx, txn); errors.Is(err, ErrCleanupPending) {
		rec.RolledBack, rec.CleanupPending, rec.Reason = true, true, cleanupAfterRollback(cause, err)
		h.logger().Warn("recovered refresh rolled back; the clean-up is pending", "hash", rec.Hash, "reason", rec.Reason)
		// Not finished: its journal, backups and temps (the new pull secret's among them) stay, so
		// recover exits 1, as after a roll-forward whose clean-up failed (adversary r20 b/02).
		return rec, fmt.Errorf("refresh to %s: %s", rec.Hash, rec.Reason)
	} else if err != nil {
		rec.RollbackIncomplete, rec.Reason = true, fmt.Sprintf("%v; %v", cause, err)
		rec.KeptSideFiles = txn.KeptBackups()
		h.logger().Error("recovery could not complete the rollback", "hash", rec.Hash, "reason", rec.Reason)
		return rec, fmt.Errorf("refresh to %s: %w", rec.Hash, err)
	}
	rec.RolledBack, rec.Reason = true, cause.Error()+"; rolled back"
	h.logger().Warn("recovered refresh rolled back", "hash", rec.Hash, "reason", rec.Reason)
	return rec, nil
}

// rollForward records a recovered transaction that had committed and cleans up, saying what is on
// disk when a step fails.
func (h Host) rollForward(rec Recovery, txn *actions.Txn) (Recovery, error) {
	if err := h.shownApplied(txn.Meta().PayloadFile); err != nil {
		// Rolled forward (the entries' files are the agent's), never recorded: see shownApplied.
		rec.Outcome = api.OutcomeFailed
		rec.Reason = fmt.Sprintf("%v (%v): the record stays at the state before it, and the next apply plans the payload again and writes what differs", ErrNotShownApplied, err)
		ferr := txn.MarkDone()
		if ferr == nil {
			if ferr = txn.Finish(); errors.Is(ferr, actions.ErrNotDurable) {
				ferr = nil
			}
		}
		if ferr == nil {
			ferr = dropPayload(h.StateDir, txn.Meta().PayloadFile)
		}
		if ferr != nil {
			rec.CleanupPending, rec.Reason = true, rec.Reason+"; the clean-up failed: "+ferr.Error()+"; the next apply, recover or agent start finishes it"
		}
		h.logger().Error("recovered refresh not recorded", "hash", rec.Hash, "reason", rec.Reason)
		return rec, fmt.Errorf("refresh to %s: %w (%w)", rec.Hash, ErrNotShownApplied, err)
	}
	rec.Outcome = api.OutcomeApplied
	recorded, err := h.finish(txn)
	rec.Recorded = recorded
	if err != nil {
		rec.CleanupPending, rec.Reason = true, postCommitReason(recorded, err)
	}
	return rec, err
}

// writesOf lists the node-resolved operations of a plan (never contents).
func writesOf(p *plan.Plan, ops []actions.Op) []plan.Write {
	out := make([]plan.Write, 0, len(ops))
	for i, op := range ops {
		w := plan.Write{Path: op.Path, Remove: op.Remove, UID: op.UID, GID: op.GID, For: "file"}
		if i < len(p.Files) && !op.Remove && p.Files[i].Unit == "" {
			w.ModeCeiling, w.OwnerCeiling = p.Files[i].ModeCeiling.String(), p.Files[i].Owner
		}
		if !op.Remove {
			w.Mode = fmt.Sprintf("%04o", op.Mode.Perm())
		}
		switch {
		case i >= len(p.Files) && op.Path == MCDCurrentConfig:
			w.For = "mcdCurrentConfig"
			w.ModeCeiling, w.OwnerCeiling = fmt.Sprintf("%04o", MCDRecordMode), "root:root"
		case i >= len(p.Files):
			w.For = "sshKeys"
		}
		out = append(out, w)
	}
	return out
}

// runner runs a plan's actions: unit jobs on h.Units, static pod restarts on h.Pods.
// checks are what a refresh running acts asks of the node after them; notes say what it cannot ask.
// Nothing is checked when the actions do not run (--systemd none).
func (h Host) checks(acts []plan.UnitAction) ([]verify.Check, []string) {
	if h.skips(acts) {
		return nil, nil
	}
	var probes map[string][]allowlist.Probe
	if h.Policy != nil {
		probes = h.Policy.Probes()
	}
	o := h.Verify
	if h.Pods == nil {
		o.CRISocket = ""
	}
	return verify.For(acts, probes, o)
}

// baseline asks acts' checks before they run (verify.Baseline): the keys go into the journal, the
// notes into the log (the plan already shows the checks).
func (h Host) baseline(ctx context.Context, acts []plan.UnitAction) []string {
	checks, _ := h.checks(acts)
	if h.Verify.Window <= 0 || len(acts) == 0 {
		return nil
	}
	_, keys, notes := verify.Baseline(ctx, checks, h.verifyEnv(true))
	for _, note := range notes {
		h.logger().Warn(note)
	}
	return keys
}

// baselineBound is every key baseline could return for acts: what the dry run charges the journal
// with before a baseline is asked.
func (h Host) baselineBound(acts []plan.UnitAction) []string {
	checks, _ := h.checks(acts)
	if h.Verify.Window <= 0 || len(acts) == 0 {
		return nil
	}
	var keys []string
	for _, c := range checks {
		keys = append(keys, c.Key())
	}
	return append(keys, verify.NodeKey)
}

// verify runs, for the verification window, the checks of acts that the baseline kept (keys).
func (h Host) verify(ctx context.Context, acts []plan.UnitAction, keys []string) error {
	checks, _ := h.checks(acts)
	checks, node := verify.Kept(checks, keys)
	if len(checks) == 0 && !node {
		return nil // nothing that worked before to prove working still, and no window to wait
	}
	start := time.Now()
	err := verify.Run(ctx, checks, h.Verify.Window, h.verifyEnv(node))
	h.logger().Info("refresh verified", "checks", verify.String(checks), "nodeReady", node, "window", h.Verify.Window.String(),
		"took", time.Since(start).Round(time.Millisecond).String(), "ok", err == nil)
	return err
}

func (h Host) verifyEnv(node bool) verify.Env {
	env := h.VerifyEnv
	if h.Pods != nil {
		env.Runtime = h.Pods
	}
	if !node {
		env.NodeReady, env.Changed = nil, nil
	}
	return env
}

func (h Host) runner() actions.Units { return actions.Runner{Units: h.Units, Pods: h.Pods} }

// skips reports whether any of these actions will not run: unit jobs with --systemd none, pod
// restarts without a CRI runtime (--cri-socket none).
func (h Host) skips(list []plan.UnitAction) bool {
	for _, a := range list {
		if a.Pod != "" && h.Pods == nil || a.Pod == "" && actions.Skips(h.Units) {
			return true
		}
	}
	return false
}

func (h Host) logger() *slog.Logger {
	if h.Log != nil {
		return h.Log
	}
	return slog.New(slog.DiscardHandler)
}

// refusedReason joins every refusal's reason; the reporter bounds the length.
func refusedReason(p *plan.Plan) string {
	reasons := make([]string, len(p.Refused))
	for i, r := range p.Refused {
		reasons[i] = r.Reason
	}
	return strings.Join(reasons, "; ")
}

// checkHash accepts a payload hash that prints as itself: it is recorded, annotated and shown, so a
// newline or an escape sequence in it could forge a line of output or of the record.
func checkHash(h string) error {
	if len(h) > 253 {
		return fmt.Errorf("hash is %d characters long (at most 253)", len(h))
	}
	for _, c := range []byte(h) {
		if c < 0x21 || c > 0x7e {
			return fmt.Errorf("hash %q has a character outside printable ASCII", h)
		}
	}
	return nil
}
