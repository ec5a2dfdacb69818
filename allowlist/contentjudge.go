package allowlist

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/openshift/refresh-agent/diff"
)

// Content judges. A path rule grants that a file may change; for the files whose readers run as
// root and would take code or root's power from their contents, what the file may say is judged
// too, whichever rule (built in, the policy file's, a NodeDisruptionPolicy's) allowed the path:
// the static pod the kubelet runs, its credential provider configs and dropin, the pull secrets
// CRI-O reads, nmstate's desired state. docs/security.md says why the other built-in files'
// contents cannot make root run code.

// ContentJudge returns the judge of what a file at path may hold (nil when its contents are not
// judged): it says why data must not be written there, naming the field.
func ContentJudge(path string) func(data []byte) error {
	switch {
	case IsStaticPodManifest(path):
		return JudgeStaticPod
	case path == credProviderDropin:
		return JudgeCredProviderDropin
	case IsCredentialProviderFile(path):
		return func(data []byte) error { return JudgeCredentialProviderFile(path, data) }
	case IsPullSecretFile(path):
		return JudgePullSecret
	case strings.HasPrefix(path, nmstateDir+"/"):
		return JudgeNMState
	}
	return nil
}

// nmstateDir holds nmstate's desired state: nmstate.service applies its files at boot, and the
// MCO's OpenShiftNMStateConfigDir (/etc/nmstate/openshift) is copied there by
// nmstate-configuration.service.
const nmstateDir = "/etc/nmstate"

// JudgeNMState refuses an nmstate desired state with dispatch scripts: nmstate writes a
// "dispatch" (interface post-activation/post-deactivation, or the top-level dispatch interfaces'
// activation) bash script into NetworkManager's dispatcher directory, which runs it as root. The
// rest of nmstate's state moves trust (routes, DNS), which the node policy granted.
func JudgeNMState(data []byte) error {
	if err := checkJudgedSize(data); err != nil {
		return fmt.Errorf("nmstate state: %w", err)
	}
	js, err := diff.YAMLToJSON(data)
	if err != nil {
		return fmt.Errorf("nmstate state: %w", err)
	}
	var doc any
	if err := json.Unmarshal(js, &doc); err != nil {
		return fmt.Errorf("nmstate state: %v", err)
	}
	if d := nesting(doc); d > maxJudgedDepth {
		return fmt.Errorf("nmstate state: nested %d deep, more than the %d a judged file may be (nmstate's own are under 10)", d, maxJudgedDepth)
	}
	if at := findKey(doc, nil, "dispatch"); at != nil {
		return fmt.Errorf("nmstate state %s: a dispatch script runs as root (NetworkManager's dispatcher)", redact(strings.Join(at, "")))
	}
	return nil
}

// maxJudgedDepth bounds how deep a judged file nests: a walk of it costs what its depth does, and
// HyperShift's and the MCO's files nest under 10 (adversary r21 c/03: 8000 nested flow sequences
// in 16 KB, within the node bound, took 129 MB to walk).
const maxJudgedDepth = 64

// nesting is how deep v nests (a scalar 0), walked without recursion.
func nesting(v any) int {
	type item struct {
		v any
		d int
	}
	deepest, stack := 0, []item{{v, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		deepest = max(deepest, it.d)
		switch v := it.v.(type) {
		case map[string]any:
			for _, c := range v {
				stack = append(stack, item{c, it.d + 1})
			}
		case []any:
			for _, c := range v {
				stack = append(stack, item{c, it.d + 1})
			}
		}
	}
	return deepest
}

// findKey returns the path, as segments, of the first mapping key equal to key (in any case:
// nmstate's serde is case-sensitive, the judge need not be), or nil. The path is copied only on a
// hit: one built at every level costs the square of the depth.
func findKey(v any, at []string, key string) []string {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			c, p := v[k], append(at, pathKey(len(at) == 0, k))
			if strings.EqualFold(k, key) {
				return slices.Clone(p)
			}
			if s, ok := c.(string); ok && strings.EqualFold(k, "type") && strings.EqualFold(s, key) {
				return slices.Clone(p)
			}
			if f := findKey(c, p, key); f != nil {
				return f
			}
		}
	case []any:
		for i, c := range v {
			if f := findKey(c, append(at, fmt.Sprintf("[%d]", i)), key); f != nil {
				return f
			}
		}
	}
	return nil
}

// pathKey is the segment naming the mapping key k, cut to 64 bytes (a key is the file's text).
func pathKey(first bool, k string) string {
	if len(k) > 64 {
		k = k[:64] + "…"
	}
	if first {
		return k
	}
	return "." + k
}
