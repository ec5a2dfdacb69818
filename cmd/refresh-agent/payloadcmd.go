package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/openshift/refresh-agent/api"
	"github.com/openshift/refresh-agent/diff"
	"github.com/openshift/refresh-agent/edit"
	"github.com/openshift/refresh-agent/kube"
)

// payloadSynopses are `refresh-agent payload`'s subcommands, in usage order.
var payloadSynopses = []struct{ name, text string }{
	{"get", "print a pool's published payload (the ConfigMap's config), as published or --decoded"},
	{"set-file", "set a file in a payload (--path P --from-file F [--mode 0644])"},
	{"remove-file", "remove a file from a payload (--path P)"},
	{"set-ssh-keys", "replace core's SSH authorized keys (--from-file authorized_keys)"},
	{"add-ssh-keys", "add SSH authorized keys of core (--from-file authorized_keys)"},
	{"remove-ssh-keys", "remove SSH authorized keys of core (--from-file authorized_keys)"},
}

// payloadCommand returns a payload subcommand (nil for an unknown name).
func payloadCommand(name string) command {
	return map[string]command{"get": runPayloadGet, "set-file": runPayloadSetFile, "remove-file": runPayloadRemoveFile,
		"set-ssh-keys": payloadKeys(edit.KeysSet), "add-ssh-keys": payloadKeys(edit.KeysAdd),
		"remove-ssh-keys": payloadKeys(edit.KeysRemove)}[name]
}

const payloadSynopsis = "get a pool's payload, or edit one: files and core's SSH keys, the embedded MachineConfig kept consistent"

// runPayload dispatches `refresh-agent payload <subcommand>`.
func runPayload(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		w, code := stdout, exitOK
		if len(args) == 0 {
			w, code = stderr, exitInvalid
		}
		fmt.Fprintf(w, "usage: refresh-agent payload <subcommand> [flags]\n\n%s\n\nsubcommands:\n", payloadSynopsis)
		for _, c := range payloadSynopses {
			fmt.Fprintf(w, "  %-16s %s\n", c.name, c.text)
		}
		fmt.Fprint(w, "\nEdits read --payload (a file, or - for stdin) in any form a node reads and write the result to\n"+
			"--out (default stdout) in the same encoding. Typical use:\n"+
			"  refresh-agent payload get --pool workers > workers.cfg\n"+
			"  refresh-agent payload set-file --payload workers.cfg --path /var/lib/kubelet/config.json --from-file pull-secret.json --out new.cfg\n"+
			"  refresh-agent publish --pool workers --payload new.cfg --dry-run\n")
		return code
	}
	if run := payloadCommand(args[0]); run != nil {
		return run(args[1:], stdout, stderr)
	}
	return fail(stderr, exitInvalid, "payload: unknown subcommand %q (get, set-file, remove-file, set-ssh-keys, add-ssh-keys, remove-ssh-keys)", args[0])
}

func runPayloadGet(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("payload get")
	pf := addPoolFlags(fs)
	decode := fs.Bool("decode", false, "print the payload's document (Ignition JSON) instead of the ConfigMap's gzip+base64 form")
	out := fs.String("out", "", "write to this file (mode 0600) instead of stdout")
	var kf kube.ConfigFlags
	kf.AddFlags(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	name := pf.name()
	if name == "" {
		return fail(stderr, exitInvalid, "payload get: --pool (or --configmap) is required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	client, err := connect(ctx, &kf)
	if err != nil {
		return fail(stderr, exitFailed, "payload get: %v", err)
	}
	cm, err := client.GetConfigMap(ctx, *pf.namespace, name)
	if apierrors.IsNotFound(err) {
		return fail(stderr, exitFailed, "payload get: ConfigMap %s/%s not found: nothing is published for the pool (on HyperShift the controller publishes it; by hand, start from the payload the machine-config server serves, the token Secret's payload)", *pf.namespace, name)
	}
	if err != nil {
		return fail(stderr, exitFailed, "payload get: ConfigMap %s/%s: %v", *pf.namespace, name, err)
	}
	raw := []byte(cm.Data[api.KeyConfig])
	if len(raw) == 0 {
		raw = cm.BinaryData[api.KeyConfig]
	}
	if len(raw) == 0 {
		return fail(stderr, exitFailed, "payload get: ConfigMap %s/%s has no %q key", *pf.namespace, name, api.KeyConfig)
	}
	if *decode {
		if raw, err = documentOf(raw); err != nil {
			return fail(stderr, exitFailed, "payload get: ConfigMap %s/%s: %v", *pf.namespace, name, err)
		}
	}
	if err := writeOut(*out, raw, stdout); err != nil {
		return fail(stderr, exitFailed, "payload get: %v", err)
	}
	fmt.Fprintf(stderr, "ConfigMap %s/%s: hash %s\n", *pf.namespace, name, cm.Data[api.KeyHash])
	return exitOK
}

// documentOf strips the encodings off a payload, leaving the JSON or YAML a node decodes.
func documentOf(raw []byte) ([]byte, error) {
	if _, err := diff.Decode(raw); err != nil {
		return nil, err
	}
	return edit.Document(raw)
}

// editFlags are the flags every editing subcommand takes.
type editFlags struct{ payload, out *string }

func addEditFlags(fs *pflag.FlagSet) editFlags {
	return editFlags{
		payload: fs.String("payload", "", "the payload to edit: a file, or - for stdin (Ignition or MachineConfig; raw, gzip, base64, gzip+base64)"),
		out:     fs.String("out", "", "write the edited payload to this file (mode 0600) instead of stdout"),
	}
}

// run reads the payload, applies ops and writes the result, reporting what changed on stderr.
func (f editFlags) run(name string, stdin io.Reader, stdout, stderr io.Writer, ops ...edit.Op) int {
	if *f.payload == "" {
		return fail(stderr, exitInvalid, "payload %s: --payload is required (a file, or - for stdin)", name)
	}
	var raw []byte
	var err error
	if *f.payload == "-" {
		raw, err = io.ReadAll(io.LimitReader(stdin, diff.MaxPayloadSize+1))
		if err == nil && int64(len(raw)) > diff.MaxPayloadSize {
			err = fmt.Errorf("stdin: larger than the %d byte limit", diff.MaxPayloadSize)
		}
	} else {
		raw, err = readInput(*f.payload, diff.MaxPayloadSize)
	}
	if err != nil {
		return fail(stderr, exitInvalid, "payload %s: %v", name, err)
	}
	res, err := edit.Apply(raw, ops...)
	if err != nil {
		return fail(stderr, exitInvalid, "payload %s: %v", name, err)
	}
	if err := writeOut(*f.out, res.Payload, stdout); err != nil {
		return fail(stderr, exitFailed, "payload %s: %v", name, err)
	}
	for _, c := range res.Changes {
		if diff.IsMetadataPath(c.Path) {
			continue
		}
		what := c.Path
		if c.Kind == diff.KindSSHKeys {
			what = "core's SSH keys"
		}
		fmt.Fprintf(stderr, "%s %s %s\n", c.Op, c.Kind, what)
	}
	for _, p := range res.Embedded {
		fmt.Fprintf(stderr, "updated the embedded MachineConfig %s to match\n", p)
	}
	fmt.Fprintf(stderr, "written as %s\n", res.Form)
	return exitOK
}

// stdin is where `--payload -` reads from (a variable for tests).
var stdin io.Reader = os.Stdin

func runPayloadSetFile(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("payload set-file")
	ef := addEditFlags(fs)
	p := fs.String("path", "", "the file's absolute path on the node")
	from := fs.String("from-file", "", "the file whose bytes become the contents")
	mode := fs.String("mode", "", "the file's mode in octal, e.g. 0600 (default: keep an existing file's; 0644 for a new one)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *from == "" {
		return fail(stderr, exitInvalid, "payload set-file: --from-file is required")
	}
	contents, err := readInput(*from, diff.MaxPayloadSize)
	if err != nil {
		return fail(stderr, exitInvalid, "payload set-file: --from-file: %v", err)
	}
	var m *int
	if *mode != "" {
		v, err := strconv.ParseUint(*mode, 8, 32)
		if err != nil || v > 0o7777 {
			return fail(stderr, exitInvalid, "payload set-file: --mode %q is not an octal file mode (e.g. 0644)", *mode)
		}
		iv := int(v)
		m = &iv
	}
	return ef.run("set-file", stdin, stdout, stderr, edit.SetFile(*p, contents, m))
}

func runPayloadRemoveFile(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("payload remove-file")
	ef := addEditFlags(fs)
	p := fs.String("path", "", "the file's absolute path on the node")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	return ef.run("remove-file", stdin, stdout, stderr, edit.RemoveFile(*p))
}

func payloadKeys(op edit.KeysOp) command {
	name := map[edit.KeysOp]string{edit.KeysSet: "set-ssh-keys", edit.KeysAdd: "add-ssh-keys", edit.KeysRemove: "remove-ssh-keys"}[op]
	return func(args []string, stdout, stderr io.Writer) int {
		fs := newFlags("payload " + name)
		ef := addEditFlags(fs)
		from := fs.String("from-file", "", "an authorized_keys file: one key per line (# comments and blank lines skipped)")
		if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
			return code
		}
		if *from == "" {
			return fail(stderr, exitInvalid, "payload %s: --from-file is required", name)
		}
		data, err := readInput(*from, 1<<20)
		if err != nil {
			return fail(stderr, exitInvalid, "payload %s: --from-file: %v", name, err)
		}
		keys, err := edit.ParseAuthorizedKeys(data)
		if err != nil {
			return fail(stderr, exitInvalid, "payload %s: %s: %v", name, *from, err)
		}
		return ef.run(name, stdin, stdout, stderr, edit.SSHKeys(op, keys))
	}
}

// writeOut writes data to the file name (mode 0600: payloads hold secrets), or to w when name is "".
// The file is written as a new one beside it and renamed over it: a file already there keeps
// neither its mode (0644 kept the pull secret world-readable) nor, when it is a symlink, its
// target (the payload went where the link pointed: adversary r24 c/07).
func writeOut(name string, data []byte, w io.Writer) error {
	if name == "" {
		_, err := w.Write(data)
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // gone once renamed; left only on a failure
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
