// Package publish writes a desired payload into the ConfigMap the agents watch, in exactly the form
// they read: `config` gzip then base64, `hash`, and `no-reboot-paths` JSON.
package publish

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/apply"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/kube"
)

// MaxConfigMapSize is the API server's limit on a ConfigMap's data (1 MiB), less room for metadata.
const MaxConfigMapSize = 1<<20 - 16<<10

// Data builds the ConfigMap's data. hash defaults to the payload's sha256; rules, when given, must
// parse as no-reboot-paths.
func Data(payload, rules []byte, hash string) (map[string]string, error) {
	if len(rules) > 0 {
		if _, err := allowlist.ParseRules(rules); err != nil {
			return nil, fmt.Errorf("no-reboot-paths: %w", err)
		}
	}
	if hash == "" {
		hash = apply.PayloadHash(payload)
	}
	config, err := configValue(payload)
	if err != nil {
		return nil, err
	}
	data := map[string]string{"config": config, "hash": hash}
	if len(rules) > 0 {
		data["no-reboot-paths"] = string(rules)
	}
	size := 0
	for k, v := range data {
		size += len(k) + len(v)
	}
	if size > MaxConfigMapSize {
		return nil, fmt.Errorf("payload too large for a ConfigMap: %d bytes after gzip+base64, the limit is %d", size, MaxConfigMapSize)
	}
	return data, nil
}

// configValue is the ConfigMap's config for payload: the payload itself when it is already in that
// form (base64 of gzip, as `payload get` prints it and HyperShift stores it), else its bytes
// gzipped and base64-encoded.
func configValue(payload []byte) (string, error) {
	if _, form, err := diff.DecodeForm(payload); err == nil && strings.HasPrefix(string(form), "base64+gzip+") {
		return string(bytes.TrimSpace(payload)), nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(payload); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// Publish creates or updates the ConfigMap, creating its namespace (labelled for Pod Security
// `privileged`, as the agent's DaemonSet needs) when missing. It returns the hash published.
func Publish(ctx context.Context, client *kube.Client, namespace, name string, payload, rules []byte, hash string) (string, error) {
	data, err := Data(payload, rules, hash)
	if err != nil {
		return "", err
	}
	if err := ensureNamespace(ctx, client, namespace); err != nil {
		return "", err
	}
	cm, err := client.GetConfigMap(ctx, namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		err = client.CreateConfigMap(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Data: data})
	case err == nil:
		cm.Data, cm.BinaryData = data, nil
		err = client.UpdateConfigMap(ctx, cm)
	}
	if err != nil {
		return "", fmt.Errorf("ConfigMap %s/%s: %w", namespace, name, err)
	}
	return data["hash"], nil
}

// PodSecurityLabels make a namespace admit the privileged agent pods.
var PodSecurityLabels = map[string]string{
	"pod-security.kubernetes.io/enforce": "privileged",
	"pod-security.kubernetes.io/audit":   "privileged",
	"pod-security.kubernetes.io/warn":    "privileged",
}

func ensureNamespace(ctx context.Context, client *kube.Client, namespace string) error {
	_, err := client.GetNamespace(ctx, namespace)
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("namespace %s: %w", namespace, err)
	}
	err = client.CreateNamespace(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: PodSecurityLabels}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", namespace, err)
	}
	return nil
}
