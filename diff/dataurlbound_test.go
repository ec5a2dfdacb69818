package diff

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ignFile is an Ignition config of one file, /etc/x, whose contents have source src (JSON-quoted),
// and more (a JSON fragment) in the config's top level.
func ignFile(src, more string) string {
	q, _ := json.Marshal(src)
	return `{"ignition":{"version":"3.2.0"` + more + `},"storage":{"files":[{"path":"/etc/x","contents":{"source":` + string(q) + `}}]}}`
}

func quoted(s string) string { q, _ := json.Marshal(s); return string(q) }

// Round 12, core/04: a data URL whose media type carries 5.5 million ";a=b" parameters (22 MB, a
// 29 KB ConfigMap value) was eligible, and every plan of it cost 8 to 16 s of CPU in the data URL
// parser. A header over the bounds is refused, naming its field, before anything parses it; so is
// a config whose headers together are over theirs.
func TestDataURLHeadersAreBounded(t *testing.T) {
	params := "data:text/plain" + strings.Repeat(";a=b", 5_500_000) + ",CA2"
	long := "data:text/" + strings.Repeat("p", 1<<20) + ",x"
	quotedParams := `data:text/plain;a="` + strings.Repeat(`;,`, 1<<20) + `",x`
	noComma := "data:text/plain" + strings.Repeat(";a=b", 1<<20)
	within := "data:text/" + strings.Repeat("p", maxDataURLHeader-len("text/")-len(";base64")) + ";base64,"
	var many strings.Builder
	for i := range maxDataURLHeaders/maxDataURLHeader + 1 {
		fmt.Fprintf(&many, `{"path":"/etc/f%d","contents":{"source":%s}},`, i, quoted(within))
	}
	manyFiles := `{"ignition":{"version":"3.2.0"},"storage":{"files":[` + strings.TrimSuffix(many.String(), ",") + `]}}`
	type tcase struct {
		raw, want string
		size      int // of the JSON, when raw encodes it
	}
	const over, longer = "data URL media type with more than 16 parameters", "data URL media type longer than 512 bytes"
	cases := map[string]tcase{
		"parameters": {raw: ignFile(params, ""), want: "storage.files[/etc/x].contents.source: " + over},
		"parameters, as the ConfigMap carries it": {raw: gzipBase64(ignFile(params, "")),
			want: "storage.files[/etc/x].contents.source: " + over, size: len(ignFile(params, ""))},
		"long media type":   {raw: ignFile(long, ""), want: "storage.files[/etc/x].contents.source: " + longer},
		"quoted semicolons": {raw: ignFile(quotedParams, ""), want: "storage.files[/etc/x].contents.source: " + longer},
		"no comma":          {raw: ignFile(noComma, ""), want: "storage.files[/etc/x].contents.source: " + over},
		"append": {raw: `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/x","append":[{"source":"data:,a"},{"source":` + quoted(params) + `}]}]}}`,
			want: "storage.files[/etc/x].append.1.source: " + over},
		"merged config": {raw: `{"ignition":{"version":"3.2.0","config":{"merge":[{"source":` + quoted(params) + `}]}}}`,
			want: "ignition.config.merge.0.source: " + over},
		"certificate authority": {raw: `{"ignition":{"version":"3.2.0","security":{"tls":{"certificateAuthorities":[{"source":` + quoted(long) + `}]}}}}`,
			want: "ignition.security.tls.certificateAuthorities.0.source: " + longer},
		"luks key file": {raw: `{"ignition":{"version":"3.2.0"},"storage":{"luks":[{"name":"a","device":"/dev/sda","keyFile":{"source":` + quoted(params) + `}}]}}`,
			want: "storage.luks.0.keyFile.source: " + over},
		"machineconfig": {raw: `{"kind":"MachineConfig","spec":{"config":` + ignFile(params, "") + `}}`,
			want: "spec.config: storage.files[/etc/x].contents.source: " + over},
		"headers together": {raw: manyFiles, want: "data URL media types of the config together longer than 262144 bytes"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			raw := []byte(tc.raw)
			var err error
			cost := allocated(func() { _, err = Decode(raw) })
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Less(t, len(err.Error()), 1024, "short")
			// Linear in the payload (its strings are copied a few times by the decoders and the
			// probe's buffer), never in the parser's work on the header.
			size := max(tc.size, len(raw))
			assert.Less(t, cost, uint64(6*size+8<<20), "%d MiB allocated for a %d MiB payload", cost>>20, size>>20)
			t.Logf("%d KiB payload: %d MiB allocated: %s", len(raw)>>10, cost>>20, err)
		})
	}
	// An embedded MachineConfig's config is decoded by CheckEmbedded, with the same bounds.
	p, err := Decode([]byte(ignWithMCS(`{"kind":"MachineConfig","spec":{"config":` + ignFile(params[:4000]+",x", "") + `}}`)))
	require.NoError(t, err)
	assert.Contains(t, CheckEmbedded(p), "storage.files[/etc/x].contents.source: data URL media type with more than 16 parameters")
	// Real headers, and the longest within the bounds, are accepted.
	for _, src := range []string{"data:,x", "data:;base64,eA==", "data:text/plain;charset=utf-8;base64,eA==",
		"data:text/plain" + strings.Repeat(";a=b", maxDataURLParams-1) + ";base64,eA==", within + "eA=="} {
		_, err := Decode([]byte(ignFile(src, "")))
		require.NoError(t, err, "%.80s", src)
	}
}

func gzipBase64(s string) string {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write([]byte(s))
	zw.Close()
	return base64.StdEncoding.EncodeToString(b.Bytes())
}
