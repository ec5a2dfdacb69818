package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
)

// --drift values.
const (
	DriftReport = "report" // report a recorded file changed on the node (annotation, metric, Event)
	DriftHeal   = "heal"   // report it, then write the recorded content back and run the path's actions
	DriftOff    = "off"
)

// driftDebounce groups a burst of file events (an editor's save, a package's update) into one check.
var driftDebounce = 500 * time.Millisecond

// expect is what the record says about one file: a digest rather than the bytes, so that watching
// costs no memory per file's size.
type expect struct {
	sum  [sha256.Size]byte
	size int64
	mode fs.FileMode
}

// driftWatch watches the files of the node's record that the node policy lets the agent own (never
// delegated ones): fsnotify on their directories, debounced; on a change it compares the bytes and
// mode with the record. It sends nothing to the API server by itself: a new finding wakes the loop,
// which reports it.
type driftWatch struct {
	log    *slog.Logger
	notify func()
	found  func(paths []string) // newly drifted paths (metric, Event)

	mu      sync.Mutex
	key     string // the record and delegations the expectations are for
	root    *actions.Root
	want    map[string]expect
	drifted []string
	busy    bool // a refresh or heal is writing: its own writes are not drift
	w       *fsnotify.Watcher
	dirs    map[string]bool
	kick    chan struct{}
}

// newDriftWatch makes the watcher at once, so that a directory is watched from the moment load
// returns: a change right after it is never missed (run only delivers the events).
func newDriftWatch(log *slog.Logger, notify func(), found func([]string)) *driftWatch {
	d := &driftWatch{log: log, notify: notify, found: found, dirs: map[string]bool{}, kick: make(chan struct{}, 1)}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		log.Warn("drift watch unavailable", "err", err)
		return d
	}
	d.w = w
	return d
}

// run delivers file events to debounced checks until ctx ends, then closes the watcher.
func (d *driftWatch) run(ctx context.Context) {
	d.mu.Lock()
	w := d.w
	d.mu.Unlock()
	if w == nil {
		return
	}
	defer func() {
		d.mu.Lock()
		d.w = nil
		d.mu.Unlock()
		w.Close()
	}()
	var timer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if d.watches(ev.Name) {
				timer = time.After(driftDebounce)
			}
		case <-w.Errors:
			timer = time.After(driftDebounce) // events may have been lost: look
		case <-d.kick:
			timer = time.After(driftDebounce)
		case <-timer:
			timer = nil
			d.check()
		}
	}
}

// watches says whether a host path is one of the watched files.
func (d *driftWatch) watches(hostPath string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.root == nil {
		return false
	}
	rel, err := filepath.Rel(d.root.Dir, hostPath)
	if err != nil {
		return false
	}
	_, ok := d.want["/"+filepath.ToSlash(rel)]
	return ok
}

// addDir watches one directory on the host (d.mu held). A directory that does not exist yet is
// retried on the next load.
func (d *driftWatch) addDir(dir string) {
	if d.w == nil {
		return
	}
	if err := d.w.Add(dir); err != nil {
		d.log.Debug("drift watch: directory not watched", "dir", dir, "err", err)
		delete(d.dirs, dir)
	}
}

// load sets the expectations from the node's record when the record or the delegations changed
// (after a restart; a refresh hands its decoded payload to loadPayload instead). It reports whether
// it reloaded.
func (d *driftWatch) load(h apply.Host, recordHash string, delegated map[string]string) bool {
	key := driftKey(recordHash, delegated)
	d.mu.Lock()
	same := key == d.key
	d.mu.Unlock()
	if same {
		return false
	}
	var payload *diff.Payload
	if recordHash != "" {
		cur, err := h.LoadCurrent()
		if err != nil {
			d.log.Warn("drift watch: the record cannot be read", "err", err)
			return false
		}
		payload = cur.Payload
	}
	d.loadPayload(h, recordHash, payload, delegated)
	return true
}

func driftKey(recordHash string, delegated map[string]string) string {
	return recordHash + "\x00" + strings.Join(slices.Sorted(maps.Keys(delegated)), ",")
}

// loadPayload sets the expectations from payload, the content recorded under recordHash: its files
// that the node policy lets the agent own, except delegated ones.
func (d *driftWatch) loadPayload(h apply.Host, recordHash string, payload *diff.Payload, delegated map[string]string) {
	want := map[string]expect{}
	if payload != nil {
		pol := h.Policy
		if pol == nil {
			pol = allowlist.Default()
		}
		for _, f := range payload.Config.Storage.Files {
			if _, ok := delegated[f.Path]; ok || !pol.Resolve(f.Path, nil).Allowed {
				continue
			}
			data, err := diff.FileContents(f)
			if err != nil {
				continue
			}
			want[f.Path] = expect{sum: sha256.Sum256(data), size: int64(len(data)), mode: fs.FileMode(diff.FileMode(f)).Perm()}
		}
	}
	d.mu.Lock()
	d.key, d.root, d.want, d.drifted = driftKey(recordHash, delegated), h.Root, want, nil
	for p := range want {
		dir := filepath.Join(h.Root.Dir, filepath.FromSlash(path.Dir(p)))
		if !d.dirs[dir] {
			d.dirs[dir] = true
			d.addDir(dir)
		}
	}
	d.mu.Unlock()
	d.check()
}

// check compares every watched file with the record.
func (d *driftWatch) check() {
	d.mu.Lock()
	if d.busy || d.root == nil {
		d.mu.Unlock()
		return
	}
	root, want := d.root, d.want
	d.mu.Unlock()
	var drifted []string
	for p, e := range want {
		if !e.holds(root, p) {
			drifted = append(drifted, p)
		}
	}
	slices.Sort(drifted)
	d.mu.Lock()
	if d.busy || !sameMap(want, d.want) {
		d.mu.Unlock()
		return // a refresh began or the record moved meanwhile: this finding is stale
	}
	prev := d.drifted
	d.drifted = drifted
	d.mu.Unlock()
	if slices.Equal(prev, drifted) {
		return
	}
	var fresh []string
	for _, p := range drifted {
		if !slices.Contains(prev, p) {
			fresh = append(fresh, p)
		}
	}
	if len(fresh) > 0 {
		d.log.Warn("recorded files changed on the node", "paths", fresh)
		d.found(fresh)
	}
	d.notify()
}

// setBusy pauses checks while the agent itself writes; ending it schedules a check.
func (d *driftWatch) setBusy(b bool) {
	d.mu.Lock()
	d.busy = b
	d.mu.Unlock()
	if !b {
		signal(d.kick)
	}
}

// paths returns the drifted paths.
func (d *driftWatch) paths() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.drifted)
}

// report is the drift annotation's value: the paths, comma-separated (bounded by the reporter).
func (d *driftWatch) report() string { return strings.Join(d.paths(), ",") }

func sameMap(a, b map[string]expect) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// holds says whether the node's file p is still what the record says: its mode and size from a
// stat, then its contents streamed through the hash, never held (a file its user can grow, core's
// keys, costs no more memory than a small one: round 11, core 01's class).
func (e expect) holds(root *actions.Root, p string) bool {
	fi, err := root.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != e.mode || fi.Size() != e.size {
		return false
	}
	sum, err := root.HashFile(p)
	return err == nil && sum == hex.EncodeToString(e.sum[:])
}
