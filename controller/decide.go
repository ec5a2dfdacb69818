package controller

import (
	"fmt"

	"github.com/openshift/refresh-agent/api"
)

// Facts are what the controller observed about one pool when it decides: HyperShift's NodePool
// annotations and conditions, the pool's workload, and what the controller published last.
type Facts struct {
	Pool string
	// Workload names the pool's MachineDeployment or MachineSet ("MachineDeployment ns/name"); empty
	// when the pool has none.
	Workload string
	// Deployed is the config version the workload's bootstrap data Secret names (user-data-<pool>-<H>).
	Deployed string
	// Completed is the NodePool's nodePoolCurrentConfigVersion: the config version of its last
	// completed rollout ("" before the first one completes).
	Completed string
	// Contract: the NodePool carries nodePoolCurrentRolloutConfig, so this HyperShift tells
	// management-side drift from rollouts (its rollout-hash design). Without it (HyperShift before
	// that design) a drift and a spec change both look like a new config version.
	Contract bool
	// InProgress is the NodePool's nodePoolInProgressRolloutConfig (a spec-driven rollout propagating).
	InProgress string
	// Drift: ConfigUpdatePending=True with reason ManagementConfigDrift.
	Drift bool
	// Refresh is the NodePool's nodePoolRefreshConfigVersion (proposed: H2 while in ManagementDrift).
	Refresh string
	// Unsettled says why the workload is still moving (replicas not up to date, a generation not
	// observed, a Machine being deleted, an in-place upgrade, UpdatingConfig/UpdatingVersion); "" when
	// it is not.
	Unsettled string
	// Published is what the controller last published for the pool; nil when nothing is.
	Published *Record
}

// Record is what a published ConfigMap says about itself.
type Record struct {
	ConfigVersion string // the `hash` key
	Baseline      string // the completed config version when it was published
}

// Action is what the controller does about a pool.
type Action int

const (
	Wait    Action = iota // publish nothing now
	Publish               // publish Decision.Version
)

// Reasons the controller gives on ConfigRefreshProgressing (beyond package fleet's).
const (
	ReasonPaused        = "Paused"        // the workload is still moving: replicas, Machines, in-place upgrade
	ReasonLeftToRollout = "LeftToRollout" // a rollout is in progress: what it brings is its own
	// ReasonRolloutContractUnavailable: HyperShift writes no rollout hash annotations, so a new config
	// version may be a rollout's: it is never published.
	ReasonRolloutContractUnavailable = "RolloutContractUnavailable"
	// ReasonRefreshVersionUnavailable: HyperShift reports management drift but names no refresh
	// version (the proposed annotation), so there is no payload to publish.
	ReasonRefreshVersionUnavailable = "RefreshVersionUnavailable"
	ReasonNoWorkload                = "NoWorkload"      // no MachineDeployment or MachineSet with a config version
	ReasonPayloadMissing            = "PayloadMissing"  // the token Secret or its payload key is missing
	ReasonPayloadInvalid            = "PayloadInvalid"  // the payload does not decode
	ReasonPayloadTooLarge           = "PayloadTooLarge" // the payload does not fit in a ConfigMap
	ReasonNodePoolDeleting          = "NodePoolDeleting"
	ReasonNotManaged                = "ConfigMapNotManaged"
	ReasonPublishFailed             = "PublishFailed"
)

// Decision is an Action and, when there is something to report beyond the nodes' progress, the
// reason (for Progressing).
type Decision struct {
	Action   Action
	Version  string // what to publish
	Baseline string // the pool's completed version it is published over
	Reason   string
	Message  string
	// Drift marks a publication of management-side drift; Adopt one that follows a completed
	// rollout (the nodes already run it).
	Drift, Adopt bool
}

// Decide applies the rules, per NodePool, from observed state only:
//  1. a rollout in progress publishes nothing (the in-progress rollout annotation, a workload whose
//     config version is not the NodePool's completed one, a workload still moving);
//  2. otherwise the completed config version is the pool's baseline;
//  3. management drift (ConfigUpdatePending=True/ManagementConfigDrift with a refresh version) is
//     published over the baseline;
//  4. without HyperShift's rollout contract only the first version seen is published: a later one
//     may be a rollout's, and publishing it would apply a rollout-class change in place.
func Decide(f Facts) Decision {
	if f.Workload == "" || f.Deployed == "" {
		msg := fmt.Sprintf("no MachineDeployment or MachineSet of pool %s names a config version", f.Pool)
		if f.Workload != "" {
			msg = fmt.Sprintf("%s names no config version (spec.template.spec.bootstrap.dataSecretName user-data-%s-<version>)", f.Workload, f.Pool)
		}
		return Decision{Action: Wait, Reason: ReasonNoWorkload, Message: msg}
	}
	switch {
	case f.InProgress != "":
		return leftToRollout(f, fmt.Sprintf("rollout %s in progress (NodePool annotation %s)", short(f.InProgress), AnnotationInProgressRolloutConfig))
	case f.Completed == "" && f.Published != nil:
		return leftToRollout(f, fmt.Sprintf("%s deploys config version %s and the NodePool records no completed rollout (%s)",
			f.Workload, short(f.Deployed), AnnotationCurrentConfigVersion))
	case f.Completed != "" && f.Deployed != f.Completed:
		return leftToRollout(f, fmt.Sprintf("rollout in progress: %s deploys config version %s, the NodePool's completed rollout is %s",
			f.Workload, short(f.Deployed), short(f.Completed)))
	case f.Unsettled != "":
		return Decision{Action: Wait, Reason: ReasonPaused, Message: "paused: " + f.Unsettled + "; resumes when it settles"}
	}

	baseline := f.Completed
	if baseline == "" {
		// A pool seen before HyperShift recorded its first completion: the settled workload's version
		// is what its nodes run (HyperShift records it on its next status write).
		baseline = f.Deployed
	}
	d := Decision{Version: baseline, Baseline: baseline}
	if f.Contract && f.Drift {
		if f.Refresh == "" {
			d.Reason = ReasonRefreshVersionUnavailable
			d.Message = fmt.Sprintf("%s=True (%s) but the NodePool names no refresh version (annotation %s): nothing to publish beyond config version %s",
				ConditionConfigUpdatePending, ReasonManagementConfigDrift, AnnotationRefreshConfigVersion, short(baseline))
		} else if f.Refresh != baseline {
			d.Version, d.Drift = f.Refresh, true
		}
	}
	switch {
	case f.Published == nil:
		d.Action = Publish // the first version seen, or drift over a baseline never published
	case f.Published.ConfigVersion == d.Version:
		d.Action = Wait
	case !f.Contract:
		return Decision{Action: Wait, Reason: ReasonRolloutContractUnavailable,
			Message: fmt.Sprintf("config version %s -> %s not published: HyperShift writes no rollout hash (NodePool annotation %s), so management drift cannot be told from a rollout",
				short(f.Published.ConfigVersion), short(d.Version), AnnotationCurrentRolloutConfig)}
	default:
		d.Action = Publish
		// Back to the baseline the drift was published over is the drift's end, not an adoption.
		d.Adopt = !d.Drift && f.Published.Baseline != baseline
	}
	return d
}

func leftToRollout(f Facts, why string) Decision {
	pub := "nothing published"
	if f.Published != nil {
		pub = "config version " + short(f.Published.ConfigVersion) + " stays published"
	}
	return Decision{Action: Wait, Reason: ReasonLeftToRollout,
		Message: why + ": left to the rollout, " + pub + "; resumes when it completes"}
}

// short is a hash in a message: api.Short, "-" for none.
func short(h string) string {
	if h == "" {
		return "-"
	}
	return api.Short(h)
}
