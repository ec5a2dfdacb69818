package allowlist

import (
	"fmt"
	"strings"
)

// redact replaces, in a refusal's reason, each word that may be a credential (mayBeSecret) by its
// length: a word is a run of the characters a token is written in (letters, digits, + / _ . ~ -). A reason quotes the payload's line or value it
// refuses (an ExecStart=, a static pod's field), and a reason reaches the logs, the Node's
// annotation and Events, which more can read than the ConfigMap: a bearer token, an API key or a
// password in the line must not (adversary r21 c, a refused line quoted whole with its token).
// Paths, unit names, options and short values stay as written, so that the reason still says
// which line.
func redact(s string) string {
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		if w := s[start:end]; mayBeSecret(w) {
			fmt.Fprintf(&b, "<%d bytes not shown>", len(w))
		} else {
			b.WriteString(w)
		}
		start = -1
	}
	for i := 0; i < len(s); i++ {
		if tokenByte(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
		b.WriteByte(s[i])
	}
	flush(len(s))
	return b.String()
}

func tokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("+/_.~-", c) >= 0
}

// mayBeSecret: a word whose parts (split at - _ . as names are) hold one of 16 or more characters
// with a letter and a digit in it (a JWT's, an AWS key's, a hex or base64 key's); an absolute path
// by its names. A name's parts are short words and numbers (40-kubelet-crio-image-credential-
// provider.conf), shown as written.
func mayBeSecret(w string) bool {
	if strings.HasPrefix(w, "/") {
		for _, name := range strings.Split(w, "/") {
			if mayBeSecret(name) {
				return true
			}
		}
		return false
	}
	for _, part := range strings.FieldsFunc(w, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		if len(part) >= 16 && strings.ContainsAny(part, "0123456789") && strings.ContainsAny(part, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			return true
		}
	}
	return false
}

// shown is a value of the payload's file as a reason quotes it: redacted, at most 64 bytes.
func shown(v string) string {
	v = redact(v)
	if len(v) > 64 {
		v = v[:64] + "…"
	}
	return fmt.Sprintf("%q", v)
}
