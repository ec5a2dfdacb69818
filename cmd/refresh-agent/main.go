// Command refresh-agent applies reboot-free Ignition changes on a node. Each subcommand only wires its
// flags to the packages that do the work.
package main

import (
	"fmt"
	"os"
)

// Exit codes shared by the subcommands.
const (
	exitOK      = 0
	exitFailed  = 1
	exitInvalid = 2
	exitRefused = 3
)

var commands = map[string]func(args []string) int{
	"diff":    runDiff,
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
	os.Exit(cmd(os.Args[2:]))
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: refresh-agent <command> [flags]

commands:
  diff      plan a refresh from a current and a desired payload (dry run, touches nothing)
  version   print the version
`)
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func runVersion([]string) int {
	fmt.Println(version)
	return exitOK
}

// fail prints one line on stderr and returns the exit code.
func fail(code int, format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "refresh-agent: "+format+"\n", args...)
	return code
}
