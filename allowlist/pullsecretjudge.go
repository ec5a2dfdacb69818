package allowlist

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The pull secret judge. CRI-O reads the kubelet's pull secret as a containers-auth.json(5) file
// (its global_auth_file), and containers/image runs the program docker-credential-NAME, as root,
// for a registry a "credHelpers" entry (or "credsStore") names. HyperShift's pull secret, like
// every OpenShift one, holds only "auths": so only that is written. An entry's credentials are
// the payload's to choose (the node policy grants that the pull secret may change); nothing in
// them is run. Messages name fields, never a value (the file holds credentials).

// pullSecretFiles are the built-in rules' pull secrets (KubeletAuthFile, and the MCS's internal
// registry one, which has the same format).
var pullSecretFiles = []string{kubeletAuthFile, "/etc/mco/internal-registry-pull-secret.json"}

// IsPullSecretFile reports whether the built-in policy treats path as a pull secret.
func IsPullSecretFile(p string) bool {
	for _, f := range pullSecretFiles {
		if p == f {
			return true
		}
	}
	return false
}

// JudgePullSecret says why data, a JSON object, holds more than "auths", or nil. A file that is
// not a JSON object is nobody's code: CRI-O cannot read it as credentials, and it is the pull
// secret's writer's to get right.
func JudgePullSecret(data []byte) error {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if k != "auths" {
			name := "a key"
			if len(k) <= 32 && strings.Trim(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == "" {
				name = fmt.Sprintf("%q", k)
			}
			return fmt.Errorf("pull secret: %s: only \"auths\" is written (credHelpers and credsStore make CRI-O run a program as root)", name)
		}
	}
	return nil
}
