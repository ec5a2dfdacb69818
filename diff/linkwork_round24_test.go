package diff_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/diff"
)

// Round 24 (c/01, c/02, c/03): Ignition's quadratic storage checks are bounded by what they cost,
// not only by how many pairs they compare: the bytes compared (long link paths), the report
// entries made (paths nested below links), a disk's partitions (the overlap check). Each is
// invalid before Ignition's validation runs, naming the field.
func TestIgnitionsQuadraticStorageChecksAreBoundedByCost(t *testing.T) {
	storage := func(s map[string]any) []byte {
		b, err := json.Marshal(map[string]any{"ignition": map[string]any{"version": "3.2.0"}, "storage": s})
		require.NoError(t, err)
		return b
	}
	link := func(p string) map[string]any { return map[string]any{"path": p, "target": "/x"} }
	file := func(p string) map[string]any { return map[string]any{"path": p} }

	long := "/" + strings.Repeat("a", 12000)
	var links, files []map[string]any
	for i := range 500 {
		links = append(links, link(fmt.Sprintf("%s%d", long, i)))
	}
	for i := range 7400 {
		files = append(files, file(fmt.Sprintf("/f/%d", i)))
	}
	_, err := diff.Decode(storage(map[string]any{"links": links, "files": files}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bytes of link paths")

	links, files = nil, nil
	p := ""
	for i := range 60 {
		p += fmt.Sprintf("/l%d", i)
		links = append(links, link(p))
	}
	for i := range 2000 {
		files = append(files, file(fmt.Sprintf("%s/f%d", p, i)))
	}
	_, err = diff.Decode(storage(map[string]any{"links": links, "files": files}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "lie through a link")

	var parts []map[string]any
	for i := range 2000 {
		parts = append(parts, map[string]any{"number": i + 1, "startMiB": i * 2, "sizeMiB": 1})
	}
	_, err = diff.Decode(storage(map[string]any{"disks": []map[string]any{{"device": "/dev/sdb", "partitions": parts}}}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "storage.disks.0.partitions")

	// A machine-config server's shape: a few links, some files through none.
	ok := storage(map[string]any{"links": []map[string]any{link("/etc/localtime")}, "files": []map[string]any{file("/etc/a"), file("/etc/b")}})
	_, err = diff.Decode(ok)
	require.NoError(t, err)
}
