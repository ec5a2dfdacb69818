// Package agent is the per-node loop: it watches the desired payload (through the API or a mounted
// ConfigMap volume), refreshes the node one payload at a time, always for the newest content, and
// reports the node's state in annotations, Events and metrics.
package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/openshift/refresh-agent/api"
)

// The ConfigMap's keys (aliases of package api's).
const (
	KeyConfig        = api.KeyConfig
	KeyHash          = api.KeyHash
	KeyNoRebootPaths = api.KeyNoRebootPaths
)

// Snapshot is one observation of the desired state.
type Snapshot struct {
	// Problem says why there is nothing to refresh toward (ConfigMap deleted, key missing); empty
	// when Config and Hash are set.
	Problem       string
	Config        []byte
	Hash          string
	NoRebootPaths []byte
	// NoPool is set when the Node has no NodePool label and no fixed ConfigMap was given.
	NoPool bool
	// Version identifies the observation (resourceVersion or content digest) for logs.
	Version string
}

// snapshotFromData reads the ConfigMap's keys from its data (or binaryData).
func snapshotFromData(source string, data map[string]string, binary map[string][]byte) Snapshot {
	get := func(k string) ([]byte, bool) {
		if v, ok := data[k]; ok {
			return []byte(v), true
		}
		v, ok := binary[k]
		return v, ok
	}
	cfg, ok := get(KeyConfig)
	if !ok || len(cfg) == 0 {
		return Snapshot{Problem: fmt.Sprintf("%s has no %q key", source, KeyConfig)}
	}
	hash, ok := get(KeyHash)
	if !ok || len(hash) == 0 {
		return Snapshot{Problem: fmt.Sprintf("%s has no %q key", source, KeyHash)}
	}
	rules, _ := get(KeyNoRebootPaths)
	return Snapshot{Config: cfg, Hash: string(hash), NoRebootPaths: rules}
}

// digest identifies content for deduplication.
func (s Snapshot) digest() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", s.Problem, s.Hash)
	h.Write(s.Config)
	h.Write([]byte{0})
	h.Write(s.NoRebootPaths)
	return hex.EncodeToString(h.Sum(nil))
}

// latest holds only the newest snapshot: a source that changes while a refresh runs replaces what
// is waiting, so the next refresh is always for the newest content, never a queue of stale ones.
type latest struct {
	mu     sync.Mutex
	snap   Snapshot
	has    bool
	notify func()
}

func (l *latest) put(s Snapshot) {
	l.mu.Lock()
	l.snap, l.has = s, true
	l.mu.Unlock()
	if l.notify != nil {
		l.notify()
	}
}

// clear forgets the snapshot (the source changed: the old one is not this node's any more).
func (l *latest) clear() {
	l.mu.Lock()
	l.snap, l.has = Snapshot{}, false
	l.mu.Unlock()
}

func (l *latest) get() (Snapshot, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.snap, l.has
}

// signal wakes the loop without blocking: one pending wake-up is as good as many.
func signal(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
