package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
)

// A refresh is two steps, as Ignition's stages and NixOS's switch are: Prepare works out the whole
// of it against the node and does nothing (what --dry-run prints), Execute carries it out. The
// caller stands between them: the agent takes its pacing slot there, and hands Execute a Gate.

// Gate is what the caller puts between a prepared refresh and its effects (the agent's pacing slot).
// Execute drains the node first when the plan says so; Lost stops that drain as soon as it closes,
// and Proceed, asked right before the transaction, may still stop the refresh with nothing written.
type Gate interface {
	// Lost closes when the refresh must not go on.
	Lost() <-chan struct{}
	// Proceed is asked after the drain, right before the first write. An error stops the refresh
	// with nothing written (the node uncordoned), and Execute returns it as is.
	Proceed(ctx context.Context) error
}

// Prepared is one refresh planned against the node, nothing done yet. It holds the node lock from
// Prepare until Execute or Close returns.
type Prepared struct {
	host Host
	req  Request
	res  *Result // the plan on the node, the writes and every check: the outcome as far as it is known

	built    *plan.Plan // plan.Build's plan, never edited
	warnings []string   // what the node adds to the plan's warnings (drift, a skipped drain)
	ops      []actions.Op
	des      *diff.Payload
	hash     string
	lock     *nodeLock
	// readOnly says the state dir cannot be written: Prepare reads as a dry run and refuses.
	readOnly bool
	// final says Prepare reached the outcome (refused, invalid on the node, a dry run): Execute does
	// nothing more.
	final bool
}

// Prepare recovers any interrupted transaction, loads the node's current state, decodes the
// desired payload, plans, resolves every write against the node's root and runs every node-side
// check (symlinks, reserved names, core's home, the drain that cannot happen). Nothing is written
// (but by recovery, which a dry run skips). An error means the request cannot be planned
// (InvalidError) or the node's state cannot be read.
func Prepare(ctx context.Context, h Host, req Request) (*Prepared, error) {
	// An interrupted refresh is settled first; while a rollback stays incomplete nothing else starts.
	// A dry run changes nothing, recovery included: it says a transaction is pending instead.
	if err := h.Root.CheckStateDir(h.StateDir); err != nil {
		return nil, err
	}
	// A state dir that cannot be written (immutable, a read-only mount) cannot take the lock file
	// either: the refresh is refused below with the dry run's reason (CheckStateWritable), read
	// under the shared lock as the dry run reads, writing nothing.
	readOnly := !req.DryRun && errors.Is(actions.CheckStateWritable(h.StateDir), actions.ErrUnwritable)
	l, err := h.lock(ctx, !req.DryRun && !readOnly)
	if err != nil {
		return nil, err
	}
	p := &Prepared{host: h, req: req, lock: l, readOnly: readOnly}
	if err := p.prepare(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Prepared) prepare(ctx context.Context) error {
	h, req := p.host, p.req
	log := h.logger()
	if req.DryRun || p.readOnly {
		if txn, err := actions.Pending(h.StateDir); err != nil {
			return fmt.Errorf("an interrupted refresh is pending (its journal cannot be used: %w): run refresh-agent recover first", err)
		} else if txn != "" {
			return fmt.Errorf("an interrupted refresh is pending (%s): run refresh-agent recover first", txn)
		}
	} else if _, err := h.recoverLocked(ctx); errors.Is(err, ErrNotShownApplied) {
		// Settled, the record where it was: this refresh plans against it (and writes what differs).
		log.Warn("recovering an interrupted refresh", "reason", err.Error())
	} else if err != nil {
		return fmt.Errorf("recovering an interrupted refresh: %w", err)
	}
	p.hash = req.Hash
	if p.hash == "" {
		p.hash = PayloadHash(req.Desired)
	}
	if err := checkHash(p.hash); err != nil {
		return invalid("%w", err)
	}
	cur, fromMachineConfig := req.Current, false
	if cur == nil {
		c, err := h.LoadCurrent()
		if err != nil {
			return invalid("%w", err)
		}
		cur, fromMachineConfig = c.Payload, c.Hash == ""
	}
	if !req.DryRun && !p.readOnly {
		// Under the lock with no journal pending: side files no journal accounts for go (those that
		// may be originals stay, and the node check below refuses their files).
		h.sweepSides(cur)
	}
	if len(req.Heal) > 0 {
		base := *cur
		base.Config.Storage.Files = slices.DeleteFunc(slices.Clone(base.Config.Storage.Files), func(f types.File) bool {
			return slices.Contains(req.Heal, f.Path)
		})
		cur = &base
	}
	des, err := diff.DecodeAgainst(req.Desired, cur)
	if err != nil {
		return invalid("desired payload: %w", err)
	}
	if fromMachineConfig {
		cur = withDiskBaseline(h.Root, cur, des)
	}
	cur, recErr := h.recordMachine(cur, des)
	pol, err := h.NodePolicy()
	if err != nil {
		return invalid("%w", err)
	}
	built, err := plan.Build(plan.Inputs{Current: cur, Desired: des, NoRebootPaths: req.NoRebootPaths, Policy: pol, Delegated: req.Delegated})
	if errors.Is(err, plan.ErrNodeRead) {
		p.res = &Result{Hash: p.hash, Desired: des, Outcome: api.OutcomeFailed, Reason: err.Error(),
			Plan: &plan.Plan{Changes: []plan.Change{}, Actions: []plan.UnitAction{}, Refused: []plan.Refusal{}}}
		p.final = true
		return nil
	}
	if err != nil {
		return invalid("%w", err)
	}
	p.built, p.des = built, des
	p.res = &Result{Plan: built, Hash: p.hash, Desired: des}
	res := p.res
	if errors.Is(recErr, ErrMCDRecord) {
		// The reboot-class fields cannot be verified: refused for the record, whatever else the
		// plan refuses (its reboot-class refusals, against no fields at all, follow it).
		p.refuse(mcdRecordRefusal(recErr))
		return nil
	} else if recErr != nil {
		res.Outcome, res.Reason, p.final = api.OutcomeFailed, recErr.Error(), true
		return nil
	}
	if !built.Eligible {
		res.Outcome, res.Reason = api.OutcomeRefused, refusedReason(built)
		log.Info("refresh refused", "hash", p.hash, "refused", len(built.Refused), "reason", res.Reason)
		p.final = true
		return nil
	}
	ops, err := h.ops(built, des)
	if errors.Is(err, ErrMCDRecord) {
		p.refuse(mcdRecordRefusal(err))
		return nil
	}
	if errors.Is(err, ErrUnsafeHome) || errors.Is(err, ErrOwnerCeiling) || errors.Is(err, actions.ErrNoSuchOwner) || actions.IsRefusal(err) {
		p.refuse(fileRefusal(err))
		return nil
	}
	if err != nil {
		res.Outcome, res.Reason, p.final = api.OutcomeFailed, err.Error(), true
		return nil
	}
	p.ops = ops
	res.Writes = writesOf(built, ops)
	// A symlinked component or a reserved name is a refusal, shown by --dry-run as by a real run.
	// The journal the real run writes is bounded as it would be: the same entries, with every
	// verify key a baseline could keep (the real run's baseline keeps at most these). The free
	// space and inodes of every filesystem the transaction writes on are checked too, by the
	// function the real run's transaction checks them with before its first write.
	err = actions.Check(h.Root, h.StateDir, ops, actions.Meta{Hash: p.hash, PayloadFile: payloadName(req.Desired), Actions: built.Actions,
		Verify: h.baselineBound(built.Actions), PayloadBytes: payloadBytes(h.StateDir, req.Desired)})
	if err == nil {
		err = actions.CheckStateWritable(h.StateDir)
	}
	if err == nil {
		err = checkStateNames(h.StateDir, req.Desired, built.Drain && h.Drainer != nil)
	}
	if err != nil {
		if actions.IsRefusal(err) {
			p.refuse(fileRefusal(err))
			return nil
		}
		res.Outcome, res.Reason, p.final = api.OutcomeFailed, err.Error(), true
		return nil
	}
	refusal, warning := h.checkUnits(ctx, built, req.DryRun)
	if refusal != nil {
		p.refuse(*refusal)
		return nil
	}
	if warning != "" {
		p.warnings = append(p.warnings, warning)
	}
	if built.Drain && h.Drainer == nil && !h.Drained {
		// No API client (the apply command): the drain is skipped and said so, as unit actions are
		// with --systemd none. The agent drains; --drained says the operator did.
		res.DrainSkipped = true
		p.warnings = append(p.warnings, "drain skipped: the plan asks for one ("+strings.Join(built.DrainReasons, "; ")+
			") and apply has no API client to drain with (the agent drains; pass --drained once the node is drained)")
	}
	checks, notes := h.checks(built.Actions)
	res.Checks = checks
	if h.Verify.Window > 0 && len(built.Actions) > 0 {
		res.VerifyWindow = h.Verify.Window.String()
	}
	p.warnings = append(p.warnings, notes...)
	var drift []string
	res.Drift, drift = h.drift(built, cur)
	p.warnings = append(p.warnings, drift...)
	res.Plan = onNode(built, p.warnings, nil)
	if req.DryRun {
		res.Outcome, p.final = api.OutcomePlanned, true
		if len(ops) == 0 && !built.ChangesUnits() {
			res.Outcome = api.OutcomeNoop
		}
	}
	return nil
}

// Result is the refresh as Prepare found it: the plan on the node, its writes, and the outcome when
// Prepare reached one (refused, failed a node check, a dry run); else Outcome is empty.
func (p *Prepared) Result() *Result { return p.res }

// Writes says Execute will write to the node: the plan is eligible, passed every node check, and
// changes files. A no-op (only the record moves), a refusal and a dry run do not.
func (p *Prepared) Writes() bool { return !p.final && len(p.ops) > 0 }

// Close gives the node lock back without executing. It is safe to call more than once, and after
// Execute.
func (p *Prepared) Close() {
	p.lock.release()
	p.lock = nil
}

// Execute carries the prepared refresh out: it records a no-op, or drains when the plan says so,
// asks gate (nil: nothing to ask), then stages and commits the files, runs the actions, rolls back
// on failure and records. Every outcome, refusal and rolled-back failure included, is a Result; an
// error is gate's, or the node's state that cannot be read or written.
func (p *Prepared) Execute(ctx context.Context, gate Gate) (*Result, error) {
	defer p.Close()
	h, req, res := p.host, p.req, p.res
	if p.final {
		return res, nil
	}
	if p.readOnly {
		// Not refused, yet the state dir cannot be written (a no-op's record): nothing is tried
		// under the shared lock.
		res.Outcome, res.Reason = api.OutcomeFailed, "state dir "+h.StateDir+" cannot be written: "+actions.CheckStateWritable(h.StateDir).Error()
		return res, nil
	}
	if !p.lock.stateHeld {
		// A node without a state dir when this started: the state dir's lock is taken before the
		// first write (the root's is held since Prepare).
		err := p.lock.late(ctx)
		if errors.Is(err, errStateAppeared) {
			// The state dir exists now: this time its lock comes first. The root's lock is given
			// back first: a second flock of it by this process would wait on itself.
			p.Close()
			again, err := Prepare(ctx, h, req)
			if err != nil {
				return nil, err
			}
			return again.Execute(ctx, gate)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(p.ops) == 0 && !p.built.ChangesUnits() {
		// Nothing on the node changes; only the record moves to the new hash.
		if err := h.record(req.Desired, p.hash); errors.Is(err, ErrPrunePending) {
			res.Outcome, res.Applied, res.Recorded, res.CleanupPending = api.OutcomeNoop, true, true, true
			res.Reason = "nothing to write; the record names " + api.Short(p.hash) + ", but the clean-up failed: " + err.Error() +
				"; the next apply, recover or agent start finishes it"
			return res, nil
		} else if err != nil {
			if readsAs(h.StateDir, p.hash, payloadName(req.Desired)) {
				// The record's rename landed; what failed after it (the state dir's fsync) may
				// lose it in a power cut: said so, exit 1.
				res.Outcome, res.Applied, res.Recorded, res.CleanupPending = api.OutcomeNoop, true, true, true
				res.Reason = "nothing to write; the record names " + api.Short(p.hash) + ", but making it durable failed (a power cut may lose it): " + err.Error()
				return res, nil
			}
			// Nothing on the node changed, and the record did not move either.
			res.Outcome, res.Reason = api.OutcomeFailed, "nothing to write, but recording "+api.Short(p.hash)+" as current failed: "+err.Error()
			return res, nil
		}
		res.Outcome, res.Applied, res.Recorded = api.OutcomeNoop, true, true
		h.Decoded.put("/"+payloadName(req.Desired), p.des)
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		// Told to stop (SIGTERM) before anything was written: start nothing.
		res.Outcome, res.Reason = api.OutcomeFailed, "not started: "+err.Error()
		return res, nil
	}
	pl := p.built
	// Each unit state action's undo comes from the unit's state now, journaled with the actions.
	meta := actions.Meta{Hash: p.hash, PayloadFile: payloadName(req.Desired), Actions: actions.WithUndo(ctx, h.Units, pl.Actions),
		PayloadBytes: payloadBytes(h.StateDir, req.Desired)}
	if pl.Drain && h.Drainer != nil {
		dctx, stop := context.WithCancel(ctx)
		if gate != nil {
			lost := gate.Lost()
			go func() {
				select {
				case <-lost:
					stop()
				case <-dctx.Done():
				}
			}()
		}
		err := h.drain(ctx, dctx)
		stop()
		if err != nil {
			if gate != nil {
				if perr := gate.Proceed(ctx); perr != nil {
					return nil, perr // stopped on purpose: nothing was written, the node is uncordoned
				}
			}
			res.Outcome, res.Reason = api.OutcomeFailed, err.Error()
			return res, nil // nothing was written; the node is uncordoned again
		}
		defer h.uncordon(ctx, res)
	}
	if gate != nil {
		if err := gate.Proceed(ctx); err != nil {
			return nil, err
		}
	}
	h.logger().Info("refresh starting", "hash", p.hash, "files", len(p.ops), "actions", len(pl.Actions), "drain", pl.Drain)
	out, err := h.transact(ctx, res, p.ops, meta, req.Desired)
	if err == nil && out != nil && out.Applied {
		h.Decoded.put("/"+payloadName(req.Desired), p.des) // the record's payload now
	}
	return out, err
}

// Run is Prepare then Execute with no gate: the apply command, a drift heal, an unpaced refresh.
func Run(ctx context.Context, h Host, req Request) (*Result, error) {
	p, err := Prepare(ctx, h, req)
	if err != nil {
		return nil, err
	}
	return p.Execute(ctx, nil)
}

// refuse refuses the prepared refresh for what the node holds: a symlinked component is refused,
// never followed; a name reserved for the agent's own side files, a home that is not safe, or a unit
// the node's manager shows doing what a refresh must not, is never acted on (retrying cannot help).
func (p *Prepared) refuse(r plan.Refusal) {
	p.res.Plan = onNode(p.built, p.warnings, nil)
	refuseOnNode(p.res, r)
	p.final = true
}

// refuseOnNode refuses res for what the node holds (see Prepared.refuse); the transaction calls it
// too, for a node that changed since Prepare checked it.
func refuseOnNode(res *Result, r plan.Refusal) *Result {
	res.Plan, res.Writes = onNode(res.Plan, nil, &r), nil
	res.Outcome, res.Reason, res.ActionsSkipped = api.OutcomeRefused, r.Reason, false
	return res
}

// fileRefusal is a refusal of the files for what the node holds.
func fileRefusal(err error) plan.Refusal {
	return plan.Refusal{Kind: diff.KindFile, Reason: err.Error()}
}

// onNode is the plan as it applies to the node: built itself when the node adds nothing, else a
// copy with the node's warnings and, when the node refuses it, that refusal, no files, no actions
// and no drain. The built plan is never edited.
func onNode(built *plan.Plan, warnings []string, refusal *plan.Refusal) *plan.Plan {
	if len(warnings) == 0 && refusal == nil {
		return built
	}
	v := *built
	v.Warnings = slices.Concat(built.Warnings, warnings)
	if refusal != nil {
		v.Eligible, v.Files, v.SSHKeys, v.Actions = false, nil, nil, []plan.UnitAction{}
		v.Drain, v.DrainReasons = false, nil
		v.Refused = append(slices.Clone(built.Refused), *refusal)
	}
	return &v
}
