package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The independent adversary's cases against the transaction (issue 20), kept as tests on the
// binary: hostile journals, state-dir names taken, stale side files, and fsync failing (a real
// fault injected into the system call, strace's inject). Every judgement is the independent checker's
// (invariants_test.go) or made here from the files alone: side-file names are spelled out from
// their documented form (".refresh-agent-" + 24 hex digits of the sha256 of the name + "-" + kind).

func side(p, kind string) string {
	h := sha256.Sum256([]byte(path.Base(p)))
	return path.Join(path.Dir(p), ".refresh-agent-"+hex.EncodeToString(h[:12])+"-"+kind)
}

// recoverFails runs recover on root, which must exit 1 saying in JSON that it found a journal.
func recoverFails(t *testing.T, root string) outcome {
	t.Helper()
	r := runProc(t, nil, recoverArgs(root)...)
	require.Equal(t, 1, r.code, "%s %s", r.out(), r.errOut())
	var o outcome
	require.NoError(t, jsonOut(r.out(), &o))
	require.True(t, o.Found)
	return o
}

// snapshot maps every path under root but the lock to its bytes, or its type.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case rel == "var/lib/refresh-agent/lock":
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			out[rel] = string(b)
			return err
		default:
			out[rel] = fi.Mode().Type().String()
		}
		return nil
	}))
	return out
}

// Forged journals recovery used to follow: one target twice (had an original, and had none), or
// "no original" while the backup, the file's only other copy, is there. Recover and apply refuse
// them, naming the path, and touch nothing.
func TestAdversaryHostileJournals(t *testing.T) {
	f := newFaultNode(t, 1)
	target := "/etc/containers/registries.d/f000.yaml"
	entry := fmt.Sprintf(`{"path":%q,"temp":%q,"backup":%q`, target, side(target, "tmp"), side(target, "backup"))
	for _, tc := range []struct {
		name, phase, entries string
		linked               bool // the backup is the live file's second name (else a separate copy)
	}{
		{"one target twice", "prepared", entry + `,"hadOriginal":true,"origMode":420},` + entry + `,"hadOriginal":false}`, true},
		{"no original, backup linked", "rollingback", entry + `,"hadOriginal":false}`, true},
		{"no original, backup a copy", "rollingback", entry + `,"hadOriginal":false}`, false},
		{"twice, rolling back", "rollingback", entry + `,"hadOriginal":false},` + entry + `,"hadOriginal":true,"origMode":420}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f.copyTo(t, dir)
			live, backup := filepath.Join(dir, target), filepath.Join(dir, side(target, "backup"))
			if tc.linked {
				require.NoError(t, os.Link(live, backup))
			} else {
				require.NoError(t, os.WriteFile(backup, []byte("the only copy of an original"), 0o644))
			}
			j := fmt.Sprintf(`{"version":3,"phase":%q,"committed":true,"meta":{"hash":"v2","actions":[]},"entries":[%s]}`, tc.phase, tc.entries)
			require.NoError(t, os.WriteFile(filepath.Join(stateOf(dir), "journal.json"), []byte(j), 0o600))
			before := snapshot(t, dir)
			o := recoverFails(t, dir)
			require.Contains(t, o.Reason, target)
			require.Contains(t, o.Reason, "touching nothing")
			require.Equal(t, before, snapshot(t, dir), "recover touched nothing")
			a := runProc(t, nil, applyArgs(dir, f.v2File, "v2")...)
			require.Equal(t, 1, a.code, "%s %s", a.out(), a.errOut())
			require.Equal(t, before, snapshot(t, dir), "apply touched nothing")
		})
	}
}

// A name the agent writes in its state dir taken by a directory (or a symlink): the dry run said
// planned and the real run failed half way, leaving the node stuck. Both now refuse, alike, naming
// it, with nothing written; recover leaves it (it is not the agent's) and once it is removed the
// refresh applies.
func TestAdversaryStateDirNamesTaken(t *testing.T) {
	f := newFaultNode(t, 1)
	sum := sha(f.m.newRaw)
	for _, name := range []string{".journal.json.tmp", ".current.json.tmp", "payloads/" + sum, "payloads/." + sum + ".tmp"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			f.copyTo(t, dir)
			obstacle := filepath.Join(stateOf(dir), name)
			require.NoError(t, os.MkdirAll(filepath.Join(obstacle, "x"), 0o700))
			before := snapshot(t, dir)
			dry := runProc(t, nil, append(applyArgs(dir, f.v2File, "v2"), "--dry-run")...)
			real := runProc(t, nil, applyArgs(dir, f.v2File, "v2")...)
			var d, o outcome
			require.NoError(t, jsonOut(dry.out(), &d), dry.errOut())
			require.NoError(t, jsonOut(real.out(), &o), real.errOut())
			require.Equal(t, "refused", d.Outcome, d.Reason)
			require.Equal(t, d, o, "the dry run is the whole truth")
			require.Equal(t, dry.code, real.code)
			require.Contains(t, o.Reason, obstacle)
			require.Equal(t, before, snapshot(t, dir), "nothing written")
			require.Equal(t, 0, runProc(t, nil, recoverArgs(dir)...).code)
			require.DirExists(t, obstacle, "not the agent's to remove")
			require.NoError(t, os.RemoveAll(obstacle))
			p := runProc(t, nil, applyArgs(dir, f.v2File, "v2")...)
			checkHonest(t, name, f.m, dir, stateOf(dir), p.code, p.out(), p.errOut())
			require.Equal(t, 0, p.code, p.out())
		})
	}
}

// Side files no journal accounts for, each holding a marker: recover removes every temp file (new
// contents, payload bytes; the version 2 names too) in the state dir and beside the managed files,
// keeps a stale backup and restore copy that are not the file itself (each may be an original) and
// lists them; the next apply refuses that file's refresh naming the backup rather than remove it.
func TestAdversaryStaleSideFiles(t *testing.T) {
	f := newFaultNode(t, 1)
	dir := t.TempDir()
	f.copyTo(t, dir)
	target := "/etc/containers/registries.d/f000.yaml"
	plant := map[string]string{
		side(target, "tmp"): "SECRET-1", side(target, "backup"): "ORIGINAL-2", side(target, "restore"): "ORIGINAL-3",
		"/etc/containers/registries.d/.f000.yaml.refresh-agent-tmp": "SECRET-4", side(pullSecret, "tmp"): "SECRET-5",
		"/var/lib/refresh-agent/.current.json.tmp": "SECRET-6", "/var/lib/refresh-agent/.journal.json.tmp": "SECRET-7",
		"/var/lib/refresh-agent/payloads/." + sha([]byte("y")) + ".tmp": "SECRET-8",
		"/var/lib/refresh-agent/payloads/" + sha([]byte("x")):           "SECRET-9",
	}
	for p, s := range plant {
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(s), 0o600))
	}
	r := runProc(t, nil, recoverArgs(dir)...)
	require.Equal(t, 0, r.code, r.errOut())
	var kept struct{ KeptSideFiles []string }
	require.NoError(t, jsonOut(r.out(), &kept))
	require.Len(t, kept.KeptSideFiles, 2, r.out())
	var left []string
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			if strings.HasPrefix(string(b), "SECRET-") || strings.HasPrefix(string(b), "ORIGINAL-") {
				left = append(left, string(b))
			}
		}
		return err
	}))
	sort.Strings(left)
	require.Equal(t, []string{"ORIGINAL-2", "ORIGINAL-3"}, left, "no temp bytes after a successful recover; possible originals kept")
	require.Equal(t, "old", f.m.files(dir))
	a := runProc(t, nil, applyArgs(dir, f.v2File, "v2")...)
	var o outcome
	require.NoError(t, jsonOut(a.out(), &o), a.errOut())
	require.Equal(t, "refused", o.Outcome)
	require.Contains(t, o.Reason, side(target, "backup"))
	b, err := os.ReadFile(filepath.Join(dir, side(target, "backup")))
	require.NoError(t, err)
	require.Equal(t, "ORIGINAL-2", string(b), "the next apply keeps it")
}

// TestFaultSyncFailsAtEveryStep makes fsync fail (EIO, then EROFS) at its Nth call in each thread of
// apply, for every N until no call is left to fail, and then of the recover that follows (strace's fault injection: the kernel call
// returns the error, as a failing disk's would). The output must say what is on disk: recorded
// exactly when a read of current.json names the new hash (the adversary saw recorded:false with
// the record renamed in place, its directory's fsync failed). Then recover settles the node.
func TestFaultSyncFailsAtEveryStep(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace not installed")
	}
	f := newFaultNode(t, 2)
	trials, seen := 0, map[string]int{}
	for _, errno := range []string{"EIO", "EROFS"} {
		for k, quiet := 1, 0; quiet < 3 && k <= 60; k++ {
			dir := t.TempDir()
			f.copyTo(t, dir)
			trace := filepath.Join(t.TempDir(), "trace")
			code, stdout, stderr, injected := straced(t, trace, "fsync", errno, k, applyArgs(dir, f.v2File, "v2")...)
			if !injected {
				quiet++
				continue
			}
			quiet = 0
			trial := fmt.Sprintf("fsync %s at call %d", errno, k)
			claimed := checkHonest(t, trial, f.m, dir, stateOf(dir), code, stdout, stderr)
			seen[fmt.Sprintf("exit %d applied=%v recorded=%v", code, claimed.Applied, claimed.Recorded)]++
			// A recover under the same fault says what it found and never lies either.
			rcode, rout, rerr, _ := straced(t, trace, "fsync", errno, k, recoverArgs(dir)...)
			if rcode == 0 {
				checkSettled(t, trial+" (recover under the fault)", f.m, dir, stateOf(dir), claimed)
			} else {
				require.Equal(t, 1, rcode, "%s: recover under the fault: %s %s", trial, rout, rerr)
				var o outcome
				require.NoError(t, jsonOut(rout, &o), "%s: recover says what it found: %s", trial, rerr)
				_, jerr := os.Stat(filepath.Join(stateOf(dir), "journal.json"))
				require.Equal(t, jerr == nil, o.Found, "%s: found says whether a journal is there: %s", trial, rout)
			}
			f.settle(t, trial, dir, claimed)
			trials++
		}
	}
	require.NotZero(t, trials)
	t.Logf("fsync fault trials: %d (%v)", trials, seen)
}

// TestFaultOpenFailsAtEveryStep makes openat fail with EMFILE (no descriptor left) at its Nth call
// of apply, for every N until no call is left to fail. A check that fails so proves nothing: the
// clean-up after the commit read an EMFILE while proving a backup as "not the agent's", kept it,
// removed the journal and said applied, exit 0 (adversary r21 b2/06; a kept backup of the pull
// secret then refused every later refresh of it). Every outcome must be honest, and settle.
func TestFaultOpenFailsAtEveryStep(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace not installed")
	}
	f := newFaultNode(t, 2)
	trials := 0
	for k, quiet := 1, 0; quiet < 3 && k <= 400; k++ {
		dir := t.TempDir()
		f.copyTo(t, dir)
		trace := filepath.Join(t.TempDir(), "trace")
		code, stdout, stderr, injected := straced(t, trace, "openat", "EMFILE", k, applyArgs(dir, f.v2File, "v2")...)
		if !injected {
			quiet++
			continue
		}
		quiet = 0
		trial := fmt.Sprintf("openat EMFILE at call %d", k)
		claimed := checkHonest(t, trial, f.m, dir, stateOf(dir), code, stdout, stderr)
		f.settle(t, trial, dir, claimed)
		trials++
	}
	require.NotZero(t, trials)
	t.Logf("openat fault trials: %d", trials)
}

// straced runs refresh-agent under strace with call (fsync, openat) failing with errno at its kth
// call in each thread; injected says whether any call failed.
func straced(t *testing.T, trace, call, errno string, k int, args ...string) (code int, stdout, stderr string, injected bool) {
	t.Helper()
	cmd := exec.Command("strace", append([]string{"-f", "-qq", "-o", trace, "-e", "trace=" + call,
		"-e", fmt.Sprintf("inject=%s:error=%s:when=%d", call, errno, k), agentBinary(t)}, args...)...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	tr, _ := os.ReadFile(trace)
	return code, so.String(), se.String(), strings.Contains(string(tr), "(INJECTED)")
}

// A prepared journal, left by a refresh killed mid-commit, edited to say committed (adv txn-attack3
// #1): recover used to roll it forward, deleting every temp and backup (in the mixed case the only
// copy of a renamed file's original) and recording a payload that was not there. It is refused now,
// naming a path, touching nothing; the real journal then rolls back to the old files.
func TestAdversaryForgedCommittedJournal(t *testing.T) {
	f := newFaultNode(t, 2)
	for _, tc := range []struct {
		name  string
		forge func(j map[string]any)
	}{
		{"phase only", func(j map[string]any) {}},
		{"phase and entry 0's inode", func(j map[string]any) { j["entries"].([]any)[0].(map[string]any)["newIno"] = 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f.copyTo(t, dir)
			p := runProc(t, []string{crashEnv + "=rename:2"}, applyArgs(dir, f.v2File, "v2")...)
			require.NotEqual(t, 0, p.code, "killed mid-commit")
			require.True(t, strings.HasPrefix(f.m.files(dir), "mixed"), "killed after some renames: %s", f.m.files(dir))
			jf := filepath.Join(stateOf(dir), "journal.json")
			real, err := os.ReadFile(jf)
			require.NoError(t, err)
			var j map[string]any
			require.NoError(t, json.Unmarshal(real, &j))
			require.Equal(t, "prepared", j["phase"])
			j["phase"], j["committed"] = "committed", true
			tc.forge(j)
			forged, err := json.Marshal(j)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(jf, forged, 0o600))
			before := snapshot(t, dir)
			o := recoverFails(t, dir)
			require.False(t, o.Recorded)
			require.Contains(t, o.Reason, "touching nothing")
			require.Regexp(t, `entry [0-9]+, /`, o.Reason, "names the first path")
			require.Equal(t, before, snapshot(t, dir), "recover touched nothing")
			// The real journal rolls back: every original in place, no side file, nothing recorded new.
			require.NoError(t, os.WriteFile(jf, real, 0o600))
			rec := runProc(t, nil, recoverArgs(dir)...)
			require.Equal(t, 0, rec.code, "%s %s", rec.out(), rec.errOut())
			require.Equal(t, "old", f.m.files(dir))
			for p := range snapshot(t, dir) {
				require.NotContains(t, p, ".refresh-agent-", "no side file left")
			}
		})
	}
}
