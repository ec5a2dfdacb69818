package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/diff"
)

// VolumeSource reads the ConfigMap mounted as a volume. kubelet updates such a volume by writing a
// new timestamped directory and swapping the `..data` symlink; a watch on a file would die with the
// swap, so the source watches the directory, debounces bursts of events, and re-reads the keys,
// emitting only when their content changed.
type VolumeSource struct {
	Dir      string
	Debounce time.Duration // default 200ms
	synced   atomic.Bool
	last     string
}

func (s *VolumeSource) Start(ctx context.Context, out func(Snapshot)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	if err := w.Add(s.Dir); err != nil {
		w.Close()
		return fmt.Errorf("watching %s: %w", s.Dir, err)
	}
	debounce := s.Debounce
	if debounce == 0 {
		debounce = 200 * time.Millisecond
	}
	s.emit(out)
	s.synced.Store(true)
	go func() {
		defer w.Close()
		var timer <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-w.Events:
				if !ok {
					return
				}
				timer = time.After(debounce)
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				timer = time.After(debounce)
			case <-timer:
				timer = nil
				s.emit(out)
			}
		}
	}()
	return nil
}

func (s *VolumeSource) Synced() bool { return s.synced.Load() }

// emit reads the keys and passes on a snapshot when anything changed.
func (s *VolumeSource) emit(out func(Snapshot)) {
	snap := s.read()
	if d := snap.digest(); d != s.last {
		s.last = d
		snap.Version = d[:12]
		out(snap)
	}
}

// read reads the keys from one generation of the volume: kubelet's `..data` symlink is resolved once
// and every key is read from the directory it names, so a swap in between cannot mix two versions.
// When the link moved while reading, the read starts over on the new generation.
func (s *VolumeSource) read() Snapshot {
	where := "ConfigMap volume " + s.Dir
	if _, err := os.Stat(s.Dir); err != nil {
		return Snapshot{Problem: fmt.Sprintf("%s: %v", where, err)}
	}
	for try := 0; ; try++ {
		gen, dir, err := s.generation()
		if err != nil {
			return Snapshot{Problem: fmt.Sprintf("%s: %v", where, err)}
		}
		data := map[string][]byte{} // bytes, not strings: a 10 MiB payload is not copied on the way
		for _, k := range []string{KeyConfig, KeyHash, KeyNoRebootPaths} {
			b, err := readKey(filepath.Join(dir, k))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return Snapshot{Problem: fmt.Sprintf("%s: %v", where, err)}
			}
			data[k] = b
		}
		if again, _, _ := s.generation(); again != gen && try < 5 {
			continue // swapped while reading: read the new generation whole
		}
		return snapshotFromData(where, nil, data)
	}
}

// generation resolves `..data` to the timestamped directory it names (gen) and returns where to read
// the keys. A directory without `..data` (not a kubelet volume) is read as is.
func (s *VolumeSource) generation() (gen, dir string, err error) {
	target, err := os.Readlink(filepath.Join(s.Dir, "..data"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", s.Dir, nil
	}
	if err != nil {
		return "", "", err
	}
	if !filepath.IsLocal(target) {
		return "", "", fmt.Errorf("..data points outside the volume (%s)", target)
	}
	return target, filepath.Join(s.Dir, target), nil
}

// readKey reads one key of the volume, never more than the payload budget and a byte: a key is a
// ConfigMap's value (at most 1 MiB through the API), but the directory is a node path.
func readKey(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := actions.ReadBounded(f, diff.MaxPayloadSize)
	if err == nil && int64(len(b)) > diff.MaxPayloadSize {
		return nil, fmt.Errorf("%s: larger than the %d byte budget (--max-payload-bytes)", name, diff.MaxPayloadSize)
	}
	return b, err
}
