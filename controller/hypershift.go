package controller

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The resources the controller reads (and, for NodePools, whose status it writes). The Cluster API
// ones are the v1beta1 names; the controller reads the group's v1beta2 instead when the API server
// serves it (capiVersion), and reads either version's status fields (settled).
var (
	GVRNodePool          = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "nodepools"}
	GVRMachineDeployment = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "machinedeployments"}
	GVRMachineSet        = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "machinesets"}
	GVRMachine           = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "machines"}
	GVRSecret            = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	GVRLease             = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

// HyperShift's annotations, exactly as openshift/hypershift writes them (docs/hypershift.md names the
// revision and the file defining each).
const (
	// On MachineDeployments, MachineSets, token and user-data Secrets: the owning NodePool as
	// "namespace/name" (nodePoolAnnotation, nodepool_controller.go).
	AnnotationNodePool = "hypershift.openshift.io/nodePool"
	// On NodePools: the config version (the full Hash() naming the Secrets) of the completed rollout,
	// set on completion. The in-place upgrader writes the same key on InPlace MachineSets for the
	// version their nodes completed.
	AnnotationCurrentConfigVersion = "hypershift.openshift.io/nodePoolCurrentConfigVersion"
	// On NodePools: HashWithoutVersion() of the completed rollout (another flavour: never compared
	// with a config version).
	AnnotationCurrentConfig = "hypershift.openshift.io/nodePoolCurrentConfig"
	// On InPlace MachineSets: the config version the pool is upgrading to.
	AnnotationTargetConfigVersion = "hypershift.openshift.io/nodePoolTargetConfigVersion"
	// On InPlace MachineSets while the in-place upgrader works, and when a node failed it (the values
	// are progress messages).
	AnnotationUpgradeInProgressTrue  = "hypershift.openshift.io/nodePoolUpgradeInProgressTrue"
	AnnotationUpgradeInProgressFalse = "hypershift.openshift.io/nodePoolUpgradeInProgressFalse"
	// On NodePools (HyperShift's rollout-hash design): RolloutHashWithoutVersion() of the completed
	// rollout, seeded on the first reconcile after the operator upgrade. Its presence says that this
	// HyperShift tells management-side drift from rollouts at all.
	AnnotationCurrentRolloutConfig = "hypershift.openshift.io/nodePoolCurrentRolloutConfig"
	// On NodePools: RolloutHash() (with the release version) while a spec-driven rollout propagates;
	// deleted on completion.
	AnnotationInProgressRolloutConfig = "hypershift.openshift.io/nodePoolInProgressRolloutConfig"
	// On a pool's MachineDeployment or MachineSet: the rollout hash (with the version) its template
	// targets. It stays after completion and is another flavour than the NodePool's current rollout
	// hash: the controller never reads it (target = current is no completion test).
	AnnotationTargetRolloutConfig = "hypershift.openshift.io/nodePoolTargetRolloutConfig"
	// Proposed (docs/hypershift.md): on NodePools, the new Hash() (H2) while the NodePool is in the
	// state ManagementDrift; its token Secret token-<pool>-<H2> keeps a payload.
	AnnotationRefreshConfigVersion = "hypershift.openshift.io/nodePoolRefreshConfigVersion"

	// TokenSecretPayloadKey is the token Secret's key holding the pool's Ignition payload (base64
	// of gzip of the Ignition JSON; ignition-server/controllers/tokensecret_controller.go).
	TokenSecretPayloadKey = "payload"
)

// HyperShift's NodePool conditions the controller reads (api/hypershift/v1beta1/nodepool_conditions.go).
const (
	ConditionConfigUpdatePending = "ConfigUpdatePending"
	ReasonManagementConfigDrift  = "ManagementConfigDrift"
	ConditionUpdatingConfig      = "UpdatingConfig"
	ConditionUpdatingVersion     = "UpdatingVersion"
)

// Labels CAPI puts on Machines.
const (
	labelDeploymentName = "cluster.x-k8s.io/deployment-name"
	labelSetName        = "cluster.x-k8s.io/set-name"
)

// validVersion reports whether a config version can name a Secret: a DNS label of lowercase letters
// and digits (HyperShift's HashSimple is 8 hex digits; other lengths are tolerated).
func validVersion(v string) bool {
	if v == "" || len(v) > 63 {
		return false
	}
	for _, r := range v {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// TokenSecretName is HyperShift's name for the token Secret of a pool's config version.
func TokenSecretName(pool, configVersion string) string {
	return fmt.Sprintf("token-%s-%s", pool, configVersion)
}

// ownsPool reports whether a MachineDeployment or MachineSet belongs to the pool: HyperShift names
// them after the NodePool and annotates them with "namespace/name".
func ownsPool(obj *unstructured.Unstructured, npNamespace, pool string) bool {
	if v, ok := obj.GetAnnotations()[AnnotationNodePool]; ok {
		return v == npNamespace+"/"+pool || v == pool
	}
	return obj.GetName() == pool
}

// poolOfCAPI names the pool a MachineDeployment or MachineSet belongs to.
func poolOfCAPI(obj *unstructured.Unstructured) string {
	if v, ok := obj.GetAnnotations()[AnnotationNodePool]; ok {
		if i := strings.LastIndex(v, "/"); i >= 0 {
			return v[i+1:]
		}
		return v
	}
	return obj.GetName()
}

// poolsOfMachine names the pools a Machine may belong to: its MachineDeployment or MachineSet (by
// CAPI's labels and the Machine's owners). A Replace pool's Machines belong to MachineSets with
// generated names, and their deployment-name label names the pool's MachineDeployment.
func poolsOfMachine(obj *unstructured.Unstructured) []string {
	var out []string
	l := obj.GetLabels()
	for _, k := range []string{labelDeploymentName, labelSetName} {
		if v := l[k]; v != "" {
			out = append(out, v)
		}
	}
	for _, o := range obj.GetOwnerReferences() {
		out = append(out, o.Name)
	}
	return out
}

// machineBelongs reports whether a Machine belongs to the pool's MachineDeployment or MachineSet.
func machineBelongs(m *unstructured.Unstructured, kind, name string) bool {
	l := m.GetLabels()
	switch kind {
	case "MachineDeployment":
		if l[labelDeploymentName] == name {
			return true
		}
	case "MachineSet":
		if l[labelSetName] == name {
			return true
		}
	}
	for _, o := range m.GetOwnerReferences() {
		if o.Kind == kind && o.Name == name {
			return true
		}
	}
	return false
}

// configVersionOf returns the config version a pool's MachineDeployment or MachineSet deploys: the
// hash in its bootstrap data Secret's name ("user-data-<pool>-<hash>", what HyperShift's
// extractHashFromSecretName reads), else an InPlace MachineSet's target config version annotation.
func configVersionOf(obj *unstructured.Unstructured, pool string) string {
	name, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "spec", "bootstrap", "dataSecretName")
	if v, ok := strings.CutPrefix(name, "user-data-"+pool+"-"); ok && v != "" && !strings.Contains(v, "-") {
		return v
	}
	return obj.GetAnnotations()[AnnotationTargetConfigVersion]
}

// unsettled says why a MachineDeployment or MachineSet has not settled ("" when it has): its
// controller has not observed its generation, or not every desired replica is up to date. Cluster
// API's v1beta1 status says so in updatedReplicas (and, since CAPI 1.11, v1beta2.upToDateReplicas);
// v1beta2 in upToDateReplicas. Every count present must equal the desired replicas, as HyperShift's
// MachineDeploymentComplete requires. A v1beta1 MachineSet has no up-to-date count (only v1beta2 and
// CAPI 1.11's status.v1beta2 do): its in-place upgrade annotations say the rest.
func unsettled(obj *unstructured.Unstructured, what string) string {
	status, ok, _ := unstructured.NestedMap(obj.Object, "status")
	if !ok || len(status) == 0 {
		return what + " has no status yet"
	}
	if g, og, ok := obj.GetGeneration(), int64Field(obj, "status", "observedGeneration"), hasField(obj, "status", "observedGeneration"); ok && og < g {
		return fmt.Sprintf("%s: generation %d not observed yet (status.observedGeneration %d)", what, g, og)
	}
	desired, ok := int64At(obj, "spec", "replicas")
	if !ok {
		desired, _ = int64At(obj, "status", "replicas")
	}
	if r, ok := int64At(obj, "status", "replicas"); ok && r != desired {
		return fmt.Sprintf("%s is rolling out (%d/%d replicas)", what, r, desired)
	}
	counts := []struct {
		path []string
		name string
	}{
		{[]string{"status", "upToDateReplicas"}, "up to date"},            // v1beta2
		{[]string{"status", "v1beta2", "upToDateReplicas"}, "up to date"}, // v1beta1 with v1beta2 conditions
		{[]string{"status", "updatedReplicas"}, "updated"},                // v1beta1
	}
	seen := false
	for _, c := range counts {
		n, ok := int64At(obj, c.path...)
		if !ok {
			continue
		}
		seen = true
		if n != desired {
			return fmt.Sprintf("%s is rolling out (%d/%d replicas %s)", what, n, desired, c.name)
		}
	}
	if !seen && desired > 0 && obj.GetKind() != "MachineSet" {
		return fmt.Sprintf("%s reports no up-to-date replica count yet", what)
	}
	return ""
}

// condition returns a NodePool condition's status and reason ("" when absent), and its
// observedGeneration (0 when absent).
func condition(np *unstructured.Unstructured, typ string) (status, reason string, observed int64) {
	list, _, _ := unstructured.NestedSlice(np.Object, "status", "conditions")
	for _, item := range list {
		if m, ok := item.(map[string]any); ok && m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			g, _ := int64At(&unstructured.Unstructured{Object: m}, "observedGeneration")
			return s, r, g
		}
	}
	return "", "", 0
}

// int64Field reads an integer field of an unstructured object (0 when absent).
func int64Field(obj *unstructured.Unstructured, fields ...string) int64 {
	n, _ := int64At(obj, fields...)
	return n
}

func hasField(obj *unstructured.Unstructured, fields ...string) bool {
	_, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	return ok
}

// int64At reads an integer field and says whether it is there.
func int64At(obj *unstructured.Unstructured, fields ...string) (int64, bool) {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	}
	return 0, false
}
