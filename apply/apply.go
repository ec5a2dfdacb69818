// Package apply runs one refresh on a node: recover any interrupted transaction, load the current
// state, plan, stage and commit the files, run the unit actions, roll back on failure, and record
// the result. The agent loop and the `apply` command both call it.
package apply

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
)

// Outcome is how a refresh ended.
type Outcome string

const (
	OutcomeApplied Outcome = "applied"
	OutcomeNoop    Outcome = "noop"
	OutcomeRefused Outcome = "refused"
	OutcomeFailed  Outcome = "failed"
)

// Node is what a refresh acts on.
type Node struct {
	Root     *actions.Root
	StateDir string
	Units    actions.Units
	Policy   *allowlist.Policy
	Log      *slog.Logger
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
}

// Result is the plan plus what happened. Its JSON form is the CLI's output.
type Result struct {
	*plan.Plan
	Outcome    Outcome `json:"outcome"`
	Applied    bool    `json:"applied"`
	RolledBack bool    `json:"rolledBack"`
	Hash       string  `json:"hash"`
	Reason     string  `json:"reason,omitempty"`
	// FilesWritten counts the files written or removed (metrics).
	FilesWritten int `json:"filesWritten"`
	// Drift counts planned files found changed by hand (metrics).
	Drift int `json:"drift"`
	// ActionsSkipped is set when no systemd manager was asked to run the actions (--systemd none).
	ActionsSkipped bool `json:"actionsSkipped,omitempty"`
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

// Run refreshes the node toward req. An error means the request could not be planned (InvalidError)
// or the node's state could not be read; every other outcome, refusal and rolled-back failure
// included, is a Result.
func Run(ctx context.Context, n Node, req Request) (*Result, error) {
	log := n.logger()
	if _, err := Recover(ctx, n); err != nil {
		return nil, fmt.Errorf("recovering an interrupted refresh: %w", err)
	}
	hash := req.Hash
	if hash == "" {
		hash = PayloadHash(req.Desired)
	}
	cur := req.Current
	if cur == nil {
		c, err := LoadCurrent(n.Root, n.StateDir)
		if err != nil {
			return nil, invalid("%w", err)
		}
		cur = c.Payload
	}
	des, err := diff.DecodeAgainst(req.Desired, cur)
	if err != nil {
		return nil, invalid("desired payload: %w", err)
	}
	p, err := plan.Build(plan.Inputs{Current: cur, Desired: des, NoRebootPaths: req.NoRebootPaths, Policy: n.Policy, Delegated: req.Delegated})
	if err != nil {
		return nil, invalid("%w", err)
	}
	res := &Result{Plan: p, Hash: hash, Desired: des}
	if !p.Eligible {
		res.Outcome, res.Reason = OutcomeRefused, refusedReason(p)
		log.Info("refresh refused", "hash", hash, "refused", len(p.Refused), "reason", res.Reason)
		return res, nil
	}
	ops, err := n.ops(p, des)
	if err != nil {
		res.Outcome, res.Reason = OutcomeFailed, err.Error()
		return res, nil
	}
	res.Drift = n.drift(p, cur)
	if len(ops) == 0 {
		// Nothing on the node changes; only the record moves to the new hash.
		res.Outcome, res.Applied = OutcomeNoop, true
		return res, n.record(req.Desired, hash)
	}
	meta := actions.Meta{Hash: hash, PayloadFile: payloadName(req.Desired), Actions: p.Actions}
	log.Info("refresh starting", "hash", hash, "files", len(ops), "actions", len(p.Actions))
	return n.transact(ctx, res, ops, meta, req.Desired)
}

// transact stages and commits the files, runs the unit actions and records; on any failure it
// restores every original and runs the actions again so units come back on the old content.
func (n Node) transact(ctx context.Context, res *Result, ops []actions.Op, meta actions.Meta, raw []byte) (*Result, error) {
	txn, err := actions.Prepare(n.Root, n.StateDir, ops, meta)
	if errors.Is(err, actions.ErrSymlink) {
		// A symlinked component on the node is refused, never followed: retrying cannot help.
		res.Eligible, res.Files, res.SSHKeys, res.Actions = false, nil, nil, []plan.UnitAction{}
		res.Refused = append(res.Refused, plan.Refusal{Kind: diff.KindFile, Reason: err.Error()})
		res.Outcome, res.Reason = OutcomeRefused, err.Error()
		return res, nil
	}
	if err != nil {
		res.Outcome, res.Reason = OutcomeFailed, err.Error()
		return res, nil // nothing was touched
	}
	// The payload is saved before the commit, so that recovery can record it after a crash.
	if _, err := savePayload(n.StateDir, raw); err != nil {
		return n.failed(ctx, res, txn, fmt.Errorf("state: %w", err)), nil
	}
	if err := txn.Commit(); err != nil {
		return n.failed(ctx, res, txn, err), nil
	}
	if err := actions.RunAll(ctx, n.Units, meta.Actions); err != nil {
		return n.failed(ctx, res, txn, err), nil
	}
	if err := n.finish(txn); err != nil {
		return nil, err
	}
	res.Outcome, res.Applied, res.FilesWritten = OutcomeApplied, true, len(ops)
	_, res.ActionsSkipped = n.Units.(actions.NoUnits)
	n.logger().Info("refresh applied", "hash", meta.Hash, "files", len(ops), "actions", len(meta.Actions))
	return res, nil
}

// failed rolls back after err and fills res.
func (n Node) failed(ctx context.Context, res *Result, txn *actions.Txn, cause error) *Result {
	res.Outcome, res.RolledBack = OutcomeFailed, true
	res.Reason = cause.Error() + "; rolled back"
	if txn.Phase() != actions.PhaseRollingBack {
		if err := txn.Rollback(); err != nil {
			res.Reason += fmt.Sprintf(" (restore failed: %v)", err)
		}
	}
	if err := actions.RunAll(ctx, n.Units, txn.Meta().Actions); err != nil {
		res.Reason += fmt.Sprintf(" (unit actions after restore failed: %v)", err)
	}
	if err := txn.Finish(); err != nil {
		res.Reason += fmt.Sprintf(" (cleanup failed: %v)", err)
	}
	dropPayload(n.StateDir, txn.Meta().PayloadFile)
	n.logger().Warn("refresh failed and rolled back", "hash", txn.Meta().Hash, "reason", res.Reason)
	return res
}

// finish marks the actions done, records the new state and cleans up.
func (n Node) finish(txn *actions.Txn) error {
	if err := txn.MarkDone(); err != nil {
		return err
	}
	m := txn.Meta()
	if err := writeRecord(n.StateDir, m.Hash, m.PayloadFile); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return txn.Finish()
}

func (n Node) record(raw []byte, hash string) error {
	if CurrentHash(n.StateDir) == hash {
		return nil
	}
	f, err := savePayload(n.StateDir, raw)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return writeRecord(n.StateDir, hash, f)
}

// Recovery says what Recover found.
type Recovery struct {
	Found   bool
	Phase   actions.Phase
	Outcome Outcome // applied (rolled forward) or failed (rolled back); empty when nothing was found
	Hash    string
}

// Recover finishes an interrupted refresh: committed ones roll forward (the pending unit actions
// run, then the record), ones interrupted earlier roll back.
func Recover(ctx context.Context, n Node) (Recovery, error) {
	txn, err := actions.Recover(n.Root, n.StateDir)
	if err != nil {
		return Recovery{}, err
	}
	if txn == nil {
		return Recovery{}, nil
	}
	rec := Recovery{Found: true, Phase: txn.Phase(), Hash: txn.Meta().Hash}
	n.logger().Info("recovering an interrupted refresh", "phase", txn.Phase(), "hash", rec.Hash)
	switch txn.Phase() {
	case actions.PhaseRollingBack:
		rec.Outcome = OutcomeFailed
		if err := actions.RunAll(ctx, n.Units, txn.Meta().Actions); err != nil {
			n.logger().Warn("unit actions after restore failed", "err", err)
		}
		return rec, txn.Finish()
	case actions.PhaseCommitted:
		if err := actions.RunAll(ctx, n.Units, txn.Meta().Actions); err != nil {
			rec.Outcome = OutcomeFailed
			res := n.failed(ctx, &Result{}, txn, err)
			n.logger().Warn("recovered refresh failed", "reason", res.Reason)
			return rec, nil
		}
	}
	rec.Outcome = OutcomeApplied
	return rec, n.finish(txn)
}

func (n Node) logger() *slog.Logger {
	if n.Log != nil {
		return n.Log
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
