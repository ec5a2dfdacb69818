package allowlist

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Mode is a file permission ceiling: a written file's permission bits must all be in it (0640 is
// within 0644; 0666 is not). In a policy file it is a YAML octal number (0600), a string of octal
// digits ("0600"), or a JSON number (384, decimal, as Ignition writes modes). Zero means unset: the
// default for the path (DefaultMode).
type Mode int

func (m *Mode) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := strconv.ParseUint(strings.TrimPrefix(s, "0o"), 8, 32)
		if err != nil || s == "" {
			return fmt.Errorf("mode %q is not an octal permission (e.g. \"0644\")", s)
		}
		*m = Mode(v)
	} else {
		var n int
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("mode %s is not a permission (0644, \"0644\" or 420)", b)
		}
		*m = Mode(n)
	}
	if *m < 0 || *m > 0o777 || *m == 0 {
		return fmt.Errorf("mode %04o is not a file permission ceiling (0001 to 0777, no setuid, setgid or sticky bits)", int(*m))
	}
	return nil
}

func (m Mode) MarshalJSON() ([]byte, error) { return json.Marshal(m.String()) }

func (m Mode) String() string { return fmt.Sprintf("%04o", int(m)) }

// DefaultOwner is every rule's owner unless the policy says otherwise: what the machine-config
// daemon writes (it never chowns the files it writes from a MachineConfig unless told to).
const DefaultOwner = "root:root"

// secretModes are the files the machine-config operator writes as secrets (0600 root:root): the pull
// secrets. Every other rule defaults to 0644 (what the MCO writes for configuration and CA bundles).
var secretModes = map[string]Mode{
	"/var/lib/kubelet/config.json":                0o600,
	"/etc/mco/internal-registry-pull-secret.json": 0o600,
}

// DefaultMode is the mode ceiling of a rule that sets none, for the path it decides.
func DefaultMode(path string) Mode {
	if m, ok := secretModes[path]; ok {
		return m
	}
	if isPrivateKeyName(path) {
		return 0o600 // private keys below a prefix rule
	}
	return 0o644
}

// ceilingOf is the mode and owner ceiling for path under a rule (or ceiling entry) that says mode
// and owner (either unset).
func ceilingOf(path string, mode Mode, owner string) (Mode, string) {
	if mode == 0 {
		mode = DefaultMode(path)
	}
	if owner == "" {
		owner = DefaultOwner
	}
	return mode, owner
}

// ownerName is a user or group: a name as useradd accepts it, or a numeric id.
var ownerName = regexp.MustCompile(`^([a-z_][a-z0-9_-]*\$?|[0-9]+)$`)

// checkOwner checks a policy's owner: "user:group", each a name or a numeric id.
func checkOwner(o string) error {
	if o == "" {
		return nil
	}
	u, g, ok := strings.Cut(o, ":")
	if !ok || len(u) > 32 || len(g) > 32 || !ownerName.MatchString(u) || !ownerName.MatchString(g) {
		return fmt.Errorf("owner %q is not user:group (names or numeric ids, e.g. root:root)", o)
	}
	return nil
}

// SplitOwner splits a checked "user:group".
func SplitOwner(o string) (user, group string) {
	u, g, _ := strings.Cut(o, ":")
	return u, g
}

// isPrivateKeyName says whether a file's name is a private key's by the conventions TLS tools name
// them (whatever the case: docker's certs.d reads client.KEY as a key too): *.key, *-key.pem,
// *_key.pem, *.key.pem, anything under a private/ directory.
func isPrivateKeyName(path string) bool {
	p := strings.ToLower(path)
	return strings.HasSuffix(p, ".key") || strings.HasSuffix(p, "-key.pem") || strings.HasSuffix(p, "_key.pem") ||
		strings.HasSuffix(p, ".key.pem") || strings.Contains(p, "/private/")
}
