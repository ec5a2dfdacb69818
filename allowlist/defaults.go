package allowlist

import "slices"

// The built-in policy is the MCO's own default NodeDisruptionPolicy (machine-config-operator
// pkg/apihelpers/apihelpers.go, defaultClusterPolicies, at 7ff337a; what `oc get machineconfiguration
// cluster` shows under status.nodeDisruptionPolicyStatus.clusterPolicies when no user rule is set),
// read as the MCO reads it, then the project's own rules on top. Every default rule that applies
// without a reboot applies here with the same actions, except the one path under a denied prefix
// (mcoDefaultsNotApplied). docs/mcd-parity.md has the table; TestMCODefaults checks it.

// Paths of the MCO's defaults (machine-config-operator pkg/daemon/constants/constants.go).
const (
	containersGPGPK = "/etc/machine-config-daemon/no-reboot/containers-gpg.pub" // GPGNoRebootPath
	// credProviderDropin is KubeletCrioImageCredProviderConfPath: the kubelet dropin that the
	// ContainerRuntimeConfig controller writes as a storage file (not a unit dropin) to turn on
	// CRI-O's image credential provider.
	credProviderDropin = "/etc/systemd/system/kubelet.service.d/40-kubelet-crio-image-credential-provider.conf"
	kubeAPIServerProxy = "/etc/kubernetes/manifests/kube-apiserver-proxy.yaml"
	kubeletAuthFile    = "/var/lib/kubelet/config.json" // KubeletAuthFile: the pull secret
	// UnitIRIRegistry is the internal-release-image registry (IRIRegistryServiceName).
	UnitIRIRegistry = "iri-registry.service"
)

// mcoDefaultsNotApplied are the MCO's default rules a refresh never applies, with the reason.
var mcoDefaultsNotApplied = map[string]string{
	// IRILoadImageScriptPath: a script that a root unit runs, under /usr (on RHCOS /usr/local is
	// /var/usrlocal): writing it is running code as root.
	"/usr/local/bin/load-registry-image.sh": "under denied prefix /usr: a script run as root by iri-registry.service",
}

// MCODefaultNotApplied says why the MCO's default rule for path is not applied here, or "".
func MCODefaultNotApplied(path string) string { return mcoDefaultsNotApplied[path] }

// Default is the built-in policy: the MCO's default NodeDisruptionPolicy, then the project's own
// rules.
func Default() *Policy {
	p := &Policy{
		AllowedUnits: []string{UnitCrio, UnitKubelet, UnitUpdateCA, UnitIRIRegistry},
		CoreSSHKeys:  true, // sshkey: [None]
	}
	reload := func(u string) Step { return Step{Action: ActionReload, Unit: u} }
	restart := func(u string) Step { return Step{Action: ActionRestart, Unit: u} }
	// An MCO rule covers its path and everything below it (FindClosestFilePolicyPathMatch), except
	// where the path is an exception to a denied prefix: that exact file only.
	mco := func(path string, daemonReload bool, steps ...Step) {
		eff := Effects{Steps: steps, DaemonReload: daemonReload}
		r := Rule{Path: path}
		r.Action, r.Services = eff.summary()
		if daemonReload {
			// Only rules the agent's own format cannot say carry effects (and a name in the plan).
			eff.Name = "built-in " + path
			r.Effects = eff
		}
		p.Rules = append(p.Rules, r)
		if !isDeniedException(path) {
			below := r
			below.Path = path + "/"
			p.Rules = append(p.Rules, below)
		}
	}
	mco(kubeletAuthFile, false) // KubeletAuthFile: None
	mco(containersGPGPK, false, reload(UnitCrio))
	mco("/etc/containers/policy.json", false, reload(UnitCrio))
	// ContainerRegistryConfPath: Special. Reload crio, after a drain unless the change is safe as
	// isSafeContainerRegistryConfChanges judges it.
	p.Rules = append(p.Rules, Rule{Path: Registries, Action: ActionReload, Services: []string{UnitCrio},
		Effects: Effects{Special: true, Steps: []Step{reload(UnitCrio)}, Name: "built-in " + Registries}})
	mco("/etc/containers/registries.d", false, reload(UnitCrio)) // SigstoreRegistriesConfigDir
	mco("/etc/crio/policies", false, reload(UnitCrio))           // CrioPoliciesDir
	mco("/etc/nmstate/openshift", false)                         // OpenShiftNMStateConfigDir: None
	mco("/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt", false, restart(UnitUpdateCA), restart(UnitCrio))
	mco("/etc/kubernetes/credential-providers", false, restart(UnitKubelet))
	mco(credProviderDropin, true, restart(UnitKubelet))
	mco("/etc/iri-registry", false, restart(UnitIRIRegistry))                             // IRIRegistryConfigPath
	mco("/etc/pki/ca-trust/source/anchors/iri-root-ca.crt", false, restart(UnitUpdateCA)) // IRIRootCAPath
	p.UnitRules = append(p.UnitRules, UnitRule{Unit: UnitIRIRegistry, Effects: Effects{DaemonReload: true,
		Steps: []Step{restart(UnitIRIRegistry)}, Name: "built-in units (" + UnitIRIRegistry + ")"}})

	// The project's own rules: files the machine-config server adds to HyperShift payloads, and
	// HyperShift's API server proxy. The MCO would reboot for them (or never sees them as
	// MachineConfig files); docs/mcd-parity.md says why each needs no reboot.
	none := func(path string) { p.Rules = append(p.Rules, Rule{Path: path, Action: ActionNone}) }
	none("/etc/kubernetes/kubelet-ca.crt")
	none("/etc/mco/internal-registry-pull-secret.json")
	none(kubeAPIServerProxy)
	// haproxy -f never re-reads its config: the static pod is restarted through the CRI.
	p.Rules = append(p.Rules, Rule{Path: "/etc/kubernetes/apiserver-proxy-config/haproxy.cfg", Action: ActionRestart, Pods: []string{PodAPIServerProxy}})
	// Written by the MCS when serving; the MCD's certificate writer rewrites all three in place with
	// no service action: kubelet reloads its client CA file by itself, and CRI-O reads certs.d at
	// every pull.
	none("/etc/kubernetes/static-pod-resources/configmaps/cloud-config/ca-bundle.pem")
	none("/etc/docker/certs.d/")
	return p
}

// dropRulesFor removes the built-in rules and unit rules that act on unit when the policy does not
// allow it.
func (p *Policy) dropRulesFor(unit string) {
	if p.UnitAllowed(unit) {
		return
	}
	p.Rules = slices.DeleteFunc(p.Rules, func(r Rule) bool { return slices.Contains(r.Services, unit) })
	p.UnitRules = slices.DeleteFunc(p.UnitRules, func(r UnitRule) bool {
		return r.Unit == unit || slices.ContainsFunc(r.Steps, func(s Step) bool { return s.Unit == unit })
	})
}

func isDeniedException(path string) bool {
	for _, e := range deniedExceptions {
		if e == path {
			return true
		}
	}
	return false
}
