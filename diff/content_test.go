package diff_test

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vincent-petithory/dataurl"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

func sha256Of(b []byte) string { s := sha256.Sum256(b); return "sha256-" + hex.EncodeToString(s[:]) }
func sha512Of(b []byte) string { s := sha512.Sum512(b); return "sha512-" + hex.EncodeToString(s[:]) }

// hashed is a config with one file whose contents carry hash h (gzip-compressed when gz).
func hashed(contents []byte, gz bool, h string) *fixture.Config {
	c := fixture.Ignition("3.2.0")
	if gz {
		c.GzipFile("/etc/containers/policy.json", contents, 0o644)
	} else {
		c.File("/etc/containers/policy.json", contents, 0o644)
	}
	c.Storage.Files[0].Contents.Verification.Hash = &h
	return c
}

func TestVerificationHash(t *testing.T) {
	data := []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`)
	for name, tc := range map[string]struct {
		c    *fixture.Config
		ok   bool
		want []byte
	}{
		"sha256 matches":                  {hashed(data, false, sha256Of(data)), true, data},
		"sha512 matches":                  {hashed(data, false, sha512Of(data)), true, data},
		"upper-case hex matches":          {hashed(data, false, "sha256-"+upperHex(sha256Of(data)[7:])), true, data},
		"gzip: hash of the decompressed":  {hashed(data, true, sha256Of(data)), true, data},
		"sha256 mismatch":                 {hashed(data, false, sha256Of([]byte("other"))), false, nil},
		"sha512 mismatch":                 {hashed(data, false, sha512Of([]byte("other"))), false, nil},
		"gzip: hash of the compressed":    {hashed(data, true, sha256Of(fixture.Gzip(data))), false, nil},
		"gzip: mismatch":                  {hashed(data, true, sha512Of([]byte("other"))), false, nil},
		"empty contents, hash of nothing": {hashed(nil, false, sha256Of(nil)), true, nil},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := diff.Decode(tc.c.JSON())
			if !tc.ok {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "/etc/containers/policy.json")
				assert.ErrorIs(t, err, diff.ErrHashMismatch)
				// FileContents, which every write goes through, refuses the same contents.
				_, err = diff.FileContents(tc.c.Storage.Files[0])
				assert.ErrorIs(t, err, diff.ErrHashMismatch)
				return
			}
			require.NoError(t, err)
			got, err := diff.FileContents(p.Config.Storage.Files[0])
			require.NoError(t, err)
			assert.Equal(t, string(tc.want), string(got))
		})
	}
}

func upperHex(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// Append entries are refused by the planner; their inline hashes are still checked.
func TestAppendHashIsChecked(t *testing.T) {
	c := fixture.Ignition("3.2.0").File("/etc/containers/policy.json", []byte("a"), 0o644)
	src, bad := dataurl.EncodeBytes([]byte("tail")), sha256Of([]byte("other"))
	c.Storage.Files[0].Append = []types.Resource{{Source: &src, Verification: types.Verification{Hash: &bad}}}
	_, err := diff.Decode(c.JSON())
	require.Error(t, err)
	assert.True(t, errors.Is(err, diff.ErrHashMismatch))
	assert.Contains(t, err.Error(), "storage.files.0 (/etc/containers/policy.json): append.0")
	good := sha256Of([]byte("tail"))
	c.Storage.Files[0].Append[0].Verification.Hash = &good
	_, err = diff.Decode(c.JSON())
	require.NoError(t, err)
}
