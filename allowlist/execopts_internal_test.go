package allowlist

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// judgeArgv judges one command as a line of a unit with no own programs.
func judgeArgv(strict bool, argv []string) string {
	left := execBudget([][]string{argv})
	wd := []string{}
	j := judge{env: map[string]string{}, left: &left, wd: &wd, made: map[string]bool{}, strict: strict}
	return j.argv(argv, 0)
}

// Every table's long options go through longVariants: for each listed option, of each program
// whose rules read options, a prefix of it is refused wherever the full name is (changed and
// unchanged lines, value joined and apart, values a rule refuses).
func TestEveryListedLongOptionsPrefixesAreJudgedAsIt(t *testing.T) {
	progs := []string{"/usr/bin/tar", "/usr/bin/cpio", "/usr/bin/install", "/usr/bin/rsync", "/usr/bin/sed", "/usr/bin/gawk",
		"/usr/bin/logger", "/usr/bin/systemd-run", "/usr/bin/env", "/usr/bin/xargs", "/usr/bin/timeout", "/usr/bin/nice",
		"/usr/bin/sort", "/usr/bin/cp", "/usr/bin/kill", "/usr/bin/systemd-notify", "/usr/bin/systemd-tmpfiles",
		"/usr/sbin/modprobe", "/usr/bin/make", "/usr/bin/unshare", "/usr/bin/mount", "/usr/bin/bash", "/usr/bin/python3"}
	values := []string{"/etc/myapp/app.conf", "sh /etc/myapp/app.conf", "exec=reboot", "/usr/bin/sh", "203.0.113.7:x", "/usr/local/bin/x", "-5"}
	checked, k := 0, 0
	for _, p := range progs {
		for _, o := range longOptions {
			// Each program and option with a changed line's joined value that runs a script, and
			// one more of the other forms and values in turn (the whole matrix costs minutes).
			k++
			forms := [][3]int{{1, 1, 1}, {k % len(values), (k / len(values)) % 2, (k / len(values) / 2) % 2}}
			for _, f := range forms {
				v, strict, joined := values[f[0]], f[1] == 1, f[2] == 1
				form := func(opt string) []string {
					if joined {
						return []string{p, opt + "=" + v, "/etc/hostname", "/run/myapp/x"}
					}
					return []string{p, opt, v, "/etc/hostname", "/run/myapp/x"}
				}
				if judgeArgv(strict, form(o)) == "" {
					continue
				}
				for _, n := range []int{3, (len(o) + 3) / 2, len(o) - 1} {
					pre := o[:n]
					if _, exact := slices.BinarySearch(longOptions, pre); exact || n < 3 {
						continue
					}
					checked++
					if why := judgeArgv(strict, form(pre)); why == "" {
						t.Errorf("%q is refused but its prefix %q is accepted (strict=%v)", strings.Join(form(o), " "), pre, strict)
					}
				}
			}
		}
	}
	require.Greater(t, checked, 1000, "the table refuses enough full options to test their prefixes")
}

// judgedLongOptions holds every long option the judge's code names: an option a rule matches by
// name that longOptions does not list would not be matched when abbreviated.
func TestEveryLongOptionTheJudgeNamesIsListed(t *testing.T) {
	files, err := filepath.Glob("exec*.go")
	require.NoError(t, err)
	lit := regexp.MustCompile(`"(--[a-zA-Z][a-zA-Z0-9-]*[a-zA-Z0-9])=?"`)
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range lit.FindAllSubmatch(b, -1) {
			seen++
			o := string(m[1])
			_, ok := slices.BinarySearch(longOptions, o)
			assert.True(t, ok, "%s names %s: add it to judgedLongOptions (execopts.go), so that its abbreviations are judged as it", f, o)
		}
	}
	require.Greater(t, seen, 100)
	// And the helper: a prefix of one option is it, of several each, an exact name itself.
	assert.Equal(t, []string{"--checkpoint-action"}, longMatches("--checkpoint-act=exec=x"))
	assert.Subset(t, longMatches("--to"), []string{"--to-command", "--to-stdout"})
	assert.Equal(t, []string{"--file"}, longMatches("--file"))
	assert.Nil(t, longMatches("--"))
	assert.Nil(t, longMatches("-f"))
	assert.Nil(t, longMatches("--zzz"))
}

// sedCorpus are scripts the grammar reads (accepted) and refuses.
var sedCorpus = []string{"p", "s/a/b/g", "s|a|b|2p", ":a;N;$!ba;s/\\n/ /g", "1~2d;0,/x/s//y/;3,+2p;4,~4p", "y/abc/xyz/;q5",
	"/x/I,/y/M !{h;G;x;P;D}", "$a\\\nlast", "1i header; e reboot", "s/[[:space:]]*$//;l 40;=;z;Q", "\\,x,d; # c; e",
	"s/[]x]/y/;tdone;s/a/b/;:done", "a\\\n  one\\\n  two", "2c\\\nx", "/^#/!{/./p}", "s/a/\\\n/", "$!N;P;D",
	":a;e", "tx;e", ":x;s,^,sh F #,e", ":a;w /tmp/x", "e", "r /etc/shadow", "R x", "W x", "F", "s/x/y/w x", "s/x/y/ge",
	"/x/!e", "b end; e;:end", ":a e", "s/[/]/x/e", "s/[\\/]/x/", "p;}", "{p", "v", "s/a/b/ x", "1,", "/x", "s/a", "y/ab/c",
	"l;e", "q;e", "n;N;e", "${p;e}", "0~3e", "a", "i\\", "#n\np", "s/\\(a\\)/\\1/3g"}

// The grammar never accepts what GNU sed's --sandbox refuses (e, w, r and their kin): a script
// the grammar reads, GNU sed compiles in its sandbox.
func TestSedGrammarAcceptsOnlyWhatGNUSedSandboxes(t *testing.T) {
	sed, err := exec.LookPath("sed")
	if err != nil {
		t.Skip("no sed")
	}
	if out, _ := exec.Command(sed, "--version").Output(); !bytes.Contains(out, []byte("GNU sed")) {
		t.Skip("not GNU sed")
	}
	accepted := 0
	for _, s := range sedCorpus {
		if sedGrammar(s) != "" {
			continue
		}
		accepted++
		cmd := exec.Command(sed, "--sandbox", "-n", "-e", s, "/dev/null")
		out, err := cmd.CombinedOutput()
		assert.NoError(t, err, "the grammar reads %q, GNU sed --sandbox refuses it: %s", s, out)
	}
	assert.Greater(t, accepted, 15)
	for _, s := range []string{":a;e", "tx;e", ":x;s,^,sh F #,e", ":a;w /tmp/x", "b end; e;:end", ":a e", "s/[/]/x/e"} {
		assert.NotEmpty(t, sedGrammar(s), "%q", s)
	}
}

func FuzzSedGrammar(f *testing.F) {
	for _, s := range sedCorpus {
		f.Add(s)
	}
	sed, _ := exec.LookPath("sed")
	f.Fuzz(func(t *testing.T, s string) {
		if sedGrammar(s) != "" || strings.ContainsRune(s, 0) {
			return
		}
		// Accepted: GNU sed's sandbox (no e, w, r and their kin) compiles it.
		if sed != "" {
			out, err := exec.Command(sed, "--sandbox", "-n", "-e", s, "/dev/null").CombinedOutput()
			if err != nil && !bytes.Contains(out, []byte("unknown command")) && bytes.Contains(out, []byte("sandbox")) {
				t.Errorf("the grammar reads %q, GNU sed --sandbox refuses it: %s", s, out)
			}
		}
	})
}
