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

func TestLineCode(t *testing.T) {
	for line, want := range map[string][]string{
		"/bin/sh /etc/a.sh":                                   {"/bin/sh", "/etc/a.sh"},
		"/bin/sh -e /etc/a.sh":                                {"/bin/sh", "/etc/a.sh"},
		"/bin/bash -o pipefail /etc/a.sh x":                   {"/bin/bash", "/etc/a.sh"},
		"/bin/bash -c /etc/a.sh":                              {"/bin/bash", "/etc/a.sh"},
		"/bin/bash --norc /etc/a.sh":                          {"/bin/bash", "/etc/a.sh"},
		"/bin/bash --rcfile /etc/rc -i":                       {"/bin/bash", "/etc/rc"},
		"/usr/bin/python3 -u /etc/a/b.py":                     {"/usr/bin/python3", "/etc/a/b.py", "/etc/a"},
		"/usr/bin/python3 -O /etc/a/b.py":                     {"/usr/bin/python3", "/etc/a/b.py", "/etc/a"},
		"/usr/bin/python3 -m http.server":                     {"/usr/bin/python3"},
		"/usr/bin/perl -e 1":                                  {"/usr/bin/perl"},
		"/usr/bin/perl -- /etc/a.pl":                          {"/usr/bin/perl", "/etc/a.pl"},
		"/usr/bin/python3 -W ignore /etc/a.py":                {"/usr/bin/python3", "/etc/a.py", "/etc"},
		"/usr/bin/foo /etc/a.sh":                              {"/usr/bin/foo"},
		"/usr/bin/env bash /etc/a.sh":                         {"/usr/bin/env", "/etc/a.sh"},
		"/usr/bin/nice -n 19 /bin/bash /etc/a.sh":             {"/usr/bin/nice", "/bin/bash", "/etc/a.sh"},
		"/usr/bin/flock -n /run/l /bin/sh /etc/a.sh":          {"/usr/bin/flock", "/bin/sh", "/etc/a.sh"},
		"/usr/bin/busybox sh /etc/a.sh":                       {"/usr/bin/busybox", "/etc/a.sh"},
		"/bin/dash run.sh":                                    {"/bin/dash", "/etc/wd/run.sh"},
		"/usr/bin/awk -f /etc/a.awk /x":                       {"/usr/bin/awk", "/etc/a.awk"},
		`/bin/bash -c "source /etc/a.env && exec /usr/bin/x"`: {"/bin/bash", "/etc/a.env", "/usr/bin/x"},
		`/bin/sh -c '. /etc/a; bash /etc/b'`:                  {"/bin/sh", "/etc/a", "/etc/b"},
		`/bin/sh -c 'exec "$0"' /etc/a`:                       {"/bin/sh", "/etc/a"},
		`/bin/sh -c 'cat /etc/conf.json'`:                     {"/bin/sh"},
		`/bin/sh -c './run.sh'`:                               {"/bin/sh", "/etc/wd/run.sh"},
	} {
		argvs, err := SplitExec(line)
		assert.NoError(t, err)
		var got []string
		lineCode(argvs[0], "/etc/wd", 0, func(p string) bool { got = append(got, p); return true })
		for _, w := range want {
			assert.Contains(t, got, w, line)
		}
		assert.NotContains(t, got, "/etc/conf.json", line)
	}
}

// below says whether a is b or lies below it, by components, "*" a name's character.
func below(a, b string) bool {
	return a == b || strings.HasPrefix(a, strings.TrimSuffix(b, "/")+"/")
}
