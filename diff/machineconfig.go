package diff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/coreos/ignition/v2/config/v3_5/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sjson "sigs.k8s.io/json"
)

// machineConfig is the subset of machineconfiguration.openshift.io/v1 MachineConfig the agent reads.
// A local type keeps the machine-config-operator's API (and its dependency tree) out of the binary.
type machineConfig = machineConfigOf[json.RawMessage]

// machineConfigOf is machineConfig with spec.config of type C: a cross-check reads the rest without
// copying the config. Metadata is Kubernetes' own ObjectMeta, as in mcfgv1.MachineConfig: the
// machine-config daemon decodes its record into that type, so metadata it could not decode
// (generation: true, labels: {a: 1}, creationTimestamp: 5, ...) is invalid here, not a baseline the
// daemon fails on later.
type machineConfigOf[C any] struct {
	APIVersion string            `json:"apiVersion,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Metadata   metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec       struct {
		Config          C        `json:"config,omitempty"`
		OSImageURL      string   `json:"osImageURL,omitempty"`
		ExtensionsImage string   `json:"baseOSExtensionsContainerImage,omitempty"`
		KernelArguments []string `json:"kernelArguments,omitempty"`
		FIPS            bool     `json:"fips,omitempty"`
		KernelType      string   `json:"kernelType,omitempty"`
		Extensions      []string `json:"extensions,omitempty"`
	} `json:"spec"`
}

// present records whether a JSON value other than null was there, without keeping it.
type present bool

func (p *present) UnmarshalJSON(b []byte) error {
	*p = string(b) != "null"
	return nil
}

// MachineView is the reboot-class part of a MachineConfig, as one source states it.
type MachineView struct {
	Source          string // "spec", or the path of the embedded metadata file
	OSImageURL      string
	ExtensionsImage string // baseOSExtensionsContainerImage: the OS extensions' image, layered at boot
	KernelArguments []string
	FIPS            bool
	KernelType      string
	Extensions      []string
	// IgnitionKernelArguments is an embedded MachineConfig's spec.config kernelArguments, as
	// "shouldExist: a" and "shouldNotExist: b" (none for the "spec" view: a MachineConfig payload's
	// spec.config is the config the diff reads).
	IgnitionKernelArguments []string
}

// kargStrings words Ignition kernelArguments for MachineView.IgnitionKernelArguments.
func kargStrings(ka types.KernelArguments) []string {
	var out []string
	for _, a := range ka.ShouldExist {
		out = append(out, "shouldExist: "+string(a))
	}
	for _, a := range ka.ShouldNotExist {
		out = append(out, "shouldNotExist: "+string(a))
	}
	return out
}

// parseMachineConfig reads a MachineConfig, JSON or YAML, checking it for duplicate keys, within the
// decode's budget: an embedded file's bytes are charged as its contents, and what parsing them costs
// beyond their bytes is charged here, before anything is decoded: the JSON converted from YAML, and
// the structure's worst-case cost (objectCost, elementCost: a 78 KB gzip of 20 million empty
// kernelArguments decoded into 2 GB of strings before it was).
func (d *decoder) parseMachineConfig(data []byte) (*machineConfig, error) {
	if len(data) > 0 && data[0] != '{' {
		js, err := d.yamlToJSON(data)
		if errors.Is(err, ErrYAMLCost) {
			return nil, fmt.Errorf("MachineConfig: %w", err)
		}
		if err != nil {
			return nil, fmt.Errorf("MachineConfig is neither JSON nor YAML: %s", oneLine(err))
		}
		if err := d.charge(int64(len(js)), "MachineConfig JSON converted from YAML"); err != nil {
			return nil, err
		}
		data = js
	}
	cost, err := checkKeysWithin(data, d.budget)
	if err != nil {
		return nil, err
	}
	if err := d.charge(cost, "MachineConfig JSON values"); err != nil {
		return nil, err
	}
	return unmarshalMachineConfig(data)
}

// unmarshalMachineConfig reads a MachineConfig JSON already checked for duplicate keys. The machine-
// config operator reads it case-sensitively (Kubernetes' JSON), encoding/json case-insensitively: a
// key that only one of them matches to a field (e.g. "Spec" or "FIPS") is invalid.
//
// Both readers see spec.config only as raw bytes or as present: the walker checks the document as
// encoding/json would and finds that value, and they read a copy without it (the config is nearly
// all of a content MachineConfig, megabytes that each reader would scan twice). The whole document
// is read as before when the walker cannot settle it, so errors read as encoding/json words them.
func unmarshalMachineConfig(js []byte) (*machineConfig, error) {
	if a, b, ok := specConfigSpan(js); ok {
		placeholder := "0"
		if string(js[a:b]) == "null" {
			placeholder = "null"
		}
		small := make([]byte, 0, len(js)-(b-a)+len(placeholder))
		small = append(append(append(small, js[:a]...), placeholder...), js[b:]...)
		if mc, err := readMachineConfig(small); err == nil {
			if placeholder != "null" {
				mc.Spec.Config = js[a:b:b]
			}
			return mc, nil
		}
	}
	return readMachineConfig(js)
}

// specConfigSpan checks js as encoding/json would and returns where the value of spec.config is (the
// members whose keys encoding/json matches to those fields; the caller refused keys equal but for
// case).
func specConfigSpan(js []byte) (start, end int, ok bool) {
	w := walker{js: js}
	start = -1
	err := w.object(func(key []byte) error {
		if !keyFolds(key, "spec") || w.peek() != '{' {
			return w.value()
		}
		return w.object(func(key []byte) error {
			if !keyFolds(key, "config") {
				return w.value()
			}
			start = w.pos
			err := w.value()
			end = w.pos
			return err
		})
	})
	if err != nil {
		return 0, 0, false
	}
	w.ws()
	return start, end, start >= 0 && w.pos == len(js)
}

func readMachineConfig(js []byte) (*machineConfig, error) {
	var mc machineConfig
	if err := json.Unmarshal(js, &mc); err != nil {
		return nil, machineConfigError(js, err)
	}
	var cs machineConfigOf[present]
	if err := k8sjson.UnmarshalCaseSensitivePreserveInts(js, &cs); err != nil {
		return nil, machineConfigError(js, err)
	}
	hasConfig := len(mc.Spec.Config) > 0 && string(mc.Spec.Config) != "null"
	if mc.APIVersion != cs.APIVersion || mc.Kind != cs.Kind || hasConfig != bool(cs.Spec.Config) ||
		mc.Spec.OSImageURL != cs.Spec.OSImageURL || mc.Spec.ExtensionsImage != cs.Spec.ExtensionsImage || !slices.Equal(mc.Spec.KernelArguments, cs.Spec.KernelArguments) ||
		mc.Spec.FIPS != cs.Spec.FIPS || mc.Spec.KernelType != cs.Spec.KernelType || !slices.Equal(mc.Spec.Extensions, cs.Spec.Extensions) ||
		!reflect.DeepEqual(mc.Metadata, cs.Metadata) {
		return nil, fmt.Errorf("MachineConfig key %s differs from a field name only in case (the machine-config operator reads keys case-sensitively)", caseVariantKey(js))
	}
	if mc.Kind != "" && mc.Kind != machineConfigKind {
		return nil, fmt.Errorf("kind is %q, want %s", mc.Kind, machineConfigKind)
	}
	if mc.APIVersion != "" && mc.APIVersion != machineConfigAPIVersion {
		return nil, fmt.Errorf("apiVersion is %q, want %s", mc.APIVersion, machineConfigAPIVersion)
	}
	return &mc, nil
}

// A MachineConfig's type: a payload may leave them out (the decode reads it by its spec), the
// daemon's record always carries them.
const (
	machineConfigKind       = "MachineConfig"
	machineConfigAPIVersion = "machineconfiguration.openshift.io/v1"
)

// machineConfigError words a MachineConfig's decode error. Only ObjectMeta's timestamps
// (metav1.Time) fail with errors of their own that name no field: those are metadata's.
func machineConfigError(js []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if !errors.As(err, &syn) && !errors.As(err, &typ) {
		return fmt.Errorf("metadata: a timestamp does not decode as Kubernetes' ObjectMeta reads it: %s", oneLine(err))
	}
	return jsonError(js, err)
}

// caseVariantKey names the first key of a MachineConfig that matches one of its fields only when
// case is ignored (error path only).
func caseVariantKey(js []byte) string {
	check := func(data []byte, ptr string, fields ...string) (string, map[string]json.RawMessage) {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(data, &m)
		for k := range m {
			for _, f := range fields {
				if k != f && keyIs(k, f) {
					return ptr + "/" + escapePointer(k), nil
				}
			}
		}
		return "", m
	}
	if k, top := check(js, "", "apiVersion", "kind", "metadata", "spec"); k != "" {
		return k
	} else if k, _ := check(top["spec"], "/spec", "config", "osImageURL", "baseOSExtensionsContainerImage", "kernelArguments", "fips", "kernelType", "extensions"); k != "" {
		return k
	} else if k, _ := check(top["metadata"], "/metadata", metaFields...); k != "" {
		return k
	}
	return "(unknown)"
}

// metaFields are ObjectMeta's JSON keys (for naming a key that differs from one only in case).
var metaFields = []string{"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
	"generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
	"annotations", "ownerReferences", "finalizers", "managedFields"}

func (mc *machineConfigOf[C]) view(source string) MachineView {
	kt := mc.Spec.KernelType
	if kt == "" {
		kt = "default" // the machine-config operator treats an empty kernelType as the default kernel
	}
	ext := slices.Clone(mc.Spec.Extensions)
	slices.Sort(ext) // extensions are a set: their order changes nothing on the node
	return MachineView{
		Source:          source,
		OSImageURL:      mc.Spec.OSImageURL,
		ExtensionsImage: mc.Spec.ExtensionsImage,
		KernelArguments: mc.Spec.KernelArguments,
		FIPS:            mc.Spec.FIPS,
		KernelType:      kt,
		Extensions:      ext,
	}
}

// decodeMachineConfig reads a MachineConfig whose spec.config holds the Ignition config.
func (d *decoder) decodeMachineConfig(js []byte) (*Payload, error) {
	mc, err := unmarshalMachineConfig(js) // decodeJSON checked the whole document's keys

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

// MachineConfigJSON returns the payload's full MachineConfig as the machine-config daemon reads its
// record (/etc/mcd-currentconfig.json: encoding/json into a MachineConfig, then spec.config parsed as
// an Ignition config): the payload itself when it is one, else the machine-config server's embedded
// content file. JSON that names its kind and apiVersion is returned as is (byte for byte what the
// daemon itself would copy); YAML is converted to JSON with the same conversion the decode judged it
// by; a kind or apiVersion left out (or empty, or null) is filled in. nil when the payload carries
// neither; an error when the result is not what the daemon reads.
func (p *Payload) MachineConfigJSON() ([]byte, error) {
	if p.MachineConfig != nil {
		return mcdRecord(p.MachineConfig)
	}
	for _, f := range p.Config.Storage.Files {
		if f.Path == MachineConfigContentPath {
			data, err := FileContents(f)
			if err != nil {
				return nil, err
			}
			return mcdRecord(data)
		}
	}
	return nil, nil
}

// mcdRecord is data as JSON the machine-config daemon reads into its MachineConfig: an object whose
// kind is MachineConfig and apiVersion machineconfiguration.openshift.io/v1 (filled in when left
// out), whose metadata decodes as Kubernetes' ObjectMeta, whose spec fields have the types of
// mcfgv1.MachineConfigSpec, and whose spec.config is an Ignition config object.
func mcdRecord(data []byte) ([]byte, error) {
	js := bytes.TrimLeft(data, " \t\r\n")
	if len(js) == 0 || js[0] != '{' {
		conv, err := yamlToJSON(data)
		if errors.Is(err, ErrYAMLCost) {
			return nil, fmt.Errorf("%s: MachineConfig: %w", MachineConfigContentPath, err)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: MachineConfig is neither JSON nor YAML: %s", MachineConfigContentPath, oneLine(err))
		}
		js = conv
	} else {
		js = data
	}
	// The daemon's own decode (encoding/json into mcfgv1.MachineConfig): the same field types, with
	// spec.config only checked to be an object (a copy of it would be megabytes held for nothing).
	var mc machineConfigOf[configObject]
	if err := json.Unmarshal(js, &mc); err != nil {
		return nil, fmt.Errorf("the MachineConfig for the machine-config daemon's record does not decode as it reads it: %w", jsonError(js, err))
	}
	if mc.Kind != "" && mc.Kind != machineConfigKind {
		return nil, fmt.Errorf("the MachineConfig for the machine-config daemon's record has kind %q", mc.Kind)
	}
	if mc.APIVersion != "" && mc.APIVersion != machineConfigAPIVersion {
		return nil, fmt.Errorf("the MachineConfig for the machine-config daemon's record has apiVersion %q", mc.APIVersion)
	}
	if !mc.Spec.Config {
		return nil, errors.New("the MachineConfig for the machine-config daemon's record has no spec.config object (the daemon parses it as an Ignition config)")
	}
	if mc.Kind == "" || mc.APIVersion == "" {
		return withTypeMeta(js)
	}
	return js, nil
}

// withTypeMeta is the MachineConfig object js with kind and apiVersion first, as the daemon's record
// carries them, and every other member as it was (byte for byte, in its order). Members whose keys
// encoding/json would read as kind or apiVersion (empty or null ones) are dropped, so that no later
// key overrides the ones written.
func withTypeMeta(js []byte) ([]byte, error) {
	out := make([]byte, 0, len(js)+96)
	out = append(out, `{"apiVersion":"`+machineConfigAPIVersion+`","kind":"`+machineConfigKind+`"`...)
	w := walker{js: js}
	err := w.object(func(key []byte) error {
		start := cap(js) - cap(key) - 1 // the key's opening quote
		if err := w.value(); err != nil {
			return err
		}
		if !keyFolds(key, "kind") && !keyFolds(key, "apiVersion") {
			out = append(append(out, ','), js[start:w.pos]...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the MachineConfig for the machine-config daemon's record: %w", err)
	}
	return append(out, '}'), nil
}

// configObject records whether a JSON value is an object, without keeping it (the config is nearly
// all of the MachineConfig: a copy of it would be megabytes held for nothing).
type configObject bool

func (c *configObject) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*c = len(b) > 0 && b[0] == '{'
	return nil
}
