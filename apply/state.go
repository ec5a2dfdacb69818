package apply

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
)

// The agent's record of what it applied last, in the state directory:
//
//	current.json        {"hash": H, "payload": "payloads/<sha256>"}   replaced atomically
//	payloads/<sha256>   the payload exactly as received
//
// Falling back, on a node the agent never refreshed, to what the machine-config daemon left.
const (
	currentFile = "current.json"
	payloadsDir = "payloads"
	// MCDCurrentConfig is the machine-config daemon's record of the applied MachineConfig.
	MCDCurrentConfig = "/etc/mcd-currentconfig.json"
	// MCDRecordMode is the widest mode the record is written with (root owns it): the pull secret's,
	// whose contents it holds (the daemon writes 0644; it reads the record as root).
	MCDRecordMode = 0o600
)

type record struct {
	Hash    string `json:"hash"`
	Payload string `json:"payload"`
}

// Current is the node's current state as a plan's starting point.
type Current struct {
	Payload *diff.Payload
	Hash    string // the hash applied last; empty when not applied by the agent
	Source  string // where it came from, for messages
}

// PayloadHash is the default hash of a payload: sha256 of its bytes, hex.
func PayloadHash(raw []byte) string { return api.Hash(raw) }

// Decoded keeps the recorded payload decoded, by its name in the state dir (payloads/<sha256>, so
// the name says the bytes): a refresh need not decode the node's current payload again (Ignition's
// translation of an older config version is most of a small refresh's CPU). A Decoded payload is
// only read, never changed. Only a payload that decodes to under DecodedMax is kept: the agent
// idles with it, and a small payload's refresh is the one whose CPU is mostly the decode. The
// agent keeps one; nil decodes every time.
type Decoded struct {
	mu   sync.Mutex
	name string
	p    *diff.Payload
}

func (d *Decoded) get(name string) *diff.Payload {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.name != name {
		return nil
	}
	return d.p
}

// DecodedMax bounds the payloads a Decoded keeps: what their decode held (diff.Payload.Bytes), so
// that a compressed payload counts for what it decodes to.
const DecodedMax = 4 << 20

func (d *Decoded) put(name string, p *diff.Payload) {
	if d == nil || p == nil {
		return
	}
	if p.Bytes <= 0 || p.Bytes >= DecodedMax {
		d.mu.Lock()
		d.name, d.p = "", nil // never an older payload for a newer name
		d.mu.Unlock()
		return
	}
	d.mu.Lock()
	d.name, d.p = name, p
	d.mu.Unlock()
}

// LoadCurrent returns the agent's record, else the machine-config daemon's current config, else the
// machine-config server's content file from first boot.
func LoadCurrent(root *actions.Root, stateDir string) (*Current, error) {
	return loadCurrent(root, stateDir, nil)
}

// LoadCurrent is LoadCurrent through the node's Decoded cache.
func (h Host) LoadCurrent() (*Current, error) { return loadCurrent(h.Root, h.StateDir, h.Decoded) }

func loadCurrent(root *actions.Root, stateDir string, cache *Decoded) (*Current, error) {
	data, err := actions.ReadStateFile(stateDir, currentFile)
	switch {
	case err == nil:
		var rec record
		if err := json.Unmarshal(data, &rec); err != nil {
			return nil, fmt.Errorf("state %s: %s", filepath.Join(stateDir, currentFile), actions.JSONError(err))
		}
		name := filepath.Clean("/" + rec.Payload)
		if p := cache.get(name); p != nil {
			return &Current{Payload: p, Hash: rec.Hash, Source: filepath.Join(stateDir, currentFile)}, nil
		}
		raw, err := actions.ReadStateFile(stateDir, strings.TrimPrefix(name, "/"))
		if err != nil {
			return nil, fmt.Errorf("state: %w", err)
		}
		// The name says the bytes: a payload that is not what its name says is not the one the
		// agent saved (a forged record or journal), and no plan is made against it.
		if PayloadHash(raw) != filepath.Base(name) {
			return nil, fmt.Errorf("state %s: %s does not hash to its name: not the payload the agent saved; refusing it (inspect the state dir)",
				filepath.Join(stateDir, currentFile), filepath.Join(stateDir, name))
		}
		p, err := diff.Decode(raw)
		if err != nil {
			return nil, fmt.Errorf("state %s: %w", rec.Payload, err)
		}
		cache.put(name, p)
		return &Current{Payload: p, Hash: rec.Hash, Source: filepath.Join(stateDir, currentFile)}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("state: %w", err)
	}
	for _, f := range []string{MCDCurrentConfig, diff.MachineConfigContentPath} {
		// Read up to the payload budget, as the payload is (round 11, core 01: a 5 GB sparse
		// record was read whole before the decode's budget said no).
		raw, _, err := root.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("current config %s: %w", f, err)
		}
		p, err := diff.Decode(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		return &Current{Payload: p, Source: f}, nil
	}
	return nil, fmt.Errorf("no current config: none of %s, %s, %s exists; pass --current",
		filepath.Join(stateDir, currentFile), MCDCurrentConfig, diff.MachineConfigContentPath)
}

// payloadName is where savePayload stores raw, relative to the state dir.
func payloadName(raw []byte) string { return filepath.Join(payloadsDir, PayloadHash(raw)) }

// payloadBytes is what savePayload writes in the state dir for raw: its size, or 0 when a regular
// file of that name and size is there already (savePayload keeps one that hashes to its name).
func payloadBytes(stateDir string, raw []byte) int64 {
	if fi, err := os.Lstat(filepath.Join(stateDir, payloadName(raw))); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(raw)) {
		return 0
	}
	return int64(len(raw))
}

// savePayload stores raw durably in the state dir and returns its name there.
func savePayload(stateDir string, raw []byte) (string, error) {
	if err := actions.EnsureStateDir(stateDir); err != nil {
		return "", err
	}
	// payloads/ and the files in it are never reached through a symlink (actions.ReadStateFile):
	// one would send the payload (a pull secret) out of the root.
	if err := actions.MkdirState(stateDir, payloadsDir, 0o700); err != nil {
		return "", err
	}
	name := PayloadHash(raw)
	// One saved already is kept only when it is a regular file holding these bytes (its name says
	// them): anything else there would have the record name what is not the payload.
	if sum, err := actions.HashStateFile(stateDir, filepath.Join(payloadsDir, name)); err == nil && sum == name {
		return filepath.Join(payloadsDir, name), nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w; not the saved payload", err)
	}
	if err := actions.WriteFileAtomic(stateDir, filepath.Join(payloadsDir, name), raw, 0o600); err != nil {
		return "", err
	}
	return filepath.Join(payloadsDir, name), nil
}

// writeRecord makes payloadFile (saved by savePayload) with hash the current state, then drops
// payloads no longer referenced.
func writeRecord(stateDir, hash, payloadFile string) error {
	actions.CrashPoint("record")
	// Only a payload saved under payloads/<sha256> with bytes that hash to its name is recorded:
	// a record naming anything else has every later refresh fail (adv txn-attack3 #1).
	if payloadFile != "" {
		sum, err := actions.HashStateFile(stateDir, payloadFile)
		if err != nil {
			return fmt.Errorf("the payload %s is not saved: %w", payloadFile, err)
		}
		if filepath.Join(payloadsDir, sum) != filepath.Clean(payloadFile) {
			return fmt.Errorf("the payload %s does not hash to its name: not recorded", payloadFile)
		}
	}
	data, err := json.Marshal(record{Hash: hash, Payload: payloadFile})
	if err != nil {
		return err
	}
	return actions.WriteFileAtomic(stateDir, currentFile, data, 0o600)
}

// prunePayloads removes the saved payloads other than payloadFile, the one recorded: an older one
// holds an older pull secret and keys. A listing or removal that fails is returned (the caller says
// the clean-up is pending; the next apply's or recover's sweep tries again), never ignored: an
// EMFILE on the listing left the old payload behind with exit 0 (CI, TestFaultOpenFailsAtEveryStep).
func prunePayloads(stateDir, payloadFile string) error {
	entries, err := actions.ReadStateDir(stateDir, payloadsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing the saved payloads: %w", err)
	}
	var errs []error
	for _, e := range entries {
		// What sweepState removes, no more (sweepable): anything else there is not the agent's
		// and stays (it never makes a refresh fail).
		name := filepath.Join(payloadsDir, e.Name())
		if _, link, ok := sweepable(payloadsDir, e); ok && name != filepath.Clean(payloadFile) {
			errs = append(errs, actions.RemoveStateFile(stateDir, name, link))
		}
	}
	return errors.Join(errs...)
}

// sweepable says whether the entry e of the state dir's directory dir may be removed as the
// agent's: a name the agent writes (agentsName; another's is left alone: adversary r21 b2/05) that
// is a regular file, or a symlink at a temp name (the agent's name taken: the link goes, never its
// target, hence link).
func sweepable(dir string, e fs.DirEntry) (temp, link, ok bool) {
	temp, ours := agentsName(dir, e.Name())
	link = temp && e.Type()&fs.ModeSymlink != 0
	return temp, link, ours && (e.Type().IsRegular() || link)
}

// agentsName says whether name, in the state dir's directory dir ("" or payloads/), is one the
// agent writes (ours), and whether it is the temp of one: in the state dir the temps of the
// journal, the record, the cordon marker and the root's owner record; in payloads/ a sha256 and its
// temp. Only those are ever swept: a file of another name is no proof of being the agent's.
func agentsName(dir, name string) (temp, ours bool) {
	base, temp := name, actions.IsStateTemp(name)
	if temp {
		base = strings.TrimSuffix(strings.TrimPrefix(name, "."), ".tmp")
	}
	if dir == payloadsDir {
		return temp, actions.IsSHA256(base)
	}
	switch base {
	case "journal.json", currentFile, cordonMarker, actions.OwnerFile:
		return temp, temp
	}
	return temp, false
}

// dropPayload removes a saved payload the record does not reference (after a failed refresh).
func dropPayload(stateDir, payloadFile string) error {
	if payloadFile == "" {
		return nil // a journal that saved none
	}
	data, _ := actions.ReadStateFile(stateDir, currentFile)
	var rec record
	if json.Unmarshal(data, &rec) == nil && rec.Payload == payloadFile {
		return nil
	}
	if err := actions.RemoveStateFile(stateDir, strings.TrimPrefix(filepath.Clean("/"+payloadFile), "/"), false); err != nil {
		return fmt.Errorf("removing the payload saved for it: %w", err)
	}
	return nil
}

// sweepState removes, with the node lock held, what an interrupted write left in the state dir: the
// temp files of atomic writes (a copy of a payload among them: pull secret, keys), and the saved
// payloads neither the record nor a pending journal references (one saved for a refresh that rolled
// back, or a crash before its removal). Failures are logged; the next recovery tries again.
func (h Host) sweepState() {
	_, meta, jerr := actions.Peek(h.StateDir)
	keep := map[string]bool{}
	if meta.PayloadFile != "" {
		keep[filepath.Join(payloadsDir, filepath.Base(meta.PayloadFile))] = true
	}
	data, err := actions.ReadStateFile(h.StateDir, currentFile)
	var rec record
	switch {
	case err == nil && json.Unmarshal(data, &rec) == nil:
		keep[filepath.Join(payloadsDir, filepath.Base(rec.Payload))] = true
	case !errors.Is(err, fs.ErrNotExist):
		jerr = errors.Join(jerr, errors.New("unreadable record")) // keep every payload: which one is current is unknown
	}
	for _, dir := range []string{"", payloadsDir} {
		entries, _ := actions.ReadStateDir(h.StateDir, dir) // a symlinked payloads/ is never listed
		for _, e := range entries {
			name := filepath.Join(dir, e.Name())
			temp, link, ok := sweepable(dir, e)
			stale := dir == payloadsDir && jerr == nil && !keep[name]
			if !ok || !temp && !stale {
				continue
			}
			if err := actions.RemoveStateFile(h.StateDir, name, link); err != nil {
				h.logger().Warn("removing a leftover in the state dir", "file", name, "err", err)
			}
		}
	}
}

// CurrentHash returns the hash recorded last, or "" when there is none.
func CurrentHash(stateDir string) string {
	data, err := actions.ReadStateFile(stateDir, currentFile)
	if err != nil {
		return ""
	}
	var rec record
	if json.Unmarshal(data, &rec) != nil {
		return ""
	}
	return rec.Hash
}

// RecordTime is when the record was last written (zero when there is none): the agent's last
// success survives its restarts.
func RecordTime(stateDir string) time.Time {
	fi, err := os.Stat(filepath.Join(stateDir, currentFile))
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// readsAs reports whether the record, read back now, names hash and payloadFile: what a later
// refresh or recovery would see.
func readsAs(stateDir, hash, payloadFile string) bool {
	data, err := actions.ReadStateFile(stateDir, currentFile)
	var rec record
	return err == nil && json.Unmarshal(data, &rec) == nil && rec.Hash == hash && rec.Payload == payloadFile
}

// sweepSides removes the side files no journal accounts for beside the files cur manages (and the
// machine-config daemon's record), with the node lock held and no journal pending; it returns the
// ones it keeps (actions.SweepSides), logged too.
func (h Host) sweepSides(cur *diff.Payload) []string {
	if phase, _, err := actions.Peek(h.StateDir); err != nil || phase != "" {
		return nil // a journal is pending: its side files are its own
	}
	if err := actions.CheckRootOwner(h.Root, h.StateDir); err != nil {
		// Another state dir's journal accounts for side files on this root (the lock refuses this
		// before; checked again right before anything is removed).
		h.logger().Warn("not removing leftover side files", "reason", err.Error())
		return nil
	}
	paths := []string{MCDCurrentConfig}
	if cur != nil {
		for _, f := range cur.Config.Storage.Files {
			paths = append(paths, f.Path)
		}
		for _, u := range cur.Config.Systemd.Units {
			paths = append(paths, path.Join(plan.UnitDir, u.Name))
			for _, d := range u.Dropins {
				paths = append(paths, path.Join(plan.UnitDir, u.Name+".d", d.Name))
			}
		}
	}
	kept, err := actions.SweepSides(h.Root, paths)
	if err != nil {
		h.logger().Warn("removing leftover side files", "err", err)
	}
	for _, k := range kept {
		h.logger().Warn("kept a leftover side file", "reason", k)
	}
	return kept
}

// checkStateNames refuses a refresh whose state-dir writes would fail on what holds their names
// now (a directory, a symlink, a device, a mount point, an immutable or append-only file where the
// agent writes its journal, record, payload or their temp files): the dry run makes this check as the real run does, so that neither
// says planned what then fails with the node half way. Nothing here is removed: a state dir entry
// the agent did not make is the operator's to inspect (refresh-agent never removes what it did not
// create); the refusal names it.
func checkStateNames(stateDir string, raw []byte, drains bool) error {
	name := PayloadHash(raw)
	type entry struct {
		rel       string
		dir, temp bool
	}
	names := []entry{
		{"journal.json", false, false}, {".journal.json" + ".tmp", false, true}, {currentFile, false, false}, {"." + currentFile + ".tmp", false, true},
		{payloadsDir, true, false}, {filepath.Join(payloadsDir, name), false, false}, {filepath.Join(payloadsDir, "."+name+".tmp"), false, true},
	}
	if drains {
		names = append(names, entry{cordonMarker, false, false}, entry{"." + cordonMarker + ".tmp", false, true})
	}
	for _, c := range names {
		p := filepath.Join(stateDir, c.rel)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("state dir: %s: %w", p, err)
		case c.temp && fi.Mode()&fs.ModeSymlink != 0:
			// The agent's own temp name: recovery unlinks the link (never its target) and the
			// write goes on, in the real run as the dry run says.
		case !c.dir && fi.Mode().IsRegular() && actions.IsMountRoot(p):
			return fmt.Errorf("%w: %s is a mount point (something is mounted over it; findmnt shows it): the agent replaces it by rename, which a mount refuses",
				actions.ErrStateTaken, p)
		case c.dir && !fi.IsDir(), !c.dir && !fi.Mode().IsRegular():
			want := "a regular file"
			if c.dir {
				want = "a directory"
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				return fmt.Errorf("%w: %s %w", actions.ErrStateTaken, p, actions.ErrStateSymlink)
			}
			return fmt.Errorf("%w: %s is a %s, not %s the agent writes: the refresh would fail there; inspect it and remove it by hand",
				actions.ErrStateTaken, p, actions.Kind(fi.Mode()), want)
		case !c.dir && fi.Mode().IsRegular():
			why := actions.Blocked(p)
			if why == "" {
				break
			}
			if c.rel == filepath.Join(payloadsDir, name) {
				if sum, err := actions.HashStateFile(stateDir, c.rel); err == nil && sum == name {
					break // the payload saved already: kept as it is, never rewritten
				}
			}
			// The agent unlinks a temp name before it writes there and renames over the others:
			// an immutable or append-only file fails either (EPERM), after the node changed.
			return fmt.Errorf("%w: %s %s: the agent replaces it, which these flags refuse (it never sets them); inspect it, then chattr -i -a it and remove it by hand",
				actions.ErrUnwritable, p, why)
		}
	}
	return nil
}
