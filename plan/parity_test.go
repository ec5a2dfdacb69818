package plan_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
	"github.com/openshift/refresh-agent/test/fixture"
	"github.com/openshift/refresh-agent/test/mcdref"
)

// The parity table, docs/mcd-parity.md, read as test cases: every row names a case below, and its
// "MCD" and "project" cells are the two verdicts. The MCD's is checked against mcdref (the daemon's
// decision code transcribed), the project's against the planner, so a change to either side (or to
// the table) fails here.

const parityDoc = "../docs/mcd-parity.md"

// parityCase is a change from one rendered MachineConfig to another under a NodeDisruptionPolicy
// (spec.nodeDisruptionPolicy, the same document for the MCO and the project's --policy).
type parityCase struct {
	cur, des   func() *fixture.Config
	curM, desM *fixture.Machine // nil: fixture.DefaultMachine()
	ndp        string
}

const (
	regOld = "unqualified-search-registries = [\"registry.access.redhat.com\"]\n\n[[registry]]\nlocation = \"quay.io/openshift\"\n\n" +
		"[[registry.mirror]]\nlocation = \"mirror.example.com/openshift\"\npull-from-mirror = \"digest-only\"\n"
	// A digest-only mirror added: safe without a drain.
	regSafe = regOld + "\n[[registry.mirror]]\nlocation = \"mirror2.example.com/openshift\"\npull-from-mirror = \"digest-only\"\n"
	// The mirror removed: not safe.
	regUnsafe = "unqualified-search-registries = [\"registry.access.redhat.com\"]\n\n[[registry]]\nlocation = \"quay.io/openshift\"\n"

	credDropin = "/etc/systemd/system/kubelet.service.d/40-kubelet-crio-image-credential-provider.conf"
)

// parityBase is a worker's config: registries.conf, the pull secret, core's key, and a unit.
func parityBase() *fixture.Config {
	c := fixture.Ignition("3.2.0").
		File(registries, []byte(regOld), 0o644).
		File(pullSecret, []byte(`{"auths":{}}`), 0o600).
		File("/etc/myapp/app.conf", []byte("v1"), 0o644).
		SSHKeys("ssh-ed25519 AAAA one")
	c.Systemd.Units = append(c.Systemd.Units, types.Unit{Name: "myapp.service", Enabled: ptrTo(true),
		Contents: ptrTo("[Service]\nExecStart=/bin/sleep infinity\n[Install]\nWantedBy=multi-user.target\n")})
	return c
}

func ptrTo[T any](v T) *T { return &v }

func with(f func(c *fixture.Config)) func() *fixture.Config {
	return func() *fixture.Config { c := parityBase(); f(c); return c }
}

func file(p, data string) func() *fixture.Config {
	return with(func(c *fixture.Config) { c.File(p, []byte(data), 0o644) })
}

func unitEdit(f func(u *types.Unit)) func() *fixture.Config {
	return with(func(c *fixture.Config) {
		for i := range c.Systemd.Units {
			if c.Systemd.Units[i].Name == "myapp.service" {
				f(&c.Systemd.Units[i])
			}
		}
	})
}

const myappRule = "units:\n- name: myapp.service\n  actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n" +
	"unitPrograms: {myapp.service: [/usr/bin/myapp]}\n" // granted to its changed lines (issue 27 class 3)

var parityCases = map[string]parityCase{
	// The MCO's default NodeDisruptionPolicy.
	"default-kubelet-auth":   {des: with(func(c *fixture.Config) { c.File(pullSecret, []byte(`{"auths":{"x":{}}}`), 0o600) })}, // 0600 as the MCO writes it (its mode ceiling)
	"default-gpg":            {des: file("/etc/machine-config-daemon/no-reboot/containers-gpg.pub", "key")},
	"default-policy-json":    {des: file("/etc/containers/policy.json", "{}")},
	"default-registries":     {des: file(registries, regSafe)},
	"registries-unsafe":      {des: file(registries, regUnsafe)},
	"default-registries-d":   {des: file("/etc/containers/registries.d/x.yaml", "docker: {}")},
	"default-crio-policies":  {des: file("/etc/crio/policies/x.json", "{}")},
	"default-nmstate":        {des: file("/etc/nmstate/openshift/eth0.yml", "x")},
	"default-user-ca":        {des: file(trust, "pem")},
	"default-cred-providers": {des: file(credProv, string(fixture.CredentialProviderConfig("ecr")))},
	"default-cred-dropin":    {des: file(credDropin, string(fixture.CredProviderDropin("/etc/kubernetes/credential-providers/generic-credential-provider.yaml")))},
	"default-iri-config":     {des: file("/etc/iri-registry/certs/tls.crt", "pem")},
	"default-iri-script":     {des: file("/usr/local/bin/load-registry-image.sh", "#!/bin/sh\n")},
	"default-iri-root-ca":    {des: file("/etc/pki/ca-trust/source/anchors/iri-root-ca.crt", "pem")},
	"default-iri-unit": {des: with(func(c *fixture.Config) {
		c.Systemd.Units = append(c.Systemd.Units, types.Unit{Name: "iri-registry.service", Contents: ptrTo("[Service]\nExecStart=/bin/true\n")})
	})},
	"default-sshkey": {des: with(func(c *fixture.Config) { c.SSHKeys("ssh-ed25519 AAAA two") })},
	"unlisted-file":  {des: file("/etc/myapp.conf", "x")},
	"unlisted-unit":  {des: unitEdit(func(u *types.Unit) { u.Contents = ptrTo("[Service]\nExecStart=/bin/sleep 1\n") })},

	// NodeDisruptionPolicy rules as a user writes them.
	"ndp-file-restart": {des: file("/etc/myapp/app.conf", "v2"),
		ndp: "files:\n- path: /etc/myapp/app.conf\n  actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n"},
	"ndp-directory": {des: file("/etc/myapp/app.conf", "v2"),
		ndp: "files:\n- path: /etc/myapp\n  actions: [{type: Reload, reload: {serviceName: myapp.service}}]\n"},
	"ndp-longest-match": {des: file("/etc/myapp/app.conf", "v2"),
		ndp: "files:\n- path: /etc/myapp\n  actions: [{type: Reboot}]\n- path: /etc/myapp/app.conf\n  actions: [{type: None}]\n"},
	"ndp-sibling-not-matched": {des: file("/etc/myapp/app.conf.bak", "x"),
		ndp: "files:\n- path: /etc/myapp/app.conf\n  actions: [{type: None}]\n"},
	"ndp-drain": {des: file("/etc/myapp/app.conf", "v2"),
		ndp: "files:\n- path: /etc/myapp/app.conf\n  actions: [{type: Drain}, {type: Reload, reload: {serviceName: myapp.service}}]\n"},
	"ndp-reboot": {des: file("/etc/myapp/app.conf", "v2"),
		ndp: "files:\n- path: /etc/myapp/app.conf\n  actions: [{type: Reboot}]\n"},
	"ndp-none-beside-restart": {des: with(func(c *fixture.Config) {
		c.File("/etc/myapp/app.conf", []byte("v2"), 0o644).File(pullSecret, []byte(`{"auths":{"x":{}}}`), 0o600)
	}), ndp: "files:\n- path: /etc/myapp/app.conf\n  actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n"},
	"ndp-override-default": {des: file("/etc/containers/policy.json", "{}"),
		ndp: "files:\n- path: /etc/containers/policy.json\n  actions: [{type: None}]\n"},
	"ndp-sshkey-drain": {des: with(func(c *fixture.Config) { c.SSHKeys("ssh-ed25519 AAAA two") }),
		ndp: "sshkey:\n  actions: [{type: Drain}]\n"},
	"ndp-unit-contents": {des: unitEdit(func(u *types.Unit) { u.Contents = ptrTo("[Service]\nExecStart=/bin/sleep 2\n") }), ndp: myappRule},
	"ndp-unit-daemon-reload": {des: unitEdit(func(u *types.Unit) { u.Contents = ptrTo("[Service]\nExecStart=/bin/sleep 2\n") }),
		ndp: "units:\n- name: myapp.service\n  actions: [{type: DaemonReload}, {type: Restart, restart: {serviceName: myapp.service}}]\n"},

	// Unit state under a unit rule (the base has myapp.service enabled, with contents).
	"unit-disabled": {des: unitEdit(func(u *types.Unit) { u.Enabled = ptrTo(false) }), ndp: myappRule},
	"unit-enabled": {cur: unitEdit(func(u *types.Unit) { u.Enabled = ptrTo(false) }),
		des: parityBase, ndp: myappRule},
	"unit-masked":  {des: unitEdit(func(u *types.Unit) { u.Mask, u.Contents, u.Enabled = ptrTo(true), nil, nil }), ndp: myappRule},
	"unit-removed": {des: with(func(c *fixture.Config) { c.Systemd.Units = nil }), ndp: myappRule},
	"unit-enabled-also": {cur: unitEdit(func(u *types.Unit) { u.Enabled = ptrTo(false) }),
		des: unitEdit(func(u *types.Unit) { *u.Contents += "Also=other.service\n" }), ndp: myappRule},
	"unit-enabled-unset": {des: unitEdit(func(u *types.Unit) { u.Enabled = nil }), ndp: myappRule},
	"unit-unmasked-with-contents": {cur: unitEdit(func(u *types.Unit) { u.Mask, u.Contents, u.Enabled = ptrTo(true), nil, nil }),
		des: parityBase, ndp: myappRule},

	// The silent differences.
	"trailing-slash-registries": {des: file(registries, regUnsafe),
		ndp: "files:\n- path: /etc/containers/registries.conf/\n  actions: [{type: None}]\n"},
	"trailing-slash-file": {des: file("/etc/myapp/app.conf", "v2"),
		ndp: "files:\n- path: /etc/myapp/app.conf/\n  actions: [{type: Restart, restart: {serviceName: myapp.service}}]\n"},
	"ssh-all-keys-removed": {des: with(func(c *fixture.Config) { c.SSHKeys() })},
	"ssh-core-dropped":     {des: with(func(c *fixture.Config) { c.Passwd.Users = nil })},
	"ssh-keys-removed-password-kept": {
		cur: with(func(c *fixture.Config) { c.Passwd.Users[0].PasswordHash = ptrTo("$6$salt$hash") }),
		des: with(func(c *fixture.Config) { c.SSHKeys(); c.Passwd.Users[0].PasswordHash = ptrTo("$6$salt$hash") })},
	"noncore-user-unchanged": {
		cur: with(func(c *fixture.Config) { c.Passwd.Users = append(c.Passwd.Users, types.PasswdUser{Name: "alice"}) }),
		des: with(func(c *fixture.Config) {
			c.SSHKeys("ssh-ed25519 AAAA two")
			c.Passwd.Users = append(c.Passwd.Users, types.PasswdUser{Name: "alice"})
		})},
	"extensions-reordered": {des: parityBase,
		curM: &fixture.Machine{Extensions: []string{"usbguard", "kerberos"}}, desM: &fixture.Machine{Extensions: []string{"kerberos", "usbguard"}}},
	"registries-gzip": {
		cur: with(func(c *fixture.Config) { c.GzipFile(registries, []byte(regOld), 0o644) }),
		des: with(func(c *fixture.Config) { c.GzipFile(registries, []byte(regSafe), 0o644) })},

	// Documented differences and other rules of the daemon.
	"passwd-hash":      {des: with(func(c *fixture.Config) { c.Passwd.Users[0].PasswordHash = ptrTo("$6$salt$new") })},
	"kernel-arguments": {des: parityBase, desM: &fixture.Machine{KernelArguments: []string{"nosmt"}}},
	"extensions-added": {des: parityBase, desM: &fixture.Machine{Extensions: []string{"usbguard"}}},
	"directory-added": {des: with(func(c *fixture.Config) {
		c.Storage.Directories = append(c.Storage.Directories, types.Directory{Node: types.Node{Path: "/etc/myapp/d"}})
	})},
	"file-append": {des: with(func(c *fixture.Config) {
		for i := range c.Storage.Files {
			if c.Storage.Files[i].Path == "/etc/myapp/app.conf" {
				c.Storage.Files[i].Append = []types.Resource{{Source: ptrTo("data:,more")}}
			}
		}
	}), ndp: "files:\n- path: /etc/myapp/app.conf\n  actions: [{type: None}]\n"},
	"project-kubelet-ca": {des: file("/etc/kubernetes/kubelet-ca.crt", "pem")},
	"project-haproxy":    {des: file("/etc/kubernetes/apiserver-proxy-config/haproxy.cfg", "global\n")},
}

// machineOf renders a case side as the daemon sees it and as the payload the project reads.
func machineOf(t *testing.T, c *fixture.Config, m *fixture.Machine) (mcdref.Machine, []byte) {
	t.Helper()
	mach := fixture.DefaultMachine()
	if m != nil {
		if m.KernelArguments != nil {
			mach.KernelArguments = m.KernelArguments
		}
		mach.Extensions = m.Extensions
	}
	ign := c.JSON()
	var cfg types.Config
	require.NoError(t, json.Unmarshal(ign, &cfg))
	return mcdref.Machine{Ignition: cfg, OSImageURL: mach.OSImageURL, KernelArguments: mach.KernelArguments,
		FIPS: mach.FIPS, KernelType: mach.KernelType, Extensions: mach.Extensions}, fixture.MachineConfigJSON(mach, ign)
}

// projectVerdict words the planner's decision as the table does.
func projectVerdict(t *testing.T, pc parityCase, cur, des []byte) string {
	t.Helper()
	pol, err := allowlist.ParsePolicy([]byte(pc.ndp))
	if err != nil {
		return "policy error: " + err.Error()
	}
	c, err := diff.Decode(cur)
	require.NoError(t, err)
	d, err := diff.Decode(des)
	require.NoError(t, err)
	p, err := plan.Build(plan.Inputs{Current: c, Desired: d, Policy: pol})
	if err != nil {
		return "error: " + err.Error()
	}
	if !p.Eligible {
		var reasons []string
		for _, r := range p.Refused {
			reasons = append(reasons, r.Reason)
		}
		return "refused: " + strings.Join(reasons, "; ")
	}
	if len(p.Changes) == 0 {
		return "no change"
	}
	var words []string
	for _, a := range p.Actions {
		switch {
		case a.Action == allowlist.ActionDaemonReload:
			words = append(words, "daemon-reload")
		case a.Pod != "":
			words = append(words, "restart pod "+a.Pod)
		default:
			words = append(words, strings.ToLower(string(a.Action))+" "+a.Unit)
		}
	}
	s := strings.Join(words, ", ")
	if s == "" {
		s = "none"
	}
	if p.Drain {
		s = "drain; " + s
	}
	return "applied: " + s
}

type parityRow struct{ id, mcd, project string }

var backticked = regexp.MustCompile("`([^`]*)`")

// parityRows reads the table rows: | `id` | change | the MCD | `MCD verdict` | `project verdict` | why |
func parityRows(t *testing.T) []parityRow {
	data, err := os.ReadFile(parityDoc)
	require.NoError(t, err)
	var rows []parityRow
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		require.GreaterOrEqual(t, len(cells), 6, "row %q: want | id | change | the MCD | MCD | project | why |", line)
		cell := func(i int) string {
			m := backticked.FindStringSubmatch(cells[i])
			require.NotNil(t, m, "row %q: cell %d has no `verdict`", line, i)
			return m[1]
		}
		rows = append(rows, parityRow{id: cell(0), mcd: cell(3), project: cell(4)})
	}
	return rows
}

func TestParityTable(t *testing.T) {
	rows := parityRows(t)
	require.NotEmpty(t, rows)
	var seen []string
	for _, r := range rows {
		t.Run(r.id, func(t *testing.T) {
			require.NotContains(t, seen, r.id, "two rows for one case")
			seen = append(seen, r.id)
			pc, ok := parityCases[r.id]
			require.True(t, ok, "no parity case %q", r.id)
			if pc.cur == nil {
				pc.cur = parityBase
			}
			curM, cur := machineOf(t, pc.cur(), pc.curM)
			desM, des := machineOf(t, pc.des(), pc.desM)
			spec, err := mcdref.ParseSpec(pc.ndp)
			require.NoError(t, err)
			assert.Equal(t, r.mcd, mcdref.Decide(curM, desM, mcdref.Merge(spec)).String(), "the MCD's verdict")
			got := projectVerdict(t, pc, cur, des)
			if kind, want, _ := strings.Cut(r.project, ": "); kind == "refused" || kind == "policy error" {
				assert.True(t, strings.HasPrefix(got, kind+": ") && strings.Contains(got, want), "the project's verdict: want %q, got %q", r.project, got)
			} else {
				assert.Equal(t, r.project, got, "the project's verdict")
			}
		})
	}
	for id := range parityCases {
		assert.True(t, slices.Contains(seen, id), "parity case %q has no row in %s", id, parityDoc)
	}
}
