package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
)

// ops turns the plan into file operations with owners resolved inside the node root: the planned
// files, core's SSH keys, and the machine-config daemon's current-config file kept coherent.
func (h Host) ops(p *plan.Plan, des *diff.Payload) ([]actions.Op, error) {
	var ops []actions.Op
	for _, f := range p.Files {
		op := actions.Op{Path: f.Path, Remove: f.Remove, Contents: f.Contents, Size: f.Size, Mode: fs.FileMode(f.Mode), Within: f.Within}
		if !f.Remove {
			uid, gid, err := h.owner(f.User, f.Group)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Path, err)
			}
			if err := h.checkOwnerCeiling(f, uid, gid); err != nil {
				return nil, err
			}
			op.UID, op.GID = uid, gid
		}
		ops = append(ops, op)
	}
	if p.SSHKeys != nil {
		op, err := h.sshKeysOp(p.SSHKeys)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 && !p.ChangesUnits() {
		return nil, nil
	}
	mcd, err := h.mcdCurrentConfigOp(des)
	if err != nil {
		return nil, err
	}
	if mcd != nil {
		ops = append(ops, *mcd)
	}
	return ops, nil
}

// owner resolves an Ignition owner (id or name; root when unset) through the root's passwd/group.
func (h Host) owner(u types.NodeUser, g types.NodeGroup) (int, int, error) {
	uid, gid := 0, 0
	switch {
	case u.ID != nil:
		uid = *u.ID
	case u.Name != nil && *u.Name != "":
		usr, err := h.Root.LookupUser(*u.Name)
		if err != nil {
			return 0, 0, err
		}
		uid = usr.UID
	}
	switch {
	case g.ID != nil:
		gid = *g.ID
	case g.Name != nil && *g.Name != "":
		id, err := h.Root.LookupGroup(*g.Name)
		if err != nil {
			return 0, 0, err
		}
		gid = id
	}
	return uid, gid, nil
}

// ErrUnsafeHome marks a home directory the agent will not write core's keys under.
var ErrUnsafeHome = errors.New("unsafe home directory")

// sshKeysTarget is user's keys file as sshKeysOp writes it, under the home the root's /etc/passwd
// gives (/var/home/core on RHCOS, where /home is a symlink that would be refused). Recovery trusts a
// journal's keys entry only at this one path (trust.go): another user's keys, a nested or foreign
// home, are nothing a refresh could have written.
func (h Host) sshKeysTarget(user string) (actions.User, string, error) {
	usr, err := h.Root.LookupUser(user)
	if err != nil {
		return actions.User{}, "", fmt.Errorf("SSH keys: %w", err)
	}
	home := usr.Home
	if home == "" || !path.IsAbs(home) || path.Clean(home) != home || !strings.HasPrefix(home, "/var/home/") && !strings.HasPrefix(home, "/home/") {
		// The home comes from the node's /etc/passwd; keys go nowhere but under a home directory
		// (RHCOS: /var/home/core), never /root or a path the deny list covers.
		return actions.User{}, "", fmt.Errorf("SSH keys: %w: home %q of %s in the node's /etc/passwd is not under /var/home/ or /home/", ErrUnsafeHome, home, user)
	}
	return usr, path.Join(home, SSHKeysFile), nil
}

// SSHKeysFile is where Ignition and the machine-config daemon keep core's keys, below its home.
const SSHKeysFile = ".ssh/authorized_keys.d/ignition"

// sshKeysOp writes core's keys to <home>/.ssh/authorized_keys.d/ignition (sshKeysTarget):
// directories 0700, file 0600, owned by core.
func (h Host) sshKeysOp(k *plan.SSHKeysOp) (actions.Op, error) {
	usr, p, err := h.sshKeysTarget(k.User)
	if err != nil {
		return actions.Op{}, err
	}
	op := actions.Op{Path: p, Mode: 0o600, UID: usr.UID, GID: usr.GID,
		DirMode: 0o700, DirUID: usr.UID, DirGID: usr.GID}
	if len(k.Keys) == 0 {
		op.Remove = true
		return op, nil
	}
	op.Data = []byte(strings.Join(k.Keys, "\n") + "\n")
	return op, nil
}

// mcdCurrentConfigOp rewrites the machine-config daemon's current config when the node has that
// file, so a later daemon run does not diff against stale state: with the desired MachineConfig when
// the payload carries one (the payload itself, or the machine-config server's content file), else
// with the node's record whose spec.config is the desired Ignition config (every other field as the
// node has it: a refresh cannot change them). A record that cannot be read so is ErrMCDRecord, and
// the refresh is refused. It holds every file of the config, the pull secret among them, so it is
// written as the secret is: root's, MCDRecordMode at most (a narrower mode on the node kept); a
// record another user owns or can read must not hand them that copy (adversary r21 d/06: it kept a
// 0666 record owned by core). The daemon writes it 0644 and reads it as root.
func (h Host) mcdCurrentConfigOp(des *diff.Payload) (*actions.Op, error) {
	fi, err := h.Root.Stat(MCDCurrentConfig) // its owner and mode: the contents are rewritten
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s): refusing to replace it", MCDCurrentConfig, fi.Mode().Type())
	}
	op := &actions.Op{Path: MCDCurrentConfig, Contents: des.MachineConfigJSON, Mode: fi.Mode().Perm() & MCDRecordMode}
	// Checked now (a MachineConfig the daemon cannot read fails the refresh before anything is
	// written), and produced again at staging time: it is as large as the payload's files together,
	// and held from here to the commit it would stand beside every staged file in memory.
	if mc, err := des.MachineConfigJSON(); err != nil {
		return nil, err
	} else if mc != nil {
		return op, nil
	}
	// No MachineConfig in the payload: the node's record with the desired config as its spec.config,
	// read (bounded) and checked now, and read again at staging time, from the file the transaction
	// then backs up.
	if _, err := h.readMCDRecord(); err != nil {
		return nil, err
	}
	op.Contents = func() ([]byte, error) {
		rec, err := h.readMCDRecord()
		if err != nil {
			return nil, err
		}
		return rec.With(des.IgnitionJSON())
	}
	return op, nil
}

// ErrMCDRecord marks a machine-config daemon's record a refresh cannot read as the daemon's
// MachineConfig: over the payload budget, not JSON, not a MachineConfig (its kind or apiVersion
// another, no spec.config object, a field of the wrong type). The refresh is refused whole, naming
// the file: rewriting it would be a guess, and leaving it would leave the daemon's baseline stale.
var ErrMCDRecord = errors.New("the machine-config daemon's record cannot be read as its MachineConfig")

// readMCDRecord reads the node's daemon record, up to the payload budget.
func (h Host) readMCDRecord() (*diff.MCDRecord, error) {
	data, _, err := h.Root.ReadFile(MCDCurrentConfig)
	if errors.Is(err, actions.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %w; %s", ErrMCDRecord, err, mcdRecordFix)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", MCDCurrentConfig, err)
	}
	rec, err := diff.ParseMCDRecord(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w; %s", ErrMCDRecord, MCDCurrentConfig, err, mcdRecordFix)
	}
	return rec, nil
}

// mcdRecordFix ends the refusal of a record that cannot be read.
const mcdRecordFix = "refusing the refresh rather than leave it stale or write a guess over it " +
	"(restore the daemon's record, or remove it on a node with no machine-config daemon)"

// recordMachine is cur with the reboot-class fields of the node's daemon record when cur carries
// none (a bare Ignition baseline: --current, or the agent's record of one) and des carries some: a
// desired MachineConfig is then compared with what the node's record says, as with a MachineConfig
// baseline (an OS image, kernel arguments, FIPS, kernel type or extensions that differ are
// refused). A bare desired payload asks for no reboot-class change: nothing to compare. A record
// that cannot be read is ErrMCDRecord: the fields cannot be verified.
func (h Host) recordMachine(cur, des *diff.Payload) (*diff.Payload, error) {
	if len(cur.Machine) > 0 || len(des.Machine) == 0 {
		return cur, nil
	}
	if _, err := h.Root.Stat(MCDCurrentConfig); errors.Is(err, fs.ErrNotExist) {
		return cur, nil
	}
	rec, err := h.readMCDRecord()
	if err != nil {
		return cur, err
	}
	out := *cur
	out.Machine = []diff.MachineView{rec.View}
	return &out, nil
}

// mcdRecordRefusal is the refusal of a refresh for the daemon's record.
func mcdRecordRefusal(err error) plan.Refusal {
	return plan.Refusal{Kind: diff.KindMachineConfig, Path: MCDCurrentConfig, Reason: err.Error()}
}

// drift counts planned files whose on-disk state differs from what the current config says (changed
// by hand), with a warning for each. The desired content is written anyway: it is authoritative.
func (h Host) drift(p *plan.Plan, cur *diff.Payload) (count int, warnings []string) {
	want := map[string]types.File{}
	for _, f := range cur.Config.Storage.Files {
		want[f.Path] = f
	}
	for _, f := range p.Files {
		old, inCurrent := want[f.Path]
		var what string
		// Never read more than a bounded file to compare it (the node's file may be anything), and
		// never keep it: its size, then its hash (adversary r21 c/02: every planned file was read
		// whole into memory, up to 4 MiB each).
		fi, err := h.Root.Stat(f.Path)
		if err == nil && fi.Mode().IsRegular() && fi.Size() > maxBaselineFile {
			count++
			warnings = append(warnings, fmt.Sprintf("drift: %s is %d bytes on the node, too large to compare; writing the desired content", f.Path, fi.Size()))
			continue
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if inCurrent {
				what = "missing on disk"
			}
		case err != nil:
			what = "unreadable: " + err.Error()
		case !fi.Mode().IsRegular():
			what = fmt.Sprintf("unreadable: not a regular file (%s)", fi.Mode().Type())
		case !inCurrent:
			what = "exists on disk but not in the current config"
		default:
			if differs, derr := h.differs(f.Path, fi, old); derr != nil {
				what = "unreadable: " + derr.Error()
			} else if differs {
				what = "contents differ"
			} else if unixMode(fi.Mode()) != diff.FileMode(old)&0o7777 {
				what = fmt.Sprintf("mode %04o on disk, %04o in the current config", unixMode(fi.Mode()), diff.FileMode(old))
			}
		}
		if what != "" {
			count++
			warnings = append(warnings, fmt.Sprintf("drift: %s was changed on the node (%s); writing the desired content", f.Path, what))
		}
	}
	return count, warnings
}

// differs says whether the node's regular file p (its stat fi) holds other bytes than f's: by size,
// then by hash, the node's streamed. Contents the current config cannot give (not inline) differ
// from nothing: false.
func (h Host) differs(p string, fi fs.FileInfo, f types.File) (bool, error) {
	n, err := diff.ContentSize(f)
	if err != nil {
		return false, nil
	}
	if n != fi.Size() {
		return true, nil
	}
	sum, err := h.Root.HashFile(p)
	if err != nil {
		return false, err
	}
	data, err := diff.FileContents(f)
	if err != nil {
		return false, nil
	}
	want := sha256.Sum256(data)
	return hex.EncodeToString(want[:]) != sum, nil
}
