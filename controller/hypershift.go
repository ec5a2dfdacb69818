package controller

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The resources the controller reads (and, for NodePools, whose status it writes).
var (
	GVRNodePool          = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "nodepools"}
	GVRMachineDeployment = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "machinedeployments"}
	GVRMachineSet        = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "machinesets"}
	GVRMachine           = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "machines"}
	GVRSecret            = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	GVRLease             = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

// HyperShift's annotations, as its NodePool controller and in-place upgrader write them (see the
// contract table in docs/controller.md for where each is defined).
const (
	// On MachineDeployments and MachineSets: the owning NodePool as "namespace/name".
	AnnotationNodePool = "hypershift.openshift.io/nodePool"
	// On InPlace MachineSets: the config version (full payload hash) the pool is upgrading to, and the
	// one it completed.
	AnnotationTargetConfigVersion  = "hypershift.openshift.io/nodePoolTargetConfigVersion"
	AnnotationCurrentConfigVersion = "hypershift.openshift.io/nodePoolCurrentConfigVersion"
	// On InPlace MachineSets while the in-place upgrader works (its value is a progress message).
	AnnotationUpgradeInProgressTrue = "hypershift.openshift.io/nodePoolUpgradeInProgressTrue"
	// On NodePools: the rollout hash of the completed rollout, and of the rollout being propagated.
	AnnotationCurrentRolloutConfig    = "hypershift.openshift.io/nodePoolCurrentRolloutConfig"
	AnnotationInProgressRolloutConfig = "hypershift.openshift.io/nodePoolInProgressRolloutConfig"
	// On a pool's MachineDeployment or MachineSet: the rollout hash its template targets. HyperShift
	// does not write it yet; when present it wins over the NodePool's annotations.
	AnnotationTargetRolloutConfig = "hypershift.openshift.io/nodePoolTargetRolloutConfig"

	// TokenSecretPayloadKey is the token Secret's key holding the pool's Ignition payload.
	TokenSecretPayloadKey = "payload"
)

// Labels CAPI puts on Machines.
const (
	labelDeploymentName = "cluster.x-k8s.io/deployment-name"
	labelSetName        = "cluster.x-k8s.io/set-name"
)

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

// configVersionOf returns the config version a pool's MachineDeployment or MachineSet targets: the
// target config version annotation, else the hash in its bootstrap data secret's name
// ("user-data-<pool>-<hash>").
func configVersionOf(obj *unstructured.Unstructured, pool string) string {
	if v := obj.GetAnnotations()[AnnotationTargetConfigVersion]; v != "" {
		return v
	}
	name, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "spec", "bootstrap", "dataSecretName")
	if v, ok := strings.CutPrefix(name, "user-data-"+pool+"-"); ok {
		return v
	}
	return ""
}

// int64Field reads an integer field of an unstructured object (0 when absent).
func int64Field(obj *unstructured.Unstructured, fields ...string) int64 {
	v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}
