package allowlist

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// gawk's sources (round-9 adversary F12). A gawk program is every -f/--file and -E/--exec file,
// every -i/--include library, every -l/--load extension, every -e/--source text (or the first
// operand when none of those gives one) and what their @include/@load directives name. The judge
// reads only the texts of the command line: a file's code it cannot read. gawk's own library
// /usr/share/awk/inplace.awk (or -i inplace, -l inplace: the extension it loads) rewrites every
// operand file with the program's output, so `awk -f /usr/share/awk/inplace.awk -e '{print}
// ENDFILE{print "* * * * * root reboot"}' /etc/crontab` wrote the crontab though awk's operands
// are read. So:
//   - in every line, a source naming the inplace library or extension is refused (it makes every
//     operand a write target: no rule reads awk's operands as written);
//   - in a changed line, a library (-i) or an extension (-l) is refused whatever it is (OS
//     content, but code the judge cannot read: filefuncs, readfile, rwarray's writea, fork, time,
//     inplace), and a program file (-f, -E) is a script: only the unit's own or a granted one
//     (scriptFile, as a shell's or an interpreter's script; none of /usr/share/awk is allowed by
//     name);
//   - AWKPATH, AWKLIBPATH and GAWK_* (GAWK_PERSIST_FILE loads a heap of stored functions) are code
//     variables (codeVars).
// Options are read as gawk's getopt reads them ("+F:f:v:W;bcCd::D::e:E:ghi:Il:L::nNo::Op::
// MPrSstVYZ:"): a cluster's first valued letter takes the rest of the word or the next word, -W
// gives a long option (-W include=inplace, -Winc=inplace, -W include inplace), a long option by
// any prefix, and the first operand ends the options.

// awkOpt is one option as gawk reads it: its letter (a long option's letter, 0 for one without a
// value) and its value.
type awkOpt struct {
	letter byte
	word   string // the option as written (for the reason)
	val    string
}

// awkLongValued are gawk's long options that take a value (the next word without =), by the
// letter they stand for.
var awkLongValued = map[string]byte{"--file": 'f', "--include": 'i', "--load": 'l', "--exec": 'E', "--source": 'e',
	"--assign": 'v', "--field-separator": 'F'}

// awkLongOrder is the order a long option's prefix is read in when it abbreviates several (gawk
// refuses an ambiguous one, so any reading is safe; the one that reads a file first).
var awkLongOrder = []string{"--file", "--include", "--load", "--exec", "--source", "--assign", "--field-separator"}

// awkLongLetter is the letter of a long option given by any prefix of one that takes a value, and
// whether it takes one.
func awkLongLetter(name string) (string, byte) {
	for _, l := range awkLongOrder {
		if l == name || len(name) >= 3 && strings.HasPrefix(l, name) {
			return l, awkLongValued[l]
		}
	}
	return name, 0
}

// awkParse reads gawk's options: the options (with their values), the program text given as the
// first operand (when no -f, -E or -e gives the program), and the operands.
func awkParse(args []string) (opts []awkOpt, prog string, hasProg bool, operands []string) {
	sourced := false
	long := func(i int, w string) int {
		name, val, hasVal := strings.Cut(w, "=")
		full, letter := awkLongLetter(name)
		if letter != 0 && !hasVal && i+1 < len(args) {
			i++
			val = args[i]
		}
		opts = append(opts, awkOpt{letter, full, val})
		sourced = sourced || letter == 'f' || letter == 'E' || letter == 'e'
		return i
	}
	i := 0
options:
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			i++
			break options
		case strings.HasPrefix(a, "--"):
			i = long(i, a)
			if opts[len(opts)-1].letter == 'E' {
				i++
				break options // -E is the last option gawk reads
			}
		case len(a) > 1 && a[0] == '-':
			last := false
			for k := 1; k < len(a); k++ {
				c := a[k]
				if c == 'W' {
					v := a[k+1:]
					if v == "" && i+1 < len(args) {
						i++
						v = args[i]
					}
					i = long(i, "--"+v)
					break
				}
				if strings.IndexByte("FfvWeEilZ", c) >= 0 {
					v := a[k+1:]
					if v == "" && i+1 < len(args) {
						i++
						v = args[i]
					}
					opts = append(opts, awkOpt{c, "-" + string(c), v})
					sourced = sourced || c == 'f' || c == 'E' || c == 'e'
					last = c == 'E'
					break
				}
				if strings.IndexByte("dDLop", c) >= 0 {
					opts = append(opts, awkOpt{c, "-" + string(c), a[k+1:]})
					break
				}
				opts = append(opts, awkOpt{c, "-" + string(c), ""})
			}
			if last {
				i++
				break options
			}
		default:
			break options
		}
	}
	rest := args[min(i, len(args)):]
	if !sourced && len(rest) > 0 {
		return opts, rest[0], true, rest[1:]
	}
	return opts, "", false, rest
}

// awkInplace says whether a source names gawk's inplace library or extension (inplace,
// inplace.awk, inplace.so, by any directory).
func awkInplace(v string) bool {
	b := path.Base(strings.TrimSpace(v))
	b = strings.TrimSuffix(strings.TrimSuffix(b, ".awk"), ".so")
	return b == "inplace"
}

// awkOwnFiles are the program files (-f, -E) a command hands awk: the unit's own scripts when the
// command is the node's.
func awkOwnFiles(args []string) []string {
	opts, _, _, _ := awkParse(args)
	var out []string
	for _, o := range opts {
		if o.letter == 'f' || o.letter == 'E' {
			out = append(out, o.val)
		}
	}
	return out
}

// judgeAwk refuses an awk program that runs commands (system(), pipes, getline from a command) or
// writes files (print > file): awk is an interpreter too. Its sources are judged as above.
func (j judge) judgeAwk(args []string) string {
	opts, prog, _, _ := awkParse(args)
	for _, o := range opts {
		switch o.letter {
		case 'f', 'E', 'i', 'l':
			x, ok := j.expand(o.val)
			if awkInplace(o.val) || ok && awkInplace(x) {
				return "awk " + o.word + " " + short(o.val) + ": gawk's inplace library rewrites every operand file with the program's output (refused in every line)"
			}
			if !ok {
				return "awk " + o.word + " " + short(o.val) + ": a program, library or extension named by a variable the unit does not define: cannot be judged"
			}
			if j.strict && (o.letter == 'i' || o.letter == 'l') {
				return "awk " + o.word + " " + short(o.val) + ": a library or extension, code the judge cannot read (it may write or run anything: rwarray's writea, fork, filefuncs; refused in a changed line)"
			}
			if o.val == "" {
				return "awk " + o.word + " without its file"
			}
			if why := j.scriptFile("awk", x); why != "" {
				return why
			}
		case 'e':
			prog += "\n" + o.val
		}
	}
	// ARGV and ARGC name the files awk opens as it reads them, when the program runs: a program
	// that sets them (BEGIN{ARGV[1]="/etc/sha" "dow"; ARGC=2}, ARGV[ARGC++]=…, split(s, ARGV),
	// delete ARGV) opens a file no word of the line names, whose name the judge never sees;
	// gawk's SYMTAB reaches them by a name built at run time (adversary r22 a/04).
	if m := awkArgvRef.FindString(prog); m != "" {
		return "an awk program with " + m + " (names the files awk opens at run time, which the judge does not see): cannot be judged"
	}
	// "@": gawk's indirect calls (@f() with f="system"), @include, @load, @namespace: no ordinary unit's awk uses them.
	for _, k := range []string{"system", "|", "getline", ">", "close(", "ENVIRON", "@"} {
		if strings.Contains(prog, k) {
			return "an awk program with " + k + " (runs commands or writes files): cannot be judged"
		}
	}
	return ""
}

// awkArgvRef is a reference to awk's ARGV, ARGC or gawk's SYMTAB (which reaches them by name).
var awkArgvRef = regexp.MustCompile(`\b(ARGV|ARGC|SYMTAB)\b`)

// awkNames are the names the judge runs awk's rules for (on RHCOS awk is gawk).
var awkNames = []string{"awk", "gawk", "mawk", "nawk"}

func isAwk(prog string) bool { return slices.Contains(awkNames, prog) }
