// Package kube is the agent's API client: core/v1 only, over a plain REST client. client-go's typed
// clientset registers every API group's types at start-up, which costs every node several MiB of
// resident memory for types the agent never uses.
package kube

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	if err := corev1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(scheme, corev1.SchemeGroupVersion)
}

// Scheme knows core/v1 (for event recorders).
func Scheme() *runtime.Scheme { return scheme }

// Client talks to core/v1.
type Client struct {
	rest rest.Interface
}

// New returns a core/v1 client for cfg.
func New(cfg *rest.Config) (*Client, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.NegotiatedSerializer = codecs.WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return &Client{rest: rc}, nil
}

// REST is the underlying client (a cache.Getter for informers' list-watches).
func (c *Client) REST() rest.Interface { return c.rest }

// PatchNode applies a JSON merge patch to a node.
func (c *Client) PatchNode(ctx context.Context, name string, patch []byte) error {
	return c.rest.Patch(types.MergePatchType).Resource("nodes").Name(name).Body(patch).Do(ctx).Error()
}

// PatchNodeRV applies a JSON merge patch to a node and returns the node's resourceVersion after it.
func (c *Client) PatchNodeRV(ctx context.Context, name string, patch []byte) (string, error) {
	n := &metav1.PartialObjectMetadata{}
	raw, err := c.rest.Patch(types.MergePatchType).Resource("nodes").Name(name).Body(patch).Do(ctx).Raw()
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(raw, n); err != nil {
		return "", nil // applied; the version is only an optimization
	}
	return n.ResourceVersion, nil
}

// GetNode returns a node.
func (c *Client) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	n := &corev1.Node{}
	return n, c.rest.Get().Resource("nodes").Name(name).Do(ctx).Into(n)
}

// ListNodes lists the nodes matching a label selector.
func (c *Client) ListNodes(ctx context.Context, selector string) ([]corev1.Node, error) {
	l := &corev1.NodeList{}
	err := c.rest.Get().Resource("nodes").VersionedParams(&metav1.ListOptions{LabelSelector: selector}, metav1.ParameterCodec).Do(ctx).Into(l)
	return l.Items, err
}

// GetNamespace returns a namespace.
func (c *Client) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns := &corev1.Namespace{}
	return ns, c.rest.Get().Resource("namespaces").Name(name).Do(ctx).Into(ns)
}

// CreateNamespace creates a namespace.
func (c *Client) CreateNamespace(ctx context.Context, ns *corev1.Namespace) error {
	return c.rest.Post().Resource("namespaces").Body(ns).Do(ctx).Error()
}

// GetConfigMap returns a ConfigMap.
func (c *Client) GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	return cm, c.rest.Get().Namespace(namespace).Resource("configmaps").Name(name).Do(ctx).Into(cm)
}

// CreateConfigMap creates a ConfigMap.
func (c *Client) CreateConfigMap(ctx context.Context, cm *corev1.ConfigMap) error {
	return c.rest.Post().Namespace(cm.Namespace).Resource("configmaps").Body(cm).Do(ctx).Error()
}

// UpdateConfigMap replaces a ConfigMap.
func (c *Client) UpdateConfigMap(ctx context.Context, cm *corev1.ConfigMap) error {
	return c.rest.Put().Namespace(cm.Namespace).Resource("configmaps").Name(cm.Name).Body(cm).Do(ctx).Error()
}

// EventSink posts Events for client-go's event broadcaster.
func (c *Client) EventSink() record.EventSink { return eventSink{c.rest} }

type eventSink struct{ rest rest.Interface }

func (s eventSink) Create(e *corev1.Event) (*corev1.Event, error) {
	out := &corev1.Event{}
	return out, s.rest.Post().Namespace(e.Namespace).Resource("events").Body(e).Do(context.Background()).Into(out)
}

func (s eventSink) Update(e *corev1.Event) (*corev1.Event, error) {
	out := &corev1.Event{}
	return out, s.rest.Put().Namespace(e.Namespace).Resource("events").Name(e.Name).Body(e).Do(context.Background()).Into(out)
}

func (s eventSink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	if e == nil {
		return nil, fmt.Errorf("patching a nil event")
	}
	out := &corev1.Event{}
	return out, s.rest.Patch(types.StrategicMergePatchType).Namespace(e.Namespace).Resource("events").Name(e.Name).
		Body(data).Do(context.Background()).Into(out)
}
