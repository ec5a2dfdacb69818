package allowlist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Adversary r22 a/04: awk opens the files ARGV names when the program runs, and a program may set
// ARGV and ARGC itself: BEGIN{ARGV[1]="/etc/sha" "dow"; ARGC=2} read /etc/shadow, which no word
// of the line named. A program that refers to ARGV, ARGC or gawk's SYMTAB is refused in every
// line, as one with system() or getline is; awk's ordinary programs stay accepted.
func TestRound22AwkArgvIsRefused(t *testing.T) {
	for _, l := range []string{
		`ExecStart=/bin/sh -c 'awk "BEGIN{ARGV[1]=\\"/etc/sha\\" \\"dow\\";ARGC=2}1" > /tmp/myapp-x'`,
		`ExecStart=/usr/bin/awk "BEGIN{ARGV[ARGC++]=\"/var/lib/kubelet/conf\" \"ig.json\"}{print}"`,
		`ExecStart=/usr/bin/awk 'BEGIN{split("/etc/shadow", ARGV, " "); ARGC=2}1' x`,
		`ExecStart=/usr/bin/awk 'BEGIN{sub(/X/, "d", ARGV[1])}1' /etc/shaXow`,
		`ExecStart=/usr/bin/awk 'BEGIN{delete ARGV; ARGV[1]="/dev/watch" "dog"; ARGC=2}1'`,
		`ExecStart=/usr/bin/gawk 'BEGIN{SYMTAB["AR" "GC"]=2; SYMTAB["AR" "GV"][1]="/etc/sha" "dow"}1'`,
		`ExecStart=/usr/bin/awk -e 'BEGIN{ARGV[1]="/etc/sha" "dow";ARGC=2}' -e 1`,
	} {
		for _, changed := range []bool{true, false} {
			err := strictUnit(t, changed, l)
			if assert.Error(t, err, "changed %v: %s", changed, l) {
				assert.Regexp(t, "ARGV|ARGC|SYMTAB", err.Error(), l)
			}
		}
	}
	for _, l := range []string{
		`ExecStart=/usr/bin/awk '{print $1}' /etc/os-release`,
		`ExecStart=/usr/bin/awk -F: '{print $1}' /etc/passwd`,
		`ExecStart=/usr/bin/awk 'BEGIN{print "ready"}'`,
		`ExecStart=/usr/bin/awk -v n=2 'NR==n{nargs=NF; print nargs}' /etc/os-release`,
		`ExecStart=/bin/sh -c "awk -F= '/^ID=/{print $$2}' /etc/os-release > /run/myapp/id"`,
	} {
		assert.NoError(t, strictUnit(t, true, l), l)
	}
}
