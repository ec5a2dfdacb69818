package controller

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/publish"
	"github.com/openshift/refresh-agent/test/fixture"
)

func payload() []byte {
	return fixture.Ignition("3.2.0").File("/etc/containers/registries.conf", []byte("mirrors"), 0o644).JSON()
}

func TestConfigMapDataPublishesHyperShiftsEncodingVerbatim(t *testing.T) {
	enc := fixture.GzipBase64(payload())
	data, err := ConfigMapData("ns/token-p-v1", append(enc, '\n'), "v1")
	require.NoError(t, err)
	assert.Equal(t, string(enc), data[api.KeyConfig])
	assert.Equal(t, "v1", data[api.KeyHash])
}

func TestConfigMapDataEncodesOtherForms(t *testing.T) {
	for name, raw := range map[string][]byte{"raw": payload(), "gzip": fixture.Gzip(payload())} {
		t.Run(name, func(t *testing.T) {
			data, err := ConfigMapData("ns/token-p-v1", raw, "v1")
			require.NoError(t, err)
			_, form, err := diff.DecodeForm([]byte(data[api.KeyConfig]))
			require.NoError(t, err)
			assert.Equal(t, diff.Form("base64+gzip+ignition"), form)
		})
	}
}

func TestConfigMapDataRefusesBadPayloads(t *testing.T) {
	big := make([]byte, publish.MaxConfigMapSize)
	_, _ = rand.Read(big)
	huge := fixture.Ignition("3.2.0").File("/etc/containers/registries.conf", big, 0o644).JSON()
	cases := map[string]struct {
		raw    []byte
		reason string
	}{
		"empty":              {[]byte("  \n"), ReasonPayloadMissing},
		"not a payload":      {[]byte("this is not ignition"), ReasonPayloadInvalid},
		"corrupt gzip":       {[]byte(base64.StdEncoding.EncodeToString([]byte{0x1f, 0x8b, 1, 2, 3})), ReasonPayloadInvalid},
		"not ignition json":  {[]byte(`{"kind":"Pod"}`), ReasonPayloadInvalid},
		"too large":          {huge, ReasonPayloadTooLarge},
		"too large, encoded": {fixture.GzipBase64(huge), ReasonPayloadTooLarge},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			data, err := ConfigMapData("ns/token-p-v1", c.raw, "v1")
			require.Error(t, err)
			assert.Nil(t, data)
			var pe *PayloadError
			require.True(t, errors.As(err, &pe))
			assert.Equal(t, c.reason, pe.Reason, err.Error())
			assert.Contains(t, err.Error(), "ns/token-p-v1")
			assert.Less(t, len(err.Error()), 2048, "bounded, no payload in the message")
		})
	}
}

// FuzzConfigMapData: whatever a token Secret holds, the controller never panics, and what it would
// publish is something the agents decode.
func FuzzConfigMapData(f *testing.F) {
	f.Add(payload())
	f.Add(fixture.GzipBase64(payload()))
	f.Add(fixture.Gzip(payload()))
	f.Add([]byte("H4sI"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		data, err := ConfigMapData("ns/s", raw, "h")
		if err != nil {
			return
		}
		if _, err := diff.Decode([]byte(data[api.KeyConfig])); err != nil {
			t.Fatalf("published data does not decode: %v", err)
		}
		if !bytes.Equal([]byte(data[api.KeyHash]), []byte("h")) {
			t.Fatal("hash")
		}
	})
}
