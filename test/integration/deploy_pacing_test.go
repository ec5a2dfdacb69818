package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/test/kubetest"
)

// agentAs is the agent's ServiceAccount as a pod on node presents it.
func agentAs(t *testing.T, kube *kubetest.Server, node string) kubernetes.Interface {
	cfg := kube.Config(kubetest.AdminUser)
	cfg.Impersonate.UserName = "system:serviceaccount:refresh-agent:refresh-agent"
	cfg.Impersonate.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:refresh-agent", "system:authenticated"}
	cfg.Impersonate.Extra = map[string][]string{"authentication.kubernetes.io/node-name": {node}}
	c, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return c
}

func slotLease(name, pool, holder string) *coordv1.Lease {
	l := &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "refresh-agent", Labels: map[string]string{api.LabelSlotPool: pool}}}
	if holder != "" {
		l.Spec.HolderIdentity = &holder
	}
	return l
}

func TestDeploySlotLeasesPolicy(t *testing.T) {
	kube := requireKube(t)
	applyDeploy(t, kube)
	ctx := context.Background()
	a, b := agentAs(t, kube, "slot-node-a"), agentAs(t, kube, "slot-node-b")
	leases := func(c kubernetes.Interface) interface {
		Create(context.Context, *coordv1.Lease, metav1.CreateOptions) (*coordv1.Lease, error)
		Update(context.Context, *coordv1.Lease, metav1.UpdateOptions) (*coordv1.Lease, error)
		Get(context.Context, string, metav1.GetOptions) (*coordv1.Lease, error)
	} {
		return c.CoordinationV1().Leases("refresh-agent")
	}
	// The policy is compiled asynchronously: wait until it denies a slot held by another node.
	require.Eventually(t, func() bool {
		_, err := leases(a).Create(ctx, slotLease("refresh-policy-9", "policy", "slot-node-b"), metav1.CreateOptions{})
		return apierrors.IsForbidden(err) || apierrors.IsInvalid(err)
	}, 30*time.Second, 200*time.Millisecond, "the slot policy never took effect")

	mine, err := leases(a).Create(ctx, slotLease("refresh-policy-0", "policy", "slot-node-a"), metav1.CreateOptions{})
	require.NoError(t, err, "a slot for its own node")
	for name, l := range map[string]*coordv1.Lease{
		"another node's slot":    slotLease("refresh-policy-1", "policy", "slot-node-b"),
		"a name outside refresh": slotLease("kube-scheduler", "policy", "slot-node-a"),
		"another pool's name":    slotLease("refresh-other-0", "policy", "slot-node-a"),
		"no pool label":          {ObjectMeta: metav1.ObjectMeta{Name: "refresh-policy-2", Namespace: "refresh-agent"}},
	} {
		_, err := leases(a).Create(ctx, l, metav1.CreateOptions{})
		assert.True(t, apierrors.IsForbidden(err) || apierrors.IsInvalid(err), "%s: %v", name, err)
	}
	// Another node can neither release nor re-assign a's slot.
	stolen := mine.DeepCopy()
	stolen.Spec.HolderIdentity = nil
	_, err = leases(b).Update(ctx, stolen, metav1.UpdateOptions{})
	assert.True(t, apierrors.IsForbidden(err) || apierrors.IsInvalid(err), "released another's slot: %v", err)
	other := "slot-node-c"
	stolen.Spec.HolderIdentity = &other
	_, err = leases(b).Update(ctx, stolen, metav1.UpdateOptions{})
	assert.True(t, apierrors.IsForbidden(err) || apierrors.IsInvalid(err), "gave another's slot away: %v", err)
	// Its holder renews and releases it; then another node takes it.
	renewed := mine.DeepCopy()
	now := metav1.NewMicroTime(time.Now())
	renewed.Spec.RenewTime = &now
	renewed, err = leases(a).Update(ctx, renewed, metav1.UpdateOptions{})
	require.NoError(t, err, "renew")
	renewed.Spec.HolderIdentity = nil
	released, err := leases(a).Update(ctx, renewed, metav1.UpdateOptions{})
	require.NoError(t, err, "release")
	bName := "slot-node-b"
	released.Spec.HolderIdentity = &bName
	_, err = leases(b).Update(ctx, released, metav1.UpdateOptions{})
	require.NoError(t, err, "take a free slot")
	// The pool's order Lease is nobody's slot: any node of the pool writes it without a holder, none
	// may hold it.
	order, err := leases(a).Create(ctx, slotLease(api.OrderName("policy"), "policy", ""), metav1.CreateOptions{})
	require.NoError(t, err, "the pool's order")
	order.Annotations = map[string]string{api.AnnotationSlotHash: "h2", api.AnnotationSlotOrder: "slot-node-a,slot-node-b"}
	order, err = leases(b).Update(ctx, order, metav1.UpdateOptions{})
	require.NoError(t, err, "another node writes the order for new content")
	order.Spec.HolderIdentity = &bName
	_, err = leases(b).Update(ctx, order, metav1.UpdateOptions{})
	assert.True(t, apierrors.IsForbidden(err) || apierrors.IsInvalid(err), "held the order Lease: %v", err)
	_, err = leases(a).Create(ctx, slotLease(api.OrderName("policy2"), "policy2", "slot-node-a"), metav1.CreateOptions{})
	assert.True(t, apierrors.IsForbidden(err) || apierrors.IsInvalid(err), "created a held order Lease: %v", err)
	// RBAC: Leases in the agent's namespace only, never deleted.
	_, err = b.CoordinationV1().Leases("default").Get(ctx, "refresh-policy-0", metav1.GetOptions{})
	assert.True(t, apierrors.IsForbidden(err), "another namespace: %v", err)
	err = b.CoordinationV1().Leases("refresh-agent").Delete(ctx, "refresh-policy-0", metav1.DeleteOptions{})
	assert.True(t, apierrors.IsForbidden(err), "delete: %v", err)
}
