package plan

import (
	"os"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modeledSettingsTable renders modeledSettings as the table docs/security.md shows.
func modeledSettingsTable() string {
	var b strings.Builder
	b.WriteString("| section | settings | what a payload may set them to |\n|---|---|---|\n")
	for _, row := range modeledSettings {
		keys := make([]string, len(row.keys))
		for i, k := range row.keys {
			keys[i] = "`" + k + "`"
		}
		b.WriteString("| `[" + row.section + "]` | " + strings.Join(keys, ", ") + " | " + row.values + " |\n")
	}
	return b.String()
}

// The table of settings a payload may change under a unit rule, in docs/security.md, is the code's.
func TestModeledSettingsTableMatchesTheDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/security.md")
	require.NoError(t, err)
	const begin, end = "<!-- modeled-settings:begin (generated from plan/unitkeys.go, checked by TestModeledSettingsTableMatchesTheDocs) -->\n", "<!-- modeled-settings:end -->"
	_, rest, ok := strings.Cut(string(doc), begin)
	require.True(t, ok, "docs/security.md has no %q", begin)
	table, _, ok := strings.Cut(rest, end)
	require.True(t, ok, "docs/security.md has no %q", end)
	assert.Equal(t, modeledSettingsTable(), table, "docs/security.md's table of modeled settings; write it as:\n%s", modeledSettingsTable())
}

// Every key is in one row only, so a key's check is never silently shadowed by another row.
func TestModeledSettingsAreListedOnce(t *testing.T) {
	seen := map[optKey]bool{}
	for _, row := range modeledSettings {
		for _, k := range row.keys {
			key := optKey{row.section, k}
			assert.False(t, seen[key], "%s listed twice", key)
			seen[key] = true
		}
	}
}

// systemd's reading, line by line (conf-parser.c), on the shapes whose readings differ.
func TestReadSystemdUnit(t *testing.T) {
	for name, c := range map[string]struct {
		text string
		want []sysOption
	}{
		"plain":                       {"[Service]\nA=1\n B = 2 \n", []sysOption{{"Service", "A", "1"}, {"Service", "B", "2"}}},
		"continuation":                {"[Service]\nA=1 \\\n  2\n", []sysOption{{"Service", "A", "1    2"}}},
		"backslash pair ends":         {"[Service]\nA=1\\\\\nB=2\n", []sysOption{{"Service", "A", `1\\`}, {"Service", "B", "2"}}},
		"three backslashes":           {"[Service]\nA=1\\\\\\\nB=2\n", []sysOption{{"Service", "A", `1\\ B=2`}}},
		"comment never continues":     {"[Service]\n# x \\\nB=2\n", []sysOption{{"Service", "B", "2"}}},
		"comment inside continuation": {"[Service]\nA=1 \\\n# x\n 2\n", []sysOption{{"Service", "A", "1   2"}}},
		"cr ends a line":              {"[Service]\nA=1\rB=2\r\nC=3", []sysOption{{"Service", "A", "1"}, {"Service", "B", "2"}, {"Service", "C", "3"}}},
		"nul ends a line":             {"[Service]\nA=1\x00B=2", []sysOption{{"Service", "A", "1"}, {"Service", "B", "2"}}},
		"outside a section":           {"A=1\n[Service]\nB=2\n", []sysOption{{"Service", "B", "2"}}},
		"no key, no =":                {"[Service]\n=1\nfoo\nB=2\n", []sysOption{{"Service", "B", "2"}}},
		"bom":                         {"\xef\xbb\xbf[Service]\nA=1\n", []sysOption{{"Service", "A", "1"}}},
		"continued at the end":        {"[Service]\nA=1 \\", []sysOption{{"Service", "A", "1"}}},
	} {
		got, err := readSystemdUnit(c.text)
		require.NoError(t, err, name)
		assert.Equal(t, c.want, got, name)
	}
	for _, bad := range []string{"[Service\nA=1\n", "[Ser\"vice]\n", "[Service]\nA=\xff\n"} {
		_, err := readSystemdUnit(bad)
		assert.Error(t, err, "%q", bad)
	}
}

// The changed-options reader never panics; a unit compared with itself has no changed option, and
// two definitions have none exactly when systemd reads the same settings from both.
func FuzzUnitChangedOptions(f *testing.F) {
	for _, s := range []string{"", "[Service]\nExecStart=/bin/true\n", "[Service]\nA=1 \\\n# c\n 2\n", "[Service]\nA=\\\\\nBindPaths=/a:/b\n",
		"#x \\\n[Unit]\nConflicts=var.mount\n", "[Service]\rType=forking\x00PIDFile=/x\n", "\xef\xbb\xbf[Install]\nAlso=x.service\n"} {
		f.Add(s, s+"[Service]\nBindPaths=/a:/b\n", "10-a.conf")
	}
	f.Fuzz(func(t *testing.T, a, b, dropin string) {
		_, _ = readSystemdUnit(a)
		_ = readsAsSystemdReads(a)
		ua := &types.Unit{Name: "myapp.service", Contents: &a, Dropins: []types.Dropin{{Name: dropin, Contents: &b}}}
		da, errA := unitDefinition(ua, true)
		if errA != nil {
			return
		}
		da2, err := unitDefinition(ua, true)
		require.NoError(t, err)
		assert.Empty(t, changedOptions(da, da2), "a unit compared with itself")
		ub := &types.Unit{Name: "myapp.service", Contents: &b}
		db, err := unitDefinition(ub, true)
		if err != nil {
			return
		}
		ch := changedOptions(da, db)
		assert.Equal(t, len(ch) == 0, equalDefs(da, db))
		for k := range ch {
			assert.False(t, equalSeq(da[k], db[k]) && hasKey(da, k) == hasKey(db, k), "%s reported changed", k)
		}
		_ = judgeChangedSettings("myapp.service", da, db, ch, nil)
	})
}

func hasKey(d map[optKey][]string, k optKey) bool { _, ok := d[k]; return ok }

func equalSeq(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalDefs(a, b map[optKey][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !equalSeq(v, w) {
			return false
		}
	}
	return true
}

// ExecChanged marks the Exec lines the payload changes (for the exec judge's strict judging): all
// lines of a changed key, the lines naming a variable when the environment changed, every line
// when the working directory changed; none of an unchanged unit.
func TestExecChangedMarksThePayloadsLines(t *testing.T) {
	const cur = "[Service]\nEnvironment=A=1\nExecStartPre=/usr/bin/mkdir -p /run/myapp\nExecStart=/usr/bin/myapp $A\nExecReload=/bin/kill -HUP $MAINPID\n"
	marks := func(old *string, des string, dropins ...types.Dropin) []bool {
		u := types.Unit{Name: "myapp.service", Contents: &des, Dropins: dropins}
		p, err := unitFileProps(u.Name, u.Contents, u.Dropins)
		require.NoError(t, err)
		d, err := unitDefinition(&u, true)
		require.NoError(t, err)
		o := map[optKey][]string{}
		if old != nil {
			o, err = unitDefinition(&types.Unit{Name: u.Name, Contents: old}, true)
			require.NoError(t, err)
		}
		return execChanged(p.ExecKeys, p.Exec, changedOptions(o, d))
	}
	c := cur
	for name, tc := range map[string]struct {
		old     *string
		des     string
		dropins []types.Dropin
		want    []bool
	}{
		"unchanged":          {&c, cur, nil, []bool{false, false, false}},
		"new unit":           {nil, cur, nil, []bool{true, true, true}},
		"ExecStart changed":  {&c, strings.Replace(cur, "myapp $A", "myapp --x $A", 1), nil, []bool{false, true, false}},
		"a second ExecStart": {&c, cur + "ExecStartPre=/usr/bin/true\n", nil, []bool{true, false, false, true}},
		"environment":        {&c, strings.Replace(cur, "A=1", "A=2", 1), nil, []bool{false, true, true}},
		"working directory":  {&c, cur + "WorkingDirectory=/var/lib/myapp\n", nil, []bool{true, true, true}},
		"dropin adds a line": {&c, cur, []types.Dropin{{Name: "50-x.conf", Contents: &[]string{"[Service]\nExecReload=/usr/bin/true\n"}[0]}}, []bool{false, false, true, true}},
		"not a .conf dropin": {&c, cur, []types.Dropin{{Name: "50-x", Contents: &[]string{"[Service]\nRestart=always\n"}[0]}}, []bool{false, false, false}},
	} {
		assert.Equal(t, tc.want, marks(tc.old, tc.des, tc.dropins...), name)
	}
}
