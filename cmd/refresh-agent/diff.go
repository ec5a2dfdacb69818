package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/openshift/refresh-agent/actions"
	"github.com/openshift/refresh-agent/allowlist"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/plan"
)

func runDiff(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("diff")
	current := fs.String("current", "", "the node's current payload (Ignition, MachineConfig; raw, gzip, base64)")
	desired := fs.String("desired", "", "the desired payload")
	rules := fs.String("no-reboot-paths", "", "the ConfigMap's no-reboot-paths JSON")
	policy := fs.String("policy", "", "node-local policy file (YAML or JSON); default: built-in")
	output := fs.StringP("output", "o", "text", "text or json")
	stateDir := fs.String("state-dir", "", "the agent's state directory as a path on the node (apply's --state-dir without its --root), refused to every rule; default "+defaultStateDir+", denied always")
	fs.Int64Var(&diff.MaxPayloadSize, "max-payload-bytes", diff.MaxPayloadSize, maxPayloadUsage)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *current == "" || *desired == "" {
		return fail(stderr, exitInvalid, "diff: --current and --desired are required")
	}
	if *output != "text" && *output != "json" {
		return fail(stderr, exitInvalid, "diff: --output must be text or json, not %q", *output)
	}
	in, err := loadInputs(*current, *desired, *rules, *policy)
	if err != nil {
		return fail(stderr, exitInvalid, "%v", err)
	}
	if *stateDir != "" {
		if in.Policy, err = in.Policy.WithStateDir(*stateDir); err != nil {
			return fail(stderr, exitInvalid, "--state-dir: %v", err)
		}
	}
	p, err := plan.Build(*in)
	if err != nil {
		return fail(stderr, exitInvalid, "%v", err)
	}
	if err := writePlan(stdout, p, *output); err != nil {
		return fail(stderr, exitFailed, "writing output: %v", err)
	}
	if !p.Eligible {
		return exitRefused
	}
	return exitOK
}

// loadInputs reads and decodes every input file; errors name the file.
func loadInputs(current, desired, rules, policy string) (*plan.Inputs, error) {
	cur, err := decodeFile(current)
	if err != nil {
		return nil, err
	}
	des, err := decodeFile(desired)
	if err != nil {
		return nil, err
	}
	in := &plan.Inputs{Current: cur, Desired: des, Policy: allowlist.Default()}
	if rules != "" {
		if in.NoRebootPaths, err = loadRules(rules); err != nil {
			return nil, err
		}
	}
	if policy != "" {
		if in.Policy, err = allowlist.LoadPolicy(policy); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func loadRules(name string) ([]allowlist.Rule, error) {
	data, err := readInput(name, allowlist.MaxRulesSize)
	if err != nil {
		return nil, err
	}
	rules, err := allowlist.ParseRules(data)
	if err != nil {
		return nil, fmt.Errorf("%s: no-reboot-paths: %w", name, err)
	}
	return rules, nil
}

func decodeFile(name string) (*diff.Payload, error) {
	data, err := readInput(name, diff.MaxPayloadSize)
	if err != nil {
		return nil, err
	}
	p, err := diff.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// maxPayloadUsage documents --max-payload-bytes (diff, apply, run).
const maxPayloadUsage = "memory budget of one payload decode: the payload, its encodings and all decoded file contents together"

// readInput reads a file, refusing one larger than limit before reading it whole.
func readInput(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := actions.ReadBounded(f, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than the %d byte limit", name, limit)
	}
	return data, nil
}

func writePlan(w io.Writer, p *plan.Plan, output string) error {
	if output == "json" {
		return writeJSON(w, p)
	}
	return p.WriteText(w)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
