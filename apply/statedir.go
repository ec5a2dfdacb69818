package apply

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/plan"
)

// OnNode returns the paths on the node of a host path that lies inside the root (none for one
// outside it: the state dir, the policy file): as given, and with the symlinks of its existing part
// resolved, so that a root or path named through a symlink is still found.
func OnNode(rootDir, hostPath string) []string {
	var out []string
	add := func(root, dir string) {
		rp, err := filepath.Rel(root, dir)
		if err != nil || rp == ".." || strings.HasPrefix(rp, "../") || filepath.IsAbs(rp) {
			return
		}
		p := "/"
		if rp != "." {
			p = "/" + filepath.ToSlash(rp)
		}
		for _, q := range out {
			if q == p {
				return
			}
		}
		out = append(out, p)
	}
	root, dir := filepath.Clean(rootDir), hostPath
	if !filepath.IsAbs(dir) {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
	}
	dir = filepath.Clean(dir)
	add(root, dir)
	if r, err := filepath.EvalSymlinks(root); err == nil {
		add(r, resolveExisting(dir))
	}
	return out
}

// resolveExisting resolves the symlinks of the longest existing ancestor of dir and appends the rest.
func resolveExisting(dir string) string {
	rest := ""
	for d := dir; ; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(r, rest)
		}
		if d == filepath.Dir(d) {
			return dir
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

// NodePolicy is the policy every plan and recovery on this host judges by: h.Policy (the built-in
// one when nil) refusing the agent's state dir to every rule and ceiling, wherever --state-dir puts
// it inside the root. An error names a policy rule that would reach it.
func (h Host) NodePolicy() (*allowlist.Policy, error) {
	pol := h.Policy
	if pol == nil {
		pol = allowlist.Default()
	}
	if h.Root == nil {
		return pol, nil
	}
	pol, err := pol.WithStateDir(OnNode(h.Root.Dir, h.StateDir)...)
	if err != nil {
		return nil, err
	}
	// The policy file, when it lies inside the root, is the agent's as its state dir is: no refresh
	// may rewrite the policy it is judged by.
	if h.PolicyFile != "" {
		if pol, err = pol.WithPolicyFile(OnNode(h.Root.Dir, h.PolicyFile)...); err != nil {
			return nil, err
		}
	}
	// The node's users' homes: no rule reaches one (a shell's rc files run code as its user).
	homes, err := h.Root.Homes()
	if err != nil {
		return nil, fmt.Errorf("the node's /etc/passwd: %w", err)
	}
	pol = pol.WithHomes(homes)
	// The node's unit links: a dependency on one is judged as the unit it links to, and a policy
	// naming one is refused.
	pol, err = pol.WithUnitAliases(NodeUnitAliases(h.Root.Dir))
	if err != nil {
		return nil, err
	}
	// The node's unit files: an instance a payload's unit pulls in is judged by its template's
	// text; the plan judges a payload's unit with the node's drop-ins of it, and the node's units a
	// job reaches, as the manager will load them.
	return pol.WithNodeUnitFiles(plan.NodeUnitsAt(h.Root.Dir)), nil
}
