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
	assert.Equal(t, "9f9f", configVersionOf(md, "workers"), "the annotation wins")
	assert.Equal(t, "", configVersionOf(obj("workers", nil, nil), "workers"))
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

func TestTokenSecretName(t *testing.T) {
	assert.Equal(t, "token-workers-1a2b", TokenSecretName("workers", "1a2b"))
}
