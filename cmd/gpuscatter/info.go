package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

var opsCommand = &command{
	name:    "ops",
	summary: "list every operator version with its inputs, reductions, index rule and dtypes",
	synopsis: `Usage:
  gpuscatter ops
`,
	details: `Lists every operator version gpuscatter runs: its inputs, the reductions
it takes, how it treats negative indices and the element types it accepts.
`,
	run: opsMain,
}

// opsMain is the ops command: one block per operator version.
func opsMain(_ context.Context, c *cli, args []string) error {
	if err := parseFlags(args, nil); err != nil {
		return err
	}
	var b strings.Builder
	for i, op := range ops.All() {
		if i > 0 {
			b.WriteByte('\n')
		}
		describeOp(&b, op)
	}
	_, err := fmt.Fprint(c.stdout, b.String())
	return err
}

// describeOp writes the block that the ops command prints for op.
func describeOp(b *strings.Builder, op *ops.Op) {
	fmt.Fprintf(b, "%s (%s, %s)\n", op.Name, op.Source, op.Kind)
	line := func(key, value string) { fmt.Fprintf(b, "  %-17s %s\n", key+":", value) }
	line("inputs", strings.Join(opInputs(op), ", "))
	line("reductions", strings.Join(op.ReductionNames(), ", "))
	switch {
	case op.TakesSlice():
		line("negative indices", "start and stop count from the end, then clamp")
	case op.NegativeIndices:
		line("negative indices", "allowed in [-s, s-1], counting from the end")
	default:
		line("negative indices", "rejected: indices must be in [0, s-1]")
	}
	var dts []string
	for _, dt := range tensor.DTypes() {
		if dt.IsNumeric() || op.AnyDType {
			dts = append(dts, dt.String())
		}
	}
	note := ""
	if op.AnyDType {
		note = " (complex and string with reduction none only)"
	}
	line("data dtypes", strings.Join(dts, " ")+note)
	var ints []string
	for _, dt := range tensor.DTypes() {
		if dt.IsInteger() {
			ints = append(ints, dt.String())
		}
	}
	line("index dtypes", strings.Join(ints, " "))
}

// opInputs lists op's inputs and attributes as the run command takes them.
func opInputs(op *ops.Op) []string {
	in := []string{"--data"}
	if op.TakesIndices() {
		in = append(in, "--indices")
	}
	in = append(in, "--updates")
	switch {
	case op.TakesAxis() && op.AxisRequired:
		in = append(in, "--axis (required, in [-r, r-1])")
	case op.TakesAxis():
		in = append(in, "--axis (default 0, in [-r, r-1])")
	}
	if op.TakesSlice() {
		in = append(in, "--start", "--stop", "--step", "--axes (optional)")
	}
	if len(op.Reductions) > 1 {
		in = append(in, "--reduction")
	}
	if op.TakesUseInitVal() {
		in = append(in, "--use-init-val (default true)")
	}
	return in
}

// version is the release, set at build time with
// -ldflags "-X main.version=v1.2.3"; when empty, the module version from
// the build information is used.
var version = ""

var versionCommand = &command{
	name:    "version",
	summary: "print the version",
	synopsis: `Usage:
  gpuscatter version
`,
	run: func(_ context.Context, c *cli, args []string) error {
		if err := parseFlags(args, nil); err != nil {
			return err
		}
		_, err := fmt.Fprintln(c.stdout, versionString())
		return err
	},
}

// versionString returns the line the version command prints.
func versionString() string {
	bi, _ := debug.ReadBuildInfo()
	return versionLine(bi)
}

// versionLine is versionString for the build information bi (nil when the
// binary has none): the module version (or main.version, set with
// -ldflags), the VCS commit, its time and whether the tree was modified,
// the Go version and platform, and the backends.
func versionLine(bi *debug.BuildInfo) string {
	v := version
	vcs := map[string]string{}
	if bi != nil {
		if v == "" && bi.Main.Version != "" {
			v = bi.Main.Version // "(devel)" for a build outside a module download
		}
		for _, s := range bi.Settings {
			vcs[s.Key] = s.Value
		}
	}
	if v == "" {
		v = "(devel)"
	}
	var parts []string
	if rev := vcs["vcs.revision"]; rev != "" {
		c := "commit " + rev
		if t := vcs["vcs.time"]; t != "" {
			c += " " + t
		}
		if vcs["vcs.modified"] == "true" {
			c += ", modified"
		}
		parts = append(parts, c)
	} else {
		parts = append(parts, "no VCS information")
	}
	goVersion := runtime.Version()
	if bi != nil && bi.GoVersion != "" {
		goVersion = bi.GoVersion
	}
	parts = append(parts, fmt.Sprintf("%s %s/%s", goVersion, runtime.GOOS, runtime.GOARCH))
	gpu := "gpu: not in this build"
	if newGPUBackend != nil {
		gpu = "gpu: vulkan"
	}
	parts = append(parts, "backends: cpu, "+gpu)
	return fmt.Sprintf("gpuscatter %s (%s)", v, strings.Join(parts, "; "))
}

var helpCommand = &command{
	name:    "help",
	summary: "print this help, or the help of a command",
	synopsis: `Usage:
  gpuscatter help [COMMAND]
`,
	run: func(_ context.Context, c *cli, args []string) error {
		switch len(args) {
		case 0:
			_, err := fmt.Fprint(c.stdout, mainUsageText())
			return err
		case 1:
			if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
				_, err := fmt.Fprint(c.stdout, helpOf(lookupCommand("help")))
				return err
			}
			cmd := lookupCommand(args[0])
			if cmd == nil {
				return usagef("unknown command %q", args[0])
			}
			_, err := fmt.Fprint(c.stdout, helpOf(cmd))
			return err
		}
		return usagef("help takes at most one command, got %d arguments", len(args))
	},
}
