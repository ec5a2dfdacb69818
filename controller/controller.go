// Package controller is the management-side controller: for every NodePool of a hosted cluster it
// publishes the pool's payload into the guest cluster when only management-side content changed,
// keeps out of the way of rollouts and in-place upgrades, and reports the guest nodes' refresh
// progress as ConfigRefresh conditions on the NodePool.
//
// It uses client-go's dynamic client and plain shared informers rather than controller-runtime: the
// refresh-agent binary also runs on every node, and controller-runtime (like client-go's typed
// clientset, dynamicinformer and leaderelection packages) pulls in and registers every API group's
// types. Here the CRDs are read as unstructured objects, core/v1 goes through package kube's REST
// client, and the Lease lock is a few requests of the dynamic client.
package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/kube"
)

// Labels and annotations the controller puts on the ConfigMaps it publishes.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "refresh-agent-controller"
	// AnnotationBaseline records the NodePool's completed config version when the ConfigMap was
	// published (a drift's baseline; its end goes back to it).
	AnnotationBaseline = "hypershift.openshift.io/refreshBaselineConfigVersion"
)

// Config wires the controller to its two clusters.
type Config struct {
	Management, Guest *rest.Config
	// Namespace is the hosted control plane namespace: MachineDeployments, MachineSets, Machines and
	// token Secrets.
	Namespace string
	// NodePoolNamespace holds the NodePools (HyperShift keeps them beside the HostedCluster); default Namespace.
	NodePoolNamespace string
	// ClusterName, when set, limits the controller to NodePools whose spec.clusterName is it.
	ClusterName string
	// GuestNamespace is the agents' namespace in the guest cluster.
	GuestNamespace string
	// ConfigMapTemplate names each pool's ConfigMap (api.DefaultConfigMapTemplate when empty).
	ConfigMapTemplate string
	Workers           int
	Log               *slog.Logger
}

// Controller reconciles NodePools.
type Controller struct {
	cfg         Config
	dyn         dynamic.Interface
	guest       *kube.Client
	mgmtCore    *kube.Client
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
	queue       workqueue.TypedRateLimitingInterface[string]
	log         *slog.Logger

	nodePools, workloads, machineSets, machines, secrets, nodes, configMaps cache.SharedIndexInformer

	// capiVersion is the Cluster API version read: v1beta2 when served (HyperShift's CAPI v1beta2
	// storage), else v1beta1. Set by Run before the informers start.
	capiVersion string

	mu     sync.Mutex
	gone   map[string]*unstructured.Unstructured // NodePools seen deleted, for the withdrawal Event
	failed map[string]failure                    // pools whose token Secret could not be published
	// deleted holds the NodePools (by UID) whose deletion was reported: one Warning Event each.
	deleted map[types.UID]bool
}

// New builds a controller; Run starts it.
func New(cfg Config) (*Controller, error) {
	if cfg.Namespace == "" || cfg.GuestNamespace == "" {
		return nil, errors.New("controller: the control plane namespace and the guest namespace are required")
	}
	if cfg.NodePoolNamespace == "" {
		cfg.NodePoolNamespace = cfg.Namespace
	}
	if cfg.ConfigMapTemplate == "" {
		cfg.ConfigMapTemplate = api.DefaultConfigMapTemplate
	}
	if !strings.Contains(cfg.ConfigMapTemplate, "{pool}") {
		return nil, fmt.Errorf("controller: ConfigMap template %q lacks {pool}", cfg.ConfigMapTemplate)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	dyn, err := dynamic.NewForConfig(cfg.Management)
	if err != nil {
		return nil, fmt.Errorf("management client: %w", err)
	}
	md, err := metadata.NewForConfig(cfg.Management)
	if err != nil {
		return nil, fmt.Errorf("management client: %w", err)
	}
	mgmtCore, err := kube.New(cfg.Management)
	if err != nil {
		return nil, fmt.Errorf("management client: %w", err)
	}
	guest, err := kube.New(cfg.Guest)
	if err != nil {
		return nil, fmt.Errorf("guest client: %w", err)
	}
	c := &Controller{cfg: cfg, dyn: dyn, guest: guest, mgmtCore: mgmtCore, log: cfg.Log, gone: map[string]*unstructured.Unstructured{},
		failed: map[string]failure{}, deleted: map[types.UID]bool{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](500*time.Millisecond, 5*time.Minute),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "nodepools"})}

	c.broadcaster = record.NewBroadcaster()
	c.recorder = c.broadcaster.NewRecorder(kube.Scheme(), corev1.EventSource{Component: ManagedBy})

	c.nodePools = c.dynamicInformer(GVRNodePool, cfg.NodePoolNamespace)
	c.workloads = c.dynamicInformer(GVRMachineDeployment, cfg.Namespace)
	c.machineSets = c.dynamicInformer(GVRMachineSet, cfg.Namespace)
	c.machines = c.dynamicInformer(GVRMachine, cfg.Namespace)
	c.capiVersion = GVRMachineDeployment.Version
	// Token Secrets are watched by metadata only: the controller reads a payload when it publishes it.
	c.secrets = cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return md.Resource(GVRSecret).Namespace(cfg.Namespace).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return md.Resource(GVRSecret).Namespace(cfg.Namespace).Watch(ctx, o)
		},
	}, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	poolNodes := func(o *metav1.ListOptions) { o.LabelSelector = api.LabelNodePool }
	c.nodes = cache.NewSharedIndexInformer(cache.NewFilteredListWatchFromClient(guest.REST(), "nodes", "", poolNodes),
		&corev1.Node{}, 0, cache.Indexers{})
	_ = c.nodes.SetTransform(slimNode)
	managed := func(o *metav1.ListOptions) {
		o.LabelSelector = labels.Set{LabelManagedBy: ManagedBy}.String()
		o.FieldSelector = fields.Everything().String()
	}
	c.configMaps = cache.NewSharedIndexInformer(cache.NewFilteredListWatchFromClient(guest.REST(), "configmaps", cfg.GuestNamespace, managed),
		&corev1.ConfigMap{}, 0, cache.Indexers{})

	// NodePools: one handler, so that a deleted NodePool is remembered (for the withdrawal Event)
	// before its key is queued.
	_, _ = c.nodePools.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { c.queue.Add(o.(*unstructured.Unstructured).GetName()) },
		UpdateFunc: func(_, o any) { c.queue.Add(o.(*unstructured.Unstructured).GetName()) },
		DeleteFunc: func(o any) {
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = t.Obj
			}
			if u, ok := o.(*unstructured.Unstructured); ok {
				c.mu.Lock()
				c.gone[u.GetName()] = u
				c.mu.Unlock()
				c.queue.Add(u.GetName())
			}
		},
	})
	c.on(c.workloads, func(o any) []string { return []string{poolOfCAPI(o.(*unstructured.Unstructured))} })
	c.on(c.machineSets, func(o any) []string { return []string{poolOfCAPI(o.(*unstructured.Unstructured))} })
	c.on(c.machines, func(o any) []string { return poolsOfMachine(o.(*unstructured.Unstructured)) })
	c.on(c.secrets, func(o any) []string { return c.poolsOfSecret(o.(metav1.Object)) })
	c.on(c.nodes, func(o any) []string { return []string{o.(*corev1.Node).Labels[api.LabelNodePool]} })
	c.on(c.configMaps, func(o any) []string { return []string{o.(*corev1.ConfigMap).Labels[api.LabelNodePool]} })
	return c, nil
}

// dynamicInformer watches a resource as unstructured objects. Cluster API's resources are read in
// the version Run found served (capiVersion).
func (c *Controller) dynamicInformer(gvr schema.GroupVersionResource, namespace string) cache.SharedIndexInformer {
	r := func() dynamic.ResourceInterface {
		if gvr.Group == capiGroup {
			gvr.Version = c.capiVersion
		}
		return c.dyn.Resource(gvr).Namespace(namespace)
	}
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return r().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return r().Watch(ctx, o)
		},
	}, &unstructured.Unstructured{}, 0, cache.Indexers{})
	_ = inf.SetTransform(func(o any) (any, error) {
		if u, ok := o.(*unstructured.Unstructured); ok {
			u.SetManagedFields(nil)
		}
		return o, nil
	})
	return inf
}

// slimNode keeps what the controller reads of a Node: its name, labels and annotations.
func slimNode(o any) (any, error) {
	n, ok := o.(*corev1.Node)
	if !ok {
		return o, nil
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, Annotations: n.Annotations,
		ResourceVersion: n.ResourceVersion, DeletionTimestamp: n.DeletionTimestamp}}, nil
}

// on enqueues the pools an informer's objects map to, for every add, update and delete.
func (c *Controller) on(inf cache.SharedIndexInformer, pools func(any) []string) {
	enqueue := func(o any) {
		if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		for _, p := range pools(o) {
			if p != "" {
				c.queue.Add(p)
			}
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(old, cur any) { enqueue(old); enqueue(cur) },
		DeleteFunc: enqueue,
	})
}

// poolsOfSecret maps a token Secret to its pool: HyperShift annotates it with the NodePool's
// "namespace/name"; without the annotation, the known pools its name ("token-<pool>-<version>") fits.
func (c *Controller) poolsOfSecret(s metav1.Object) []string {
	if v, ok := s.GetAnnotations()[AnnotationNodePool]; ok {
		if _, pool, ok := strings.Cut(v, "/"); ok {
			return []string{pool}
		}
		return []string{v}
	}
	rest, ok := strings.CutPrefix(s.GetName(), "token-")
	if !ok {
		return nil
	}
	var out []string
	for _, key := range c.nodePools.GetStore().ListKeys() {
		_, pool, _ := cache.SplitMetaNamespaceKey(key)
		if strings.HasPrefix(rest, pool+"-") {
			out = append(out, pool)
		}
	}
	return out
}

// Run starts the informers and the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	c.broadcaster.StartRecordingToSink(c.mgmtCore.EventSink())
	defer c.broadcaster.Shutdown()
	v, err := c.servedCAPIVersion(ctx)
	if err != nil {
		return err
	}
	c.capiVersion = v
	informers := []cache.SharedIndexInformer{c.nodePools, c.workloads, c.machineSets, c.machines, c.secrets, c.nodes, c.configMaps}
	synced := make([]cache.InformerSynced, 0, len(informers))
	for _, inf := range informers {
		go inf.RunWithContext(ctx)
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return ctx.Err()
	}
	c.log.Info("controller synced", "namespace", c.cfg.Namespace, "nodePoolNamespace", c.cfg.NodePoolNamespace,
		"guestNamespace", c.cfg.GuestNamespace, "clusterAPI", capiGroup+"/"+c.capiVersion)
	var wg sync.WaitGroup
	for range c.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c.next(ctx) {
			}
		}()
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	return nil
}

func (c *Controller) next(ctx context.Context) bool {
	pool, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(pool)
	if err := c.reconcile(ctx, pool); err != nil {
		if ctx.Err() == nil {
			c.log.Warn("reconcile failed, retrying", "pool", pool, "err", err)
		}
		c.queue.AddRateLimited(pool)
		return true
	}
	c.queue.Forget(pool)
	return true
}

const capiGroup = "cluster.x-k8s.io"

// servedCAPIVersion asks the management API server which Cluster API versions it serves (discovery,
// which every authenticated user may read) and picks v1beta2 when it can. The status fields of both
// are read either way (unsettled), since a v1beta1 read of v1beta2 storage carries both.
func (c *Controller) servedCAPIVersion(ctx context.Context) (string, error) {
	raw, err := c.mgmtCore.REST().Get().AbsPath("/apis/" + capiGroup).DoRaw(ctx)
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("the management cluster serves no %s API (Cluster API is not installed)", capiGroup)
	}
	if err != nil {
		return "", fmt.Errorf("discovery of %s: %w", capiGroup, err)
	}
	var g metav1.APIGroup
	if err := json.Unmarshal(raw, &g); err != nil {
		return "", fmt.Errorf("discovery of %s: %w", capiGroup, err)
	}
	for _, want := range []string{"v1beta2", "v1beta1"} {
		for _, v := range g.Versions {
			if v.Version == want {
				return want, nil
			}
		}
	}
	return "", fmt.Errorf("the management cluster serves %s in no version the controller reads (v1beta2, v1beta1)", capiGroup)
}
