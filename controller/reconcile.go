package controller

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/openshift/refresh-agent/api"
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
	if np.GetDeletionTimestamp() != nil {
		return c.withdraw(ctx, pool, cmName, np)
	}

	facts := c.facts(np, pool)
	cm, err := c.configMap(cmName)
	if err != nil {
		return err
	}
	// The informer holds only the controller's own ConfigMaps (by label): their annotations are its
	// record of what it published.
	published := ""
	if cm != nil {
		published = cm.Data[api.KeyHash]
		facts.Published = &Record{ConfigVersion: published, Rollout: cm.Annotations[AnnotationRolloutConfig]}
	}
	d := Decide(facts)

	if d.Action == Publish {
		// A token Secret already found wanting is not read (nor reported) again until it changes:
		// HyperShift updates NodePools often, and each update reconciles the pool.
		secretRV := c.secretVersion(TokenSecretName(pool, facts.ConfigVersion))
		c.mu.Lock()
		f, known := c.failed[pool]
		c.mu.Unlock()
		if known && f.configVersion == facts.ConfigVersion && f.secretRV == secretRV {
			d = Decision{Action: Wait, Reason: reasonOf(f.err), Message: f.err.Error() + ": nothing published"}
			return c.writeStatus(ctx, np, pool, published, d)
		}
		err := c.publish(ctx, pool, cmName, cm, facts)
		reason := reasonOf(err)
		c.mu.Lock()
		delete(c.failed, pool)
		if err != nil && reason != ReasonPublishFailed && reason != ReasonNotManaged {
			c.failed[pool] = failure{configVersion: facts.ConfigVersion, secretRV: secretRV, err: err}
		}
		c.mu.Unlock()
		switch {
		case err == nil:
			published = facts.ConfigVersion
			msg := fmt.Sprintf("published config version %s to ConfigMap %s/%s in the guest cluster", facts.ConfigVersion, c.cfg.GuestNamespace, cmName)
			if d.Adopt {
				msg += " (the rollout that delivered it has completed)"
			}
			c.recorder.Event(np, corev1.EventTypeNormal, EventPublished, msg)
			c.log.Info("published", "pool", pool, "configVersion", facts.ConfigVersion, "adopt", d.Adopt)
		case reason == ReasonPublishFailed || reason == ReasonNotManaged:
			// An API error, or a ConfigMap someone else owns (which the informer, watching only the
			// controller's own, would not report gone): reported, and retried with backoff.
			d = Decision{Action: Wait, Reason: reason, Message: api.Truncate(err.Error(), 900) + ": retrying"}
			if reason == ReasonNotManaged {
				c.recorder.Event(np, corev1.EventTypeWarning, EventNotPublished, d.Message)
			}
			if serr := c.writeStatus(ctx, np, pool, published, d); serr != nil {
				c.log.Warn("status not written", "pool", pool, "err", serr)
			}
			return err
		default:
			// Bad input: reported, then the controller waits for the token Secret or the workload to change.
			d = Decision{Action: Wait, Reason: reason, Message: err.Error() + ": nothing published"}
			c.recorder.Event(np, corev1.EventTypeWarning, EventNotPublished, api.Truncate(d.Message, 1024))
			c.log.Warn("not published", "pool", pool, "configVersion", facts.ConfigVersion, "err", err)
		}
	}
	return c.writeStatus(ctx, np, pool, published, d)
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
	f := Facts{Pool: pool}
	ann := np.GetAnnotations()
	f.RolloutCurrent = ann[AnnotationCurrentRolloutConfig]
	f.RolloutTarget = f.RolloutCurrent
	if v := ann[AnnotationInProgressRolloutConfig]; v != "" {
		f.RolloutTarget = v
	}
	w, kind := c.workload(pool)
	if w == nil {
		return f
	}
	f.Workload = fmt.Sprintf("%s %s/%s", kind, w.GetNamespace(), w.GetName())
	f.ConfigVersion = configVersionOf(w, pool)
	wann := w.GetAnnotations()
	if v := wann[AnnotationTargetRolloutConfig]; v != "" {
		f.RolloutTarget = v
	}
	switch kind {
	case "MachineDeployment":
		replicas, updated := int64Field(w, "status", "replicas"), int64Field(w, "status", "updatedReplicas")
		if updated != replicas {
			f.Paused = fmt.Sprintf("%s is rolling out (%d/%d replicas updated)", f.Workload, updated, replicas)
		}
	case "MachineSet":
		target, current := wann[AnnotationTargetConfigVersion], wann[AnnotationCurrentConfigVersion]
		if v, ok := wann[AnnotationUpgradeInProgressTrue]; ok {
			f.Paused = fmt.Sprintf("in-place upgrade in progress on %s: %s", f.Workload, api.Truncate(v, 200))
		} else if target != "" && target != current {
			f.Paused = fmt.Sprintf("in-place upgrade in progress on %s (config version %s -> %s)", f.Workload, short(current), short(target))
		}
	}
	if f.Paused == "" {
		for _, o := range c.machines.GetStore().List() {
			m := o.(*unstructured.Unstructured)
			if m.GetDeletionTimestamp() != nil && machineBelongs(m, kind, w.GetName()) {
				f.Paused = fmt.Sprintf("Machine %s/%s is being deleted", m.GetNamespace(), m.GetName())
				break
			}
		}
	}
	return f
}

// workload finds the pool's MachineDeployment (Replace) or, failing that, its MachineSet (InPlace).
// A MachineDeployment's own MachineSets are not the pool's workload.
func (c *Controller) workload(pool string) (*unstructured.Unstructured, string) {
	for _, o := range c.workloads.GetStore().List() {
		if u := o.(*unstructured.Unstructured); ownsPool(u, c.cfg.NodePoolNamespace, pool) {
			return u, "MachineDeployment"
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

// publish reads the token Secret of the pool's config version and writes the ConfigMap.
func (c *Controller) publish(ctx context.Context, pool, cmName string, cm *corev1.ConfigMap, f Facts) error {
	secretName := TokenSecretName(pool, f.ConfigVersion)
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
		return payloadError(ReasonPayloadMissing, "token Secret %s has no %q key (HyperShift stores it for InPlace pools once the ignition server has generated it)",
			ref, TokenSecretPayloadKey)
	}
	payload, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return payloadError(ReasonPayloadInvalid, "token Secret %s: key %q: %v", ref, TokenSecretPayloadKey, err)
	}
	data, err := ConfigMapData(ref, payload, f.ConfigVersion)
	if err != nil {
		return err
	}
	meta := metav1.ObjectMeta{Name: cmName, Namespace: c.cfg.GuestNamespace,
		Labels:      map[string]string{LabelManagedBy: ManagedBy, api.LabelNodePool: pool},
		Annotations: map[string]string{AnnotationRolloutConfig: f.RolloutTarget}}
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
func (c *Controller) withdraw(ctx context.Context, pool, cmName string, np *unstructured.Unstructured) error {
	c.mu.Lock()
	if np == nil {
		np = c.gone[pool]
	}
	delete(c.gone, pool)
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
	if np != nil {
		c.recorder.Event(np, corev1.EventTypeNormal, EventWithdrawn,
			fmt.Sprintf("NodePool deleted: ConfigMap %s/%s withdrawn from the guest cluster", c.cfg.GuestNamespace, cmName))
	}
	return nil
}

// writeStatus sets the three conditions through the status subresource when they change. A conflict
// (someone else wrote the NodePool) or a NodePool deleted meanwhile is not an error worth a retry
// storm: the informer brings the new version and the pool is reconciled again.
func (c *Controller) writeStatus(ctx context.Context, np *unstructured.Unstructured, pool, published string, d Decision) error {
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
		return nil
	}
	upd := np.DeepCopy()
	if err := unstructured.SetNestedSlice(upd.Object, mergeConditions(list, conds), "status", "conditions"); err != nil {
		return err
	}
	_, err := c.dyn.Resource(GVRNodePool).Namespace(np.GetNamespace()).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		c.queue.AddAfter(pool, 200*time.Millisecond)
		return nil
	case err != nil:
		return fmt.Errorf("NodePool %s/%s status: %w", np.GetNamespace(), pool, err)
	}
	return nil
}
