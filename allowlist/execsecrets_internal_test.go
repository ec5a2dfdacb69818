package allowlist

import (
	"os"
	"path"
	"strings"
	"testing"
)

// docs/security.md states the one list of the node's secrets: every row of nodeSecrets is named
// there, so that the two never drift.
func TestDocsNameEveryNodeSecret(t *testing.T) {
	doc, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range nodeSecrets {
		if !strings.Contains(string(doc), "`"+r.name()+"`") {
			t.Errorf("docs/security.md does not name %s (%s)", r.name(), r.what)
		}
	}
}

// A pattern (one component, no "*") that matches a name of the secret class, as Go's path.Match
// reads the pattern, is one patternMayBeSecretName says may match a secret's name: the judge
// errs toward a secret, never away from one (adversary r19 c/01). Differential: the matcher and
// the class are the standard library's and the mode ceilings' own, not the tokenizer under test.
func FuzzPatternMayBeSecretName(f *testing.F) {
	for _, s := range [][2]string{{"tls.ke?", "tls.key"}, {"[a-z]d_rsa", "id_rsa"}, {"??????????", "kubeconfig"},
		{"a?key", "a.key"}, {"my[K]ey.pem", "myKey.pem"}, {"x-current.pe[m]", "x-current.pem"}, {"a[!b]c", "a.c"},
		{"[]]x", "]x"}, {"p?ssword", "password"}, {"to?en.txt", "token.txt"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		got := patternMayBeSecretName(pat) // never panics, whatever the pattern
		if strings.Contains(pat, "*") || strings.ContainsAny(pat+name, "/\\") || name == "" {
			return
		}
		for i := 0; i < len(pat+name); i++ {
			if c := (pat + name)[i]; c < 0x20 || c > 0x7e {
				return // ASCII only: the class splits words by Unicode letters
			}
		}
		// The fuzzer's name, and one it spells out in the pattern (its "?" and brackets filled by
		// the name's characters), so that matches are frequent.
		var filled []byte
		k := 0
		for i := 0; i < len(pat); i++ {
			switch pat[i] {
			case '?', '[':
				if pat[i] == '[' {
					if j := strings.IndexByte(pat[i+1:], ']'); j >= 0 {
						i += j + 1
					}
				}
				filled = append(filled, name[k%len(name)])
				k++
			default:
				filled = append(filled, pat[i])
			}
		}
		for _, n := range []string{name, string(filled)} {
			m, err := path.Match(goPattern(pat), n)
			if err != nil || !m || !(isPrivateKeyName("/d/"+n) || currentPEM(n)) {
				continue
			}
			if !got {
				t.Fatalf("%q matches %q, a secret's name, but patternMayBeSecretName says it may not", pat, n)
			}
		}
	})
}
