package controller

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/fleet"
)

// Event reasons on the NodePool.
const (
	EventPublished    = "RefreshPublished"
	EventNotPublished = "RefreshNotPublished"
	EventWithdrawn    = "RefreshWithdrawn"
)

func (c *Controller) reconcile(ctx context.Context, pool string) error {
	cmName := api.ConfigMapName(c.cfg.ConfigMapTemplate, pool)
	obj, exists, err := c.nodePools.GetStore().GetByKey(c.cfg.NodePoolNamespace + "/" + pool)
	if err != nil {
		return err
	}
	if !exists {
		return c.withdraw(ctx, pool, cmName, nil)
	}
	np := obj.(*unstructured.Unstructured)
	if c.cfg.ClusterName != "" {
		if cn, _, _ := unstructured.NestedString(np.Object, "spec", "clusterName"); cn != c.cfg.ClusterName {
			return nil
		}
	}
	cm, err := c.configMap(cmName)
	if err != nil {
		return err
	}
	// The informer holds only the controller's own ConfigMaps (by label): their data and annotations
	// are its record of what it published.
	published := ""
	var record *Record
	if cm != nil {
		published = cm.Data[api.KeyHash]
		record = &Record{ConfigVersion: published, Baseline: cm.Annotations[AnnotationBaseline]}
	}
	if np.GetDeletionTimestamp() != nil {
		return c.deleting(ctx, np, pool, cmName)
	}

	facts := c.facts(np, pool)
	facts.Published = record
	d := Decide(facts)

	if d.Action == Publish {
		// A token Secret already found wanting is not read (nor reported) again until it changes:
		// HyperShift updates NodePools often, and each update reconciles the pool.
		secretRV := c.secretVersion(TokenSecretName(pool, d.Version))
		c.mu.Lock()
		f, known := c.failed[pool]
		c.mu.Unlock()
		if known && f.configVersion == d.Version && f.secretRV == secretRV {
			d = Decision{Action: Wait, Reason: reasonOf(f.err), Message: api.Truncate(f.err.Error(), 900) + ": nothing published"}
			_, err := c.writeStatus(ctx, np, pool, published, d)
			return err
		}
		version := d.Version
		err := c.publish(ctx, pool, cmName, cm, d)
		reason := reasonOf(err)
		c.mu.Lock()
		delete(c.failed, pool)
		if err != nil && reason != ReasonPublishFailed && reason != ReasonNotManaged {
			c.failed[pool] = failure{configVersion: d.Version, secretRV: secretRV, err: err}
		}
		c.mu.Unlock()
		switch {
		case err == nil:
			published = d.Version
			msg := fmt.Sprintf("published config version %s to ConfigMap %s/%s in the guest cluster", d.Version, c.cfg.GuestNamespace, cmName)
			switch {
			case d.Drift:
				msg += fmt.Sprintf(" (management-side drift over the completed config version %s)", d.Baseline)
			case d.Adopt:
				msg += " (the rollout that delivered it has completed)"
			}
			c.recorder.Event(np, corev1.EventTypeNormal, EventPublished, msg)
			c.log.Info("published", "pool", pool, "configVersion", d.Version, "drift", d.Drift, "adopt", d.Adopt)
		case reason == ReasonPublishFailed || reason == ReasonNotManaged:
			// An API error, or a ConfigMap someone else owns (which the informer, watching only the
			// controller's own, would not report gone): reported, and retried with the queue's backoff.
			d = Decision{Action: Wait, Reason: reason, Message: api.Truncate(err.Error(), 900) + ": retrying"}
			if reason == ReasonNotManaged {
				c.recorder.Event(np, corev1.EventTypeWarning, EventNotPublished, d.Message)
			}
			if _, serr := c.writeStatus(ctx, np, pool, published, d); serr != nil {
				c.log.Warn("status not written", "pool", pool, "err", serr)
			}
			return err
		default:
			// Bad input: reported once, then the controller waits for the token Secret or the
			// NodePool to change (the informers say when).
			d = Decision{Action: Wait, Reason: reason, Message: api.Truncate(err.Error(), 900) + ": nothing published"}
			c.recorder.Event(np, corev1.EventTypeWarning, EventNotPublished, api.Truncate(d.Message, 1024))
			c.log.Warn("not published", "pool", pool, "configVersion", api.Truncate(version, 80), "err", err)
		}
	}
	_, err = c.writeStatus(ctx, np, pool, published, d)
	return err
}

// deleting handles a NodePool being deleted (HyperShift's finalizer holds it while its nodes go):
// its ConfigMap is withdrawn, Progressing says so, and one Warning Event tells why nothing will be
// published for it any more.
func (c *Controller) deleting(ctx context.Context, np *unstructured.Unstructured, pool, cmName string) error {
	if err := c.withdraw(ctx, pool, cmName, np); err != nil {
		return err
	}
	msg := fmt.Sprintf("NodePool is being deleted: nothing published, ConfigMap %s/%s withdrawn from the guest cluster", c.cfg.GuestNamespace, cmName)
	c.mu.Lock()
	first := !c.deleted[np.GetUID()]
	c.deleted[np.GetUID()] = true
	c.mu.Unlock()
	if first {
		c.recorder.Event(np, corev1.EventTypeWarning, EventWithdrawn, msg)
	}
	_, err := c.writeStatus(ctx, np, pool, "", Decision{Action: Wait, Reason: ReasonNodePoolDeleting, Message: msg})
	return err
}

// failure remembers a token Secret that could not be published.
type failure struct {
	configVersion, secretRV string
	err                     error
}

// secretVersion is the resourceVersion of a token Secret in the metadata cache ("" when absent).
func (c *Controller) secretVersion(name string) string {
	o, ok, _ := c.secrets.GetStore().GetByKey(c.cfg.Namespace + "/" + name)
	if !ok {
		return ""
	}
	return o.(metav1.Object).GetResourceVersion()
}

// facts gathers what Decide needs from the management cluster's caches.
func (c *Controller) facts(np *unstructured.Unstructured, pool string) Facts {
	ann := np.GetAnnotations()
	_, contract := ann[AnnotationCurrentRolloutConfig]
	f := Facts{Pool: pool, Completed: ann[AnnotationCurrentConfigVersion], Contract: contract,
		InProgress: ann[AnnotationInProgressRolloutConfig], Refresh: ann[AnnotationRefreshConfigVersion]}
	s, r, observed := condition(np, ConditionConfigUpdatePending)
	f.Drift = s == "True" && r == ReasonManagementConfigDrift
	if f.Drift && observed > 0 && observed < np.GetGeneration() {
		// HyperShift has not reconciled the NodePool's latest spec: the drift it reported may be
		// about to become part of a rollout. It writes the condition again when it has.
		f.Unsettled = fmt.Sprintf("NodePool generation %d not observed by HyperShift yet (%s observedGeneration %d)",
			np.GetGeneration(), ConditionConfigUpdatePending, observed)
	}
	upgradeType, _, _ := unstructured.NestedString(np.Object, "spec", "management", "upgradeType")
	w, kind := c.workload(pool, upgradeType)
	if w == nil {
		return f
	}
	f.Workload = fmt.Sprintf("%s %s/%s", kind, w.GetNamespace(), w.GetName())
	f.Deployed = configVersionOf(w, pool)
	if f.Unsettled == "" {
		f.Unsettled = unsettled(w, f.Workload)
	}
	if kind == "MachineSet" && f.Unsettled == "" {
		wann := w.GetAnnotations()
		target, current := wann[AnnotationTargetConfigVersion], wann[AnnotationCurrentConfigVersion]
		if v, ok := wann[AnnotationUpgradeInProgressTrue]; ok {
			f.Unsettled = fmt.Sprintf("in-place upgrade in progress on %s: %s", f.Workload, api.Truncate(v, 200))
		} else if target != "" && target != current {
			f.Unsettled = fmt.Sprintf("in-place upgrade in progress on %s (config version %s -> %s)", f.Workload, short(current), short(target))
		}
	}
	for _, t := range []string{ConditionUpdatingConfig, ConditionUpdatingVersion} {
		if s, _, _ := condition(np, t); s == "True" && f.Unsettled == "" {
			f.Unsettled = fmt.Sprintf("NodePool condition %s=True", t)
		}
	}
	if f.Unsettled == "" {
		for _, o := range c.machines.GetStore().List() {
			m := o.(*unstructured.Unstructured)
			if m.GetDeletionTimestamp() != nil && machineBelongs(m, kind, w.GetName()) {
				f.Unsettled = fmt.Sprintf("Machine %s/%s is being deleted", m.GetNamespace(), m.GetName())
				break
			}
		}
	}
	return f
}

// workload finds the pool's MachineDeployment (Replace) or, failing that or for an InPlace pool
// (spec.management.upgradeType), its MachineSet.
// A MachineDeployment's own MachineSets are not the pool's workload.
func (c *Controller) workload(pool, upgradeType string) (*unstructured.Unstructured, string) {
	if upgradeType != "InPlace" {
		for _, o := range c.workloads.GetStore().List() {
			if u := o.(*unstructured.Unstructured); ownsPool(u, c.cfg.NodePoolNamespace, pool) {
				return u, "MachineDeployment"
			}
		}
	}
	for _, o := range c.machineSets.GetStore().List() {
		u := o.(*unstructured.Unstructured)
		owned := false
		for _, r := range u.GetOwnerReferences() {
			owned = owned || r.Kind == "MachineDeployment"
		}
		if !owned && ownsPool(u, c.cfg.NodePoolNamespace, pool) {
			return u, "MachineSet"
		}
	}
	return nil, ""
}

func (c *Controller) configMap(name string) (*corev1.ConfigMap, error) {
	o, exists, err := c.configMaps.GetStore().GetByKey(c.cfg.GuestNamespace + "/" + name)
	if err != nil || !exists {
		return nil, err
	}
	return o.(*corev1.ConfigMap), nil
}

// publish reads the token Secret of a config version and writes the pool's ConfigMap.
func (c *Controller) publish(ctx context.Context, pool, cmName string, cm *corev1.ConfigMap, d Decision) error {
	version := d.Version
	if !validVersion(version) {
		// A NodePool annotation is input like any other: a name built from it is checked before use.
		return payloadError(ReasonPayloadInvalid, "NodePool annotation %s=%q is not a config version (HyperShift's Hash(): lowercase hex)",
			AnnotationRefreshConfigVersion, api.Truncate(version, 80))
	}
	secretName := TokenSecretName(pool, version)
	ref := c.cfg.Namespace + "/" + secretName
	secret, err := c.dyn.Resource(GVRSecret).Namespace(c.cfg.Namespace).Get(ctx, secretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return payloadError(ReasonPayloadMissing, "token Secret %s not found", ref)
	}
	if err != nil {
		return fmt.Errorf("token Secret %s: %w", ref, err)
	}
	encoded, found, _ := unstructured.NestedString(secret.Object, "data", TokenSecretPayloadKey)
	if !found {
		return payloadError(ReasonPayloadMissing, "token Secret %s has no %q key (HyperShift's ignition server keeps it only for InPlace pools; docs/hypershift.md proposes keeping it for every pool)",
			ref, TokenSecretPayloadKey)
	}
	payload, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return payloadError(ReasonPayloadInvalid, "token Secret %s: key %q: %v", ref, TokenSecretPayloadKey, err)
	}
	data, err := ConfigMapData(ref, payload, version)
	if err != nil {
		return err
	}
	meta := metav1.ObjectMeta{Name: cmName, Namespace: c.cfg.GuestNamespace,
		Labels:      map[string]string{LabelManagedBy: ManagedBy, api.LabelNodePool: pool},
		Annotations: map[string]string{AnnotationBaseline: d.Baseline}}
	if cm == nil {
		err = c.guest.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: meta, Data: data})
		if apierrors.IsAlreadyExists(err) {
			if other, gerr := c.guest.GetConfigMap(ctx, c.cfg.GuestNamespace, cmName); gerr == nil && other.Labels[LabelManagedBy] != ManagedBy {
				return payloadError(ReasonNotManaged, "ConfigMap %s/%s exists and is not managed by the controller (no label %s=%s): nothing published",
					c.cfg.GuestNamespace, cmName, LabelManagedBy, ManagedBy)
			}
		}
	} else {
		upd := cm.DeepCopy()
		upd.Labels, upd.Annotations, upd.Data, upd.BinaryData = meta.Labels, meta.Annotations, data, nil
		err = c.guest.UpdateConfigMap(ctx, upd)
	}
	if err != nil {
		return fmt.Errorf("ConfigMap %s/%s: %w", c.cfg.GuestNamespace, cmName, err)
	}
	return nil
}

// withdraw removes the ConfigMap of a pool whose NodePool is gone or going: its nodes are being
// deleted, and nothing should be published for them any more.
// For a NodePool already gone whose deletion was not reported yet, it records the Event itself.
func (c *Controller) withdraw(ctx context.Context, pool, cmName string, np *unstructured.Unstructured) error {
	c.mu.Lock()
	last := c.gone[pool]
	delete(c.gone, pool)
	reported := last != nil && c.deleted[last.GetUID()]
	if np == nil && last != nil {
		delete(c.deleted, last.GetUID())
	}
	c.mu.Unlock()
	cm, err := c.configMap(cmName)
	if err != nil || cm == nil {
		return err
	}
	err = c.guest.REST().Delete().Namespace(c.cfg.GuestNamespace).Resource("configmaps").Name(cmName).Do(ctx).Error()
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("ConfigMap %s/%s: %w", c.cfg.GuestNamespace, cmName, err)
	}
	c.log.Info("NodePool deleted: withdrew its ConfigMap", "pool", pool, "configMap", cmName)
	if np == nil && last != nil && !reported {
		c.recorder.Event(last, corev1.EventTypeWarning, EventWithdrawn,
			fmt.Sprintf("NodePool deleted: ConfigMap %s/%s withdrawn from the guest cluster", c.cfg.GuestNamespace, cmName))
	}
	return nil
}

// writeStatus sets the three conditions through the status subresource when they differ from the
// NodePool's (level-triggered: a HyperShift write from a stale copy that dropped or reverted them is
// corrected from the informer event it causes; an unchanged set is never written again). It reports
// whether it wrote. A conflict (someone else wrote the NodePool) or a NodePool deleted meanwhile is
// not an error worth a retry storm: the informer brings the new version and the pool is reconciled.
func (c *Controller) writeStatus(ctx context.Context, np *unstructured.Unstructured, pool, published string, d Decision) (bool, error) {
	list, _, _ := unstructured.NestedSlice(np.Object, "status", "conditions")
	previous := readConditions(list)
	var nodes []corev1.Node
	for _, o := range c.nodes.GetStore().List() {
		if n := o.(*corev1.Node); n.Labels[api.LabelNodePool] == pool {
			nodes = append(nodes, *n)
		}
	}
	conds := Conditions(pool, published, d, nodes, previous, np.GetGeneration(), time.Now().Truncate(time.Second))
	if sameConditions(conds, previous) {
		return false, nil
	}
	upd := np.DeepCopy()
	if err := unstructured.SetNestedSlice(upd.Object, mergeConditions(list, conds), "status", "conditions"); err != nil {
		return false, err
	}
	_, err := c.dyn.Resource(GVRNodePool).Namespace(np.GetNamespace()).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case apierrors.IsConflict(err):
		return false, nil // the newer NodePool's informer event reconciles the pool again
	case err != nil:
		return false, fmt.Errorf("NodePool %s/%s status: %w", np.GetNamespace(), pool, err)
	}
	own := meta.FindStatusCondition(conds, fleet.ConditionProgressing)
	c.log.Info("conditions written", "pool", pool, "progressing", own.Reason)
	return true, nil
}
