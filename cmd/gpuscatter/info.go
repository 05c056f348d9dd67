package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

var opsCommand = &command{
	name:    "ops",
	summary: "list every operator version with its inputs, reductions, index rule and dtypes",
	flags:   func() []flagSpec { return []flagSpec{jsonListSpec(new(bool))} },
	details: `Prints a table of every operator version gpuscatter runs: where it comes
from, the inputs run takes for it, the reductions it accepts, how it treats
negative indices and the element types of its data, then the rules the
table has no room for (TensorScatter-24's write_indices). --json prints the
same as a JSON array, with every dtype spelled out and each index rule in
index_rule.
`,
	run: opsMain,
}

// jsonListSpec is the --json flag of ops and devices, which sets *asJSON.
func jsonListSpec(asJSON *bool) flagSpec {
	return flagSpec{name: "json", boolean: true, usage: "print the list as a JSON array, for tools", set: func(v string) (err error) {
		*asJSON, err = strconv.ParseBool(v)
		return err
	}}
}

// opInfo is one operator version as ops prints it.
type opInfo struct {
	Name        string   `json:"name"`
	Source      string   `json:"source"`
	Kind        string   `json:"kind"`
	Inputs      []string `json:"inputs"`
	Reductions  []string `json:"reductions"`
	Negative    string   `json:"negative_indices"`
	DTypes      []string `json:"dtypes"`
	IndexDTypes []string `json:"index_dtypes"`
	// IndexRule states the rule for index values where one line of the
	// table cannot (TensorScatter-24's modes).
	IndexRule string `json:"index_rule,omitempty"`
}

// cacheIndexRule is TensorScatter-24's rule for its write_indices, as ops
// checks them (ops.Plan.IndexRange, ops.Plan.IndexAt).
const cacheIndexRule = "write_indices (--indices) are int64 [batch], zeros when absent. linear mode (the default): " +
	"0 <= write_indices[b] and write_indices[b] + sequence_length <= max_sequence_length (the axis's size in past_cache), " +
	"else an error and nothing is written; circular mode: any int64, each position taken modulo max_sequence_length"

// describeOp returns what the ops command prints for op.
func describeOp(op *ops.Op) opInfo {
	info := opInfo{Name: op.Name, Source: op.Source, Kind: op.Kind.String(), Inputs: opInputs(op), Reductions: op.ReductionNames()}
	switch {
	case op.TakesSlice():
		info.Negative = "Python slices"
	case op.TakesMode():
		info.Negative = "linear: rejected, circular: wrap"
		info.IndexRule = cacheIndexRule
	case op.NegativeIndices:
		info.Negative = "[-s, s-1]"
	default:
		info.Negative = "rejected"
	}
	for _, dt := range tensor.DTypes() {
		if dt.IsNumeric() || op.AnyDType {
			info.DTypes = append(info.DTypes, dt.String())
		}
		if dt.IsInteger() && (op.IndicesDType == tensor.Invalid || dt == op.IndicesDType) {
			info.IndexDTypes = append(info.IndexDTypes, dt.String())
		}
	}
	return info
}

// opsMain is the ops command: a table, or --json.
func opsMain(_ context.Context, c *cli, args []string) error {
	asJSON := false
	if err := parseFlags(args, []flagSpec{jsonListSpec(&asJSON)}); err != nil {
		return err
	}
	var infos []opInfo
	for _, op := range ops.All() {
		infos = append(infos, describeOp(op))
	}
	if asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // index_rule's <= as it is
		return enc.Encode(infos)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OPERATOR\tSOURCE\tINPUTS BESIDES DATA, UPDATES\tREDUCTIONS\tNEGATIVE INDICES\tDTYPES")
	for _, in := range infos {
		dts := "numeric"
		if len(in.DTypes) > len(infos[0].DTypes) {
			dts = "all"
		}
		var inputs []string
		for _, name := range in.Inputs {
			if name != "data" && name != "updates" && name != "[reduction]" {
				inputs = append(inputs, name)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", in.Name, in.Source, strings.Join(inputs, " "),
			strings.Join(in.Reductions, " "), in.Negative, dts)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var numeric []string
	for _, dt := range tensor.DTypes() {
		if dt.IsNumeric() {
			numeric = append(numeric, dt.String())
		}
	}
	_, err := fmt.Fprintf(c.stdout, `
Inputs in brackets are optional ([axis=0]: the axis defaults to 0); each is
a flag of run. [-s, s-1]: an index may count from the end of its axis, of
size s. Indices, axis, start, stop, step and axes may have any integer
dtype, except TensorScatter-24's write_indices (below). --json lists the
same.
numeric: %s
all:     numeric, complex64, complex128, string (reduction none only)
`, strings.Join(numeric, " "))
	if err != nil {
		return err
	}
	for _, in := range infos {
		if in.IndexRule != "" {
			if _, err := fmt.Fprintf(c.stdout, "\n%s\n", wrapWords(in.Name+":", strings.Fields(in.IndexRule+"."), 3)); err != nil {
				return err
			}
		}
	}
	return nil
}

// opInputs lists op's inputs and attributes as the run command takes them
// (without their dashes): optional ones in brackets.
func opInputs(op *ops.Op) []string {
	in := []string{"data"}
	if op.TakesIndices() {
		in = append(in, "indices")
	}
	if op.IndicesOptional {
		in[len(in)-1] = "[indices]"
	}
	in = append(in, "updates")
	switch {
	case op.TakesAxis() && op.AxisRequired:
		in = append(in, "axis")
	case op.TakesAxis():
		in = append(in, fmt.Sprintf("[axis=%d]", op.AxisDefault))
	}
	if op.TakesMode() {
		in = append(in, "[mode=linear]")
	}
	if op.TakesSlice() {
		in = append(in, "start", "stop", "step", "[axes]")
	}
	if len(op.Reductions) > 1 {
		in = append(in, "[reduction]")
	}
	if op.TakesUseInitVal() {
		in = append(in, "[use-init-val]")
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
	name:     "help",
	summary:  "print this help, or the help of a command",
	operands: "[COMMAND]",
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
				return usagef("unknown command %q%s", args[0], semi(commandHint(args[0])))
			}
			_, err := fmt.Fprint(c.stdout, helpOf(cmd))
			return err
		}
		return usagef("help takes at most one command, got %d arguments", len(args))
	},
}
