package diff

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"sigs.k8s.io/yaml"
)

// machineConfig is the subset of machineconfiguration.openshift.io/v1 MachineConfig the agent reads.
// A local type keeps the machine-config-operator's API (and its dependency tree) out of the binary.
type machineConfig struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Spec       struct {
		Config          json.RawMessage `json:"config,omitempty"`
		OSImageURL      string          `json:"osImageURL,omitempty"`
		KernelArguments []string        `json:"kernelArguments,omitempty"`
		FIPS            bool            `json:"fips,omitempty"`
		KernelType      string          `json:"kernelType,omitempty"`
		Extensions      []string        `json:"extensions,omitempty"`
	} `json:"spec"`
}

// MachineView is the reboot-class part of a MachineConfig, as one source states it.
type MachineView struct {
	Source          string // "spec", or the path of the embedded metadata file
	OSImageURL      string
	KernelArguments []string
	FIPS            bool
	KernelType      string
	Extensions      []string
}

func parseMachineConfig(data []byte) (*machineConfig, error) {
	var mc machineConfig
	if len(data) > 0 && data[0] != '{' {
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("MachineConfig is neither JSON nor YAML: %w", err)
		}
		data = js
	}
	if err := json.Unmarshal(data, &mc); err != nil {
		return nil, jsonError(data, err)
	}
	if mc.Kind != "" && mc.Kind != "MachineConfig" {
		return nil, fmt.Errorf("kind is %q, want MachineConfig", mc.Kind)
	}
	return &mc, nil
}

func (mc *machineConfig) view(source string) MachineView {
	kt := mc.Spec.KernelType
	if kt == "" {
		kt = "default" // the machine-config operator treats an empty kernelType as the default kernel
	}
	ext := slices.Clone(mc.Spec.Extensions)
	slices.Sort(ext) // extensions are a set: their order changes nothing on the node
	return MachineView{
		Source:          source,
		OSImageURL:      mc.Spec.OSImageURL,
		KernelArguments: mc.Spec.KernelArguments,
		FIPS:            mc.Spec.FIPS,
		KernelType:      kt,
		Extensions:      ext,
	}
}

// decodeMachineConfig reads a MachineConfig whose spec.config holds the Ignition config.
func (d *decoder) decodeMachineConfig(js []byte) (*Payload, error) {
	mc, err := parseMachineConfig(js)
	if err != nil {
		return nil, err
	}
	cfgRaw := mc.Spec.Config
	if len(cfgRaw) == 0 || string(cfgRaw) == "null" {
		return nil, errors.New("spec.config: missing (a MachineConfig payload must carry its Ignition config)")
	}
	var p *Payload
	pr, err := probeJSON(cfgRaw)
	switch {
	case err != nil:
	case pr.Ignition == nil:
		err = errors.New("not an Ignition config (no \"ignition\" key)")
	default:
		p, err = d.decodeIgnition(cfgRaw, pr.Ignition.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("spec.config: %w", err)
	}
	// The spec's own fields come first; embedded metadata files, if any, follow as further views.
	p.Machine = append([]MachineView{mc.view("spec")}, p.Machine...)
	p.MachineConfig = js
	return p, nil
}

// MachineConfigJSON returns the payload's full MachineConfig: the payload itself when it is one, else
// the machine-config server's embedded content file. nil when the payload carries neither.
func (p *Payload) MachineConfigJSON() ([]byte, error) {
	if p.MachineConfig != nil {
		return p.MachineConfig, nil
	}
	for _, f := range p.Config.Storage.Files {
		if f.Path == MachineConfigContentPath {
			return FileContents(f)
		}
	}
	return nil, nil
}
