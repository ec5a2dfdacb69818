// Package api is the contract shared by the agent, the controller, publish, status and fleet: the
// ConfigMap's keys and name, the Node labels and annotations, the refresh states and the hash. It
// imports nothing of the project, so every other package can import it instead of each other.
package api

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// The per-pool ConfigMap's keys.
const (
	KeyConfig        = "config"          // the payload: base64 of gzip of the Ignition JSON (HyperShift's encoding)
	KeyHash          = "hash"            // the payload's identity; the node reports it back
	KeyNoRebootPaths = "no-reboot-paths" // optional JSON rules, requests within the node policy's ceiling
)

// Node labels set by HyperShift.
const (
	// LabelNodePool names the NodePool a guest Node belongs to.
	LabelNodePool = "hypershift.openshift.io/nodePool"
	// LabelGlobalPullSecret marks nodes where HyperShift's global pull-secret syncer owns
	// /var/lib/kubelet/config.json.
	LabelGlobalPullSecret = "hypershift.openshift.io/nodepool-globalps-enabled"
)

// Node annotations the agent owns.
const (
	AnnotationCurrent = "hypershift.openshift.io/currentRefreshConfig"
	AnnotationDesired = "hypershift.openshift.io/desiredRefreshConfig"
	AnnotationState   = "hypershift.openshift.io/refreshState"
	AnnotationReason  = "hypershift.openshift.io/refreshReason"
	AnnotationDrift   = "hypershift.openshift.io/refreshDrift"
	// AnnotationRetry is set by an operator (any new value) to make a node that gave up on a payload
	// after --max-attempts failures try it again. The agent reads it, never writes it.
	AnnotationRetry = "hypershift.openshift.io/refreshRetry"
)

// States of AnnotationState.
const (
	StateDone           = "Done"
	StateWorking        = "Working"
	StateDegraded       = "Degraded"
	StateUnreconcilable = "Unreconcilable"
)

// MaxReasonLen bounds AnnotationReason.
const MaxReasonLen = 1024

// DefaultConfigMapTemplate names a pool's ConfigMap in the agent's namespace: "{pool}" is replaced
// by the NodePool's name. HyperShift's own in-place upgrader uses "<pool>-upgrade" in another
// namespace; a distinct suffix keeps the two apart.
const DefaultConfigMapTemplate = "{pool}-refresh"

// ConfigMapName returns the ConfigMap name for pool under template.
func ConfigMapName(template, pool string) string {
	if template == "" {
		template = DefaultConfigMapTemplate
	}
	return strings.ReplaceAll(template, "{pool}", pool)
}

// Hash is the default hash of a payload: the hex sha256 of its bytes as published.
func Hash(payload []byte) string {
	sum := sha256.Sum256(payload)
	return hex.EncodeToString(sum[:])
}

// Pacing slots: coordination.k8s.io/v1 Leases in the agent's namespace, SlotName(pool, i) for i in
// [0, the pool's --max-concurrent), labelled with their pool. A Lease's holderIdentity is the Node
// refreshing in that slot; an empty holder is a free slot.
const (
	LabelSlotPool        = "refresh-agent.openshift.io/pool"
	AnnotationSlotHash   = "refresh-agent.openshift.io/hash"   // the hash the holder is refreshing to
	AnnotationSlotFailed = "refresh-agent.openshift.io/failed" // "true": the holder failed and keeps the slot
	// AnnotationSlotCount is "<slots>/<hash>": the pool's slot count for hash (--max-concurrent P%
	// of the pool's nodes), counted by the first node to take a slot for it; the others reuse it.
	AnnotationSlotCount = "refresh-agent.openshift.io/slots"
	// AnnotationSlotTurn is "<position>/<hash>" on a slot: the position in the pool's order of the
	// node that last took it for hash (kept when the slot is released), so that the next node of the
	// slot's queue knows its turn came.
	AnnotationSlotTurn = "refresh-agent.openshift.io/turn"
	// AnnotationSlotOrder is on OrderName(pool) (with AnnotationSlotHash): the pool's node names,
	// comma-separated, in the order they refresh to that hash. Written once per content by the
	// first node that needs a slot for it.
	AnnotationSlotOrder = "refresh-agent.openshift.io/order"
)

// OrderName names the Lease that carries a pool's refresh order (never a slot: slot names end in a
// number).
func OrderName(pool string) string {
	return "refresh-" + pool + "-order"
}

// SlotName names slot i of pool.
func SlotName(pool string, i int) string {
	return "refresh-" + pool + "-" + strconv.Itoa(i)
}

// ReasonWaitingPrefix starts the reason of a Working node that waits for a pacing slot.
const ReasonWaitingPrefix = "waiting for a refresh slot"
