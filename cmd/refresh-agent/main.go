// Command refresh-agent applies reboot-free Ignition changes on a node. Each subcommand only wires its
// flags to the packages that do the work.
//
// Flags are spf13/pflag's (GNU-style --long and -s short flags, as kubectl and HyperShift's own
// tools take them, through cobra there). pflag alone is a drop-in for the standard library's flag
// package, keeps one plain function per command, and brings no command tree we do not need.
package main

import (
	"errors"
	"fmt"
	"github.com/openshift/refresh-agent/actions"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// Exit codes shared by the subcommands.
const (
	exitOK      = 0
	exitFailed  = 1
	exitInvalid = 2
	exitRefused = 3
)

// A command runs with its arguments and output streams and returns the exit code.
type command func(args []string, stdout, stderr io.Writer) int

var commands = map[string]command{
	"diff":    runDiff,
	"apply":   runApply,
	"recover": runRecover,
	"run":     runAgent,
	"status":  runStatus,
	"publish": runPublish,
	"payload": runPayload,
	"version": runVersion,
}

// synopses are each command's one line in the usage, in order.
var synopses = []struct{ name, text string }{
	{"diff", "plan a refresh from a current and a desired payload (dry run, touches nothing)"},
	{"apply", "refresh a node root to a desired payload: files, SSH keys, unit actions, rollback"},
	{"recover", "finish or undo an interrupted refresh"},
	{"run", "the node agent: watch its pool's ConfigMap, refresh, report in node annotations"},
	{"payload", payloadSynopsis},
	{"publish", "plan a payload against the pool's published one, then write it into the pool's ConfigMap (--dry-run, --wait)"},
	{"status", "a pool's nodes and its ConfigRefresh conditions, from the nodes' annotations"},
	{"controller", "the management-side controller: publishes each NodePool's refresh, reports its conditions"},
	{"completion", completionSynopsis},
	{"version", "print the version"},
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitInvalid
	}
	switch args[0] {
	case "-h", "--help", "help":
		usage(stdout)
		return exitOK
	case "--version":
		return runVersion(nil, stdout, stderr)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "refresh-agent: unknown command %q\n", args[0])
		usage(stderr)
		return exitInvalid
	}
	return cmd(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("usage: refresh-agent <command> [flags]\n       refresh-agent <command> --help\n       refresh-agent --version\n\ncommands:\n")
	for _, s := range synopses {
		fmt.Fprintf(&b, "  %-10s %s\n", s.name, s.text)
	}
	_, _ = io.WriteString(w, b.String())
}

// newFlags returns a command's flag set. Parsing errors and help are printed by parseFlags.
func newFlags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	return fs
}

// parseFlags parses a command's arguments. `--help` prints the command's usage on stdout (exit 0);
// an unknown flag, a bad value or a stray argument is an error with the usage on stderr (exit 2).
// ok is false when the command must return code at once.
func parseFlags(fs *pflag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	if flagCapture != nil { // completion asks for the command's flags: nothing runs
		flagCapture(fs)
		return exitOK, false
	}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		commandUsage(stdout, fs)
		return exitOK, false
	case err != nil:
		fmt.Fprintf(stderr, "refresh-agent %s: %v\n", fs.Name(), err)
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "refresh-agent %s: unexpected argument %q (every input is a flag)\n", fs.Name(), fs.Arg(0))
	default:
		return exitOK, true
	}
	commandUsage(stderr, fs)
	return exitInvalid, false
}

func commandUsage(w io.Writer, fs *pflag.FlagSet) {
	text := ""
	for _, s := range synopses {
		if s.name == fs.Name() {
			text = s.text
		}
	}
	for _, s := range payloadSynopses {
		if "payload "+s.name == fs.Name() {
			text = s.text
		}
	}
	fmt.Fprintf(w, "usage: refresh-agent %s [flags]\n\n%s\n\nflags:\n%s", fs.Name(), text, fs.FlagUsages())
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func runVersion(args []string, stdout, stderr io.Writer) int {
	if code, ok := parseFlags(newFlags("version"), args, stdout, stderr); !ok {
		return code
	}
	fmt.Fprintln(stdout, version)
	return exitOK
}

// addLogLevel adds --log-level; the returned function builds the JSON logger it asks for.
func addLogLevel(fs *pflag.FlagSet, def string) func(w io.Writer) (*slog.Logger, error) {
	level := fs.String("log-level", def, "log level: debug, info, warn or error")
	return func(w io.Writer) (*slog.Logger, error) {
		var l slog.Level
		if err := l.UnmarshalText([]byte(*level)); err != nil {
			return nil, fmt.Errorf("--log-level must be debug, info, warn or error, not %q", *level)
		}
		return newLogger(w, l), nil
	}
}

// newLogger is the JSON logger every command uses. Durations are logged in seconds (slog's JSON
// handler writes a time.Duration as integer nanoseconds, which no reader expects).
func newLogger(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: durationSeconds}))
}

func durationSeconds(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.Float64(a.Key, a.Value.Duration().Seconds())
	}
	return a
}

// fail prints one line on stderr and returns the exit code.
func fail(stderr io.Writer, code int, format string, args ...any) int {
	fmt.Fprintf(stderr, "refresh-agent: "+format+"\n", args...)
	if code == exitInvalid {
		for _, a := range args {
			// Not the input's fault but the moment's (no descriptor or memory left, an I/O error:
			// actions.Transient): failed, as a retry may not meet it (adversary r21 b2/06's sweep).
			if err, ok := a.(error); ok && actions.Transient(err) {
				return exitFailed
			}
		}
	}
	return code
}
