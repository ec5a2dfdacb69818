package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

func init() { commands["completion"] = runCompletion }

const completionSynopsis = "print a shell completion script: completion bash|zsh|fish"

// flagCapture, when set, makes parseFlags hand over the command's flag set instead of running it:
// completion lists every command's real flags without a second list to keep in step.
var flagCapture func(*pflag.FlagSet)

// commandFlags returns the long flags (with their leading dashes) of a command; sub names a
// payload subcommand.
func commandFlags(name, sub string) []string {
	var out []string
	flagCapture = func(fs *pflag.FlagSet) {
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Deprecated == "" && !f.Hidden {
				out = append(out, "--"+f.Name)
			}
		})
	}
	defer func() { flagCapture = nil }()
	switch {
	case name == "payload" && sub != "":
		if run := payloadCommand(sub); run != nil {
			run(nil, io.Discard, io.Discard)
		}
	case name != "payload" && name != "completion":
		if run := commands[name]; run != nil {
			run(nil, io.Discard, io.Discard)
		}
	}
	return append(out, "--help")
}

func commandNames() []string {
	var out []string
	for _, s := range synopses {
		out = append(out, s.name)
	}
	return out
}

func runCompletion(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, "usage: refresh-agent completion bash|zsh|fish\n\n"+completionSynopsis+"\n\nto load it:\n"+
			"  bash: source <(refresh-agent completion bash)        (or save it in /etc/bash_completion.d/refresh-agent)\n"+
			"  zsh:  source <(refresh-agent completion zsh)\n"+
			"  fish: refresh-agent completion fish > ~/.config/fish/completions/refresh-agent.fish\n")
		return exitOK
	}
	if len(args) != 1 || !slices.Contains([]string{"bash", "zsh", "fish"}, args[0]) {
		return fail(stderr, exitInvalid, "completion: say which shell: completion bash|zsh|fish")
	}
	var err error
	switch args[0] {
	case "bash":
		_, err = io.WriteString(stdout, bashCompletion())
	case "zsh":
		_, err = io.WriteString(stdout, "#compdef refresh-agent\n# zsh completion for refresh-agent (through bashcompinit)\n"+
			"autoload -U +X bashcompinit && bashcompinit\n"+bashCompletion())
	case "fish":
		_, err = io.WriteString(stdout, fishCompletion())
	}
	if err != nil {
		return fail(stderr, exitFailed, "writing output: %v", err)
	}
	return exitOK
}

var payloadSubs = func() []string {
	var out []string
	for _, s := range payloadSynopses {
		out = append(out, s.name)
	}
	return out
}

// bashCompletion completes commands, payload subcommands, shells and each command's flags; values
// fall back to file names.
func bashCompletion() string {
	var b strings.Builder
	b.WriteString("# bash completion for refresh-agent\n_refresh_agent() {\n")
	b.WriteString("  local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} sub=${COMP_WORDS[2]}\n")
	fmt.Fprintf(&b, "  if [ \"$COMP_CWORD\" -eq 1 ]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi\n", strings.Join(commandNames(), " "))
	fmt.Fprintf(&b, "  if [ \"$cmd\" = payload ] && [ \"$COMP_CWORD\" -eq 2 ]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi\n", strings.Join(payloadSubs(), " "))
	b.WriteString("  if [ \"$cmd\" = completion ]; then COMPREPLY=($(compgen -W \"bash zsh fish\" -- \"$cur\")); return; fi\n")
	b.WriteString("  local flags=\n  case \"$cmd\" in\n")
	for _, name := range commandNames() {
		if name == "payload" {
			b.WriteString("    payload) case \"$sub\" in\n")
			for _, sub := range payloadSubs() {
				fmt.Fprintf(&b, "      %s) flags=%q ;;\n", sub, strings.Join(commandFlags("payload", sub), " "))
			}
			b.WriteString("      esac ;;\n")
			continue
		}
		if name == "completion" {
			continue
		}
		fmt.Fprintf(&b, "    %s) flags=%q ;;\n", name, strings.Join(commandFlags(name, ""), " "))
	}
	b.WriteString("  esac\n")
	b.WriteString("  if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\")); else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n")
	b.WriteString("}\ncomplete -o filenames -F _refresh_agent refresh-agent\n")
	return b.String()
}

func fishCompletion() string {
	var b strings.Builder
	b.WriteString("# fish completion for refresh-agent\ncomplete -c refresh-agent -f\n")
	for _, s := range synopses {
		fmt.Fprintf(&b, "complete -c refresh-agent -n __fish_use_subcommand -a %s -d %s\n", s.name, fishQuote(s.text))
	}
	for _, s := range payloadSynopses {
		fmt.Fprintf(&b, "complete -c refresh-agent -n '__fish_seen_subcommand_from payload; and not __fish_seen_subcommand_from %s' -a %s -d %s\n",
			strings.Join(payloadSubs(), " "), s.name, fishQuote(s.text))
	}
	b.WriteString("complete -c refresh-agent -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
	flags := func(cond string, list []string) {
		for _, f := range list {
			fmt.Fprintf(&b, "complete -c refresh-agent -n %s -l %s -r -F\n", fishQuote(cond), strings.TrimPrefix(f, "--"))
		}
	}
	for _, name := range commandNames() {
		switch name {
		case "completion":
		case "payload":
			for _, sub := range payloadSubs() {
				flags("__fish_seen_subcommand_from payload; and __fish_seen_subcommand_from "+sub, commandFlags("payload", sub))
			}
		default:
			flags("__fish_seen_subcommand_from "+name, commandFlags(name, ""))
		}
	}
	return b.String()
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}
