package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gpuscatter/gpuscatter/hostmem"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

var runCommand = &command{
	name:    "run",
	summary: "run one scatter operator on .npy or .pb inputs and write the result",
	flags: func() []flagSpec {
		model := newModelArg()
		return newRunFlags().specs(&model, new(gpuSettings))
	},
	details: `Runs one scatter operator and writes its result to --out. The output is
written atomically: a failed run leaves no output file behind and never
replaces an existing one.

On the Vulkan backend, .npy inputs of fixed-width dtypes are read
straight into device memory and the .npy output is written from there,
without host copies of the tensors.

Every FILE.npy may be an ONNX TensorProto file instead: a path ending in
.pb is read and written as one, any other path as .npy. bfloat16 tensors
have no .npy form; write them to a .pb file.

With --model FILE.onnx, the operator is the one Scatter, ScatterElements,
ScatterND or TensorScatter node of the model's graph, in the newest
version not newer than the opset the model imports (ScatterElements at
opset 17 is ScatterElements-16); its axis, reduction and mode attributes
apply. The node's data, indices and updates (TensorScatter's past_cache,
write_indices and update) come from --data, --indices and --updates, or,
for a flag not given, from the graph's initializer of the same name. --op,
--axis, --reduction, --use-init-val, --mode and the slice flags do not
combine with --model.

With --skip-bad-indices, an index out of range skips the updates it
addresses instead of failing the run before anything is written: every
other update is applied as if those were absent, --out is written, and the
run still exits with status 1 and the line naming the first bad index.

Exit status: 0 on success; 1 for invalid input or a failed run, with one
line on stderr naming the input at fault; 2 for a malformed command line.
SIGINT, SIGTERM and SIGHUP stop the run with one line such as
"gpuscatter: interrupted by SIGTERM" and 128 plus the signal's number
(130, 143, 129), leaving no output file; on Linux the output is written
through an unnamed file (O_TMPFILE), so even a killed run leaves nothing.
`,
	run: runMain,
}

// runFlags holds the parsed flags of the run command.
type runFlags struct {
	op, reduction, out, backend  stringArg
	mode                         stringArg
	data, indices, updates, axis tensorArg
	start, stop, step, axes      tensorArg
	useInitVal                   boolArg
	// skipBad is --skip-bad-indices (ops.Request.SkipBadIndices).
	skipBad bool
	model   string // run --model's file, or ""
	// opRun is run's --op once looked up; nil for run --model.
	opRun *ops.Op
}

// newRunFlags returns the run flags with their defaults and parsers.
func newRunFlags() *runFlags {
	return &runFlags{
		op:         stringArg{name: "op"},
		reduction:  stringArg{name: "reduction"},
		mode:       stringArg{name: "mode"},
		out:        stringArg{name: "out", check: nonEmptyPath},
		backend:    stringArg{name: "backend", value: backendAuto, check: checkBackendName},
		data:       tensorArg{name: "data"},
		indices:    tensorArg{name: "indices"},
		updates:    tensorArg{name: "updates"},
		axis:       tensorArg{name: "axis", parseInline: parseIntScalar},
		start:      tensorArg{name: "start", parseInline: parseIntListTensor},
		stop:       tensorArg{name: "stop", parseInline: parseIntListTensor},
		step:       tensorArg{name: "step", parseInline: parseIntListTensor},
		axes:       tensorArg{name: "axes", parseInline: parseIntListTensor},
		useInitVal: boolArg{name: "use-init-val"},
	}
}

// specs returns the flags of the run command; model is --model, nil for
// the commands that take run's flags without it; --device and
// --deterministic set g.
func (f *runFlags) specs(model *stringArg, g *gpuSettings) []flagSpec {
	const list = "a comma list of integers such as 0,-1 (an int64 1-D tensor) or a path ending in .npy or .pb"
	specs := []flagSpec{
		f.op.spec().with("NAME", "operator and version, case-insensitive, e.g. ScatterNDUpdate-15 (see 'gpuscatter ops')", true),
		f.data.spec().with("FILE.npy", "the data tensor", true),
		f.indices.spec().with("FILE.npy", "the indices: required by every operator but SliceScatter-15 and TensorScatter-24 "+
			"(its write_indices, int64 [batch]: zeros when absent)", false),
		f.updates.spec().with("FILE.npy", "the updates, of data's dtype", true),
		f.axis.spec().with("INT|FILE.npy", "the axis: an integer, or a path ending in .npy or .pb that holds an integer "+
			"scalar or 1-element 1-D tensor. Required by ScatterUpdate-3 and ScatterElementsUpdate-3/-12; "+
			"the ONNX operators default to 0, TensorScatter-24 to -2", false),
		f.reduction.spec().with("R", "none (the default) or a reduction the operator version takes (sum, prod, add, mul, min, max, ...), "+
			"spelled as its spec spells it (matched exactly, as --mode is)", false),
		f.useInitVal.spec().with("=B", "use_init_val of ScatterElementsUpdate-12: true (the default) or false", false),
		f.mode.spec().with("M", "mode of TensorScatter-24: linear (the default when the flag is absent) or circular, "+
			"matched exactly (ONNX attribute strings are case-sensitive)", false),
		f.start.spec().with("L", "SliceScatter-15's start: "+list, false),
		f.stop.spec().with("L", "SliceScatter-15's stop, likewise", false),
		f.step.spec().with("L", "SliceScatter-15's step, likewise", false),
		f.axes.spec().with("L", "SliceScatter-15's axes, likewise; optional", false),
		switchSpec("skip-bad-indices", &f.skipBad, "skip the updates of an out-of-range index instead of failing before anything is "+
			"written: every other update is applied, --out is written, and the run still exits with status 1 naming the first "+
			"bad index (ops.Request.SkipBadIndices)"),
		f.out.spec().with("FILE.npy", "where to write the result, of data's dtype", true),
	}
	if model != nil {
		specs[0].syn = "(--op NAME | --model FILE.onnx)"
		m := model.spec().with("FILE.onnx", "a single-node ONNX model (see above), instead of --op", false)
		m.syn = "-" // with --op above
		specs = append(specs, m)
	}
	return append(specs,
		f.backend.spec().with("auto|cpu|gpu", "auto (the default), cpu or gpu. auto runs the call where its estimate is lower, on the Vulkan device or "+
			"on the CPU, from the device's measured figures ('gpuscatter devices'), with a one-line notice giving both "+
			"estimates and the choice; with no device, or when the device cannot run the call or is lost during it, it "+
			"runs on the CPU with a notice saying why. gpu runs on any "+
			"Vulkan device, lavapipe included", false),
		deviceSpec(g), deterministicSpec(g))
}

// newModelArg returns run's --model flag.
func newModelArg() stringArg { return stringArg{name: "model", check: nonEmptyPath} }

// nonEmptyPath rejects an empty path.
func nonEmptyPath(v string) error {
	if v == "" {
		return errors.New("want a path")
	}
	return nil
}

// runMain is the run command: parse, open the backend, load the inputs,
// run, write the output. The examples command calls it too, through Main.
func runMain(ctx context.Context, c *cli, args []string) error {
	f := newRunFlags()
	model := newModelArg()
	if err := parseFlags(args, f.specs(&model, &c.gpu)); err != nil {
		return err
	}
	if model.given {
		return runModel(ctx, c, f, model.value)
	}
	var op *ops.Op
	if f.op.given { // a mistyped --op first: the other flags depend on it
		var err error
		if op, err = lookupOp(f.op.value); err != nil {
			return err
		}
	}
	var missing []string
	for _, given := range []struct {
		name string
		ok   bool
	}{{"op", f.op.given}, {"data", f.data.given}, {"updates", f.updates.given}, {"out", f.out.given}} {
		if !given.ok {
			missing = append(missing, "--"+given.name)
		}
	}
	if len(missing) > 0 {
		if len(missing) == 1 {
			return usagef("missing required flag %s", missing[0])
		}
		return usagef("missing required flags %s", strings.Join(missing, ", "))
	}
	if err := f.missingFor(op); err != nil {
		return err
	}

	if err := checkOutPath("out", f.out.value); err != nil {
		return err
	}
	f.opRun = op
	return runAndWrite(ctx, c, f, func() (ops.Request, error) { return f.request(op) })
}

// missingFor returns a usage error naming the flags op requires that are
// not given: --indices (every operator but SliceScatter-15 and
// TensorScatter-24), --axis (ScatterUpdate-3, ScatterElementsUpdate-3/-12),
// --start, --stop and --step (SliceScatter-15). Then, a --mode that is
// given is checked as ops checks it (op.CheckMode): an empty --mode is a
// mode that is not linear or circular, not the flag's absence.
func (f *runFlags) missingFor(op *ops.Op) error {
	if err := f.missing(op); err != nil {
		return err
	}
	if f.mode.given {
		return op.CheckMode(f.mode.value)
	}
	return nil
}

// missing is missingFor's usage error, without the check of --mode.
func (f *runFlags) missing(op *ops.Op) error {
	var missing []string
	need := func(a *tensorArg, required bool) {
		if required && !a.given {
			missing = append(missing, "--"+a.name)
		}
	}
	need(&f.indices, op.TakesIndices() && !op.IndicesOptional)
	need(&f.axis, op.TakesAxis() && op.AxisRequired)
	need(&f.start, op.TakesSlice())
	need(&f.stop, op.TakesSlice())
	need(&f.step, op.TakesSlice())
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return usagef("%s: missing required flag %s", op.Name, missing[0])
	}
	return usagef("%s: missing required flags %s", op.Name, strings.Join(missing, ", "))
}

// runAndWrite opens the backend --backend selects, loads the request with
// load, runs it and writes the result to --out, then prints the backend's
// notice, if any. run and run --model share it.
func runAndWrite(ctx context.Context, c *cli, f *runFlags, load func() (ops.Request, error)) error {
	if err := f.checkMemory(); err != nil {
		return err
	}
	b, notice, err := openBackend(ctx, c.gpu, f.backend.value, true)
	if err != nil {
		return err
	}
	if streamRun != nil && f.opRun != nil {
		done, err := streamRun(ctx, b, f)
		if done {
			if cerr := b.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("backend %s: close: %w", b.Name(), cerr)
			}
			if err != nil {
				return err
			}
			printNotice(c, b, notice)
			return nil
		}
	}
	result, err := execute(ctx, b, f, load)
	if cerr := b.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("backend %s: close: %w", b.Name(), cerr)
	}
	skipped := err != nil && f.skipBad && result != nil && errors.Is(err, ops.ErrIndexRange)
	if err != nil && !skipped {
		return err
	}
	if werr := writeTensorFile(ctx, f.out.value, result); werr != nil {
		return fileError("out", f.out.value, werr)
	}
	if skipped {
		return fmt.Errorf("%w (--skip-bad-indices: its updates, and those of any other bad index, were skipped; --out holds every other update)", err)
	}
	printNotice(c, b, notice)
	return nil
}

// printNotice prints the one line that says where the run's call ran, if
// any: the backend's (runNotice: --backend auto's choice, or its
// fallback), else notice, openBackend's (auto on the CPU without a GPU).
func printNotice(c *cli, b ops.Backend, notice string) {
	if n := runNotice(b); n != "" {
		notice = n
	}
	if notice != "" {
		fmt.Fprintf(c.stderr, "%s%s\n", prefix, notice)
	}
}

// streamRun, where it is not nil, runs run's operator (f.opRun) on b
// with its inputs read straight into the device's memory and the output
// written from there, without host copies of the tensors, and reports
// done. It declines (false, nil) for a run it does not take, having
// written nothing and released what it made; the run then takes the host
// path. A build with cgo sets it (stream.go).
var streamRun func(ctx context.Context, b ops.Backend, f *runFlags) (done bool, err error)

// execute loads the request with load, checks that its update strings fit
// data's string dtype, and runs it on b.
func execute(ctx context.Context, b ops.Backend, f *runFlags, load func() (ops.Request, error)) (*tensor.Tensor, error) {
	var req ops.Request
	err := interruptible(ctx, func() (err error) {
		req, err = load()
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := f.checkStringWidth(req); err != nil {
		return nil, err
	}
	out, err := ops.Run(ctx, b, req)
	var oe *ops.Error
	if f.model != "" && errors.As(err, &oe) {
		// The model chose the operator and may hold the input at fault.
		err = fmt.Errorf("--model %s: %w", f.model, err)
	}
	return out, err
}

// checkMemory fails before any input is read when the run cannot fit in
// the memory the process may use: its input files and an output the size
// of --data, compared with hostmem's limits. Each allocation is checked
// again as it happens (a file's size only estimates its tensor).
func (f *runFlags) checkMemory() error {
	var need uint64
	for _, a := range []*tensorArg{&f.data, &f.indices, &f.updates, &f.axis, &f.start, &f.stop, &f.step, &f.axes} {
		if a.path == "" {
			continue
		}
		if st, err := os.Stat(a.path); err == nil && st.Mode().IsRegular() {
			need += uint64(st.Size())
			if a == &f.data {
				need += uint64(st.Size()) // the output
			}
		}
	}
	if err := hostmem.Check(need); err != nil {
		return fmt.Errorf("the inputs and the output of this run: %w", err)
	}
	return nil
}

// checkStringWidth fails when an update string is too long for data's
// string dtype: the output keeps data's dtype ('<U4'), and an update that
// does not fit would have to be cut short.
func (f *runFlags) checkStringWidth(req ops.Request) error {
	if req.Data == nil || req.Updates == nil || req.Data.DType != tensor.String || req.Updates.DType != tensor.String {
		return nil
	}
	sf := req.Data.StringFormat
	for i, s := range req.Updates.Strings {
		if !sf.Fits(s) {
			unit := "code points"
			if sf.Bytes {
				unit = "bytes"
			}
			where := "--updates " + f.updates.path
			if f.updates.path == "" && f.model != "" {
				where = "--model " + f.model + ": updates" // an initializer
			}
			return fmt.Errorf("%s: element %d (%s) is %d %s long, wider than data's dtype %s, which the output keeps",
				where, i, quoteShort(s), sf.Len(s), unit, sf)
		}
	}
	return nil
}

// request loads the inputs named by f into a request for op. The bench
// command uses it too.
func (f *runFlags) request(op *ops.Op) (ops.Request, error) {
	req := ops.Request{Op: op.Name, Reduction: f.reduction.value, UseInitVal: f.useInitVal.value, Mode: f.mode.value,
		SkipBadIndices: f.skipBad}
	for _, in := range []struct {
		arg *tensorArg
		dst **tensor.Tensor
	}{
		{&f.data, &req.Data}, {&f.indices, &req.Indices}, {&f.updates, &req.Updates}, {&f.axis, &req.Axis},
		{&f.start, &req.Start}, {&f.stop, &req.Stop}, {&f.step, &req.Step}, {&f.axes, &req.Axes},
	} {
		t, err := in.arg.load()
		if err != nil {
			return ops.Request{}, err
		}
		*in.dst = t
	}
	return req, nil
}
