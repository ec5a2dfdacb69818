package allowlist

import (
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
)

// The node's secrets in a changed line (adversary r12 units/01, 02). Reading is no mutation, so
// the own-places rule (execmutate.go) let a changed line of the built-in iri-registry.service rule
// run sh -c "cat /etc/shadow > /tmp/x" (a 0644 copy of a 0640 file), cat the kubelet's client key
// into the journal, or grep -q ^GUESS /etc/shadow, whose outcome (applied or failed) the agent
// reports: one bit of the file per refresh. So in a changed line, whatever the program (cat, head,
// grep, cp, dd if=, tar, a redirection's "<", a shell's script, an echo that feeds xargs), a word
// that names or may name a secret of the node is refused:
//   - a path at or below a row of nodeSecrets, or a file whose name is a secret's by the class the
//     mode ceilings already use (isPrivateKeyName: *.key, id_rsa, a private/ directory, …);
//   - resolved as the judge resolves every other path: the unit's variables, $HOME, ~, brace
//     words, a pattern by every name it may match (/etc/shado?, /etc/sha*, /e*c/gshadow-), an
//     expansion the judge cannot resolve inside an absolute path read as a pattern
//     ("/etc/sha${x}"), an option's joined value (grep -f/etc/shadow), a relative path from every
//     directory the command may run in (cd /etc && cat shadow, tar -C /etc); ".." and
//     /proc/PID/root are refused before (execdotdot.go, reachPath), and /sysroot and /ostree are
//     the root again (RHCOS's deployment and its /var);
//   - a directory above a secret given to a program that reads below it (grep -r /etc, tar /var/lib,
//     find /etc -exec cat {} +, cp -r, rsync, cpio, an interpreter's arguments, ln -s /var/lib/kubelet);
//   - a word whose value the judge cannot see, handed to a program that opens its operands: a
//     quoted expansion ("$f" of read or for, "$(printf …)"), and xargs's command, whose operands
//     come from its input.
//
// Only the words of the unit's own or granted program that the judge does not model (the kubelet's
// --kubeconfig=, after kubenswrapper) name a secret: a listed one when the node's current definition
// of the unit names it too (Execution.OwnSecrets), a name of the secret class always (the program
// is the node's or the node policy's, its key files its business). The node's own lines are not
// judged by this rule: they are the node's.

// secretRow is one of the node's secrets: a file or a directory (path), a name prefix in a
// directory (prefix: /etc/ssh/ssh_host_…), or a name that holds a word (contains: the
// kubeconfigs of /etc/kubernetes).
type secretRow struct {
	path, prefix, contains, what string
	// class: a tree the node keeps files of the secret class in (isPrivateKeyName, currentPEM) at
	// any depth (the whereabouts and multus kubeconfigs under /etc/kubernetes/cni/net.d/*.d, a
	// registry's client.key under certs.d): every directory in it may hold one (adversary r19 c/01).
	// A contains row's names are matched at any depth below path too.
	class bool
	// device: every file below path but the few harmless character devices (devReadable); the
	// directory itself is above them.
	device bool
}

// devReadable are the devices a changed line may name: they hold no data of the node (the sinks and
// sources, the unit's own descriptors, its terminal, the kernel's log it may write to); /dev/shm is
// a tmpfs, judged as files by the other rules. Every other file under /dev is a disk, a partition,
// a mapper or loop device, memory (/dev/mem, /dev/kmem, /dev/port) or a device the judge does not
// know (adversary r13 e/07: grep -a of the root partition reads /etc/shadow and every key on it).
func devReadable(c string) bool {
	if strings.ContainsAny(c, "*?[") {
		return false // a pattern may match a disk
	}
	if slices.Contains(devSinks, c) || slices.Contains([]string{"/dev/stdin", "/dev/fd"}, c) || under(c, "/dev/shm") {
		return true
	}
	n, ok := strings.CutPrefix(c, "/dev/fd/")
	return ok && n != "" && strings.Trim(n, "0123456789") == ""
}

// nodeSecrets are the node's secrets: the files and trees its credentials live in, as the audit's
// denied and node-policy-only rows with credentials (denied.go) and the pull secrets the MCO writes
// 0600 (secretModes) name them. One list: the exec judge reads it, docs/security.md states it.
var nodeSecrets = func() []secretRow {
	rows := []secretRow{
		{path: "/etc", prefix: "shadow", what: "the passwords (shadow, shadow-, shadow+)"},
		{path: "/etc", prefix: "gshadow", what: "the group passwords"},
		{path: "/etc/security/opasswd", what: "the old passwords"},
		{path: "/var/lib/kubelet/pki", what: "the kubelet's identity: its client and serving keys"},
		{path: "/var/lib/kubelet/kubeconfig", what: "the kubelet's identity"},
		{path: "/var/lib/kubelet/pods", what: "the pods' volumes: service account tokens and Secrets"},
		{path: "/etc/kubernetes/kubeconfig", what: "the kubelet's bootstrap credentials"},
		{path: "/etc/kubernetes", contains: "kubeconfig", what: "a kubeconfig: credentials for the API server"},
		{path: "/etc/kubernetes/static-pod-resources", what: "the control plane's keys and secrets"},
		{path: "/etc/kubernetes/static-pod-certs", what: "the control plane's keys"},
		{path: "/var/lib/etcd", what: "the cluster's database: every secret the API server serves"},
		{path: "/etc/ssh", prefix: "ssh_host_", what: "the node's SSH host keys"},
		{path: "/root", what: "root's home (its .ssh, .kube, .docker, history)"},
		{path: "/var/roothome", what: "root's home (RHCOS's /root)"},
		{path: "/etc/pki/tls/private", what: "TLS private keys"},
		{path: "/var/lib/samba/private", what: "secrets.tdb: the machine account's credentials"},
		{path: "/var/lib/sss", what: "sssd's caches: users' credentials"},
		{path: "/var/lib/gssproxy", what: "keytabs and credential caches"},
		{path: "/etc/krb5.keytab", what: "the host's Kerberos keys"},
		{path: "/etc", prefix: "credstore", what: "credentials handed to units"},
		{path: "/var/lib/systemd/credential.secret", what: "the key of the units' encrypted credentials"},
		{path: "/var/lib/openvswitch/pki", what: "the switch's keys"},
		{path: "/etc/ipsec.d", what: "IPsec keys (its NSS database)"},
		{path: "/var/lib/ipsec/nss", what: "IPsec keys: libreswan's NSS database on RHEL 9 (key4.db, cert9.db; adversary r19 c/02)"},
		{path: "/etc", prefix: "ipsec.secrets", what: "IPsec secrets"},
		// Round 13 (adversary e/01): the other node agents' identities and the node's network,
		// storage and time credentials, under names the class does not read as a key's.
		{path: "/etc/cni/multus/certs", what: "multus's per-node client certificate and key"},
		{path: "/etc/ovn", what: "OVN-Kubernetes' per-node certificates and keys (ovnkube-node-certs) and databases"},
		{path: "/var/lib/ovn-ic/etc", what: "OVN-Kubernetes' per-node certificates and keys (the host's /etc/ovn)"},
		{path: "/var/lib/ovn/etc", what: "OVN-Kubernetes' per-node certificates and keys (the host's /etc/ovn)"},
		{path: "/etc/NetworkManager/system-connections", what: "NetworkManager's connections: Wi-Fi, 802.1X and VPN secrets"},
		{path: "/run/NetworkManager/system-connections", what: "NetworkManager's runtime connections: their secrets"},
		{path: "/var/lib/NetworkManager", what: "NetworkManager's state: its secret_key and leases"},
		{path: "/etc/iscsi", what: "iSCSI's CHAP credentials (iscsid.conf)"},
		{path: "/var/lib/iscsi", what: "iSCSI's node records: their CHAP credentials"},
		{path: "/etc/chrony.keys", what: "chrony's NTP keys"},
		{path: "/etc/sssd", what: "sssd's configuration: its bind passwords"},
		{path: "/etc/wpa_supplicant", what: "wpa_supplicant's networks: their keys"},
		// Round 13 (adversary e/06): CRI-O's per-container OCI specs hold the pods' Secret-sourced
		// environment (process.env), and the layers the images' own secrets.
		{path: "/var/lib/containers/storage", what: "container storage: each container's spec (its Secret-sourced environment) and the images' layers"},
		{path: "/run/containers/storage", what: "container storage: each running container's spec (its Secret-sourced environment)"},
		{path: "/var/log/pods", what: "the containers' logs (the API serves them only to who may read pods/log)"},
		{path: "/var/log/containers", what: "the containers' logs (links into /var/log/pods)"},
		// Round 13 (adversary e/07): the node's disks hold every secret above by no name at all.
		// Round 21 (adversary a/01, 02, 09): the same secrets under other names. The agent's state
		// (its saved payloads and record), the MachineConfigs the daemon and the server keep (every
		// file's contents, the pull secret's data URL among them), the proxy's URLs (user:password@)
		// and the cloud provider's credentials.
		{path: "/var/lib/refresh-agent", what: "the agent's state: its saved payloads hold every file of the config, the pull secret among them"},
		{path: "/etc/mcd-currentconfig.json", what: "the machine-config daemon's record: a MachineConfig holding the pull secret"},
		{path: "/etc/machine-config-daemon", what: "the machine-config daemon's state: its current config holds the pull secret"},
		{path: "/etc/mcs-machine-config-content.json", what: "the machine-config server's content MachineConfig: every file of the config, the pull secret among them"},
		{path: "/etc/ignition-machine-config-encapsulated.json", what: "the encapsulated MachineConfig: every file of the config, the pull secret among them"},
		{path: "/etc/mco", what: "the MCO's node files: the proxy's settings (URLs may carry credentials), the revert MachineConfig, the internal registry's pull secret"},
		{path: "/etc/kubernetes/cloud.conf", what: "the cloud provider's configuration: its credentials (Azure's aadClientSecret)"},
		{path: "/dev", device: true, what: "a device of the node: a disk, partition or memory device holds every secret on it (only /dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom, /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N, /dev/tty, /dev/console, /dev/kmsg and /dev/shm may be named)"},
		{path: "/proc/kcore", what: "the kernel's memory: every secret in it"},
		{path: "/sys/firmware", what: "the firmware's tables and EFI variables"},
		// Round 23 (adversary a/01, a/07): the entitlement keys under the links RHEL's
		// containers-common ships in /usr, the CSI volumes' global mounts, container checkpoints
		// and every user's home (core's .kube and .docker as root's).
		{path: "/usr/share/rhel/secrets", what: "links to the node's entitlement and subscription keys (/etc/pki/entitlement, /etc/rhsm)"},
		{path: "/etc/pki/entitlement", what: "the cluster's Red Hat entitlement key pair"},
		{path: "/etc/pki/consumer", what: "the subscription manager's identity key"},
		{path: "/etc/rhsm", what: "the subscription manager's configuration and keys"},
		{path: "/var/lib/kubelet/plugins", what: "the CSI drivers' global mounts: the pods' persistent volumes"},
		{path: "/var/lib/kubelet/checkpoints", what: "container checkpoints: a container's memory and files"},
		{path: "/var/home", what: "the users' homes (core's .ssh, .kube, .docker)"},
		{path: "/home", what: "the users' homes (/var/home on RHCOS)"},
		{path: "/sysroot", what: "the node's root again (its ostree deployment's /etc and /var hold every secret above)"},
		{path: "/ostree", what: "the node's root again (/sysroot/ostree: its deployments' /etc and /var)"},
	}
	for _, p := range slices.Sorted(maps.Keys(secretModes)) {
		rows = append(rows, secretRow{path: p, what: "a pull secret: registry credentials"})
	}
	// Last, so that a listed row names what it lists.
	rows = append(rows, []secretRow{
		// Round 19 (adversary c/01): the trees where the node keeps files a name says are secret,
		// at any depth; a directory in them, or a pattern, may hold one.
		{path: "/etc/kubernetes", class: true, what: "a key or kubeconfig by its name, in the tree the node keeps them in"},
		{path: "/etc/cni", class: true, what: "a CNI plugin's kubeconfig or key by its name"},
		{path: "/etc/pki", class: true, what: "a private key by its name, in the node's PKI"},
		{path: "/etc/containers/certs.d", class: true, what: "a registry's client key by its name"},
		{path: "/etc/docker/certs.d", class: true, what: "a registry's client key by its name"},
		{path: "/etc/ssh", class: true, what: "an SSH private key by its name"},
	}...)
	return rows
}()

// name is the row as a reason names it.
func (r secretRow) name() string {
	switch {
	case r.prefix != "":
		return strings.TrimSuffix(r.path, "/") + "/" + r.prefix + "*"
	case r.contains != "":
		return r.path + "/**/*" + r.contains + "*"
	case r.class:
		return r.path + "/**"
	case r.device:
		return r.path + "/*"
	}
	return r.path
}

// components are a clean absolute path's components ("/" has none).
func components(p string) []string {
	if p == "/" || p == "" {
		return nil
	}
	return strings.Split(strings.TrimPrefix(p, "/"), "/")
}

// patternMayContain says whether the component, perhaps a pattern, may match a name holding s:
// exactly for a literal, and for a pattern whenever a "*" or enough characters could stand for it
// (the judge errs toward a match).
func patternMayContain(pc, s string) bool {
	if !strings.ContainsAny(pc, "*?[") {
		return strings.Contains(strings.ToLower(pc), s)
	}
	return strings.Contains(pc, "*") || len(pc) >= len(s) || patternMayStartWith(pc, s)
}

// names says whether the clean path p (its components perhaps patterns) may name the row's secret
// or a file below it, and how the row names it.
func (r secretRow) names(p string) bool {
	pc, dc := components(p), components(r.path)
	if len(pc) < len(dc) {
		return false
	}
	plain := r.prefix == "" && r.contains == "" && !r.class && !r.device
	for i, n := range dc {
		if !componentMayBe(pc[i], n) && !(plain && i == len(dc)-1 && copyOf(pc[i], n)) {
			return false
		}
	}
	switch {
	case r.device:
		return len(pc) > len(dc) && !devReadable(p)
	case r.prefix != "":
		return len(pc) > len(dc) && patternMayStartWith(pc[len(dc)], r.prefix) &&
			!(r.prefix == "ssh_host_" && len(pc) == len(dc)+1 && !strings.ContainsAny(pc[len(dc)], "*?[") && strings.HasSuffix(pc[len(dc)], ".pub"))
	case r.contains != "":
		return len(pc) > len(dc) && patternMayContain(pc[len(pc)-1], r.contains)
	case r.class:
		return len(pc) > len(dc) && secretName(p)
	}
	return true
}

// copyOf says whether the component c (perhaps a pattern) may name a copy of the secret named n
// beside it: n and a suffix after a separator, as the node's copies are named (the MCO's
// proxy.env.backup and *.mcdorig, an editor's name~, an operator's etcd-backup; adversary r23 a/06:
// /etc/mco/proxy.env was refused and proxy.env.backup, the same credentials, read).
// A pattern is a copy's when its literal start is n (and a separator): "proxy.env.b*" is, "*.conf"
// (which could match "root.conf") is not read as a copy of /root.
func copyOf(c, n string) bool {
	lit, pattern := c, false
	if i := strings.IndexAny(c, "*?["); i >= 0 {
		lit, pattern = c[:i], true
	}
	rest, ok := strings.CutPrefix(lit, n)
	if !ok {
		return false
	}
	if rest == "" {
		return pattern
	}
	return strings.ContainsRune(".~-_+", rune(rest[0]))
}

// above says whether the clean path p (perhaps a pattern) may name a directory above the row's
// secret: a directory a recursive reader would read it below.
func (r secretRow) above(p string) bool {
	pc, dc := components(p), components(r.path)
	if r.prefix != "" || r.contains != "" || r.device || r.class {
		dc = append(dc, "x") // the directory itself is above its files
	}
	if (r.contains != "" || r.class) && len(pc) >= len(dc) {
		pc = pc[:len(dc)-1] // a directory anywhere in the tree is above the files below it
	}
	if len(pc) >= len(dc) {
		return false
	}
	for i, c := range pc {
		if !componentMayBe(c, dc[i]) {
			return false
		}
	}
	return true
}

// secretNamed is the row (or the name class) a clean path may name, and whether it names a
// directory above one (above); ok is false for none.
func secretNamed(p string) (row secretRow, above, ok bool) {
	for _, alias := range patternAliases(p) {
		alias = nodePath(alias)
		for _, r := range nodeSecrets {
			if r.names(alias) {
				return r, false, true
			}
		}
		if secretName(alias) {
			return secretRow{path: alias, what: privateByName}, false, true
		}
	}
	for _, alias := range patternAliases(p) {
		alias = nodePath(alias)
		for _, r := range nodeSecrets {
			if r.above(alias) {
				return r, true, true
			}
		}
	}
	return secretRow{}, false, false
}

// secretName says whether the clean path (perhaps a pattern) may name a file whose name is a
// secret's: a literal name of the class, or a pattern that may match one (adversary r19 c/01:
// whereabouts.d/* matched the kubeconfig the judge refused by its name); the world-readable
// account databases, PAM's files and the OS's are not secrets.
func secretName(c string) bool {
	base, dir := path.Base(c), path.Dir(c)
	if publicByName(c) || !strings.ContainsAny(dir, "*?[") && publicByName(dir+"/x") {
		return false // the OS's own files (/usr/share/myapp/*)
	}
	if !strings.ContainsAny(base, "*?[") {
		return isPrivateKeyName(c) || currentPEM(c)
	}
	return patternMayBeSecretName(base)
}

// secretNameWords are the words (and the one suffix) that make a name a secret's in the class
// (isPrivateKeyName, currentPEM), and more: the public rules (a .crt, a word pub) are not applied
// to a pattern, so the judge errs toward a secret.
var secretNameWords = slices.Concat(slices.Sorted(maps.Keys(secretWords)), slices.Sorted(maps.Keys(strongSecretWords)),
	slices.Sorted(maps.Keys(keystoreExts)), slices.Sorted(maps.Keys(sshKeyTypes)), []string{"auth"})

// patternMayBeSecretName says whether a name the pattern (one component) matches may be a secret's
// by the class: a "*" may always stand for "-secret-"; a pattern of "?", brackets and letters may
// when one of the class's words fits at some place between two boundaries (an edge, a character
// that is no letter or digit, a lower-to-upper change), or "-current.pem" at its end.
func patternMayBeSecretName(pc string) bool {
	toks, ok := patternTokens(pc)
	if !ok {
		return true // "*", or a bracket the judge does not read ([:alpha:]): it may
	}
	for _, w := range secretNameWords {
		for i := 0; i+len(w) <= len(toks); i++ {
			if wordFits(toks, i, w) {
				return true
			}
		}
	}
	const pem = "-current.pem"
	if n := len(toks); n >= len(pem) {
		fits := true
		for j := range len(pem) {
			fits = fits && toks[n-len(pem)+j].may(pem[j])
		}
		return fits
	}
	return false
}

// patToken is one character of a pattern without "*": a literal, "?" (any) or a bracket's set.
type patToken struct {
	any    bool
	negate bool
	set    string // the literal, or the bracket's members (ranges as written)
}

func (t patToken) may(c byte) bool {
	if t.any {
		return true
	}
	if len(t.set) == 1 && !t.negate {
		return t.set[0] == c
	}
	m, err := path.Match("["+map[bool]string{true: "^"}[t.negate]+t.set+"]", string(c))
	return m || err != nil
}

func (t patToken) mayFold(c byte) bool { // c a lower-case letter: either case
	return t.may(c) || t.may(c-'a'+'A')
}

func (t patToken) mayBoundary() bool {
	for c := byte(0x20); c < 0x7f; c++ {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') && t.may(c) {
			return true
		}
	}
	return false
}

func (t patToken) mayUpper() bool {
	for c := byte('A'); c <= 'Z'; c++ {
		if t.may(c) {
			return true
		}
	}
	return false
}

func (t patToken) mayLower() bool {
	for c := byte('a'); c <= 'z'; c++ {
		if t.may(c) {
			return true
		}
	}
	return false
}

// wordFits says whether the word w (lower case) may stand at toks[i:] as a word of the name.
func wordFits(toks []patToken, i int, w string) bool {
	for j := range len(w) {
		c := w[j]
		if c >= 'a' && c <= 'z' {
			if !toks[i+j].mayFold(c) {
				return false
			}
		} else if !toks[i+j].may(c) {
			return false
		}
	}
	before := i == 0 || toks[i-1].mayBoundary() || toks[i-1].mayLower() && toks[i].mayUpper()
	end := i + len(w)
	after := end == len(toks) || toks[end].mayBoundary() || toks[end].mayUpper() && toks[end-1].mayLower()
	return before && after
}

// patternTokens splits a pattern without "*" into its characters; ok is false for a "*" or a
// bracket it does not read.
func patternTokens(pc string) (toks []patToken, ok bool) {
	for i := 0; i < len(pc); i++ {
		switch c := pc[i]; c {
		case '*':
			return nil, false
		case '\\':
			if i+1 < len(pc) {
				i++
			}
			toks = append(toks, patToken{set: pc[i : i+1]})
		case '?':
			toks = append(toks, patToken{any: true})
		case '[':
			j := i + 1
			neg := j < len(pc) && (pc[j] == '!' || pc[j] == '^')
			if neg {
				j++
			}
			k := j
			if k < len(pc) && pc[k] == ']' {
				k++ // "[]…]": the "]" is a member
			}
			for k < len(pc) && pc[k] != ']' {
				k++
			}
			if k >= len(pc) {
				toks = append(toks, patToken{set: "["}) // no closing "]": a literal "["
				continue
			}
			set := pc[j:k]
			if strings.Contains(set, "[:") || strings.Contains(set, "[=") || strings.Contains(set, "[.") || strings.Contains(set, "\\") {
				return nil, false
			}
			toks = append(toks, patToken{set: set, negate: neg})
			i = k
		default:
			toks = append(toks, patToken{set: pc[i : i+1]})
		}
	}
	return toks, true
}

// currentPEM says whether the file is a Kubernetes certificate manager's current pair
// (<prefix>-current.pem: multus-client-current.pem, ovnkube-client-current.pem), which holds the
// certificate and its private key in one file (adversary r13 e/01).
func currentPEM(c string) bool {
	return strings.HasSuffix(strings.ToLower(path.Base(c)), "-current.pem")
}

// unseen are the expansions whose value the judge may not know: read as a pattern's "*" inside a
// path (/etc/sha${x} may be /etc/shadow).
var unseen = regexp.MustCompile("\\$\\([^)]*\\)?|`[^`]*`?|\\$\\{[^}]*\\}?|\\$[A-Za-z_0-9@*#?!$-]")

// secretDirOptions are the options whose value is a directory a program reads its relative
// operands from (tar -C /etc -cf x shadow).
var secretDirOptions = map[string][]string{"tar": {"-C", "--directory"}, "bsdtar": {"-C", "--directory"},
	"cpio": {"-D", "--directory"}}

// secretPaths are the absolute paths a word of prog may name as the judge resolves it: its
// variables, $HOME and ~, brace words, unknown expansions inside a path as patterns, the values
// after = : , and an option's joined value, a relative word from each of dirs. ok is false when
// the word has more names than the judge lists.
func (j judge) secretPaths(w string, dirs []string) (paths []string, ok bool) {
	relative := len(dirs) > 0
	if _, set := j.env["HOME"]; !set && strings.Contains(w, "HOME") {
		w = j.withHome(w)
	}
	x, unknown := w, false
	if strings.ContainsAny(w, "$`") {
		var known bool
		if x, known = j.expand(w); !known {
			// An expansion the judge cannot see: inside an absolute path a pattern's "*"; a word
			// it starts is judged by secretUnknownWhy, not read as a relative path.
			x, unknown = unseen.ReplaceAllString(x, "*"), true
		}
	}
	if x == "~" || strings.HasPrefix(x, "~/") {
		x = j.homeDir() + strings.TrimPrefix(x, "~")
	} else if strings.HasPrefix(x, "~") {
		// ~+ ($PWD), ~- ($OLDPWD), ~user (that user's home: ~root is /root): places the judge
		// does not resolve for a read (adversary r21 a/04).
		return nil, false
	}
	words := []string{x}
	if strings.Contains(x, "{") {
		bw, ok := braceWords(x, 64)
		if !ok {
			return nil, false
		}
		if j.charge(len(bw)) {
			return nil, false
		}
		words = bw // the brace's words (with the word itself when it expands to none)
	}
	for _, bw := range words {
		paths = append(paths, pathsIn(bw)...)
		if strings.HasPrefix(bw, "-") && !strings.HasPrefix(bw, "--") {
			if k := strings.IndexByte(bw, '/'); k > 0 {
				paths = append(paths, bw[k:]) // grep -f/etc/shadow
			}
		}
		if unknown || !relative || strings.ContainsAny(bw, " \t\n$`") {
			continue
		}
		// The word, or its value after "=" (dd if=shadow, --file=config.json: adversary r21
		// a/05), is a relative path from every directory the command may run in; one with a ":"
		// is a pattern or a list (grep root:), as before.
		rp := bw
		if _, v, ok := strings.Cut(bw, "="); ok {
			rp = v
		}
		if rp != "" && !strings.HasPrefix(rp, "/") && !strings.HasPrefix(rp, "-") && !strings.HasPrefix(rp, "~") && !strings.ContainsAny(rp, "=:") {
			for _, d := range dirs {
				if !strings.HasPrefix(d, "/") {
					// unknownDir (WorkingDirectory=~, a cd the judge cannot resolve): the word
					// may name any file there, root's home among them (adversary r21 a/07).
					return nil, false
				}
				paths = append(paths, d+"/"+rp)
			}
		}
	}
	return paths, true
}

// readsBelow says whether the program reads the files below a directory operand: the modeled
// recursive readers (by their options), the programs that link, bind or copy it, xargs (its
// input's names), and the interpreters, whose script (read-only OS content) may walk its arguments.
func readsBelow(prog string, args []string) bool {
	switch prog {
	case "tar", "bsdtar", "cpio", "rsync", "find", "zip", "ln", "xargs":
		return true
	case "cp":
		// cp copies a directory only recursively ("-r not specified; omitting directory").
		return anyShort(args, 'r', "tS") || anyShort(args, 'R', "tS") || anyShort(args, 'a', "tS") ||
			longGiven(args, "--recursive", "--archive")
	case "rgrep":
		return true
	case "grep", "egrep", "fgrep", "zgrep":
		return anyShort(args, 'r', "efmABCdD") || anyShort(args, 'R', "efmABCdD") ||
			longGiven(args, "--recursive", "--dereference-recursive") || slices.Contains(longValues(args, "--directories"), "recurse") ||
			slices.Contains(args, "-drecurse") || slices.Contains(args, "recurse")
	case "diff":
		return anyShort(args, 'r', "") || longGiven(args, "--recursive")
	case "mount":
		return anyShort(args, 'B', "otL") || anyShort(args, 'R', "otL") || anyShort(args, 'M', "otL") ||
			longGiven(args, "--bind", "--rbind", "--move")
	}
	// A shell's script is judged command by command (its operands are its positional
	// parameters, which secretUnknownWhy judges where the script opens them).
	return interpreterName(prog) != ""
}

// secretWhy says why, in a changed line, the command names a secret of the node, or "".
func (j judge) secretWhy(prog string, argv []string) string {
	if !j.strict || !j.secrets || len(argv) == 0 || j.mut != nil && j.mut.collect != nil || prog == "cd" || prog == "pushd" || prog == "popd" {
		// The node's own lines (and OwnWrites reading them) are the node's; a cd's directory is
		// where the words after it are resolved from.
		return ""
	}
	if why := namesFromList(prog, argv[1:]); why != "" {
		return short(strings.Join(argv, " ")) + ": " + why + " the judge does not see, built at run time: it may name a secret of the node (refused in a changed line)"
	}
	own := j.opaqueFrom(argv)
	// Every directory the line may be in: the unit's WorkingDirectory= (/ without one) and every
	// one a script changed to, as for writes (adversary r21 a/08: after a cd of an earlier Exec
	// line, which systemd starts fresh in /, "/" was no longer among them).
	dirs := j.placeDirs()
	if len(dirs) > 1 && dirs[0] == "/" {
		dirs = append(slices.Clone(dirs[1:]), "/") // a reason names the directory changed to first
	}
	// tar -C DIR, cpio -D DIR: the operands after it are read from DIR (one the judge cannot
	// resolve is unknownDir, whose relative operands argvPaths refuses).
	dirAt := make([][]string, len(argv))
	for i := range argv {
		dirAt[i] = dirs
		if i == 0 {
			continue
		}
		a, v := argv[i], ""
		for _, o := range secretDirOptions[prog] {
			if x, joined := strings.CutPrefix(a, o+"="); joined && strings.HasPrefix(o, "--") {
				v = x
			} else if x, joined := strings.CutPrefix(a, o); joined && x != "" && !strings.HasPrefix(o, "--") {
				v = x
			} else if argv[i-1] == o {
				v = a
			}
		}
		if v != "" {
			if x, ok := j.expand(v); ok && strings.HasPrefix(x, "/") && !hasDotDot(x) {
				dirs = []string{cleanPath(x)}
			} else {
				dirs = []string{unknownDir}
			}
		}
	}
	below := readsBelow(prog, argv[1:])
	dirValue := map[int]bool{} // tar -C DIR: its relative operands are read from DIR, judged so
	for i, a := range argv {
		if i > 0 && slices.Contains(secretDirOptions[prog], argv[i-1]) {
			dirValue[i] = true
		}
		for _, o := range secretDirOptions[prog] {
			if strings.HasPrefix(a, o) && a != o {
				dirValue[i] = true
			}
		}
	}
	for k, w := range argv {
		d := dirAt[k]
		if k == 0 {
			d = nil // the program: found on $PATH, not in the working directory
		}
		paths, ok := j.secretPaths(w, d)
		if !ok {
			return short(strings.Join(argv, " ")) + ": " + short(w) + " has more names than the judge lists: it may name a secret of the node (cannot be judged in a changed line)"
		}
		for _, p := range paths {
			if hasDotDot(p) {
				continue // refused where it stands (argvPaths, reachPath)
			}
			c := cleanPath(p)
			r, above, found := secretNamed(c)
			if !found || above && (!below || k == 0 || dirValue[k]) {
				continue
			}
			if k >= own && (above || r.what == privateByName || r.class || j.ownSecret(c)) {
				continue // the unit's own program's word (opaqueFrom)
			}
			byName := r.what == privateByName || r.class || r.contains != ""
			if !above && byName && strings.ContainsAny(c, "*?[") &&
				(slices.Contains(secretBlind, prog) || prog == "find" && !strings.HasPrefix(w, "/") || j.mut != nil && j.mut.ownPlace(c)) {
				// A pattern that may match a secret's name, in the unit's own places (its
				// own files are its business), for a program that opens none, or find's
				// -name (a name below the directories it searches, judged as those).
				continue
			}
			return short(strings.Join(argv, " ")) + ": " + secretReason(c, r, above, prog)
		}
	}
	if prog == "xargs" {
		if start, _, why := wrapperCommand("xargs", argv[1:]); why == "" && 1+start < len(argv) {
			if n := cmdName(argv[1+start]); !slices.Contains(splitInert, n) {
				return short(strings.Join(argv, " ")) + ": xargs hands the words of its input to " + argv[1+start] + " as operands, which the judge cannot see: they may name a secret of the node (cannot be judged in a changed line)"
			}
		}
	}
	return ""
}

// publicByName are the world-readable files whose names the secret class reads as a secret's: the
// account databases without their passwords, PAM's configuration, the OS's own files.
func publicByName(c string) bool {
	return slices.Contains([]string{"/etc/passwd", "/etc/passwd-", "/etc/group", "/etc/group-"}, c) ||
		under(c, "/etc/pam.d") || readOnlyOS(c)
}

const privateByName = "a private key or credential by its name"

// secretReason is the refusal of a word that names (or may name, or names a directory above) a
// secret of the node.
func secretReason(c string, r secretRow, above bool, prog string) string {
	what := r.what
	if above {
		return "names " + c + ", a directory above " + r.name() + " (" + what + "), a secret of the node, for " + prog +
			", which reads below it: a changed line may not name a secret of the node, whatever the program (its contents would reach a file, the journal or the refresh's outcome)"
	}
	name := r.name()
	if strings.ContainsAny(c, "*?[") {
		name = c + ", which may match " + name
	} else if c != name {
		name = c + " (" + name + ")"
	}
	return "names " + name + ", a secret of the node (" + what + "): a changed line may not name a secret of the node, whatever the program (its contents would reach a file, the journal or the refresh's outcome)"
}

// ownSecret says whether the node's current definition of the unit names the secret too.
func (j judge) ownSecret(c string) bool {
	return j.mut != nil && j.mut.secrets[c]
}

// secretBlind are the modeled programs that open no operand's contents: they change a file's
// name, mode, owner, label or times (confined to the unit's own places, execmutate.go), write
// their input to it, or read its metadata only.
var secretBlind = []string{"rm", "rmdir", "mkdir", "touch", "truncate", "chmod", "chown", "chgrp", "chcon", "restorecon",
	"setfacl", "shred", "tee", "sponge", "ls", "stat", "du", "df", "readlink", "realpath", "basename", "dirname", "which",
	"sync", "hostname", "date", "id", "whoami", "uname", "nproc", "pidof", "printenv", "usleep", "systemd-notify"}

// secretUnknownWhy says why, in a changed line, a command's quoted word whose value the judge
// cannot see ("$f" of a read or for loop, "$(printf …)", "$1") may name a secret of the node for a
// program that opens its operands, or "".
func (j judge) secretUnknownWhy(cmd, quotedVars, loopVars []string) string {
	if len(cmd) == 0 || !j.secrets || j.mut != nil && j.mut.collect != nil || slices.Contains(secretBlind, cmdName(cmd[0])) || slices.Contains(splitInert, cmdName(cmd[0])) || slices.Contains(shellWords, cmdName(cmd[0])) ||
		cmdName(cmd[0]) == "kill" || cmdName(cmd[0]) == "logger" && !slices.ContainsFunc(cmd, func(a string) bool { return strings.HasPrefix(a, "-f") || a == "--file" }) ||
		j.ownProgram(cmd[0]) && !modeledProgram(cmd[0]) {
		return ""
	}
	for _, w := range cmd[1:] {
		if !slices.Contains(quotedVars, w) {
			continue
		}
		if _, set := j.env["HOME"]; !set {
			w = j.withHome(w)
		}
		if j.seen(w, loopVars) {
			continue
		}
		return strings.Join(cmd, " ") + ": " + short(w) + " holds a shell expansion the judge cannot see, which " + cmdName(cmd[0]) +
			" opens as a file: it may name a secret of the node (cannot be judged in a changed line)"
	}
	return ""
}

// seen says whether the judge sees what the word names: its expansions known, the manager's
// one-word values (a PID, a user name; $HOME is root's home), or a for loop's variable over words
// the rule judged (loopVars).
func (j judge) seen(w string, loopVars []string) bool {
	if _, set := j.env["HOME"]; !set {
		w = j.withHome(w)
	}
	x, ok := j.expand(w)
	if ok {
		return true
	}
	x = varRef.ReplaceAllStringFunc(x, func(m string) string {
		if n := refName(m); slices.Contains(oneWordVars, n) && n != "HOME" || slices.Contains(loopVars, n) {
			return "v"
		}
		return m
	})
	return !strings.ContainsAny(x, "$`")
}

var forLoop = regexp.MustCompile(`(?:^|[;&|(){}\s])for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s`)

// forLoopVars are the script's for loops' variables whose values are only the loop's words (which
// the secret rule judged as words of the for command): not one the script may set any other way
// (an assignment, read, mapfile, getopts, printf -v, declare and the like naming it), and none
// in a script that evals or sources.
func forLoopVars(s string) []string {
	if !strings.Contains(s, "for") || regexp.MustCompile(`\b(eval|source)\b|(^|[;&|(){}\s])\.\s`).MatchString(s) {
		return nil
	}
	var out []string
	for _, m := range forLoop.FindAllStringSubmatch(s, -1) {
		v := regexp.QuoteMeta(m[1])
		rebind := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + v + `(\[[^]]*\])?\+?=|\b(read|mapfile|readarray|getopts|printf|declare|typeset|local|export|readonly|let|unset|select|for)\b[^;&|\n]*[^A-Za-z0-9_$]` + v + `([^A-Za-z0-9_]|$)`)
		// The loop's own "for v in" is the one binding allowed: count the bindings.
		if len(rebind.FindAllStringIndex(s, -1)) <= len(regexp.MustCompile(`for\s+`+v+`\s+in\s`).FindAllStringIndex(s, -1)) {
			out = append(out, m[1])
		}
	}
	return out
}

// secretInputWhy says why, in a changed line, a redirection's input may be a secret of the node:
// it names one, or holds an expansion the judge cannot see.
func (j judge) secretInputWhy(in string, loopVars []string) string {
	if !j.strict || !j.secrets || j.mut != nil && j.mut.collect != nil {
		return ""
	}
	if why := j.secretWhy("<", []string{"<", in}); why != "" {
		return why
	}
	if strings.ContainsAny(in, "$`") && !j.seen(in, loopVars) {
		return "< " + short(in) + ": a redirection's input holding a shell expansion the judge cannot see: it may name a secret of the node (cannot be judged in a changed line)"
	}
	return ""
}

// OwnSecrets are the node's secrets the unit's commands name (its Exec lines as the node's
// current definition has them), each clean: a changed line's own program may name them too (the
// kubelet's --kubeconfig=/var/lib/kubelet/kubeconfig).
func OwnSecrets(p UnitProps) []string {
	env := unitEnv(p.Execution)
	j := judge{env: env}
	var out []string
	for _, line := range p.Exec {
		argv, _ := systemdArgv(line, env)
		for _, w := range argv {
			paths, _ := j.secretPaths(w, nil)
			for _, q := range paths {
				if hasDotDot(q) || strings.ContainsAny(q, "*?[") {
					continue
				}
				c := cleanPath(q)
				if _, above, ok := secretNamed(c); ok && !above && !slices.Contains(out, c) {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// secretFileWhy says why a file the manager reads for the unit (EnvironmentFile=) is a secret of
// the node, or "": its values would be the unit's variables, which its commands print.
func secretFileWhy(p string) string {
	c := cleanPath(p)
	if hasDotDot(p) {
		return ""
	}
	for _, r := range nodeSecrets {
		if r.names(nodePath(c)) {
			return "names " + c + ", a secret of the node (" + r.what + "): its values would become the unit's variables"
		}
	}
	if secretName(nodePath(c)) {
		return "names " + c + ", a secret of the node (" + privateByName + "): its values would become the unit's variables"
	}
	return ""
}

// namesFromList says why a program of a changed line reads the names of the files it reads from a
// list the judge does not see (adversary r18 c/06): tar -T FILE (or -, stdin), cpio's copy-out and
// pass-through modes (names on stdin), find -files0-from, du/wc/sort --files0-from. The secret
// rule judges the names a line writes; `echo /etc/shaXow | tr X d | tar -cf /tmp/x -T -` builds
// one at run time. Refused in a changed line, as xargs' command is.
func namesFromList(prog string, args []string) string {
	cluster := func(a, letters string) bool {
		return len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], letters)
	}
	for i, a := range args {
		opt, _, _ := strings.Cut(a, "=")
		switch prog {
		case "tar", "gtar", "bsdtar":
			if opt == "--files-from" || cluster(a, "T") || i == 0 && !strings.HasPrefix(a, "-") && strings.Contains(a, "T") {
				return "tar " + short(a) + " reads the names of the files it archives from a list"
			}
		case "cpio":
			if opt == "--create" || opt == "--pass-through" || cluster(a, "op") {
				return "cpio " + short(a) + " reads the names of the files it copies from its input"
			}
		case "find", "du", "wc", "sort":
			if opt == "-files0-from" || opt == "--files0-from" {
				return prog + " " + short(a) + " reads the names of the files it reads from a list"
			}
		}
	}
	return ""
}
