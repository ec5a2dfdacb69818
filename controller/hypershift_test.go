package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(name string, ann map[string]string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetName(name)
	u.SetAnnotations(ann)
	return u
}

func TestConfigVersionOf(t *testing.T) {
	md := obj("workers", nil, map[string]any{"template": map[string]any{"spec": map[string]any{
		"bootstrap": map[string]any{"dataSecretName": "user-data-workers-1a2b3c4d"}}}})
	assert.Equal(t, "1a2b3c4d", configVersionOf(md, "workers"), "from the bootstrap secret's name")
	assert.Equal(t, "", configVersionOf(md, "work"), "another pool's prefix does not match")
	md.SetAnnotations(map[string]string{AnnotationTargetConfigVersion: "9f9f"})
	assert.Equal(t, "1a2b3c4d", configVersionOf(md, "workers"), "the bootstrap Secret wins: it is what new Machines boot from")
	assert.Equal(t, "9f9f", configVersionOf(obj("workers", map[string]string{AnnotationTargetConfigVersion: "9f9f"}, nil), "workers"),
		"an InPlace MachineSet's target version when there is no bootstrap Secret")
	odd := obj("workers", nil, map[string]any{"template": map[string]any{"spec": map[string]any{
		"bootstrap": map[string]any{"dataSecretName": "user-data-workers-x-1a2b"}}}})
	assert.Equal(t, "", configVersionOf(odd, "workers"), "another pool's (workers-x) Secret")
	assert.Equal(t, "", configVersionOf(obj("workers", nil, nil), "workers"))
}

// TestUnsettled reads MachineDeployment status as Cluster API writes it in v1beta1 (updatedReplicas,
// and since CAPI 1.11 status.v1beta2) and in v1beta2 (upToDateReplicas).
func TestUnsettled(t *testing.T) {
	md := func(gen int64, spec int64, status map[string]any) *unstructured.Unstructured {
		u := obj("workers", nil, map[string]any{"replicas": spec})
		u.SetGeneration(gen)
		if status != nil {
			u.Object["status"] = status
		}
		return u
	}
	settled := []map[string]any{
		{"observedGeneration": int64(2), "replicas": int64(3), "updatedReplicas": int64(3)},
		{"observedGeneration": int64(2), "replicas": int64(3), "updatedReplicas": int64(3), "v1beta2": map[string]any{"upToDateReplicas": int64(3)}},
		{"observedGeneration": int64(2), "replicas": int64(3), "upToDateReplicas": int64(3), "availableReplicas": int64(3)},
		{"observedGeneration": float64(3), "replicas": float64(3), "upToDateReplicas": float64(3)},
	}
	for _, s := range settled {
		assert.Equal(t, "", unsettled(md(2, 3, s), "MachineDeployment ns/workers"), "%v", s)
	}
	moving := map[string]map[string]any{
		"generation not observed":       {"observedGeneration": int64(1), "replicas": int64(3), "upToDateReplicas": int64(3)},
		"replicas updated (v1beta1)":    {"observedGeneration": int64(2), "replicas": int64(3), "updatedReplicas": int64(1)},
		"replicas up to date (v1beta2)": {"observedGeneration": int64(2), "replicas": int64(3), "upToDateReplicas": int64(2)},
		"v1beta2 under v1beta1":         {"observedGeneration": int64(2), "replicas": int64(3), "updatedReplicas": int64(3), "v1beta2": map[string]any{"upToDateReplicas": int64(2)}},
		"surge":                         {"observedGeneration": int64(2), "replicas": int64(4), "upToDateReplicas": int64(3)},
		"no count":                      {"observedGeneration": int64(2), "replicas": int64(3)},
	}
	for name, s := range moving {
		assert.NotEqual(t, "", unsettled(md(2, 3, s), "MachineDeployment ns/workers"), name)
	}
	assert.Contains(t, unsettled(md(2, 3, moving["replicas up to date (v1beta2)"]), "MachineDeployment ns/workers"), "2/3 replicas up to date")
	assert.Contains(t, unsettled(md(2, 3, nil), "MachineDeployment ns/workers"), "no status yet")
	assert.Equal(t, "", unsettled(md(2, 0, map[string]any{"observedGeneration": int64(2)}), "x"), "scaled to zero")
	ms := md(2, 3, map[string]any{"observedGeneration": int64(2), "replicas": int64(3), "fullyLabeledReplicas": int64(3), "readyReplicas": int64(3)})
	ms.SetKind("MachineSet")
	assert.Equal(t, "", unsettled(ms, "MachineSet ns/workers"), "a v1beta1 MachineSet has no up-to-date count")
	ms.Object["status"].(map[string]any)["replicas"] = int64(2)
	assert.Contains(t, unsettled(ms, "MachineSet ns/workers"), "2/3 replicas")
}

func TestPoolOwnership(t *testing.T) {
	annotated := obj("generated-name-x1", map[string]string{AnnotationNodePool: "clusters/workers"}, nil)
	assert.True(t, ownsPool(annotated, "clusters", "workers"))
	assert.False(t, ownsPool(annotated, "other", "workers"), "same name, other namespace")
	assert.False(t, ownsPool(annotated, "clusters", "generated-name-x1"), "the annotation decides, not the name")
	assert.Equal(t, "workers", poolOfCAPI(annotated))
	plain := obj("workers", nil, nil)
	assert.True(t, ownsPool(plain, "clusters", "workers"))
	assert.Equal(t, "workers", poolOfCAPI(plain))

	m := obj("workers-abc", nil, nil)
	m.SetLabels(map[string]string{labelDeploymentName: "workers"})
	m.SetOwnerReferences([]metav1.OwnerReference{{Kind: "MachineSet", Name: "workers-5f7d"}})
	assert.ElementsMatch(t, []string{"workers", "workers-5f7d"}, poolsOfMachine(m))
	assert.True(t, machineBelongs(m, "MachineDeployment", "workers"))
	assert.False(t, machineBelongs(m, "MachineSet", "workers"))
	assert.True(t, machineBelongs(m, "MachineSet", "workers-5f7d"))
}

func TestValidVersion(t *testing.T) {
	for _, v := range []string{"5d1c2a9e", "0", "abcdef0123456789"} {
		assert.True(t, validVersion(v), v)
	}
	for _, v := range []string{"", "../x", "A1", "a-b", "a b", "ä", string(make([]byte, 64))} {
		assert.False(t, validVersion(v), "%q", v)
	}
}

func TestTokenSecretName(t *testing.T) {
	assert.Equal(t, "token-workers-1a2b", TokenSecretName("workers", "1a2b"))
}
