package plan_test

import (
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/test/fixture"
)

// podmanKube is podman's stock template (contrib/systemd/system/podman-kube@.service.in, packaged
// since podman 4.2): its ExecStart plays the pod file the instance names.
const podmanKube = "[Unit]\nDescription=A template for running K8s workloads via podman-kube-play\nDocumentation=man:podman-kube-play(1)\n" +
	"Wants=network-online.target\nAfter=network-online.target\nRequiresMountsFor=%t/containers\n\n[Service]\n" +
	"Environment=PODMAN_SYSTEMD_UNIT=%n\nTimeoutStopSec=70\nExecStart=/usr/bin/podman kube play --replace --service-container=true %I\n" +
	"ExecStop=/usr/bin/podman kube down %I\nType=notify\nNotifyAccess=all\n\n[Install]\nWantedBy=default.target\n"

// containerGetty is systemd 252's container-getty@.service: the instance chooses the terminal.
const containerGetty = "[Unit]\nDescription=Container Getty on /dev/pts/%I\nAfter=systemd-user-sessions.service\nBefore=getty.target\n" +
	"IgnoreOnIsolate=yes\nConditionPathExists=/dev/pts/%I\n[Service]\n" +
	"ExecStart=-/sbin/agetty -o '-p -- \\\\u' --noclear --keep-baud - 115200,38400,9600 $TERM\nType=idle\nRestart=always\n" +
	"UtmpIdentifier=pts/%I\nStandardInput=tty\nStandardOutput=tty\nTTYPath=/dev/pts/%I\nTTYReset=yes\n"

// getty is systemd 252's getty@.service (its TTYPath= is the instance's).
const getty = "[Unit]\nDescription=Getty on %I\nAfter=systemd-user-sessions.service\nBefore=getty.target\nConditionPathExists=/dev/tty0\n" +
	"[Service]\nExecStart=-/sbin/agetty -o '-p -- \\\\u' --noclear - $TERM\nType=idle\nRestart=always\nUtmpIdentifier=%I\n" +
	"StandardInput=tty\nStandardOutput=tty\nTTYPath=/dev/%I\nTTYReset=yes\n[Install]\nWantedBy=getty.target\nDefaultInstance=tty1\n"

// nodeTemplates is a node's unit directories for the tests (allowlist.NodeUnitReader): the unit
// files by name, a template's dropin as NAME.d/10-node.conf; an instance without a file of its own
// is its template's.
type nodeTemplates map[string]string

func (files nodeTemplates) ReadUnit(name string) (allowlist.NodeUnitDef, bool, error) {
	u := allowlist.NodeUnitDef{Name: name}
	names := []string{name}
	if tmpl, _, ok := allowlist.Instance(name); ok {
		names = append(names, tmpl)
	}
	for _, n := range names {
		if text, ok := files[n]; ok {
			u.Fragments = append(u.Fragments, allowlist.NodeUnitFile{Path: "/usr/lib/systemd/system/" + n, Name: n, Contents: text})
		}
		if d, ok := files[n+".d/10-node.conf"]; ok {
			u.Dropins = append(u.Dropins, allowlist.NodeUnitFile{Path: "/etc/systemd/system/" + n + ".d/10-node.conf", Name: "10-node.conf", Contents: d})
		}
	}
	return u, len(u.Fragments)+len(u.Dropins) > 0, nil
}

var round9Templates = nodeTemplates{
	"podman-kube@.service":           podmanKube,
	"container-getty@.service":       containerGetty,
	"getty@.service":                 getty,
	"container-app@.service":         "[Unit]\nDescription=app %i\n[Service]\nExecStart=/usr/bin/podman run --rm --name %i -v /etc/app/%i:/data quay.io/x/app@sha256:0\nExecStop=/usr/bin/podman stop %i\n",
	"myapp-notify@.service":          "[Unit]\nDescription=tell the owner %i failed\n[Service]\nType=oneshot\nExecStart=/usr/bin/logger -t myapp-notify \"%i failed\"\n",
	"plain@.service":                 "[Unit]\nDescription=a template whose commands ignore the instance (%i)\n[Service]\nType=oneshot\nExecStart=/usr/bin/true\n",
	"runs@.service":                  "[Service]\nExecStart=/bin/sh /%I\n",
	"runsprog@.service":              "[Service]\nExecStart=%f\n",
	"asuser@.service":                "[Service]\nUser=%i\nExecStart=/usr/bin/true\n",
	"envfile@.service":               "[Service]\nEnvironmentFile=/%I\nExecStart=/usr/bin/true\n",
	"state@.service":                 "[Service]\nStateDirectory=%i\nExecStart=/usr/bin/true\n",
	"chain@.service":                 "[Unit]\nWants=podman-kube@%i.service\n[Service]\nExecStart=/usr/bin/true\n",
	"wrapped@.service":               "[Service]\nEnvironment=F=/%I\nExecStart=/usr/bin/podman kube play ${F}\n",
	"dropin@.service":                "[Service]\nExecStart=/usr/bin/true\n",
	"dropin@.service.d/10-node.conf": "[Service]\nExecStartPost=/usr/bin/podman kube play %I\n",
	"search@.service":                "[Service]\nExecSearchPath=/%I\nExecStart=myprog\n",
	"conflicts@.service":             "[Unit]\nConflicts=%i.service\n[Service]\nExecStart=/usr/bin/true\n",
}

// Round 9 (units 06): with the built-in policy a payload wrote /etc/iri-registry/pod.yaml and added
// iri-registry.service with Wants=podman-kube@etc-iri\x2dregistry-pod.yaml.service: the restart
// started podman's stock template with the payload's instance, and `podman kube play %I` played the
// payload's privileged pod as root. An instance a payload names is judged as its template with the
// instance substituted, the commands holding it as changed lines; one whose template the judge
// cannot read (no --root) is refused unless a rule names it.
func TestRound9PayloadInstanceIsJudgedAsItsTemplate(t *testing.T) {
	const pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  hostPID: true\n  containers:\n  - {name: c, image: quay.io/x, securityContext: {privileged: true}}\n"
	iri := func(deps string) *fixture.Config {
		c := withUnits(unit("iri-registry.service", str("[Unit]\nDescription=iri\n"+deps+"\n[Service]\nExecStart=/bin/sleep infinity\n")))
		return c.File("/etc/iri-registry/pod.yaml", []byte(pod), 0o644)
	}
	builtIn := func(read allowlist.NodeUnitReader) *allowlist.Policy {
		pol := allowlist.Default()
		if read != nil {
			pol = pol.WithNodeUnitFiles(read)
		}
		return pol
	}
	const kube = `podman-kube@etc-iri\x2dregistry-pod.yaml.service`
	refused := map[string]string{
		// The adversary's case, and the other settings that start it.
		"Wants=" + kube:     "podman kube",
		"Requires=" + kube:  "podman kube",
		"Upholds=" + kube:   "podman kube",
		"OnSuccess=" + kube: "podman kube",
		"OnFailure=" + kube: "podman kube",
		"Requisite=" + kube: "podman kube",
		// The instance escaping to a path in the unit's own places, or to an absolute one.
		`Wants=podman-kube@run-iri\x2dregistry-pod.yaml.service`:           "podman kube",
		`Wants=podman-kube@-etc-iri\x2dregistry-pod.yaml.service`:          "podman kube",
		`Wants=podman-kube@\x2fetc\x2firi\x2dregistry\x2fpod.yaml.service`: "podman kube",
		`Wants=podman-kube@var-lib-iri\x2dregistry-pod.yaml.service`:       "podman kube",
		// container-*@ templates: the terminal, or the container's name and volume, are the instance's.
		`Wants=container-getty@1.service`:                       "UtmpIdentifier=pts/%I: the payload's instance",
		`Wants=container-app@etc-iri\x2dregistry.service`:       "podman run",
		`Wants=getty@tty1.service`:                              "UtmpIdentifier=%I: the payload's instance",
		`Wants=runs@etc-iri\x2dregistry-pod.yaml.service`:       "a changed line",
		`Wants=runsprog@etc-iri\x2dregistry-pod.yaml.service`:   "a changed line",
		`Wants=asuser@root.service`:                             "User=",
		`Wants=envfile@etc-iri\x2dregistry-pod.yaml.service`:    "EnvironmentFile=",
		`Wants=state@kubelet.service`:                           "StateDirectory=",
		`Wants=chain@etc-iri\x2dregistry-pod.yaml.yaml.service`: "podman kube",
		`Wants=wrapped@etc-iri\x2dregistry-pod.yaml.service`:    "podman kube",
		`Wants=dropin@etc-iri\x2dregistry-pod.yaml.service`:     "ExecStartPost=/usr/bin/podman kube play etc/iri-registry/pod.yaml",
		`Wants=search@etc-iri\x2dregistry.service`:              "ExecSearchPath=/%I: the payload's instance",
		`Wants=conflicts@kubelet.service`:                       "Conflicts=%i.service: the payload's instance",
		// The unsafe templates stay refused by name, before their text.
		"Wants=systemd-fsck@dev-sda1.service": "acts on the whole node",
		"Wants=user@0.service":                "acts on the whole node",
		"Wants=lvm2-pvscan@8:1.service":       "acts on the whole node",
		"Wants=systemd-nspawn@x.service":      "acts on the whole node",
	}
	for line, want := range refused {
		t.Run("root/"+line, func(t *testing.T) {
			p := buildWith(t, builtIn(round9Templates), nil, plain(), iri(line))
			refusedWith(t, p, "unit iri-registry.service: ", strings.SplitN(line, "=", 2)[1], want)
		})
		t.Run("dropin/"+line, func(t *testing.T) {
			cur := withUnits(unit("iri-registry.service", str("[Service]\nExecStart=/bin/sleep infinity\n")))
			des := withUnits(unit("iri-registry.service", str("[Service]\nExecStart=/bin/sleep infinity\n"),
				types.Dropin{Name: "10-x.conf", Contents: str("[Unit]\n" + line + "\n")}))
			p := buildWith(t, builtIn(round9Templates), nil, cur, des)
			refusedWith(t, p, "unit iri-registry.service: ", want)
		})
		// Without the node's unit files (diff, no --root): an instance of a template no rule names.
		t.Run("no-root/"+line, func(t *testing.T) {
			p := buildWith(t, builtIn(nil), nil, plain(), iri(line))
			refusedWith(t, p, "unit iri-registry.service: ", strings.SplitN(line, "=", 2)[1])
		})
	}
	p := buildWith(t, builtIn(nil), nil, plain(), iri("Wants="+kube))
	refusedWith(t, p, "cannot read the template here")

	// [Install]: the payload's unit pulled in by an instance is tied to no unit a rule names.
	for _, line := range []string{"WantedBy=" + kube, "RequiredBy=" + kube, "UpheldBy=" + kube} {
		t.Run("install/"+line, func(t *testing.T) {
			c := withUnits(unit("iri-registry.service", str("[Service]\nExecStart=/bin/sleep infinity\n[Install]\n"+line+"\n")))
			p := buildWith(t, builtIn(round9Templates), nil, plain(), c)
			refusedWith(t, p, "unit iri-registry.service: ", kube)
		})
	}

	// Benign neighbours: a template whose commands take the instance only as text, one whose
	// commands ignore it, the systemd.unit(5) OnFailure=notify@%n idiom, and (without a root) an
	// instance a rule of the node policy names.
	for _, line := range []string{"OnFailure=myapp-notify@%n.service", "Wants=plain@anything.service",
		`Wants=myapp-notify@etc-iri\x2dregistry-pod.yaml.service`} {
		t.Run("accepted/"+line, func(t *testing.T) {
			p := buildWith(t, builtIn(round9Templates), nil, plain(), iri(line))
			assert.True(t, p.Eligible, "%+v", p.Refused)
		})
	}
	named, err := allowlist.ParsePolicy([]byte(reachPolicy))
	require.NoError(t, err)
	named.AllowedUnits = append(named.AllowedUnits, "myapp-notify@myapp.service.service")
	cur := withUnits(unit("myapp.service", str("[Service]\nExecStart=/usr/bin/myapp\n")))
	des := withUnits(unit("myapp.service", str("[Unit]\nOnFailure=myapp-notify@%n.service\n[Service]\nExecStart=/usr/bin/myapp\n")))
	assert.True(t, buildWith(t, named, nil, cur, des).Eligible)
	des = withUnits(unit("myapp.service", str("[Unit]\nOnFailure=myapp-notify@other.service\n[Service]\nExecStart=/usr/bin/myapp\n")))
	refusedWith(t, buildWith(t, named, nil, cur, des), "myapp-notify@other.service", "cannot read the template")

	// The node's own units keep their instances: only what a payload adds is judged so.
	own := withUnits(unit("iri-registry.service", str("[Unit]\nWants="+kube+"\n[Service]\nExecStart=/bin/sleep infinity\n")))
	changed := withUnits(unit("iri-registry.service", str("[Unit]\nWants="+kube+"\n[Service]\nExecStart=/bin/sleep 1d\n")))
	assert.True(t, buildWith(t, builtIn(nil), nil, own, changed).Eligible)
}
