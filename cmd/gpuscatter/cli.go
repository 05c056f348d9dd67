package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gpuscatter/gpuscatter/ops"
)

// Exit codes.
const (
	exitOK    = 0 // success
	exitError = 1 // invalid input or a failed run
	exitUsage = 2 // a malformed command line
)

// prefix starts every line the tool writes to stderr.
const prefix = "gpuscatter: "

// command is one subcommand of gpuscatter. Its usage line and the Flags
// section of its help are generated from flags, the same table that
// parses its command line.
type command struct {
	name    string
	summary string // one line for the command list
	// flags returns the command's flag table, bound to fresh values; the
	// command's run parses its arguments with the same constructor.
	flags    func() []flagSpec
	operands string // what follows the flags in the usage line: "DIR..."
	details  string // the prose of the help, printed by help and -h
	run      func(ctx context.Context, c *cli, args []string) error
}

// usageWidth is the width usage lines and flag descriptions wrap at.
const usageWidth = 79

// usageLine returns the command's usage line, "  gpuscatter run --op NAME
// ...", wrapped under its first flag.
func (cmd *command) usageLine() string {
	lead := "  gpuscatter " + cmd.name
	var tokens []string
	if cmd.flags != nil {
		for _, f := range cmd.flags() {
			switch f.syn {
			case "-":
			case "":
				tokens = append(tokens, f.token())
			default:
				tokens = append(tokens, f.syn)
			}
		}
	}
	if cmd.operands != "" {
		tokens = append(tokens, cmd.operands)
	}
	return wrapWords(lead, tokens, len(lead)+1)
}

// wrapWords joins words after lead with spaces, breaking lines before
// usageWidth and indenting the next lines by indent spaces.
func wrapWords(lead string, words []string, indent int) string {
	var b strings.Builder
	line := lead
	for _, w := range words {
		if len(line)+1+len(w) > usageWidth && strings.TrimSpace(line) != "" && len(line) > indent {
			b.WriteString(line + "\n")
			line = strings.Repeat(" ", indent-1)
		}
		line += " " + w
	}
	b.WriteString(line)
	return b.String()
}

// synopsis returns "Usage:" and the command's usage line.
func (cmd *command) synopsis() string { return "Usage:\n" + cmd.usageLine() + "\n" }

// flagsHelp returns the Flags section of the command's help: each flag with
// its argument and what it does.
func (cmd *command) flagsHelp() string {
	if cmd.flags == nil {
		return ""
	}
	specs := cmd.flags()
	if len(specs) == 0 {
		return ""
	}
	const col = 23 // where the descriptions start
	var b strings.Builder
	b.WriteString("Flags (each once; --name=value or --name value):\n")
	for _, f := range specs {
		head := "  --" + f.name
		switch {
		case strings.HasPrefix(f.arg, "="):
			head += f.arg
		case f.arg != "":
			head += " " + f.arg
		}
		words := strings.Fields(f.usage)
		if len(head) >= col-1 {
			b.WriteString(head + "\n")
			head = ""
		}
		b.WriteString(wrapWords(fmt.Sprintf("%-*s", col-1, head), words, col) + "\n")
	}
	return b.String()
}

// cli carries what a command line's command runs with: the writers it
// prints to and the settings it opens the GPU backend with.
type cli struct {
	stdout, stderr io.Writer
	gpu            gpuSettings
}

// commands lists the subcommands in the order help shows them. It is filled
// in by init to break the cycle through helpCommand.
var commands []*command

func init() {
	commands = []*command{runCommand, benchCommand, planCommand, warmCommand, checkCommand, onnxTestCommand, examplesCommand, opsCommand, devicesCommand, versionCommand, helpCommand}
}

// lookupCommand returns the command called name, or nil.
func lookupCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

const mainUsage = `Usage:
%s
Commands:
%s
Exit status: 0 on success, 1 for invalid input or a failed run, 2 for a
malformed command line; SIGINT, SIGTERM and SIGHUP stop a command cleanly
(nothing half-written is left) with 128 plus the signal's number (130, 143,
129). Run 'gpuscatter help run' for the flags of run.
Every FILE.npy may be an ONNX TensorProto file instead, named FILE.pb.
`

// mainUsageText returns the top-level usage: every command's usage line
// and the command list.
func mainUsageText() string {
	var lines, list strings.Builder
	for _, c := range commands {
		lines.WriteString(c.usageLine() + "\n")
		fmt.Fprintf(&list, "  %-9s %s\n", c.name, c.summary)
	}
	return fmt.Sprintf(mainUsage, lines.String(), list.String())
}

// Main runs gpuscatter with the command-line arguments args (without the
// program name) and returns the process exit status: exitOK, exitError
// (invalid input or a failed run: one line on stderr) or exitUsage (a
// malformed command line: one line and the usage on stderr). When a signal
// cancelled ctx (see notifyInterrupt) and the command stopped, it prints
// "interrupted by SIGTERM" (the signal's name) and returns 128 plus the
// signal's number.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := &cli{stdout: stdout, stderr: stderr, gpu: gpuSettings{warn: onceWarner(stderr)}}
	if len(args) == 0 {
		return c.exit(nil, &usageError{msg: "no command given"})
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, mainUsageText())
		return exitOK
	}
	cmd := lookupCommand(name)
	if cmd == nil {
		hint := commandHint(name)
		msg := fmt.Sprintf("unknown command %q%s", name, semi(hint))
		if strings.HasPrefix(name, "-") && hint == "" {
			msg = fmt.Sprintf("%s must follow a command such as run", name)
		}
		return c.exit(nil, &usageError{msg: msg})
	}
	err := cmd.run(ctx, c, args[1:])
	if ie, ok := interruption(ctx); ok && err != nil {
		// Say what happened rather than "context canceled".
		fmt.Fprintf(stderr, "%s%s\n", prefix, ie.Error())
		return ie.status()
	}
	return c.exit(cmd, err)
}

// exit reports err, which cmd returned, and returns the exit status.
func (c *cli) exit(cmd *command, err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		fmt.Fprint(c.stdout, helpOf(cmd))
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(c.stderr, "%s%s\n\n%s", prefix, oneLine(ue.msg), usageOf(cmd))
		return exitUsage
	default:
		fmt.Fprintf(c.stderr, "%s%s\n", prefix, oneLine(errorText(cmd, err)))
		return exitError
	}
}

// errorText is the message of err, which cmd returned: where the device
// was lost, in the command line's words (deviceText) with what the user
// can do about it (deviceLostAdvice).
func errorText(cmd *command, err error) string {
	if !errors.Is(err, ops.ErrDeviceLost) {
		return err.Error()
	}
	msg := deviceText(err)
	if advice := deviceLostAdvice(err, takesBackend(cmd)); advice != "" {
		msg += "; " + advice
	}
	return msg
}

// takesBackend reports whether cmd has a --backend flag.
func takesBackend(cmd *command) bool {
	if cmd == nil || cmd.flags == nil {
		return false
	}
	for _, f := range cmd.flags() {
		if f.name == "backend" {
			return true
		}
	}
	return false
}

// usageOf returns what follows a usage error: the synopsis of cmd (of every
// command when cmd is nil) and where to find more.
func usageOf(cmd *command) string {
	if cmd == nil {
		return mainUsageText()
	}
	return cmd.synopsis() + "\nRun 'gpuscatter help " + cmd.name + "' for details.\n"
}

// helpOf returns the full help of cmd (the top-level help when cmd is nil).
func helpOf(cmd *command) string {
	if cmd == nil {
		return mainUsageText()
	}
	// The prose, then the flags, then the exit status that ends the prose.
	prose, exit, _ := strings.Cut(cmd.details, "Exit status:")
	if exit != "" {
		exit = "Exit status:" + exit
	}
	help := cmd.synopsis()
	for _, part := range []string{prose, cmd.flagsHelp(), exit} {
		if part = strings.Trim(part, "\n"); part != "" {
			help += "\n" + part + "\n"
		}
	}
	return help
}

// maxLine is the longest error line gpuscatter prints, in bytes. Errors
// echo shapes, lists and values from their inputs, which a hostile file
// can make megabytes long; the sources abbreviate them, and this is the
// last bound.
const maxLine = 1000

// oneLine makes msg one short line for stderr: line breaks become spaces,
// other control characters are escaped (\x1b, \t), so that an echoed
// input cannot move the cursor or forge a second line, and a message over
// maxLine bytes keeps its start and end around the number of bytes cut.
func oneLine(msg string) string {
	msg = strings.TrimRight(msg, "\r\n")
	var b strings.Builder
	for _, r := range strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(msg) {
		switch {
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		case unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return abbreviate(b.String(), maxLine)
}

// abbreviate returns s when it is at most n bytes long, else its start and
// end around "...(K bytes)...", about n bytes in all and cut between runes.
func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	mid := fmt.Sprintf("...(%d bytes)...", len(s))
	keep := max(n-len(mid), 2) / 2
	head, tail := keep, len(s)-keep
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + mid + s[tail:]
}

// quoteShort quotes an echoed input as Go would (%q), abbreviated past 80
// bytes: the error stays one short line whatever the input holds.
func quoteShort(s string) string {
	return strconv.Quote(abbreviate(s, 80))
}

// usageError is a malformed command line: Main prints it followed by the
// command's usage and exits with exitUsage.
type usageError struct{ msg string }

// Error returns the message, without the usage.
func (e *usageError) Error() string { return e.msg }

// usagef returns a *usageError with a formatted message.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errHelp is returned by parseFlags for -h and --help: Main prints the
// command's usage on stdout and exits with exitOK.
var errHelp = errors.New("help requested")

// flagSpec is one flag of a command. Every flag takes a value, except that a
// boolean flag written without "=value" means "=true".
type flagSpec struct {
	name    string                   // without dashes
	set     func(value string) error // parses and stores the value
	boolean bool                     // --name alone means --name=true
	// arg names the value in the usage ("FILE.npy"; "=B" for a flag
	// written --name=B); empty for a boolean flag.
	arg string
	// usage says what the flag does, for the Flags section of the help.
	usage string
	// required: the usage line shows the flag without brackets.
	required bool
	// syn replaces the flag's part of the usage line; "-" leaves it out.
	syn string
}

// token is the flag's part of the usage line: "--op NAME", "[--axis INT]".
func (f flagSpec) token() string {
	t := "--" + f.name
	switch {
	case strings.HasPrefix(f.arg, "="):
		t += f.arg
	case f.arg != "":
		t += " " + f.arg
	}
	if !f.required {
		t = "[" + t + "]"
	}
	return t
}

// with returns f with its usage-line argument, description and whether it
// is required.
func (f flagSpec) with(arg, usage string, required bool) flagSpec {
	f.arg, f.usage, f.required = arg, usage, required
	return f
}

// parseFlags parses args against specs. A flag is written --name=value or
// --name value (one leading dash also works); "--" ends the flags. Each flag
// may appear once. -h and --help return errHelp; every other mistake is a
// *usageError. Arguments that are not flags are rejected: no command takes
// any.
func parseFlags(args []string, specs []flagSpec) error {
	find := func(arg string) (spec *flagSpec, name, value string, hasValue, isFlag bool) {
		if len(arg) < 2 || arg[0] != '-' {
			return nil, "", "", false, false
		}
		name = strings.TrimPrefix(arg[1:], "-")
		name, value, hasValue = strings.Cut(name, "=")
		for i := range specs {
			if specs[i].name == name {
				return &specs[i], name, value, hasValue, true
			}
		}
		return nil, name, value, hasValue, true
	}
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			if i+1 < len(args) {
				return usagef("unexpected argument %q", args[i+1])
			}
			return nil
		}
		spec, name, value, hasValue, isFlag := find(arg)
		if !isFlag {
			if arg == "true" || arg == "false" {
				return usagef("unexpected argument %q (write a flag and its value as --name=value or --name value)", arg)
			}
			return usagef("unexpected argument %q", arg)
		}
		if name == "h" || name == "help" {
			return errHelp
		}
		if spec == nil {
			if name == "" || strings.HasPrefix(name, "-") {
				return usagef("bad flag syntax %q", arg)
			}
			names := make([]string, len(specs))
			for i, sp := range specs {
				names[i] = sp.name
			}
			return usagef("unknown flag --%s%s", name, semi(flagHint(name, names)))
		}
		if seen[name] {
			return usagef("flag --%s is given more than once", name)
		}
		seen[name] = true
		if !hasValue && spec.boolean {
			value, hasValue = "true", true
		}
		if !hasValue {
			// The value is the next argument, unless that is another flag:
			// "--data --out x" lacks a value rather than reading a file
			// called "--out". Negative numbers ("--axis -1") are values.
			if i+1 >= len(args) {
				return usagef("flag --%s needs a value", name)
			}
			if next, _, _, _, nextIsFlag := find(args[i+1]); nextIsFlag && (next != nil || args[i+1] == "-h" || args[i+1] == "--help") {
				return usagef("flag --%s needs a value", name)
			}
			i++
			value = args[i]
		}
		if err := spec.set(value); err != nil {
			return usagef("--%s %q: %v", name, value, err)
		}
	}
	return nil
}
