package edit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/coreos/go-semver/semver"
	v30 "github.com/coreos/ignition/v2/config/v3_0/types"
	v31 "github.com/coreos/ignition/v2/config/v3_1/types"
	v32 "github.com/coreos/ignition/v2/config/v3_2/types"
	v33 "github.com/coreos/ignition/v2/config/v3_3/types"
	v34 "github.com/coreos/ignition/v2/config/v3_4/types"
	v35 "github.com/coreos/ignition/v2/config/v3_5/types"
	"sigs.k8s.io/yaml"

	"github.com/openshift/refresh-agent/diff"
)

// role is which copy of the config an edit is made in.
type role int

const (
	outer       role = iota // the payload's own Ignition config
	contentCopy             // /etc/mcs-machine-config-content.json: the whole rendered config
	partialCopy             // /etc/ignition-machine-config-encapsulated.json: carries little or nothing
)

// newConfig returns a pointer to a zero Config of Ignition spec 3.minor, in that spec's own types,
// so that a config is marshalled back at the version it came in.
func newConfig(minor int64) (any, error) {
	switch minor {
	case 0:
		return new(v30.Config), nil
	case 1:
		return new(v31.Config), nil
	case 2:
		return new(v32.Config), nil
	case 3:
		return new(v33.Config), nil
	case 4:
		return new(v34.Config), nil
	case 5:
		return new(v35.Config), nil
	}
	return nil, fmt.Errorf("unknown Ignition spec 3.%d", minor)
}

// editDocument edits a JSON or YAML document holding an Ignition config or a MachineConfig.
func editDocument(doc []byte, ops []Op, embedded *[]string) ([]byte, error) {
	trimmed := bytes.TrimLeft(doc, " \t\r\n")
	isYAML := len(trimmed) == 0 || trimmed[0] != '{'
	js := doc
	if isYAML {
		var err error
		if js, err = yaml.YAMLToJSON(doc); err != nil {
			return nil, fmt.Errorf("yaml: %w", err)
		}
	}
	var out []byte
	var err error
	if isIgnition(js) {
		out, err = editIgnition(js, ops, outer, nil, embedded)
	} else {
		out, err = editMachineConfig(js, ops, outer, nil, embedded)
	}
	if err != nil {
		return nil, err
	}
	if isYAML {
		return yaml.JSONToYAML(out)
	}
	return likeJSON(doc, out)
}

// isIgnition tells an Ignition config (an "ignition" key, matched case-insensitively as Ignition
// does) from a MachineConfig.
func isIgnition(js []byte) bool {
	var probe struct {
		Ignition *json.RawMessage `json:"ignition"`
	}
	return json.Unmarshal(js, &probe) == nil && probe.Ignition != nil
}

// editIgnition edits one Ignition config in its own spec's types. For the outer config, the
// embedded MachineConfigs are edited first, knowing which paths the outer config had before.
func editIgnition(js []byte, ops []Op, r role, outerHad map[string]bool, embedded *[]string) ([]byte, error) {
	var head struct {
		Ignition struct {
			Version string `json:"version"`
		} `json:"ignition"`
	}
	if err := json.Unmarshal(js, &head); err != nil {
		return nil, err
	}
	v, err := semver.NewVersion(head.Ignition.Version)
	if err != nil || v.Major != 3 {
		return nil, fmt.Errorf("ignition.version %q is not a supported spec (3.0.0 to 3.5.0)", head.Ignition.Version)
	}
	cfg, err := newConfig(v.Minor)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(js, cfg); err != nil {
		return nil, err
	}
	c := config(cfg)
	if r == outer {
		// Keys edits become the one list the outer config ends with, so every copy gets the same.
		if ops, err = c.resolveKeys(ops); err != nil {
			return nil, err
		}
		had := map[string]bool{}
		for _, op := range ops {
			if op.KeysOp == KeysNone {
				had[op.Path] = c.file(op.Path) >= 0
			}
		}
		if err := c.editEmbedded(ops, had, embedded); err != nil {
			return nil, err
		}
	}
	changed := r == outer
	for _, op := range ops {
		ch, err := c.apply(op, r, outerHad)
		if err != nil {
			return nil, err
		}
		changed = changed || ch
	}
	if !changed {
		return js, nil // untouched: the copy's bytes stay exactly as they were
	}
	return marshal(cfg)
}

// editMachineConfig edits a MachineConfig's spec.config, keeping every other field as it is.
func editMachineConfig(js []byte, ops []Op, r role, outerHad map[string]bool, embedded *[]string) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(js, &top); err != nil {
		return nil, fmt.Errorf("MachineConfig: %w", err)
	}
	var spec map[string]json.RawMessage
	if err := json.Unmarshal(top["spec"], &spec); err != nil {
		return nil, fmt.Errorf("MachineConfig spec: %w", err)
	}
	raw := bytes.TrimSpace(spec["config"])
	if len(raw) == 0 || string(raw) == "null" {
		if r == partialCopy {
			return js, nil // carries no config: nothing in it to agree or disagree
		}
		return nil, errors.New("MachineConfig spec.config is empty: no Ignition config to edit")
	}
	cfg, err := editIgnition(raw, ops, r, outerHad, embedded)
	if err != nil {
		return nil, fmt.Errorf("MachineConfig spec.config: %w", err)
	}
	if bytes.Equal(cfg, raw) {
		return js, nil
	}
	spec["config"] = cfg
	if top["spec"], err = marshal(spec); err != nil {
		return nil, err
	}
	return marshal(top)
}

// marshal writes JSON as the MCO's tools do: no HTML escaping, no trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// likeJSON lays out out as orig was: indented with orig's indent when orig was indented, compact
// otherwise, with orig's trailing newline.
func likeJSON(orig, out []byte) ([]byte, error) {
	trimmed := bytes.TrimSpace(orig)
	var b bytes.Buffer
	if len(trimmed) > 1 && trimmed[1] == '\n' {
		rest := trimmed[2:]
		indent := rest[:len(rest)-len(bytes.TrimLeft(rest, " \t"))]
		if err := json.Indent(&b, out, "", string(indent)); err != nil {
			return nil, err
		}
	} else {
		b.Write(out)
	}
	if bytes.HasSuffix(orig, []byte("\n")) {
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// editEmbedded makes the edits in the machine-config server's embedded MachineConfig files.
func (c cfgValue) editEmbedded(ops []Op, outerHad map[string]bool, embedded *[]string) error {
	for _, p := range []string{diff.MachineConfigContentPath, diff.MachineConfigEncapsulatedPath} {
		i := c.file(p)
		if i < 0 {
			continue
		}
		r := partialCopy
		if p == diff.MachineConfigContentPath {
			r = contentCopy
		}
		old := c.contents(i)
		data, err := diff.FileContents(v35.File{Node: v35.Node{Path: p}, FileEmbedded1: v35.FileEmbedded1{Contents: old}})
		if err != nil {
			return fmt.Errorf("embedded MachineConfig %s: %w", p, err)
		}
		trimmed := bytes.TrimLeft(data, " \t\r\n")
		js := data
		isYAML := len(trimmed) > 0 && trimmed[0] != '{'
		if isYAML {
			if js, err = yaml.YAMLToJSON(data); err != nil {
				return fmt.Errorf("embedded MachineConfig %s: %w", p, err)
			}
		}
		out, err := editMachineConfig(js, ops, r, outerHad, embedded)
		if err != nil {
			return fmt.Errorf("embedded MachineConfig %s: %w", p, err)
		}
		if isYAML {
			out, err = yaml.JSONToYAML(out)
		} else {
			out, err = likeJSON(data, out)
		}
		if err != nil {
			return fmt.Errorf("embedded MachineConfig %s: %w", p, err)
		}
		if !bytes.Equal(out, data) {
			if err := c.setContents(i, out); err != nil {
				return fmt.Errorf("embedded MachineConfig %s: %w", p, err)
			}
			*embedded = append(*embedded, p)
		}
	}
	return nil
}
