package controller

import (
	"fmt"

	"github.com/openshift/refresh-agent/api"
)

// Facts are what the controller knows about one pool when it decides.
type Facts struct {
	Pool string
	// Workload names the pool's MachineDeployment or MachineSet ("MachineDeployment ns/name"); empty
	// when the pool has none.
	Workload string
	// ConfigVersion is the config version (full payload hash) the pool's workload targets.
	ConfigVersion string
	// RolloutTarget is the rollout hash the pool targets; RolloutCurrent the one of its completed rollout.
	RolloutTarget, RolloutCurrent string
	// Paused says why refreshes must wait (a rollout or an in-place upgrade in progress); empty otherwise.
	Paused string
	// Published is what the controller last published for the pool; nil when nothing is.
	Published *Record
}

// Record is what a published ConfigMap says about itself.
type Record struct {
	ConfigVersion string // the `hash` key
	Rollout       string // the rollout hash when it was published
}

// Action is what the controller does about a pool.
type Action int

const (
	Wait    Action = iota // publish nothing now
	Publish               // publish Facts.ConfigVersion
)

// Reasons the controller gives on ConfigRefreshProgressing (beyond package fleet's).
const (
	ReasonPaused          = "Paused"          // a rollout or an in-place upgrade is in progress
	ReasonLeftToRollout   = "LeftToRollout"   // the payload changed with the rollout hash: the rollout delivers it
	ReasonNoWorkload      = "NoWorkload"      // no MachineDeployment or MachineSet with a config version
	ReasonPayloadMissing  = "PayloadMissing"  // the token Secret or its payload key is missing
	ReasonPayloadInvalid  = "PayloadInvalid"  // the payload does not decode
	ReasonPayloadTooLarge = "PayloadTooLarge" // the payload does not fit in a ConfigMap
	ReasonNotManaged      = "ConfigMapNotManaged"
	ReasonPublishFailed   = "PublishFailed"
)

// Decision is an Action and, when it is Wait for a reason worth reporting, the reason.
type Decision struct {
	Action  Action
	Reason  string // empty when there is nothing to report beyond the nodes' progress
	Message string
	// Adopt marks a publication that follows a completed rollout (the nodes already run it).
	Adopt bool
}

// Decide applies the rules: never while the pool rolls or upgrades in place; publish the first
// version seen and management-side drift (the config version changed, the rollout hash did not);
// leave a rollout-class change (the rollout hash changed too) to the rollout, and take its config
// version as the new baseline once the rollout has completed.
func Decide(f Facts) Decision {
	if f.Workload == "" || f.ConfigVersion == "" {
		msg := fmt.Sprintf("no MachineDeployment or MachineSet of pool %s names a config version", f.Pool)
		if f.Workload != "" {
			msg = fmt.Sprintf("%s names no config version (annotation %s or bootstrap.dataSecretName)", f.Workload, AnnotationTargetConfigVersion)
		}
		return Decision{Action: Wait, Reason: ReasonNoWorkload, Message: msg}
	}
	if f.Paused != "" {
		return Decision{Action: Wait, Reason: ReasonPaused, Message: "paused: " + f.Paused}
	}
	if rolloutInProgress(f.RolloutTarget, f.RolloutCurrent) {
		// HyperShift is rolling a rollout-class change out: whatever the version, it is the rollout's.
		from := f.RolloutCurrent
		switch {
		case f.Published == nil:
			return Decision{Action: Wait, Reason: ReasonLeftToRollout,
				Message: fmt.Sprintf("rollout config %s -> %s in progress: config version %s left to the rollout, nothing published",
					short(from), short(f.RolloutTarget), short(f.ConfigVersion))}
		case f.Published.ConfigVersion == f.ConfigVersion:
			return Decision{Action: Wait, Reason: ReasonLeftToRollout,
				Message: fmt.Sprintf("rollout config %s -> %s pending: left to the rollout", short(from), short(f.RolloutTarget))}
		default:
			return Decision{Action: Wait, Reason: ReasonLeftToRollout,
				Message: fmt.Sprintf("config version %s -> %s comes with a rollout config change (%s -> %s): not published, left to the rollout",
					short(f.Published.ConfigVersion), short(f.ConfigVersion), short(from), short(f.RolloutTarget))}
		}
	}
	if f.Published == nil {
		return Decision{Action: Publish}
	}
	pub := *f.Published
	if f.RolloutTarget != "" && f.RolloutTarget != pub.Rollout {
		if f.RolloutCurrent == f.RolloutTarget {
			// HyperShift recorded the rollout complete: the nodes were replaced or upgraded with this
			// payload, which becomes the baseline.
			return Decision{Action: Publish, Adopt: true}
		}
		// Only HyperShift's record of the completed rollout says the nodes run the new payload.
		return Decision{Action: Wait, Reason: ReasonLeftToRollout,
			Message: fmt.Sprintf("config version %s -> %s comes with a rollout config change (%s -> %s): not published, left to the rollout (until %s records it complete)",
				short(pub.ConfigVersion), short(f.ConfigVersion), short(pub.Rollout), short(f.RolloutTarget), AnnotationCurrentRolloutConfig)}
	}
	if pub.ConfigVersion != f.ConfigVersion {
		return Decision{Action: Publish}
	}
	return Decision{Action: Wait}
}

// rolloutInProgress: the pool targets a rollout hash other than the one its last completed rollout
// recorded. Without a recorded one (HyperShift before its rollout hash, or not seeded yet) only the
// pause signals (a rolling MachineDeployment, an in-place upgrade) can tell.
func rolloutInProgress(target, current string) bool {
	return target != "" && current != "" && target != current
}

// short is a hash in a message: api.Short, "-" for none.
func short(h string) string {
	if h == "" {
		return "-"
	}
	return api.Short(h)
}
