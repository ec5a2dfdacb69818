package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/test/fixture"
)

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(f, data, 0o600))
	return f
}

// An ambiguous payload (a key twice, or twice but for case) or contents that fail their hash are
// invalid: exit 2, one line naming the key or path, and apply writes nothing.
func TestAmbiguousOrCorruptPayloadExit2(t *testing.T) {
	sum := sha256.Sum256([]byte("other"))
	badHash := fixture.Ignition("3.2.0").File("/etc/containers/registries.conf", []byte("mirrors"), 0o644)
	h := "sha256-" + hex.EncodeToString(sum[:])
	badHash.Storage.Files[0].Contents.Verification = types.Verification{Hash: &h}
	cases := map[string]struct {
		payload []byte
		want    []string
	}{
		"ignition twice":    {[]byte(`{"ignition":{"version":"3.5.0"},"ignition":{"version":"3.0.0"}}`), []string{`duplicate key "ignition" at /ignition`}},
		"Ignition and case": {[]byte(`{"ignition":{"version":"3.0.0"},"Ignition":{"version":"3.5.0"},"kernelArguments":{"shouldExist":["a"]}}`), []string{`"Ignition"`, "but for case"}},
		"path twice": {fixture.GzipBase64([]byte(`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/containers/registries.conf","path":"/etc/ssh/sshd_config"}]}}`)),
			[]string{`duplicate key "path" at /storage/files/0/path`}},
		"hash mismatch": {fixture.GzipBase64(badHash.JSON()), []string{"/etc/containers/registries.conf", "verification.hash"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			des := writeFile(t, "desired", tc.payload)
			code, out, stderr := run(t, "diff", "--current", examples+"current.ign", "--desired", des)
			assert.Equal(t, exitInvalid, code)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			for _, w := range append(tc.want, "desired") {
				assert.Contains(t, stderr, w)
			}

			root := nodeRoot(t)
			before := snapshot(t, root)
			code, _, stderr = run(t, "apply", "--root", root, "--current", examples+"current.ign", "--desired", des, "--systemd", "none")
			assert.Equal(t, exitInvalid, code, stderr)
			assert.Equal(t, before, snapshot(t, root), "nothing written")
		})
	}
}

// snapshot lists every file under root with its contents' hash.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		s := sha256.Sum256(b)
		out[p] = hex.EncodeToString(s[:])
		return err
	}))
	return out
}

// gzipZeros compresses n zero bytes without holding them.
func gzipZeros(t *testing.T, n int64) []byte {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	_, err = io.CopyN(zw, zeroReader{}, n)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// gzipFilePayload is the ConfigMap form (gzip+base64) of a config whose one file is gz, compressed.
func gzipFilePayload(gz []byte) []byte {
	src, comp := "data:;base64,"+base64.StdEncoding.EncodeToString(gz), "gzip"
	c := fixture.Ignition("3.2.0")
	c.AddFile(types.File{Node: types.Node{Path: "/etc/containers/registries.conf"},
		FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: &src, Compression: &comp}}})
	return fixture.GzipBase64(c.JSON())
}

// TestPeakRSSIsBoundedByTheBudget runs the binary on bombs in ConfigMap-encoded payloads (a file of
// 512 MiB of zeros, a payload layer of 512 MiB, millions of empty entries) and on the largest payload
// the budget allows, and bounds the peak resident set size of each run in proportion to
// --max-payload-bytes.
func TestPeakRSSIsBoundedByTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and compresses gigabytes of zeros")
	}
	bin := filepath.Join(t.TempDir(), "refresh-agent")
	b, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", b)

	const limit = 64 << 20 // the default
	require.EqualValues(t, limit, diff.MaxPayloadSize)
	bomb := gzipZeros(t, 512<<20)
	cases := map[string]struct {
		payload []byte
		exit    int
	}{
		"file bomb":  {gzipFilePayload(bomb), exitInvalid},
		"layer bomb": {[]byte(base64.StdEncoding.EncodeToString(bomb)), exitInvalid},
		// 20 million empty file entries: 60 MB of JSON, 80 KB as a ConfigMap value, gigabytes as Go
		// values: refused before they are decoded.
		"entry bomb": {fixture.GzipBase64([]byte(`{"ignition":{"version":"3.2.0"},"storage":{"files":[{}` +
			strings.Repeat(",{}", 20_000_000-1) + `]}}`)), exitInvalid},
		// One file of nearly the whole budget, decompressed and compared against the current one.
		"largest allowed": {gzipFilePayload(gzipZeros(t, limit-(1<<20))), exitOK},
	}
	// A bound, not a measurement to match: the budget's worth of file data may be alive twice (the
	// planner decodes a compressed file to check it, and again for its write) plus the runtime's own
	// baseline. Measured when written: 82 MiB for the largest payload, 21 MiB for the gzip bombs, 76 MiB
	// for the entry bomb (its 60 MB of JSON is decompressed before its structure is charged).
	const bound = 2*limit + 64<<20
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			require.Less(t, len(tc.payload), 4<<20, "a small ConfigMap value")
			des := writeFile(t, "desired", tc.payload)
			code, stderr, peak := peakRSS(t, bin, "diff", "--current", examples+"current.ign", "--desired", des)
			if tc.exit == exitInvalid {
				assert.Equal(t, exitInvalid, code, stderr)
				assert.Contains(t, stderr, "exceeds")
			} else {
				assert.NotEqual(t, exitInvalid, code, stderr)
			}
			t.Logf("%s: %d byte payload, peak RSS %d MiB", name, len(tc.payload), peak>>20)
			assert.Less(t, peak, int64(bound), fmt.Sprintf("peak RSS %d MiB over %d MiB", peak>>20, bound>>20))
		})
	}
}

// peakRSS runs the command from a fresh helper process (this test binary, running TestRSSHelper) and
// returns its exit code, stderr and peak RSS. Not directly: a child's rusage Maxrss starts at its
// parent's peak (Linux records the forking process's high-water mark at exec), and this test process
// has held the payloads it built.
func peakRSS(t *testing.T, args ...string) (int, string, int64) {
	t.Helper()
	helper := exec.Command(os.Args[0], "-test.run=^TestRSSHelper$")
	helper.Env = append(os.Environ(), "RSS_HELPER_ARGS="+strings.Join(args, "\x1f"))
	out, err := helper.Output()
	require.NoError(t, err, "%s", out)
	i := bytes.Index(out, []byte("RSS_HELPER "))
	require.GreaterOrEqual(t, i, 0, "%s", out)
	var code int
	var peak int64
	_, err = fmt.Sscanf(string(out[i:]), "RSS_HELPER %d %d", &code, &peak)
	require.NoError(t, err)
	stderr, _, _ := strings.Cut(strings.SplitN(string(out[i:]), "\n", 2)[1], "\n")
	return code, stderr, peak
}

// TestRSSHelper is peakRSS's helper process; it does nothing in a normal run.
func TestRSSHelper(t *testing.T) {
	spec := os.Getenv("RSS_HELPER_ARGS")
	if spec == "" {
		t.Skip("helper process for TestPeakRSSIsBoundedByTheBudget")
	}
	args := strings.Split(spec, "\x1f")
	cmd := exec.Command(args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	maxrss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	fmt.Printf("RSS_HELPER %d %d\n%s", code, maxrss, strings.ReplaceAll(stderr.String(), "\n", " "))
	fmt.Println()
}
