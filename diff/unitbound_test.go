package diff

import (
	"errors"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// adv27 round 4, F1: every unit text over a bound is refused before the lexer, naming the bound;
// the shapes the adversary sent (cheap to send, costly to lex) first.
func TestUnitTextBounds(t *testing.T) {
	over := map[string]struct{ text, what string }{
		"60 MB of [S] lines, cut to 1 MiB":   {strings.Repeat("[S]\n", 1<<18), "bytes"},
		"[Service] then A= lines":            {"[Service]\n" + strings.Repeat("A=\n", 50000), "bytes"},
		"sections":                           {strings.Repeat("[Service]\n", 300), "sections"},
		"short sections":                     {strings.Repeat("[S]\n", 257), "sections"},
		"settings":                           {"[Service]\n" + strings.Repeat("A=\n", 4097), "settings"},
		"settings behind a comment":          {"#\n[Service]\n" + strings.Repeat("Environment=A=1\n", 4097), "settings"},
		"lines":                              {"[Service]\n" + strings.Repeat("\n", 32768), "lines"},
		"a long line":                        {"[Service]\nExecStart=/bin/true " + strings.Repeat("a", 2048) + "\n", "bytes in line 2"},
		"a long line ended by CR":            {"[Service]\r" + strings.Repeat("a", 2048) + "\r", "bytes in line 1"},
		"one byte over the judged-file size": {commentedUnit(MaxJudgedFile + 1), "bytes"},
	}
	for name, c := range over {
		t.Run(name, func(t *testing.T) {
			err := CheckUnitText(c.text)
			var be *UnitBoundError
			require.True(t, errors.As(err, &be), "refused by a bound: %v", err)
			assert.Contains(t, be.What, c.what)
			assert.Contains(t, err.Error(), "too large to judge")
			assert.Greater(t, be.N, be.Max)
		})
	}
	within := map[string]string{
		"the MCO's kubelet dropin": "[Service]\nEnvironment=\"KUBELET_CRIO_IMAGE_CREDENTIAL_PROVIDER_FLAGS=--image-credential-provider-bin-dir=/usr/libexec/kubelet-image-credential-provider-plugins --image-credential-provider-config=/etc/kubernetes/credential-providers/ecr-credential-provider.yaml\"\n",
		"a unit at every bound":    strings.Repeat("[S]\n", 256) + strings.Repeat("A=1\n", 4096) + strings.Repeat("\n", 32768-256-4096),
		"a line at the bound":      "[Service]\nExecStart=" + strings.Repeat("a", 2047-10) + "\n",
		"exactly the size":         commentedUnit(MaxJudgedFile),
		"empty":                    "",
	}
	for name, text := range within {
		t.Run("within/"+name, func(t *testing.T) {
			require.LessOrEqual(t, len(text), MaxJudgedFile)
			assert.NoError(t, CheckUnitText(text))
		})
	}
}

// commentedUnit is a [Service] section and comment lines of 1000 bytes, n bytes in all.
func commentedUnit(n int) string {
	s := "[Service]\n" + strings.Repeat("#"+strings.Repeat("x", 998)+"\n", (n-10)/1000-1)
	return s + "#" + strings.Repeat("x", n-len(s)-1)
}

// The counts agree with go-systemd's lexer on every text it reads: with tiny bounds, a text is
// refused for its sections or settings exactly when the lexer emits more of them.
func FuzzUnitTextCounts(f *testing.F) {
	for _, s := range []string{
		"[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true\n",
		"x[S]\n[T]\nA=1\\\nB=2\n", "#c\\\n[S]\nA=\n;[T]\n[U]  \nB = 3 \\\n\n", "[S]\r\nA=1\r\nB=2\\\r\n[T]\n",
		"[S]\nA=\\", "[S]\n\u00a0A=1\n\u2028[T]\n", "[S\n]\nA=1\n", "garbage before\n[S]\n", "[S]\n#x \\ \nA=1\n",
		"[A]\n[B]\n[C]\n", "[S]\nA=\nB=\nC=\nD=\n", "\xff[S]\n\xfe=1\n",
	} {
		f.Add(s)
	}
	small := unitBounds{size: 1 << 20, line: 1 << 20, lines: 1 << 20, sections: 2, options: 3}
	f.Fuzz(func(t *testing.T, text string) {
		err := checkUnitText(text, small)
		var be *UnitBoundError
		if err != nil && !errors.As(err, &be) {
			t.Fatalf("not a bound error: %v", err)
		}
		secs, serr := unit.DeserializeSections(strings.NewReader(text))
		opts, oerr := unit.DeserializeOptions(strings.NewReader(text))
		if serr != nil || oerr != nil {
			return // the lexer refuses it itself: either answer refuses it
		}
		switch {
		case len(secs) > small.sections:
			if be == nil || be.What != "sections" || be.N != len(secs) {
				t.Fatalf("%d sections (lexer) but %v", len(secs), err)
			}
		case len(opts) > small.options:
			if be == nil || be.What != "settings" || be.N != len(opts) {
				t.Fatalf("%d settings (lexer) but %v", len(opts), err)
			}
		case err != nil:
			t.Fatalf("%d sections, %d settings (lexer) but refused: %v", len(secs), len(opts), err)
		}
	})
}

// Units are compared field by field (a unit text may be megabytes): the same fields, in the same
// order, as the JSON form's comparison every other kind of entry uses.
func TestUnitFieldsChangedAsJSON(t *testing.T) {
	s := func(v string) *string { return &v }
	b := func(v bool) *bool { return &v }
	variants := []types.Unit{
		{}, {Name: "a.service"}, {Name: "b.service"}, {Name: "a.service", Contents: s("")}, {Name: "a.service", Contents: s("[Unit]\n")},
		{Name: "a.service", Dropins: []types.Dropin{}}, {Name: "a.service", Dropins: []types.Dropin{{Name: "x.conf"}}},
		{Name: "a.service", Dropins: []types.Dropin{{Name: "x.conf", Contents: s("")}}},
		{Name: "a.service", Dropins: []types.Dropin{{Name: "x.conf", Contents: s("A")}, {Name: "y.conf"}}},
		{Name: "a.service", Dropins: []types.Dropin{{Name: "y.conf"}, {Name: "x.conf", Contents: s("A")}}},
		{Name: "a.service", Enabled: b(true)}, {Name: "a.service", Enabled: b(false)}, {Name: "a.service", Mask: b(true)},
		{Name: "a.service", Contents: s("x"), Enabled: b(true), Mask: b(false), Dropins: []types.Dropin{{Name: "x.conf"}}},
	}
	for _, x := range variants {
		for _, y := range variants {
			ma, mb := jsonFields(x), jsonFields(y)
			var want []string
			for _, k := range unionKeys(ma, mb) {
				if string(ma[k]) != string(mb[k]) {
					want = append(want, k)
				}
			}
			assert.Equal(t, want, unitFieldsChanged(x, y), "%+v vs %+v", x, y)
		}
	}
}
