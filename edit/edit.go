// Package edit changes a refresh payload the way an SRE needs to: set or remove a file, set, add or
// remove core's SSH keys. Every edit is made to the outer Ignition config and to the MachineConfig
// the machine-config server embeds in it (/etc/mcs-machine-config-content.json, and
// /etc/ignition-machine-config-encapsulated.json where it carries the entry), so that the payload
// stays one a node accepts: a node refuses a payload whose embedded copy disagrees with the outer
// config (diff.CheckEmbedded). The result is written in the encoding the payload came in (raw,
// gzip, base64, gzip then base64; Ignition or MachineConfig, JSON or YAML) and at its Ignition
// spec version.
//
// Configs are read into Ignition's own types of their spec version (github.com/coreos/ignition/v2
// config/v3_N/types), edited there and marshalled back; nothing is parsed by hand. Before the
// result is returned it is decoded again and diffed against the input: any difference other than
// the edits asked for is an error, and nothing is returned.
package edit

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/openshift/refresh-agent/diff"
)

// Op is one edit.
type Op struct {
	// Path and Contents set a file (Remove false) or remove it (Remove true).
	Path     string
	Contents []byte
	Mode     *int // the file's mode; nil keeps an existing file's, and is 0644 for a new one
	Remove   bool
	// Keys edits core's SSH authorized keys: KeysSet replaces them, KeysAdd adds, KeysRemove removes.
	Keys   []string
	KeysOp KeysOp
}

// KeysOp says what an Op does to core's SSH keys.
type KeysOp int

const (
	KeysNone KeysOp = iota
	KeysSet
	KeysAdd
	KeysRemove
)

// DefaultMode is a new file's mode (Ignition's default for files).
const DefaultMode = 0o644

// SetFile sets the file at p to contents (mode nil: keep, or 0644 for a new file).
func SetFile(p string, contents []byte, mode *int) Op {
	return Op{Path: p, Contents: contents, Mode: mode}
}

// RemoveFile removes the file at p.
func RemoveFile(p string) Op { return Op{Path: p, Remove: true} }

// SSHKeys edits core's authorized keys.
func SSHKeys(op KeysOp, keys []string) Op { return Op{KeysOp: op, Keys: keys} }

// Result is an edited payload and what the edit did.
type Result struct {
	Payload []byte    // in the input's encoding
	Form    diff.Form // the encoding found, e.g. "base64+gzip+ignition"
	// Embedded lists the embedded MachineConfig files the edits were also made in.
	Embedded []string
	Changes  []diff.Change // the differences between the input and the result, as a node sees them
}

// Apply makes the edits on raw and returns the result. Errors name the path, key or file at fault.
func Apply(raw []byte, ops ...Op) (*Result, error) {
	if len(ops) == 0 {
		return nil, errors.New("no edit given")
	}
	for _, op := range ops {
		if err := op.check(); err != nil {
			return nil, err
		}
	}
	before, form, err := diff.DecodeForm(raw)
	if err != nil {
		return nil, fmt.Errorf("the payload: %w", err)
	}
	layers, doc, err := unwrap(raw)
	if err != nil {
		return nil, err
	}
	var embedded []string
	out, err := editDocument(doc, ops, &embedded)
	if err != nil {
		return nil, err
	}
	wrapped, err := wrapLayers(out, layers)
	if err != nil {
		return nil, err
	}
	after, err := diff.Decode(wrapped)
	if err != nil {
		return nil, fmt.Errorf("the edited payload does not decode (nothing written): %w", err)
	}
	if why := diff.CheckEmbedded(after); why != "" {
		return nil, fmt.Errorf("the edited payload's embedded copy disagrees (nothing written): %s", why)
	}
	changes, err := diff.Diff(before, after)
	if err != nil {
		return nil, err
	}
	if err := onlyAsked(changes, ops); err != nil {
		return nil, err
	}
	slices.Sort(embedded)
	return &Result{Payload: wrapped, Form: form, Embedded: slices.Compact(embedded), Changes: changes}, nil
}

func (op Op) check() error {
	if op.KeysOp != KeysNone {
		for i, k := range op.Keys {
			if strings.ContainsAny(k, "\r\n\x00") || strings.TrimSpace(k) == "" || !utf8.ValidString(k) {
				return fmt.Errorf("SSH key %d: not one authorized_keys line", i+1)
			}
		}
		if op.KeysOp != KeysSet && len(op.Keys) == 0 {
			return errors.New("no SSH key given")
		}
		return nil
	}
	p := op.Path
	switch {
	case p == "":
		return errors.New("--path is required")
	case !path.IsAbs(p) || path.Clean(p) != p:
		return fmt.Errorf("path %q is not absolute and clean", p)
	case !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("path %q holds a control character or is not valid UTF-8", p)
	case diff.IsMetadataPath(p):
		return fmt.Errorf("%s is the machine-config server's metadata, not a file to edit: edit the files themselves and the embedded copy follows", p)
	}
	if op.Mode != nil && (*op.Mode < 0 || *op.Mode > 0o7777) {
		return fmt.Errorf("mode %o of %s is not a file mode", *op.Mode, p)
	}
	return nil
}

// onlyAsked fails when the result differs from the input by more than the edits: a field the
// round trip through Ignition's types lost or changed would otherwise reach every node.
func onlyAsked(changes []diff.Change, ops []Op) error {
	paths, keys := map[string]bool{}, false
	for _, op := range ops {
		if op.KeysOp != KeysNone {
			keys = true
		} else {
			paths[op.Path] = true
		}
	}
	for _, c := range changes {
		switch {
		case c.Kind == diff.KindFile && (paths[c.Path] || diff.IsMetadataPath(c.Path)):
		case c.Kind == diff.KindSSHKeys && keys:
		default:
			what := c.Path + c.Unit + c.User
			return fmt.Errorf("internal error: the edit would also change %s %s (%s); nothing written", c.Kind, what, c.Detail)
		}
	}
	return nil
}

// ParseAuthorizedKeys reads an authorized_keys file: one key per line; blank lines and # comments
// are skipped.
func ParseAuthorizedKeys(data []byte) ([]string, error) {
	var keys []string
	for i, line := range bytes.Split(data, []byte("\n")) {
		l := strings.TrimSpace(string(line))
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if !utf8.ValidString(l) || strings.ContainsRune(l, 0) {
			return nil, fmt.Errorf("line %d: not valid UTF-8 text", i+1)
		}
		if len(strings.Fields(l)) < 2 {
			return nil, fmt.Errorf("line %d: not an authorized key (type and key expected)", i+1)
		}
		keys = append(keys, l)
	}
	return keys, nil
}
