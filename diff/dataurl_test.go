package diff

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vincent-petithory/dataurl"
)

var dataURLSeeds = []string{
	"data:,",
	"data:,hello%20world%0A",
	"data:,%7B%22a%22%3A1%7D",
	"data:,%",
	"data:,%4",
	"data:,%4g",
	"data:,%41%",
	"data:,a b",
	"data:,a#b",
	"data:,caf\xc3\xa9",
	"data:,\xff",
	"data:,\x7f",
	"data:;base64,aGVsbG8=",
	"data:;base64,aGVs\nbG8=",
	"data:;base64,aGVs\rbG8=",
	"data:;base64,aGVsbG8",
	"data:;base64,a===",
	"data:;base64,aGVs=bG8=",
	"data:text/plain;charset=utf-8;base64,dW5xdWFsaWZpZWQ=",
	"data:text/plain;charset=utf-8,x%41",
	"data:text/plain;charset=\"utf,8\";base64,aGk=",
	"data:text/plain;charset=\"utf-8\",a,b",
	"data:application/octet-stream;base64,AAEC",
	"data:x-foo/bar,x",
	"data:foo/bar,x",
	"data:text/,x",
	"data:text/plain;,x",
	"data:text/plain;a=,x",
	"data:text/plain;base65,x",
	"data:text/plain;base64;a=b,x",
	"data:;a=b;base64,aGk=",
	"DATA:,x",
	"data:",
	"data",
	"",
	"data:,a,b,c",
	"data:;base64,a,b",
	"data:text/plain;charset=%41,x",
	"data:text/plain;charset=%4,x",
	// The header bounds (checkDataURLHeader): one parameter over, one byte over, a quoted value's
	// semicolons and commas (not parameters, still the header's bytes), and each just within.
	"data:text/plain" + strings.Repeat(";a=b", maxDataURLParams) + ",x",
	"data:text/plain" + strings.Repeat(";a=b", maxDataURLParams+1) + ",x",
	"data:text/" + strings.Repeat("a", maxDataURLHeader-len("text/")) + ",x",
	"data:text/" + strings.Repeat("a", maxDataURLHeader-len("text/")+1) + ",x",
	`data:text/plain;a="` + strings.Repeat(`;,\"`, 40) + `",x`,
	`data:text/plain;a="` + strings.Repeat(`;,\"`, 200) + `",x`,
}

// decodeDataURL is dataurl.DecodeString's data, byte for byte and error for error.
func FuzzDataURL(f *testing.F) {
	for _, s := range dataURLSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkDataURL(t, s)
	})
}

func TestDataURLAsTheParser(t *testing.T) {
	for _, s := range dataURLSeeds {
		checkDataURL(t, s)
	}
	// Every single byte after each header form.
	for _, head := range []string{"data:,", "data:;base64,", "data:text/plain;base64,aGk", "data:text/plain,%"} {
		for c := 0; c < 256; c++ {
			checkDataURL(t, head+string([]byte{byte(c)}))
			checkDataURL(t, head+string([]byte{byte(c)})+"=")
			checkDataURL(t, head+"%"+string([]byte{byte(c)})+"1")
		}
	}
}

func checkDataURL(t *testing.T, s string) {
	t.Helper()
	got, err := decodeDataURL(s)
	if herr := checkDataURLHeader(s); herr != nil {
		// Over the header bounds: refused before the parser sees it.
		if err == nil || err.Error() != herr.Error() {
			t.Fatalf("%q: over the header bounds, yet %v", s, err)
		}
		return
	}
	want, wantErr := dataurl.DecodeString(s)
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("%q: error %v, the parser's %v", s, err, wantErr)
	case err != nil:
		if err.Error() != wantErr.Error() {
			t.Fatalf("%q: error %q, the parser's %q", s, err, wantErr)
		}
	case !bytes.Equal(got, want.Data) || got == nil:
		t.Fatalf("%q: data %q, the parser's %q", s, got, want.Data)
	}
	// Ignition's validateURL for a data URL: net/url, then the data URL parser.
	_, ok := validDataURL(s)
	if ok && wantErr != nil {
		t.Fatalf("%q: valid, but the parser refuses it", s)
	}
}
