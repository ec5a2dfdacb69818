// Package hypershifttest writes a NodePool's objects on a management API server the way
// openshift/hypershift's code writes them, for the controller's integration tests and demo: the
// NodePool's annotations in both hash flavours and its conditions, the MachineDeployment (Replace) or
// MachineSet (InPlace) with Cluster API v1beta1 or v1beta2 status, the token Secrets. docs/hypershift.md
// names the HyperShift revision and file behind each field; the refresh version annotation and a
// payload kept for Replace pools are the producer side proposed there.
package hypershifttest

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/openshift/refresh-agent/controller"
	"github.com/openshift/refresh-agent/test/fixture"
)

// Messages HyperShift puts in its conditions (hypershift-operator/controllers/nodepool/conditions.go).
const (
	MessageManagementDrift = "Management-side configuration has changed. New or replaced nodes will use the updated configuration, but existing nodes retain the previous configuration until the next spec-driven rollout."
	release                = "quay.io/openshift-release-dev/ocp-release:%s-x86_64"
)

// Pool is one NodePool and its workload. Its inputs are what HyperShift hashes: the user's config
// (NodePool spec.config and the like), the management-side content (the HAProxy image and so on) and
// the release version.
type Pool struct {
	Dyn       dynamic.Interface
	Core      kubernetes.Interface
	Namespace string // the control plane namespace, which also holds the NodePool here
	Name      string
	InPlace   bool  // spec.management.upgradeType InPlace: a MachineSet, else Replace: a MachineDeployment
	Contract  bool  // HyperShift's rollout-hash design (nodePoolCurrentRolloutConfig, ConfigUpdatePending)
	V1Beta2   bool  // Cluster API v1beta2 status (upToDateReplicas), else v1beta1 (updatedReplicas)
	Replicas  int64 // default 3
	// Observed, when set, is the NodePool generation HyperShift's condition writes say they observed
	// (a reconcile of an older spec landing after an edit); else the current generation.
	Observed int64

	done   inputs // the completed rollout's
	target inputs // what the workload deploys (done, unless a rollout is in progress)
	now    inputs // what HyperShift computes now (target plus any management-side drift)
	// driftPayload is the payload of a drift that arrived during a rollout (state ContinuedRollout):
	// it is announced when the rollout completes.
	driftPayload []byte
}

type inputs struct{ user, mgmt, version string }

// hashSimple is HyperShift's supportutil.HashSimple shape: 8 hex digits of FNV-32a.
func hashSimple(s string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return fmt.Sprintf("%08x", h.Sum32())
}

// Hash is ConfigGenerator.Hash(): every input; it names the token and user-data Secrets.
func (in inputs) Hash() string { return hashSimple(in.user + in.mgmt + in.version) }

// HashWithoutVersion is the nodePoolCurrentConfig flavour.
func (in inputs) HashWithoutVersion() string { return hashSimple(in.user + in.mgmt) }

// RolloutHash has the release version (nodePoolInProgressRolloutConfig, nodePoolTargetRolloutConfig).
func (in inputs) RolloutHash() string { return hashSimple(in.user + in.version) }

// RolloutHashWithoutVersion is the nodePoolCurrentRolloutConfig flavour.
func (in inputs) RolloutHashWithoutVersion() string { return hashSimple(in.user) }

// Completed is the config version of the completed rollout (nodePoolCurrentConfigVersion).
func (p *Pool) Completed() string { return p.done.Hash() }

func (p *Pool) gvr(r string) schema.GroupVersionResource {
	v := "v1beta1"
	if p.V1Beta2 {
		v = "v1beta2"
	}
	return schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: v, Resource: r}
}

func (p *Pool) workloadGVR() schema.GroupVersionResource {
	if p.InPlace {
		return p.gvr("machinesets")
	}
	return p.gvr("machinedeployments")
}

func (p *Pool) kind() string {
	if p.InPlace {
		return "MachineSet"
	}
	return "MachineDeployment"
}

func (p *Pool) upgradeType() string {
	if p.InPlace {
		return "InPlace"
	}
	return "Replace"
}

// Create writes a NodePool whose first rollout completed with payload (the Ignition JSON), its
// settled workload and its token Secret. It returns the config version.
func (p *Pool) Create(ctx context.Context, payload []byte) (string, error) {
	if p.Replicas == 0 {
		p.Replicas = 3
	}
	p.done = inputs{"user-config-A", "haproxy-A", "4.19.0"}
	p.target, p.now = p.done, p.done
	in := p.done
	np := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "NodePool",
		"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace},
		"spec": map[string]any{"clusterName": "hc", "replicas": p.Replicas,
			"management": map[string]any{"upgradeType": p.upgradeType()},
			"release":    map[string]any{"image": fmt.Sprintf(release, in.version)}},
	}}
	np.SetAnnotations(p.completedAnnotations(in))
	if _, err := p.Dyn.Resource(controller.GVRNodePool).Namespace(p.Namespace).Create(ctx, np, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	if err := p.tokenSecret(ctx, in, payload, true); err != nil {
		return "", err
	}
	wl := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/" + p.workloadGVR().Version, "kind": p.kind(),
		"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace},
		"spec": map[string]any{"clusterName": "hc-infra", "replicas": p.Replicas,
			"template": map[string]any{"spec": map[string]any{"clusterName": "hc-infra", "version": in.version,
				"bootstrap": map[string]any{"dataSecretName": "user-data-" + p.Name + "-" + in.Hash()}}}},
	}}
	ann := map[string]string{controller.AnnotationNodePool: p.Namespace + "/" + p.Name}
	if p.Contract {
		ann[controller.AnnotationTargetRolloutConfig] = in.RolloutHash()
	}
	if p.InPlace {
		ann[controller.AnnotationTargetConfigVersion] = in.Hash()
		ann[controller.AnnotationCurrentConfigVersion] = in.Hash()
	}
	wl.SetAnnotations(ann)
	if _, err := p.Dyn.Resource(p.workloadGVR()).Namespace(p.Namespace).Create(ctx, wl, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	if err := p.Progress(ctx, p.Replicas); err != nil {
		return "", err
	}
	return in.Hash(), p.setConditions(ctx, map[string]cond{
		"Ready": {"True", "AsExpected", ""}, controller.ConditionUpdatingConfig: {"False", "AsExpected", ""},
		controller.ConditionUpdatingVersion: {"False", "AsExpected", ""}, controller.ConditionConfigUpdatePending: {"False", "AsExpected", ""}})
}

func (p *Pool) completedAnnotations(in inputs) map[string]string {
	ann := map[string]string{
		"hypershift.openshift.io/nodePoolCurrentConfig": in.HashWithoutVersion(),
		controller.AnnotationCurrentConfigVersion:       in.Hash(),
	}
	if p.Contract {
		ann[controller.AnnotationCurrentRolloutConfig] = in.RolloutHashWithoutVersion()
	}
	return ann
}

// tokenSecret writes token-<pool>-<hash> as Token.reconcileTokenSecret does, and the ignition
// server's payload (base64 of gzip of the Ignition JSON) unless payload is nil.
func (p *Pool) tokenSecret(ctx context.Context, in inputs, payload []byte, withUserData bool) error {
	h := in.Hash()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token-" + p.Name + "-" + h, Namespace: p.Namespace,
		Annotations: map[string]string{
			"hypershift.openshift.io/ignition-config":            "true",
			"hypershift.openshift.io/node-pool-upgrade-type":     p.upgradeType(),
			controller.AnnotationNodePool:                        p.Namespace + "/" + p.Name,
			"hypershift.openshift.io/last-token-generation-time": time.Now().Format(time.RFC3339Nano),
		}},
		Data: map[string][]byte{
			"token": []byte("6a1d4c2e-" + h), "release": []byte(fmt.Sprintf(release, in.version)), "release-version": []byte(in.version),
			"config": fixture.GzipBase64([]byte("machine configs of " + in.user + " and " + in.mgmt)), "pull-secret-hash": []byte("ps"),
			"additional-trust-bundle-hash": nil, "hc-configuration-hash": []byte("hc"), "os-stream": []byte("rhel-9"), "cloud-config-hash": nil,
		}}
	if payload != nil {
		s.Data["payload"] = fixture.GzipBase64(payload)
		s.Data["reason"], s.Data["message"] = []byte("AsExpected"), []byte("Payload generated successfully")
	}
	if _, err := p.Core.CoreV1().Secrets(p.Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if !withUserData {
		return nil
	}
	ud := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "user-data-" + p.Name + "-" + h, Namespace: p.Namespace,
		Annotations: map[string]string{controller.AnnotationNodePool: p.Namespace + "/" + p.Name}},
		Data: map[string][]byte{"disableTemplating": []byte("dHJ1ZQo="), "value": []byte(`{"ignition":{"version":"3.2.0"}}`)}}
	if _, err := p.Core.CoreV1().Secrets(p.Namespace).Create(ctx, ud, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// Drift changes the management-side content (an HAProxy image bump). Under the rollout-hash design
// (Contract) the workload and its Secrets stay on the deployed hash and ConfigUpdatePending goes
// True/ManagementConfigDrift; as proposed, the NodePool names the new Hash() in
// nodePoolRefreshConfigVersion and its token Secret keeps payload (nil: no payload key; secret false:
// no Secret at all). Without the contract (HyperShift before that design) a drift is a rollout like
// any other change: it starts one (Progress and Complete finish it). During a spec-driven rollout
// (Contract) nothing is announced until it completes: Complete announces it. It returns the new
// version (the one announced, for a pending drift: after the rollout's inputs).
func (p *Pool) Drift(ctx context.Context, payload []byte, secret bool) (string, error) {
	p.now.mgmt += "'"
	if !p.Contract {
		return p.now.Hash(), p.startRollout(ctx, p.now, payload)
	}
	if p.target != p.done {
		p.driftPayload = payload
		return p.now.Hash(), nil
	}
	return p.now.Hash(), p.announce(ctx, payload, secret)
}

// announce is the state ManagementDrift: the workload and its Secrets stay on the deployed hash.
func (p *Pool) announce(ctx context.Context, payload []byte, secret bool) error {
	next := p.now
	if secret {
		if err := p.tokenSecret(ctx, next, payload, false); err != nil {
			return err
		}
	}
	if err := p.annotate(ctx, controller.GVRNodePool, map[string]any{controller.AnnotationRefreshConfigVersion: next.Hash()}); err != nil {
		return err
	}
	return p.setConditions(ctx, map[string]cond{
		controller.ConditionConfigUpdatePending: {"True", controller.ReasonManagementConfigDrift, MessageManagementDrift}})
}

// SpecChange starts a spec-driven rollout (a user MachineConfig change): new token and user-data
// Secrets, the workload's bootstrap Secret and version, UpdatingConfig=True, the in-progress
// annotation. Progress and Complete finish it. It returns the new version.
func (p *Pool) SpecChange(ctx context.Context, payload []byte) (string, error) {
	p.now.user += "'"
	return p.now.Hash(), p.startRollout(ctx, p.now, payload)
}

func (p *Pool) startRollout(ctx context.Context, next inputs, payload []byte) error {
	if err := p.tokenSecret(ctx, next, payload, true); err != nil {
		return err
	}
	p.target = next
	npAnn := map[string]any{controller.AnnotationRefreshConfigVersion: nil}
	if p.Contract {
		npAnn[controller.AnnotationInProgressRolloutConfig] = next.RolloutHash()
	}
	if err := p.annotate(ctx, controller.GVRNodePool, npAnn); err != nil {
		return err
	}
	wlAnn := map[string]any{}
	if p.Contract {
		wlAnn[controller.AnnotationTargetRolloutConfig] = next.RolloutHash()
	}
	if p.InPlace {
		wlAnn[controller.AnnotationTargetConfigVersion] = next.Hash()
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": wlAnn},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"version": next.version,
			"bootstrap": map[string]any{"dataSecretName": "user-data-" + p.Name + "-" + next.Hash()}}}}})
	if _, err := p.Dyn.Resource(p.workloadGVR()).Namespace(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return err
	}
	if p.InPlace {
		if err := p.annotate(ctx, p.workloadGVR(), map[string]any{controller.AnnotationUpgradeInProgressTrue: fmt.Sprintf(
			"Nodepool update in progress. Target Config version: %s. Total Nodes: %d. Upgraded: 0", next.Hash(), p.Replicas)}); err != nil {
			return err
		}
	} else if err := p.Progress(ctx, 0); err != nil {
		return err
	}
	return p.setConditions(ctx, map[string]cond{
		controller.ConditionUpdatingConfig:      {"True", "AsExpected", "Updating config in progress. Target config: " + next.HashWithoutVersion()},
		controller.ConditionConfigUpdatePending: {"False", "AsExpected", ""}})
}

// Progress writes the workload's status with updated replicas up to date, its controller having
// observed its generation, in the pool's Cluster API version.
func (p *Pool) Progress(ctx context.Context, updated int64) error {
	r := p.Dyn.Resource(p.workloadGVR()).Namespace(p.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := r.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		status := map[string]any{"observedGeneration": cur.GetGeneration(), "replicas": p.Replicas}
		old := map[string]any{"readyReplicas": p.Replicas, "availableReplicas": p.Replicas}
		if p.InPlace {
			old["fullyLabeledReplicas"] = p.Replicas // a MachineSet's v1beta1 status has no updated count
		} else {
			old["updatedReplicas"] = updated
		}
		if p.V1Beta2 {
			status["upToDateReplicas"], status["availableReplicas"], status["readyReplicas"] = updated, p.Replicas, p.Replicas
			status["deprecated"] = map[string]any{"v1beta1": old}
		} else {
			for k, v := range old {
				status[k] = v
			}
			// CAPI >= 1.11 adds the v1beta2 counts to its v1beta1 status.
			status["v1beta2"] = map[string]any{"upToDateReplicas": updated, "availableReplicas": p.Replicas, "readyReplicas": p.Replicas}
		}
		cur.Object["status"] = status
		_, err = r.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// Complete finishes the rollout in progress as CAPI (or the in-place upgrader) and HyperShift's
// status reconciliation do: every replica up to date, then the NodePool's completed annotations
// (both flavours), the in-progress annotation deleted, UpdatingConfig=False. The workload's target
// rollout annotation stays.
func (p *Pool) Complete(ctx context.Context) error {
	if p.InPlace {
		if err := p.annotate(ctx, p.workloadGVR(), map[string]any{controller.AnnotationCurrentConfigVersion: p.target.Hash(),
			controller.AnnotationUpgradeInProgressTrue: nil}); err != nil {
			return err
		}
	}
	if err := p.Progress(ctx, p.Replicas); err != nil {
		return err
	}
	p.done = p.target
	ann := map[string]any{controller.AnnotationInProgressRolloutConfig: nil}
	for k, v := range p.completedAnnotations(p.done) {
		ann[k] = v
	}
	if err := p.annotate(ctx, controller.GVRNodePool, ann); err != nil {
		return err
	}
	if err := p.setConditions(ctx, map[string]cond{controller.ConditionUpdatingConfig: {"False", "AsExpected", ""}}); err != nil {
		return err
	}
	if p.Contract && p.now != p.done {
		return p.announce(ctx, p.driftPayload, true) // the drift that arrived during the rollout
	}
	return nil
}

// StaleStatusWrite is HyperShift's status write from a cached copy older than the controller's
// conditions: Cluster API's patch helper sends status.conditions as that copy had them, which drops
// every condition HyperShift does not own.
func (p *Pool) StaleStatusWrite(ctx context.Context) error {
	r := p.Dyn.Resource(controller.GVRNodePool).Namespace(p.Namespace)
	cur, err := r.Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	list, _, _ := unstructured.NestedSlice(cur.Object, "status", "conditions")
	var own []any
	for _, c := range list {
		if m, ok := c.(map[string]any); ok && !isRefresh(m["type"]) {
			own = append(own, m)
		}
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": own}})
	_, err = r.Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// EditSpec changes the NodePool's spec in a way that starts no rollout (its node labels): the
// generation moves, and HyperShift's conditions say the older one until Touch reconciles it.
func (p *Pool) EditSpec(ctx context.Context, labels map[string]string) error {
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"nodeLabels": labels}})
	_, err := p.Dyn.Resource(controller.GVRNodePool).Namespace(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// Touch is one of HyperShift's frequent NodePool status writes that changes none of the
// controller's inputs (its Ready condition's message, as replicas become ready).
func (p *Pool) Touch(ctx context.Context, n int) error {
	set := map[string]cond{"Ready": {"True", "AsExpected", fmt.Sprintf("%d/%d machines ready (%d)", p.Replicas, p.Replicas, n)}}
	r := p.Dyn.Resource(controller.GVRNodePool).Namespace(p.Namespace)
	if cur, err := r.Get(ctx, p.Name, metav1.GetOptions{}); err == nil {
		// Each reconcile sets every condition of HyperShift's again, with the generation it observed.
		list, _, _ := unstructured.NestedSlice(cur.Object, "status", "conditions")
		for _, c := range list {
			m, _ := c.(map[string]any)
			t, _ := m["type"].(string)
			if _, ok := set[t]; !ok && !isRefresh(t) {
				st, _ := m["status"].(string)
				rs, _ := m["reason"].(string)
				msg, _ := m["message"].(string)
				set[t] = cond{st, rs, msg}
			}
		}
	}
	return p.setConditions(ctx, set)
}

func isRefresh(t any) bool {
	s, _ := t.(string)
	return len(s) > len("ConfigRefresh") && s[:len("ConfigRefresh")] == "ConfigRefresh"
}

type cond struct{ status, reason, message string }

// setConditions sets HyperShift's own conditions (its NodePoolCondition shape, with severity) on a
// fresh copy, keeping every other condition, as its patch helper does from an up-to-date cache.
func (p *Pool) setConditions(ctx context.Context, set map[string]cond) error {
	r := p.Dyn.Resource(controller.GVRNodePool).Namespace(p.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := r.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		list, _, _ := unstructured.NestedSlice(cur.Object, "status", "conditions")
		generation := cur.GetGeneration()
		if p.Observed > 0 {
			generation = p.Observed
		}
		done := map[string]bool{}
		for i, c := range list {
			m, _ := c.(map[string]any)
			t, _ := m["type"].(string)
			if v, ok := set[t]; ok {
				list[i] = p.condition(t, v, m, generation)
				done[t] = true
			}
		}
		for t, v := range set {
			if !done[t] {
				list = append(list, p.condition(t, v, nil, generation))
			}
		}
		if err := unstructured.SetNestedSlice(cur.Object, list, "status", "conditions"); err != nil {
			return err
		}
		_ = unstructured.SetNestedField(cur.Object, p.done.version, "status", "version")
		_, err = r.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

func (p *Pool) condition(t string, c cond, old map[string]any, generation int64) map[string]any {
	ltt := time.Now().UTC().Format(time.RFC3339)
	if old != nil && old["status"] == c.status {
		ltt, _ = old["lastTransitionTime"].(string)
	}
	return map[string]any{"type": t, "status": c.status, "severity": "", "lastTransitionTime": ltt,
		"reason": c.reason, "message": c.message, "observedGeneration": generation}
}

func (p *Pool) annotate(ctx context.Context, gvr schema.GroupVersionResource, ann map[string]any) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	_, err := p.Dyn.Resource(gvr).Namespace(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}
