// Command refresh-agent applies reboot-free Ignition changes on a node. Each subcommand only wires its
// flags to the packages that do the work.
package main

import (
	"fmt"
	"io"
	"os"
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
	"version": runVersion,
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(exitInvalid)
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		if os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
			usage()
			os.Exit(exitOK)
		}
		fmt.Fprintf(os.Stderr, "refresh-agent: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(exitInvalid)
	}
	os.Exit(cmd(os.Args[2:], os.Stdout, os.Stderr))
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: refresh-agent <command> [flags]

commands:
  diff      plan a refresh from a current and a desired payload (dry run, touches nothing)
  apply     refresh a node root to a desired payload: files, SSH keys, unit actions, rollback
  recover   finish or undo an interrupted refresh
  run       the node agent: watch the ConfigMap, refresh, report in node annotations
  publish   write a payload into the ConfigMap the agents watch
  status    compute a NodePool's ConfigRefresh conditions from its nodes' annotations
  controller  the management-side controller: publishes each NodePool's refresh, reports its conditions
  version   print the version
`)
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func runVersion(_ []string, stdout, _ io.Writer) int {
	fmt.Fprintln(stdout, version)
	return exitOK
}

// fail prints one line on stderr and returns the exit code.
func fail(stderr io.Writer, code int, format string, args ...any) int {
	fmt.Fprintf(stderr, "refresh-agent: "+format+"\n", args...)
	return code
}
