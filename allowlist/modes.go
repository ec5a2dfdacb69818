package allowlist

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	yamlv3 "go.yaml.in/yaml/v3"
)

// Mode is a file permission ceiling: a written file's permission bits must all be in it (0640 is
// within 0644; 0666 is not). In a policy file it is a YAML octal literal (0600, 0o600) or a string of
// octal digits ("0600", "600"); a bare number without its leading 0 (400, or 420 as Ignition writes
// modes in decimal) is an error naming the field, since its writer and the parser read it in
// different bases (checkModeSpellings). Once converted to JSON a number is taken as it is. Zero
// means unset: the default for the path (DefaultMode).
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

// isPrivateKeyName says whether a file's name is a secret's: a private key, a keystore, a password
// or token file, a kubeconfig, by the names the tools that write and read them give them (whatever
// the case: docker's certs.d reads client.KEY as a key too). The class is by the words of the name
// (split at punctuation and camelCase), not by a few patterns: round-4b F4 found key.pem, privkey.pem,
// id_rsa, id_ed25519, tls.p12, kubeconfig, htpasswd and tls.key.bak at 0644.
//   - always a secret: the TLS tools' names (*.key, *-key.pem, *_key.pem, *.key.pem), anything
//     under a private/ or secrets/ directory, OpenSSH's private keys (id_rsa, id_dsa, id_ecdsa,
//     id_ed25519, id_xmss and their _sk forms), PKCS#12, Java and PuTTY keystores (.p12, .pfx, .jks,
//     .keystore, .p8, .pk8, .ppk, .pvk), and a name with a word private, secret(s), privkey,
//     privatekey, secretkey;
//   - else public, whatever other word it has: a .pub, .crt, .cert, .cer or .csr file, a name with
//     a word pub, public or pubkey, a GPG or PGP key (RPM-GPG-KEY-*, containers-gpg.pub);
//   - else a secret for a word key, apikey, token(s), password(s), passwd, passphrase, htpasswd,
//     credential(s) (but a credential provider's configuration: the kubelet's
//     acr-credential-provider.yaml names a plugin, no credential, and the MCO writes it 0644),
//     creds, kubeconfig, keytab, keystore, netrc, pgpass, dockercfg, dockerconfigjson, auth.json.
//
// The MCO's own files of these names are written within it (templates at 7ff337a: htpasswd and
// tls.key 0600, tls.crt and the credential provider configs 0644; TestSecretNamesMatchTheMCO).
func isPrivateKeyName(name string) bool {
	words := nameWords(path.Base(name))
	p := strings.ToLower(name)
	dir, base := path.Split(p)
	if strings.HasSuffix(base, ".key") || strings.HasSuffix(base, "-key.pem") || strings.HasSuffix(base, "_key.pem") ||
		strings.HasSuffix(base, ".key.pem") || strings.Contains(dir, "/private/") || strings.Contains(dir, "/secrets/") {
		return true
	}
	if len(words) == 0 {
		return false
	}
	if words[0] == "id" && len(words) > 1 && sshKeyTypes[words[1]] && !slices.Contains(words, "pub") {
		return true
	}
	for i, w := range words {
		if strongSecretWords[w] || i > 0 && keystoreExts[w] {
			return true
		}
	}
	if publicExts[words[len(words)-1]] {
		return false
	}
	for _, w := range words {
		if publicWords[w] {
			return false
		}
	}
	if base == "auth.json" {
		return true // containers-auth.json: registry credentials
	}
	for i, w := range words {
		if (w == "credential" || w == "credentials") && i+1 < len(words) && (words[i+1] == "provider" || words[i+1] == "providers") {
			continue
		}
		if secretWords[w] {
			return true
		}
	}
	return false
}

var (
	sshKeyTypes       = setOf("rsa", "dsa", "ecdsa", "ed25519", "xmss")
	strongSecretWords = setOf("private", "secret", "secrets", "privkey", "privatekey", "secretkey")
	keystoreExts      = setOf("p12", "pfx", "jks", "keystore", "p8", "pk8", "ppk", "pvk")
	publicExts        = setOf("pub", "crt", "cert", "cer", "csr")
	publicWords       = setOf("pub", "public", "pubkey", "gpg", "pgp")
	secretWords       = setOf("key", "apikey", "token", "tokens", "password", "passwords", "passwd", "passphrase", "htpasswd",
		"credential", "credentials", "creds", "kubeconfig", "keytab", "keystore", "netrc", "pgpass", "dockercfg", "dockerconfigjson")
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// nameWords splits a file name into its words, lower-cased: runs of letters and digits, and a
// camelCase name at each lower-to-upper change (privateKey.pem is private, key, pem).
func nameWords(name string) []string {
	var words []string
	var cur []rune
	prev := rune(0)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return words
}

// octalLiteral is how a policy may write a mode as a bare number: an octal literal, 0640 or 0o640.
var octalLiteral = regexp.MustCompile(`^0o?[0-7]*$`)

// checkModeSpellings refuses a policy's mode written as a bare number that is not an octal literal
// (round-4b F5: "mode: 400" was read as decimal 400, ceiling 0620, group-writable). YAML and JSON
// both read a bare 400 as decimal while its writer meant the octal digits; a decimal mode (420, as
// Ignition writes modes) is just as easily misread the other way. So a bare number must carry its
// base: 0640 or 0o640 (YAML octal), or the mode is a string of octal digits ("0640", "640"); any
// other number is an error naming the field and how to write it. A string is always octal.
func checkModeSpellings(data []byte) error {
	if !bytes.Contains(data, []byte("mode")) {
		return nil // nothing to check: no second parse
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil {
		return nil // the conversion reports it, with its position
	}
	return walkModes(&doc, "")
}

func walkModes(n *yamlv3.Node, where string) error {
	switch n.Kind {
	case yamlv3.DocumentNode:
		for _, c := range n.Content {
			if err := walkModes(c, where); err != nil {
				return err
			}
		}
	case yamlv3.SequenceNode:
		for i, c := range n.Content {
			if err := walkModes(c, fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
	case yamlv3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "mode" && v.Kind == yamlv3.ScalarNode {
				if err := checkModeScalar(v, strings.TrimPrefix(where+entryName(n), " ")); err != nil {
					return err
				}
				continue
			}
			name := k.Value
			if where != "" {
				name = where + "." + k.Value
			}
			if err := walkModes(v, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// entryName names an entry by its path or prefix, as the policy's other errors do.
func entryName(m *yamlv3.Node) string {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i].Value; k == "path" || k == "prefix" {
			return " (" + strQuote(m.Content[i+1].Value) + ")"
		}
	}
	return ""
}

func checkModeScalar(v *yamlv3.Node, where string) error {
	tag := v.ShortTag() // what the value is once parsed, an explicit tag (!!int "400") included
	if tag != "!!int" && tag != "!!float" || octalLiteral.MatchString(v.Value) {
		// A string of octal digits or an octal literal: its range is checked here too, so that the
		// error names the entry (Mode's own, from inside the decode, cannot).
		m, err := strconv.ParseUint(strings.TrimPrefix(v.Value, "0o"), 8, 32)
		switch {
		case tag != "!!str" && tag != "!!int":
			return nil // null and the rest: Mode's to refuse
		case err != nil || v.Value == "":
			return fmt.Errorf("%s: mode %q is not an octal permission (e.g. \"0644\")", where, v.Value)
		case m == 0 || m > 0o777:
			return fmt.Errorf("%s: mode %04o is not a file permission ceiling (0001 to 0777, no setuid, setgid or sticky bits)", where, m)
		}
		return nil
	}
	decimal, err := strconv.ParseInt(v.Value, 10, 32)
	if err != nil || decimal <= 0 || decimal > 0o777 {
		return fmt.Errorf("%s: mode %s is a bare number not written in octal: write modes in octal with a leading 0, as 0644 or \"0644\"", where, v.Value)
	}
	if _, err := strconv.ParseUint(v.Value, 8, 32); err != nil {
		return fmt.Errorf("%s: mode %s is a bare number, which YAML and JSON read as decimal (%04o): write modes in octal with a leading 0, as %04o or \"%04o\"",
			where, v.Value, decimal, decimal, decimal)
	}
	return fmt.Errorf("%s: mode %s is a bare number, which YAML and JSON read as decimal (%04o, not 0%s): "+
		"write modes in octal with a leading 0, as 0%s or \"0%s\"", where, v.Value, decimal, v.Value, v.Value, v.Value)
}
