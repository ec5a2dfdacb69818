package diff

import (
	"bytes"
	"errors"
	"fmt"
)

// The machine-config daemon's record on the node (/etc/mcd-currentconfig.json) is the MachineConfig
// it diffs its next run against (syncNodeHypershift: encoding/json into mcfgv1.MachineConfig, then
// spec.config parsed as Ignition). A refresh whose payload carries no MachineConfig (a bare Ignition
// config, without the machine-config server's content file) still changes what spec.config says of
// the node, and nothing else of it: the record is rewritten with spec.config replaced by the
// payload's Ignition config, every other member (metadata, osImageURL, kernelArguments, fips,
// kernelType, extensions, baseOSExtensionsContainerImage) as the node's record has it, since a
// refresh cannot change them.

// ErrInvalidMCDRecord marks a daemon's record that is not a MachineConfig as the daemon reads it:
// a refresh refuses whole rather than write a guess over it.
var ErrInvalidMCDRecord = errors.New("not a MachineConfig the machine-config daemon reads")

// MCDRecord is the daemon's record as read from the node: its bytes, where its spec.config is, and
// its reboot-class fields.
type MCDRecord struct {
	js         []byte
	start, end int // spec.config's value (and the whitespace before it) in js
	// View is the record's reboot-class fields (source "spec"), compared with a desired
	// MachineConfig's when the refresh's baseline carries none.
	View MachineView
}

// ParseMCDRecord reads the daemon's record data, within the payload budget: a JSON object (the
// daemon reads it with encoding/json: YAML, gzip or base64 is not its record), no key given twice or
// equal to another but for case, kind MachineConfig and apiVersion machineconfiguration.openshift.io/v1
// (or left out, as a payload may leave them: filled in when it is written), metadata that decodes as
// Kubernetes' ObjectMeta, spec fields of the daemon's types, and a spec.config that is a JSON object.
// Anything else is ErrInvalidMCDRecord, named by field or offset, never by its contents (the record
// holds the pull secret).
func ParseMCDRecord(data []byte) (*MCDRecord, error) {
	invalid := func(err error) error { return fmt.Errorf("%w: %w", ErrInvalidMCDRecord, err) }
	d := newDecoder()
	if err := d.charge(int64(len(data)), "the record"); err != nil {
		return nil, invalid(err)
	}
	js := bytes.Trim(data, " \t\r\n")
	if len(js) == 0 || js[0] != '{' {
		return nil, invalid(errors.New("not a JSON object (the daemon reads its record with encoding/json)"))
	}
	cost, err := checkKeysWithin(js, d.budget)
	if err != nil {
		return nil, invalid(err)
	}
	if err := d.charge(cost, "the record's JSON values"); err != nil {
		return nil, invalid(err)
	}
	mc, err := unmarshalMachineConfig(js)
	if err != nil {
		return nil, invalid(err)
	}
	a, b, ok := specConfigSpan(js)
	if !ok {
		return nil, invalid(errors.New("no spec.config (the daemon parses it as an Ignition config)"))
	}
	if v := bytes.TrimLeft(js[a:b], " \t\r\n"); len(v) == 0 || v[0] != '{' {
		return nil, invalid(errors.New("spec.config is not a JSON object (the daemon parses it as an Ignition config)"))
	}
	return &MCDRecord{js: js, start: a, end: b, View: mc.view("spec")}, nil
}

// With returns the record with spec.config replaced by config (an Ignition config as JSON), every
// other member byte for byte in its place, as the JSON the daemon reads (kind and apiVersion filled
// in first when the record leaves them out: mcdRecord).
func (r *MCDRecord) With(config []byte) ([]byte, error) {
	config = bytes.Trim(config, " \t\r\n")
	if len(config) == 0 || config[0] != '{' {
		return nil, errors.New("the desired payload's Ignition config is not known as a JSON object")
	}
	out := make([]byte, 0, len(r.js)-(r.end-r.start)+len(config))
	out = append(append(append(out, r.js[:r.start]...), config...), r.js[r.end:]...)
	return mcdRecord(out)
}

// IgnitionJSON is the payload's Ignition config as its decode read it (the JSON object within
// its encodings, YAML converted to JSON): what the daemon's record receives as spec.config when the
// payload carries no MachineConfig. nil for a MachineConfig payload, or one no decode made.
func (p *Payload) IgnitionJSON() []byte { return p.ignition }
