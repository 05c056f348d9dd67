package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpuscatter/gpuscatter/npy"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/examples"
	"github.com/gpuscatter/gpuscatter/tensor"
)

var examplesCommand = &command{
	name:    "examples",
	summary: "run every example from the operator specs and check the results",
	flags: func() []flagSpec {
		f := newExamplesFlags()
		return f.specs(new(gpuSettings))
	},
	details: `Runs every example printed in the operator specs (with the errata of
specs/README.md corrected), and TensorScatter-24's, whose ONNX text prints
none, from the node tests ONNX ships with it, the way 'gpuscatter run'
runs an operator: the inputs are written as .npy files into a temporary
directory, run is called with the matching flags, and its output file is
read back and compared with the spec's output. Prints each example's
inputs, output and verdict.

Exit status: 0 when every example matches, 1 when any does not.
`,
	run: examplesMain,
}

// examplesFlags holds the parsed flags of the examples command.
type examplesFlags struct{ backend, match *stringArg }

func newExamplesFlags() examplesFlags {
	return examplesFlags{
		backend: &stringArg{name: "backend", value: backendAuto, check: checkBackendName},
		match:   &stringArg{name: "match"},
	}
}

// specs returns the flags of the examples command; --device sets g.
func (f examplesFlags) specs(g *gpuSettings) []flagSpec {
	return []flagSpec{
		f.backend.spec().with("auto|cpu|gpu", "auto (the default), cpu or gpu, as for run", false),
		f.match.spec().with("TEXT", "only the examples whose name contains TEXT (case-insensitive)", false),
		deviceSpec(g),
	}
}

// examplesMain is the examples command: resolve the backend once, then run
// every selected example through the run command and report on it.
func examplesMain(ctx context.Context, c *cli, args []string) error {
	f := newExamplesFlags()
	backend, match := f.backend, f.match
	if err := parseFlags(args, f.specs(&c.gpu)); err != nil {
		return err
	}
	all := examples.All()
	var selected []int // indices into all, which name the temporary folders
	for i, ex := range all {
		if match.value == "" || strings.Contains(strings.ToLower(ex.Name), strings.ToLower(match.value)) {
			selected = append(selected, i)
		}
	}
	if len(selected) == 0 {
		// Before the backend, whose notice would be a second line.
		return fmt.Errorf("--match %q: no example name contains it", match.value)
	}
	name, notice, err := resolveBackend(ctx, c.gpu, backend.value)
	if err != nil {
		return err
	}
	if notice != "" {
		fmt.Fprintf(c.stderr, "%s%s\n", prefix, notice)
	}
	runWith, device := name, c.gpu.device
	if backend.value == backendAuto && (name == backendGPU || name == backendAuto) {
		// Each run may still fall back to the CPU for a plan the GPU
		// backend cannot run; run notes that and the example shows it.
		runWith = backendAuto
	}
	dir, err := os.MkdirTemp("", "gpuscatter-examples-")
	if err != nil {
		return fmt.Errorf("examples: %w", err)
	}
	defer os.RemoveAll(dir)

	var ran, failed []string
	for _, i := range selected {
		ex := all[i]
		if err := ctx.Err(); err != nil {
			return err
		}
		exDir := filepath.Join(dir, strconv.Itoa(i))
		ok, err := runExample(ctx, c.stdout, exDir, runWith, device, ex)
		if err != nil {
			return err
		}
		ran = append(ran, ex.Name)
		if !ok {
			failed = append(failed, ex.Name)
		}
	}
	fmt.Fprintf(c.stdout, "\n%s on backend %s: %d match, %d do not\n", plural(len(ran), "example"), name, len(ran)-len(failed), len(failed))
	if len(failed) > 0 {
		return fmt.Errorf("examples: %d of %s failed: %s", len(failed), plural(len(ran), "example"), strings.Join(failed, ", "))
	}
	return nil
}

// exampleInputs pairs the run flags with an example's tensors.
func exampleInputs(req *ops.Request) []struct {
	flag string
	t    *tensor.Tensor
} {
	return []struct {
		flag string
		t    *tensor.Tensor
	}{
		{"data", req.Data}, {"indices", req.Indices}, {"updates", req.Updates}, {"axis", req.Axis},
		{"start", req.Start}, {"stop", req.Stop}, {"step", req.Step}, {"axes", req.Axes},
	}
}

// exampleArgs writes the inputs of req as .npy files into dir and returns
// the arguments of the run command that computes req into out.
func exampleArgs(dir string, req ops.Request, out, backend, device string) ([]string, error) {
	args := []string{"--op", req.Op}
	for _, in := range exampleInputs(&req) {
		if in.t == nil {
			continue
		}
		path := filepath.Join(dir, in.flag+".npy")
		if err := npy.WriteFile(path, in.t); err != nil {
			return nil, fmt.Errorf("writing %s: %w", in.flag, err)
		}
		args = append(args, "--"+in.flag, path)
	}
	if req.Reduction != "" {
		args = append(args, "--reduction", req.Reduction)
	}
	if req.UseInitVal != nil {
		args = append(args, "--use-init-val="+strconv.FormatBool(*req.UseInitVal))
	}
	if req.Mode != "" {
		args = append(args, "--mode", req.Mode)
	}
	args = append(args, "--out", out, "--backend", backend)
	if device != "" {
		args = append(args, "--device", device)
	}
	return args, nil
}

// runExample runs ex through the run command and prints the report for it.
// It returns whether the output matches ex.Want; err is set only when the
// example could not be attempted at all.
func runExample(ctx context.Context, w io.Writer, dir, backend, device string, ex examples.Example) (ok bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("examples: %w", err)
	}
	fmt.Fprintf(w, "=== %s\n", ex.Name)
	fmt.Fprintf(w, "  source     %s\n", oneLine(ex.Source))
	op := ex.Request.Op
	if ex.Request.Reduction != "" {
		op += ", reduction " + ex.Request.Reduction
	}
	if ex.Request.UseInitVal != nil {
		op += ", use_init_val " + strconv.FormatBool(*ex.Request.UseInitVal)
	}
	if ex.Request.Mode != "" {
		op += ", mode " + ex.Request.Mode
	}
	fmt.Fprintf(w, "  op         %s\n", op)
	for _, in := range exampleInputs(&ex.Request) {
		if in.t != nil {
			fmt.Fprintf(w, "  %-10s %v\n", in.flag, in.t)
		}
	}
	out := filepath.Join(dir, "out.npy")
	args, err := exampleArgs(dir, ex.Request, out, backend, device)
	if err != nil {
		fmt.Fprintf(w, "  want       %v\n  FAIL       cannot write the inputs: %s\n", ex.Want, oneLine(err.Error()))
		return false, nil
	}
	var stderr bytes.Buffer
	code := Main(ctx, append([]string{"run"}, args...), io.Discard, &stderr)
	if code != exitOK {
		fmt.Fprintf(w, "  want       %v\n  FAIL       run exited with status %d: %s\n", ex.Want, code, firstLine(stderr.String()))
		return false, nil
	}
	if note := firstLine(stderr.String()); note != "" {
		fmt.Fprintf(w, "  note       %s\n", strings.TrimPrefix(note, prefix))
	}
	got, err := npy.ReadFile(out)
	if err != nil {
		fmt.Fprintf(w, "  want       %v\n  FAIL       cannot read the output: %s\n", ex.Want, oneLine(err.Error()))
		return false, nil
	}
	fmt.Fprintf(w, "  output     %v\n", got)
	if ex.Want != nil && tensor.Equal(got, ex.Want) {
		fmt.Fprintf(w, "  ok         matches the spec\n")
		return true, nil
	}
	fmt.Fprintf(w, "  want       %v\n  MISMATCH   the output differs from the spec's\n", ex.Want)
	return false, nil
}

// firstLine returns the first line of s, without the "gpuscatter: " prefix.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimPrefix(s, prefix)
}

// plural returns "1 example" or "3 examples".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
