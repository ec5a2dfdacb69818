package allowlist

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The index finds exactly the reads a linear pathsMeet over every read finds (the judge of a
// changed line's writes), for literal and patterned reads alike.
func FuzzReadIndexAgreesWithPathsMeet(f *testing.F) {
	f.Add("/etc/myapp/env\n/etc/myapp/bin\n/etc/x/%i.conf\n/etc/myapp/**.env", "/etc/myapp/bin/foo")
	f.Add("/etc/a\n/etc/a/b/c\n/etc/ab", "/etc/a")
	f.Add("/var/usrlocal/bin/x\n/etc/*/y", "/var/usrlocal/bin/x")
	f.Fuzz(func(t *testing.T, readList, write string) {
		if !strings.HasPrefix(write, "/") || len(readList) > 4096 {
			return
		}
		var reads []NodeRead
		for _, r := range strings.Split(readList, "\n") {
			if strings.HasPrefix(r, "/") {
				reads = append(reads, NodeRead{Path: nodePath(strings.ReplaceAll(r, "%i", "**")), Unit: "u.service", Setting: "EnvironmentFile="})
			}
		}
		got := map[*NodeRead]bool{}
		for _, r := range IndexReads(reads).ReadersOf(write) {
			assert.False(t, got[r], "a read found twice: %s", r.Path)
			got[r] = true
		}
		c := strings.TrimSuffix(nodePath(write), "/")
		for i := range reads {
			r := reads[i].Path
			want := below(c, r) || below(r, c)
			if literalPrefix(r) != r {
				want = pathsMeet(globEscape(c), r)
			}
			assert.Equal(t, want, got[&reads[i]], "write %q, read %q", write, reads[i].Path)
		}
	})
}

func TestScriptOperand(t *testing.T) {
	for argv, want := range map[string]string{
		"/bin/sh /etc/a.sh":                    "/etc/a.sh",
		"/bin/sh -e /etc/a.sh":                 "/etc/a.sh",
		"/bin/bash -o pipefail /etc/a.sh x":    "/etc/a.sh",
		"/bin/bash -c /etc/a.sh":               "",
		"/bin/bash -xc 'echo'":                 "",
		"/bin/bash --norc /etc/a.sh":           "/etc/a.sh",
		"/bin/bash --rcfile /etc/rc -i":        "/etc/rc",
		"/usr/bin/python3 -u /etc/a.py":        "/etc/a.py",
		"/usr/bin/python3 -m http.server":      "",
		"/usr/bin/perl -e 1":                   "",
		"/usr/bin/perl -- /etc/a.pl":           "/etc/a.pl",
		"/usr/bin/python3 -W ignore /etc/a.py": "/etc/a.py",
		"/usr/bin/foo /etc/a.sh":               "",
	} {
		w := strings.Fields(argv)
		assert.Equal(t, want, scriptOperand(w[0], w[1:]), argv)
	}
}

// below says whether a is b or lies below it, by components, "*" a name's character.
func below(a, b string) bool {
	return a == b || strings.HasPrefix(a, strings.TrimSuffix(b, "/")+"/")
}
