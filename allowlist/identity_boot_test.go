package allowlist_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
)

// Round 7a F5: units that re-run the node's provisioning or systemd's early boot are refused by
// name wherever a policy names one (allowedUnits, paths' services, a NodeDisruptionPolicy
// serviceName or unit) and never acted on; a template's instances with it.
func TestMCOProvisioningUnitsAreRefused(t *testing.T) {
	names := testdataNames(t, "testdata/mco-provisioning-units.txt")
	requireRefusedEverywhere(t, names)
	// The list is the templates' own: a template unit of the class missing from it fails here, on a
	// machine with the MCO's source (skipped on a clone without it).
	derived := mcoTemplateProvisioning(t)
	for _, n := range derived {
		assert.Contains(t, names, n, "the MCO's template unit %s runs once at boot before the kubelet: add it to the list and refuse it", n)
	}
}

func TestSystemdEarlyBootUnitsAreRefused(t *testing.T) {
	requireRefusedEverywhere(t, testdataNames(t, "testdata/systemd-early-boot-units.txt"))
	// Every oneshot of the installed systemd's early boot, where one is installed.
	dir := "/usr/lib/systemd/system"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("no systemd units here (%v)", err)
	}
	wants, _ := os.ReadDir(filepath.Join(dir, "sysinit.target.wants"))
	inSysinit := map[string]bool{}
	for _, w := range wants {
		inSysinit[w.Name()] = true
	}
	checked := 0
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".service") || e.Type()&os.ModeSymlink != 0 {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		text := string(data)
		if !regexp.MustCompile(`(?m)^Type=oneshot`).MatchString(text) {
			continue
		}
		early := inSysinit[n] || regexp.MustCompile(`(?m)^(ConditionFirstBoot|ConditionNeedsUpdate)=`).MatchString(text) ||
			regexp.MustCompile(`(?m)^Before=.*\bsysinit\.target\b`).MatchString(text)
		if !early {
			continue
		}
		checked++
		name := n
		if strings.HasSuffix(n, "@.service") {
			name = strings.TrimSuffix(n, "@.service") + "@x.service"
		}
		assert.Error(t, allowlist.UnitIdentity(name), "%s (%s) is one of systemd's early-boot oneshots", name, dir)
	}
	t.Logf("%d early-boot oneshots of %s checked", checked, dir)
}

// requireRefusedEverywhere: each unit (a template by an instance) fails the name check, is never
// acted on, and makes every policy shape that names it fail to load, naming it.
func requireRefusedEverywhere(t *testing.T, names []string) {
	t.Helper()
	for _, u := range names {
		if strings.HasSuffix(u, "@.service") {
			u = strings.TrimSuffix(u, "@.service") + "@x.service"
		}
		assert.Error(t, allowlist.UnitIdentity(u), u)
		assert.Error(t, allowlist.ActOn(u), u)
		docs := []string{
			fmt.Sprintf("paths:\n  - {path: /etc/myapp/app.conf, action: Restart, services: [%s]}\nallowedUnits: [%s]\n", u, u),
			fmt.Sprintf("nodeDisruptionPolicy:\n  files:\n  - path: /etc/myapp/app.conf\n    actions: [{type: Restart, restart: {serviceName: %s}}]\n", u),
			fmt.Sprintf("nodeDisruptionPolicy:\n  units:\n  - name: %s\n    actions: [{type: None}]\n", u),
		}
		if strings.HasSuffix(u, ".service") {
			docs = append(docs, fmt.Sprintf("allowedUnits: [crio.service, kubelet.service, coreos-update-ca-trust.service, %s]\n", u))
		}
		for _, doc := range docs {
			_, err := allowlist.ParsePolicy([]byte(doc))
			if assert.Error(t, err, doc) {
				assert.Contains(t, err.Error(), strings.TrimSuffix(u, ".service"), doc)
			}
		}
	}
}

func testdataNames(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if l := strings.TrimSpace(s.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	require.NoError(t, s.Err())
	require.NotEmpty(t, out)
	return out
}

// mcoTemplateProvisioning derives the class from the MCO's templates, as its list says: oneshot
// units tied to the boot before the kubelet, and units that write the node's identity or sizing.
func mcoTemplateProvisioning(t *testing.T) []string {
	repo := os.Getenv("REFRESH_AGENT_MCO_REPO")
	if repo == "" {
		repo = "/work/.mirror/openshift+machine-config-operator/repo"
	}
	if _, err := os.Stat(repo); err != nil {
		t.Logf("no MCO source at %s: the list is checked by name only", repo)
		return nil
	}
	ls, err := exec.Command("git", "--git-dir", repo, "ls-tree", "-r", "--name-only", "HEAD", "templates/").Output()
	require.NoError(t, err)
	boot := []string{"kubelet-dependencies.target", "kubelet.service", "node-valid-hostname.service", "network-online.target",
		"network-pre.target", "firstboot-osupdate.target"}
	nameRe := regexp.MustCompile(`(?m)^name:\s*"?([A-Za-z0-9@._-]+)"?`)
	tieRe := regexp.MustCompile(`(?m)^\s*(Before|WantedBy|RequiredBy)=(.*)$`)
	var out []string
	for _, f := range strings.Fields(string(ls)) {
		if !strings.Contains(f, "/units/") {
			continue
		}
		raw, err := exec.Command("git", "--git-dir", repo, "show", "HEAD:"+f).Output()
		require.NoError(t, err, f)
		m := nameRe.FindSubmatch(raw)
		if m == nil || !strings.Contains(string(raw), "contents:") {
			continue // a drop-in of another unit, or no unit
		}
		name, text := string(m[1]), string(raw)
		tied := strings.Contains(text, "ConditionFirstBoot=")
		for _, tm := range tieRe.FindAllStringSubmatch(text, -1) {
			for _, u := range strings.Fields(tm[2]) {
				tied = tied || slices.Contains(boot, u)
			}
		}
		oneshot := regexp.MustCompile(`(?m)^\s*Type=oneshot`).MatchString(text)
		identity := regexp.MustCompile(`hostname|nodename|providerid|node-size`).MatchString(name)
		if (oneshot && tied) || identity || name == "firstboot-osupdate.target" {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	require.NotEmpty(t, out, "the MCO's templates hold provisioning units")
	return out
}
