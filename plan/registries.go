package plan

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"

	"github.com/BurntSushi/toml"
	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/openshift/refresh-agent/diff"
)

// The part of containers-registries.conf(5) that decides whether a change is safe without a drain,
// with the names and types of containers/image's sysregistriesv2 (V2RegistriesConf, Registry,
// Endpoint), which the machine-config daemon decodes with BurntSushi/toml. The library itself would
// pull in most of containers/image for three structs.
type registriesConf struct {
	UnqualifiedSearchRegistries []string   `toml:"unqualified-search-registries"`
	Registries                  []registry `toml:"registry"`
}

type endpoint struct {
	Location       string `toml:"location"`
	Insecure       bool   `toml:"insecure"`
	PullFromMirror string `toml:"pull-from-mirror"`
}

type registry struct {
	Prefix string `toml:"prefix"`
	endpoint
	Blocked            bool       `toml:"blocked"`
	Mirrors            []endpoint `toml:"mirror"`
	MirrorByDigestOnly bool       `toml:"mirror-by-digest-only"`
}

const digestOnly = "digest-only"

// registriesSafe applies the machine-config daemon's rule (isSafeContainerRegistryConfChanges in
// openshift/machine-config-operator pkg/daemon/drain.go): a registries.conf change is safe without a
// drain when it only adds, keeping every existing unqualified search registry in order, every
// registry and its prefix, location, blocked and insecure values, and every mirror (whose
// pull-from-mirror may only become digest-only): mirrors that pull by digest only, to existing
// registries, or new registries whose mirrors all pull by digest only. It returns "" when safe, or
// why not. Unlike the daemon, a change of any other setting (short-name-mode, aliases,
// credential-helpers, the v1 tables) is not safe either: the daemon does not look at them, and
// whether running pods could depend on them is not known here. A desired file that is not TOML is an
// error (crio would not load it); a current one that is not cannot be judged: it needs a drain.
func registriesSafe(old, new []byte) (string, error) {
	// The desired file is judged whole whatever the current one is: a current file the agent
	// cannot judge asks for a drain, never for a desired file that crio would not load.
	n, nAll, err := parseRegistries(new)
	if err != nil {
		return "", fmt.Errorf("desired registries.conf %w", err)
	}
	o, oAll, err := parseRegistries(old)
	var bound *tomlBoundError
	switch {
	case errors.As(err, &bound):
		return "the current file is not judged (" + bound.err.Error() + ")", nil
	case err != nil:
		// Not the agent's to judge, and not the desired file's fault: the cautious path.
		return "the current file is not valid TOML, so the change cannot be judged", nil
	}
	for _, k := range []string{"unqualified-search-registries", "registry"} {
		delete(oAll, k)
		delete(nAll, k)
	}
	if !reflect.DeepEqual(oAll, nAll) {
		return "settings other than registries and unqualified-search-registries changed", nil
	}
	if len(o.UnqualifiedSearchRegistries) > len(n.UnqualifiedSearchRegistries) ||
		!slices.Equal(o.UnqualifiedSearchRegistries, n.UnqualifiedSearchRegistries[:len(o.UnqualifiedSearchRegistries)]) {
		return "an unqualified search registry was removed or reordered", nil
	}
	scope := func(r registry) string {
		if r.Prefix != "" {
			return r.Prefix
		}
		return r.Location
	}
	oldRegs, newRegs := map[string]registry{}, map[string]registry{}
	for _, r := range o.Registries {
		oldRegs[scope(r)] = r
	}
	for _, r := range n.Registries {
		newRegs[scope(r)] = r
	}
	for _, s := range sortedKeys(oldRegs) {
		if _, ok := newRegs[s]; !ok {
			return "registry " + s + " was removed", nil
		}
	}
	for _, s := range sortedKeys(newRegs) {
		nr := newRegs[s]
		or, ok := oldRegs[s]
		if !ok {
			if !allDigestOnly(nr) {
				return "registry " + s + " was added with a mirror that does not pull by digest only", nil
			}
			continue
		}
		if reflect.DeepEqual(or, nr) {
			continue
		}
		switch {
		case or.Prefix != nr.Prefix, or.Location != nr.Location:
			return "registry " + s + " changed its prefix or location", nil
		case or.Blocked != nr.Blocked:
			return "registry " + s + " changed blocked", nil
		case or.Insecure != nr.Insecure:
			return "registry " + s + " changed insecure", nil
		}
		for _, m := range or.Mirrors {
			if _, found := findMirror(m.Location, nr.Mirrors); !found {
				return "mirror " + m.Location + " of registry " + s + " was removed", nil
			}
		}
		for _, m := range nr.Mirrors {
			om, found := findMirror(m.Location, or.Mirrors)
			if found && m.PullFromMirror != om.PullFromMirror && m.PullFromMirror != digestOnly {
				return "mirror " + m.Location + " of registry " + s + " no longer pulls by digest only", nil
			}
			if !found && m.PullFromMirror != digestOnly && !nr.MirrorByDigestOnly {
				return "mirror " + m.Location + " was added to registry " + s + " without pulling by digest only", nil
			}
		}
	}
	return "", nil
}

// tomlBoundError: a registries.conf beyond checkTOMLBounds, not parsed.
type tomlBoundError struct{ err error }

func (e *tomlBoundError) Error() string { return "is not parsed: " + e.err.Error() }
func (e *tomlBoundError) Unwrap() error { return e.err }

// parseRegistries decodes a registries.conf within the parse bounds, as the struct the rule reads
// and as a whole (for the settings it does not model). The error reads after the file's name.
func parseRegistries(data []byte) (registriesConf, map[string]any, error) {
	var conf registriesConf
	var all map[string]any
	if err := checkTOMLBounds(data); err != nil {
		return conf, nil, &tomlBoundError{err}
	}
	_, err := toml.Decode(string(data), &conf)
	if err == nil {
		_, err = toml.Decode(string(data), &all)
	}
	if err != nil {
		return conf, nil, tomlError(err)
	}
	return conf, all, nil
}

var tomlLine = regexp.MustCompile(`line ([0-9]+)`)

// tomlError says where the TOML is invalid, never what it holds: the parser's messages quote the
// file's text (a value, a key, a table's name: adversary r21 c/01 got 6 KB of the file back in the
// reason, and with it in the logs, the Node's annotation and Events).
func tomlError(err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("is not valid TOML at line %d, column %d (the parser's message is not repeated: it quotes the file)", pe.Position.Line, pe.Position.Col)
	}
	if m := tomlLine.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("is not valid TOML for registries.conf at line %s (a value of the wrong type or a key defined twice; the parser's message is not repeated: it quotes the file)", m[1])
	}
	return errors.New("is not valid TOML for registries.conf (the parser's message is not repeated: it quotes the file)")
}

func findMirror(loc string, list []endpoint) (endpoint, bool) {
	for _, m := range list {
		if m.Location == loc {
			return m, true
		}
	}
	return endpoint{}, false
}

func allDigestOnly(r registry) bool {
	if len(r.Mirrors) == 0 {
		return r.MirrorByDigestOnly
	}
	for _, m := range r.Mirrors {
		// containers/image: a mirror without pull-from-mirror follows the registry's
		// mirror-by-digest-only. The daemon's check asks pull-from-mirror of every mirror of a new
		// registry; both are digest-only pulls, which cannot change what a tag resolves to.
		if m.PullFromMirror != digestOnly && !(m.PullFromMirror == "" && r.MirrorByDigestOnly) {
			return false
		}
	}
	return true
}

func sortedKeys[T any](m map[string]T) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// registriesChange judges a registries.conf change (a file added or removed counts as empty on
// that side, as the daemon reads it): "" when safe without a drain, else why not.
// A registries.conf larger than this is not judged (crio's is a few KiB): it needs a drain.
const maxRegistriesConf = 1 << 20

func registriesChange(c *diff.Change) (string, error) {
	read := func(f *types.File) ([]byte, error) {
		if f == nil {
			return nil, nil
		}
		return diff.FileContentsUpTo(*f, maxRegistriesConf)
	}
	des, err := read(c.New)
	if err != nil {
		// crio reads the whole file: one the agent cannot judge is never written.
		return "", fmt.Errorf("desired registries.conf is not judged: %w", err)
	}
	old, err := read(c.Old)
	if err != nil {
		// The desired file is still judged whole; the change then needs a drain.
		if _, _, derr := parseRegistries(des); derr != nil {
			return "", fmt.Errorf("desired registries.conf %w", derr)
		}
		return "current file not judged: " + err.Error(), nil
	}
	return registriesSafe(old, des)
}
