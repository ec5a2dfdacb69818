package kube

import (
	"context"
	"fmt"
	"sync"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Leases is a coordination.k8s.io/v1 client for Leases (the pacing slots): get, list-watch, create
// and update. Its own REST client on its own scheme, so that core/v1 users pay nothing for it.
type Leases struct {
	rest rest.Interface
}

// leaseScheme is built on first use: an unpaced agent never pays for it.
var leaseScheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := coordv1.AddToScheme(s); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(s, coordv1.SchemeGroupVersion)
	return s
})

// NewLeases returns a Leases client for cfg.
func NewLeases(cfg *rest.Config) (*Leases, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &coordv1.SchemeGroupVersion
	c.APIPath = "/apis"
	c.NegotiatedSerializer = serializer.NewCodecFactory(leaseScheme()).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return &Leases{rest: rc}, nil
}

// REST is the underlying client (a cache.Getter for list-watches of "leases").
func (l *Leases) REST() rest.Interface { return l.rest }

// Get returns a Lease.
func (l *Leases) Get(ctx context.Context, namespace, name string) (*coordv1.Lease, error) {
	out := &coordv1.Lease{}
	return out, l.rest.Get().Namespace(namespace).Resource("leases").Name(name).Do(ctx).Into(out)
}

// Create creates a Lease and returns it as stored.
func (l *Leases) Create(ctx context.Context, lease *coordv1.Lease) (*coordv1.Lease, error) {
	out := &coordv1.Lease{}
	return out, l.rest.Post().Namespace(lease.Namespace).Resource("leases").Body(lease).Do(ctx).Into(out)
}

// Update replaces a Lease; its resourceVersion makes it fail with a conflict when the Lease changed
// since it was read.
func (l *Leases) Update(ctx context.Context, lease *coordv1.Lease) (*coordv1.Lease, error) {
	if lease.ResourceVersion == "" {
		return nil, fmt.Errorf("updating lease %s/%s: no resourceVersion", lease.Namespace, lease.Name)
	}
	out := &coordv1.Lease{}
	return out, l.rest.Put().Namespace(lease.Namespace).Resource("leases").Name(lease.Name).Body(lease).Do(ctx).Into(out)
}

// WatchLeases keeps the namespace's Leases that selector selects (a label selector; with name set,
// only the Lease of that name) in a Watch with ReconnectBackoff until ctx ends: changed gets each
// Lease that appears or changes (old nil when new) and each that goes (cur nil, old its last
// state). It returns once the first list is in, or ctx ended.
func (l *Leases) WatchLeases(ctx context.Context, namespace, selector, name string, changed func(old, cur *coordv1.Lease)) {
	lw := cache.NewFilteredListWatchFromClient(l.rest, "leases", namespace, func(o *metav1.ListOptions) {
		o.LabelSelector = selector
		if name != "" {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}
	})
	w := Watch(ctx, "leases/"+selector+"/"+name, lw, &coordv1.Lease{}, func(old, cur any) {
		o, _ := old.(*coordv1.Lease)
		c, _ := cur.(*coordv1.Lease)
		changed(o, c)
	}, nil)
	w.WaitSynced(ctx)
}
