package controller

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/publish"
)

// PayloadError is a token Secret whose payload cannot be published; Reason is the condition reason.
type PayloadError struct {
	Reason string
	Err    error
}

func (e *PayloadError) Error() string { return e.Err.Error() }
func (e *PayloadError) Unwrap() error { return e.Err }

func payloadError(reason, format string, args ...any) error {
	return &PayloadError{Reason: reason, Err: fmt.Errorf(format, args...)}
}

// ConfigMapData turns a token Secret's payload into the per-pool ConfigMap's data under hash.
// HyperShift stores an InPlace pool's payload as base64 of gzip of the Ignition JSON, which is what
// the agents read: it is published verbatim, as HyperShift's in-place upgrader does. A payload in
// another form the agents decode (raw or gzip-only Ignition or MachineConfig) is gzipped and
// base64-encoded first. The payload is decoded and validated either way, so that nothing the agents
// cannot decode is ever published. name is the Secret's, for messages.
func ConfigMapData(name string, payload []byte, hash string) (map[string]string, error) {
	if len(bytes.TrimSpace(payload)) == 0 {
		return nil, payloadError(ReasonPayloadMissing, "token Secret %s: key %q is empty", name, TokenSecretPayloadKey)
	}
	_, form, err := diff.DecodeForm(payload)
	if err != nil {
		return nil, payloadError(ReasonPayloadInvalid, "token Secret %s: key %q does not decode: %v", name, TokenSecretPayloadKey, err)
	}
	var data map[string]string
	switch {
	case strings.HasPrefix(string(form), "base64+"):
		data = map[string]string{api.KeyConfig: string(bytes.TrimSpace(payload)), api.KeyHash: hash}
	case strings.HasPrefix(string(form), "gzip+"):
		data = map[string]string{api.KeyConfig: base64.StdEncoding.EncodeToString(bytes.TrimSpace(payload)), api.KeyHash: hash}
	default:
		if data, err = publish.Data(payload, nil, hash); err != nil {
			return nil, payloadError(ReasonPayloadTooLarge, "token Secret %s: %v", name, err)
		}
	}
	if size := len(data[api.KeyConfig]) + len(hash) + len(api.KeyConfig) + len(api.KeyHash); size > publish.MaxConfigMapSize {
		return nil, payloadError(ReasonPayloadTooLarge, "token Secret %s: payload too large for a ConfigMap: %d bytes encoded, the limit is %d",
			name, size, publish.MaxConfigMapSize)
	}
	return data, nil
}

// reasonOf returns the condition reason for a publish error.
func reasonOf(err error) string {
	var pe *PayloadError
	if errors.As(err, &pe) {
		return pe.Reason
	}
	return ReasonPublishFailed
}
