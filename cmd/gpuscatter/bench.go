package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gpuscatter/gpuscatter/bench"
	"github.com/gpuscatter/gpuscatter/internal/chart"
	"github.com/gpuscatter/gpuscatter/internal/suggest"
	"github.com/gpuscatter/gpuscatter/ops"
)

var benchCommand = &command{
	name:    "bench",
	summary: "time the scatter workloads on the GPU and the CPU and check they agree",
	flags:   func() []flagSpec { return newBenchFlags().specs(new(gpuSettings)) },
	details: `Times each workload on the CPU and, with --backend gpu or auto, on the GPU,
and checks that every output of the GPU equals the CPU's. Prints a table:
median, min and max wall time of Execute (upload, run and download for the
GPU; no file I/O, no device start-up), device time where the backend
measures it, the bytes one pass must move (data read + output written +
updates read + indices read) and the time a memory copy of as many bytes
takes, effective bandwidth (those bytes over the median time), the
bandwidth of a parallel memory
copy measured in the same run and the fraction of it reached, the GPU's
speedup over the CPU, and whether the outputs matched. Under each GPU row:
the device time by phase, a device-to-device copy of the same traffic (the
yardstick for copy-bound workloads), and the time of the call in place on
inputs already resident on the device (no host transfers, no copy of
data), also verified, and the plan of the call ('gpuscatter plan'): its
passes and compute dispatches, the device bytes they read and write
against the bytes one pass must move, and the device memory it takes;
--json has them as plan_passes, dispatches, plan_bytes and plan_memory.
Each GPU row also gives the estimates from the device's measured figures
('gpuscatter devices'): the row's time on the device and on the CPU,
and where --backend auto runs the call as a host call (--json:
estimate_ms, cpu_estimate_ms, auto_choice; the figures themselves in
figures). Where every index names one target, --json also has
hottest_updates: the most updates that meet one output element.

Outputs must match bit for bit (any NaN equals any NaN), except float sum,
sub, prod and mean reductions on the GPU, whose order of additions may
differ: those may differ by 1e-5 of the sum of the magnitudes of the terms
of each element (8 machine epsilons for float16 and bfloat16), and the
note under such a row says whether it was verified bit for bit or within
that tolerance; with --deterministic they too must match bit for bit. The
CPU's timed outputs must equal its first one.

Built-in workloads (full size; --scale multiplies the leading dimensions):
  SU1          ScatterUpdate-3 spec example 1: data f32[1000,256,10,15],
               indices [125,20], updates [1000,125,20,10,15], axis 1
  SND5         ScatterNDUpdate-15 spec example 5: data f32[1000,256,10,15],
               indices [25,125,3], updates [25,125,15]
  SE           ScatterElements-18 axis 0: data f32[4096,4096], indices and
               updates [1024,4096]
  SE-sum-dup   ScatterElements-18 add: data f32[1M], indices and updates [16M]
  SE-zipf      SE-sum-dup with targets drawn from a Zipf law (s=1.1) over the
               1M elements: the hottest takes about an eighth of the updates
  SND-sum-dup  ScatterND-18 add: data f32[1M,16], indices [1M,1], updates [1M,16]
  SS           SliceScatter-15: data f32[8192,8192], every second row and
               column, updates [4096,4096]
  SND-max-i32  ScatterND-18 max: data i32[4M], indices [8M,1], updates [8M]
  SND-1000     ScatterND-18: 1000 calls, each data f32[4096,16], indices
               [16,1], updates [16,16]; on the GPU also as one resident batch,
               with its submits, waits and transfer pieces
  SND5-f16, SND5-i64, SE-f16, SE-i64
               SND5 and SE on float16 and int64 data
  KV-decode    TensorScatter-24 circular: 1000 decode steps in place on a
               KV cache f16[8,32,4096,128], each writing a token
               [8,32,1,128] at write indices that advance by one per step;
               --scale shrinks the batch of sequences; on the GPU one
               resident batch of the steps, with its submits and waits
A workload that does not fit in the memory available is skipped with a line
in the table.

With --op and the input flags of run (--data, --updates, --indices,
--axis, --reduction, --use-init-val, --mode, --start, --stop, --step, --axes),
bench times that operator on those inputs instead of the built-in
workloads; --workloads, --quick, --scale and --seed then do not apply.

On a terminal, a progress line is shown on stderr when the run takes more
than a second; elsewhere (a pipe, a log) a line on stderr as each workload
finishes on each backend. SIGINT, SIGTERM or SIGHUP stops the run after
printing the table of what was measured and writing --json (marked
"interrupted") and --plot for it, with 128 plus the signal's number as the
exit status.

Exit status: 0 when every output matched; 1 when one did not or a run
failed (the table is still printed, no JSON or plot is written), or for
invalid input; 2 for a malformed command line.
`,
	run: benchMain,
}

// benchMemoryBudget, when positive, replaces the memory a workload may use
// (bench.Options.MemoryBudget); tests lower it to reach the skip path.
// benchMemcpyBytes, when positive, replaces the smallest memory-copy buffer
// (bench.Options.MemcpyMinBytes); tests lower it to save time.
var benchMemoryBudget, benchMemcpyBytes int64

// isTerminal reports whether w is a terminal, where a progress line can be
// redrawn in place.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// benchFlags holds the parsed flags of the bench command: its own and
// those of run (without --out).
type benchFlags struct {
	run                                    *runFlags
	workloads, scale, repeats, seed, jsonF stringArg
	plot                                   stringArg
	quick, countAtomics                    boolArg
}

func newBenchFlags() *benchFlags {
	return &benchFlags{
		run:          newRunFlags(),
		workloads:    stringArg{name: "workloads"},
		scale:        stringArg{name: "scale", value: "1", check: checkScale},
		repeats:      stringArg{name: "repeats", value: "5", check: checkRepeats},
		seed:         stringArg{name: "seed", value: "1", check: checkSeed},
		jsonF:        stringArg{name: "json", check: nonEmptyPath},
		plot:         stringArg{name: "plot", check: checkPNGPath},
		quick:        boolArg{name: "quick"},
		countAtomics: boolArg{name: "count-atomics"},
	}
}

// specs returns the flags of the bench command: its own, then run's
// (but --out), which the usage line sums up as "[--op NAME ...]";
// --device and --deterministic set g.
func (f *benchFlags) specs(g *gpuSettings) []flagSpec {
	quick := f.quick.spec().with("", "a small size (scale 1/256), for a quick look rather than for figures", false)
	quick.boolean = true // --quick alone means --quick=true
	count := f.countAtomics.spec().with("", "run each workload once more on the device, untimed, with a counter of the global atomics of "+
		"its reduction, and report per GPU row the atomics issued and the most on one output element "+
		"(atomics_issued, atomics_max_address), beside hottest_updates; off by default, and the kernels have no counter without it", false)
	count.boolean = true
	specs := []flagSpec{
		f.workloads.spec().with("LIST", "a comma list of the workloads above (case-insensitive); all of them by default", false),
		quick,
		f.scale.spec().with("F", "multiply the sizes by F (0 < F <= 1024); default 1", false),
		f.repeats.spec().with("N", "timed runs per workload and backend, after one warm-up; default 5", false),
		f.seed.spec().with("N", "the seed the inputs are generated from; default 1", false),
		f.jsonF.spec().with("FILE", "write the figures as JSON (atomically)", false),
		f.plot.spec().with("FILE.png", "draw GB/s per workload and backend, with the memory copy as a reference line, "+
			"as a PNG image (atomically)", false),
		count,
	}
	for _, s := range f.run.specs(nil, g) {
		switch s.name {
		case "out", "skip-bad-indices":
			continue
		case "op":
			s.syn = "[--op NAME --data FILE.npy ...]"
		case "backend":
			s.usage = "auto (the default: the Vulkan device of any type, lavapipe included, when available, " +
				"else only the CPU, with a notice), cpu (only the CPU) or gpu"
		case "device", "deterministic":
		default:
			s.syn = "-" // summed up with --op
		}
		s.required = false // with --op only
		specs = append(specs, s)
	}
	return specs
}

func checkScale(v string) error {
	s, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(s > 0) || s > 1024 {
		return errors.New("want a number greater than 0 and at most 1024")
	}
	return nil
}

func checkRepeats(v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > 10000 {
		return errors.New("want an integer from 1 to 10000")
	}
	return nil
}

func checkSeed(v string) error {
	if _, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err != nil {
		return errors.New("want a non-negative integer")
	}
	return nil
}

func checkPNGPath(v string) error {
	if !strings.EqualFold(filepath.Ext(v), ".png") {
		return errors.New("want a path ending in .png")
	}
	return nil
}

// benchMain is the bench command: parse, pick the workloads, open the
// backends, run, print the table, write the files.
func benchMain(ctx context.Context, c *cli, args []string) error {
	f := newBenchFlags()
	if err := parseFlags(args, f.specs(&c.gpu)); err != nil {
		return err
	}
	custom, err := f.mode()
	if err != nil {
		return err
	}
	var op *ops.Op
	var workloads []*bench.Workload
	if custom {
		if op, err = lookupOp(f.run.op.value); err != nil {
			return err
		}
		if err := f.run.missingFor(op); err != nil {
			return err
		}
	} else if workloads, err = f.builtins(); err != nil {
		return err
	}
	for _, out := range []stringArg{f.jsonF, f.plot} {
		if out.given {
			if err := checkOutPath(out.name, out.value); err != nil {
				return err
			}
		}
	}

	targets, notice, err := openTargets(ctx, c.gpu, f.run.backend.value)
	if err != nil {
		return err
	}
	defer func() {
		for _, t := range targets[1:] {
			t.Backend.Close()
		}
	}()
	if custom {
		req, err := f.run.request(op)
		if err != nil {
			return err
		}
		name := op.Name
		if r, ok := op.ParseReduction(req.Reduction); ok && r != ops.None {
			spelled, _ := op.ReductionName(r)
			name += " " + spelled
		}
		w, err := bench.Custom(name, req)
		if err != nil {
			return err
		}
		workloads = []*bench.Workload{w}
	}

	repeats, _ := strconv.Atoi(strings.TrimSpace(f.repeats.value))
	opt := bench.Options{Repeats: repeats, MemoryBudget: benchMemoryBudget, MemcpyMinBytes: benchMemcpyBytes,
		CountAtomics: f.countAtomics.value != nil && *f.countAtomics.value,
		// --deterministic folds float sums in index order: bit for bit, no
		// tolerance.
		Deterministic: c.gpu.deterministic}
	var prog *progressLine
	if isTerminal(c.stderr) {
		prog = startProgress(c.stderr, "bench", nil)
		opt.Progress = prog.update
	} else {
		// Off a terminal (a pipe, a log file, CI) a line per result as it
		// completes instead of one redrawn line.
		index := map[string]int{}
		for i, w := range workloads {
			index[w.Name] = i + 1
		}
		opt.Measured = func(x bench.Result) {
			fmt.Fprintf(c.stderr, "%sbench [%d/%d] %s\n", prefix, index[x.Workload], len(workloads), measuredLine(x, targets[0].Label))
		}
	}
	rep, err := bench.Run(ctx, targets, workloads, opt)
	prog.close()
	if rep != nil && rep.Interrupted {
		// A signal: keep what was measured, then exit with its status.
		if len(rep.Results) > 0 {
			f.describe(rep, args, custom)
			if werr := rep.WriteTable(c.stdout); werr != nil {
				return errors.Join(err, werr)
			}
			if werr := writeBenchFiles(rep, f.jsonF, f.plot); werr != nil {
				return errors.Join(err, werr)
			}
		}
		return err
	}
	if err != nil {
		var re *bench.RunError
		if custom && errors.As(err, &re) {
			return re.Err // the operator's own message, as run gives it
		}
		return err
	}
	for _, t := range targets[1:] {
		if err := t.Backend.Close(); err != nil {
			return fmt.Errorf("backend %s: close: %w", t.Backend.Name(), err)
		}
	}
	f.describe(rep, args, custom)
	if err := rep.WriteTable(c.stdout); err != nil {
		return err
	}
	if err := failures(rep); err != nil {
		return err
	}
	if err := writeBenchFiles(rep, f.jsonF, f.plot); err != nil {
		return err
	}
	if notice != "" {
		fmt.Fprintf(c.stderr, "%s%s\n", prefix, notice)
	}
	return nil
}

// describe records in rep how its workloads were chosen.
func (f *benchFlags) describe(rep *bench.Report, args []string, custom bool) {
	rep.Command = strings.TrimSpace("gpuscatter bench " + strings.Join(args, " "))
	if !custom {
		rep.Scale = f.scaleValue()
		rep.Seed, _ = strconv.ParseUint(strings.TrimSpace(f.seed.value), 10, 64)
	}
}

// measuredLine describes a result in one line, as bench prints it off a
// terminal when the result is complete, saying whether it was verified bit
// for bit or within the tolerance; ref is the reference's label.
func measuredLine(x bench.Result, ref string) string {
	s := x.Workload + " on " + x.Backend + ": "
	switch {
	case x.Skipped != "":
		return s + "skipped: " + x.Skipped
	case x.Error != "":
		return s + "error: " + x.Error
	}
	s += fmt.Sprintf("median %s, %.3g GB/s", formatMS(x.Median), x.GBps)
	if x.ResidentTime > 0 {
		s += fmt.Sprintf(", resident %s", formatMS(x.ResidentTime))
	}
	if x.Speedup > 0 {
		s += fmt.Sprintf(", %.2gx the %s", x.Speedup, ref)
	}
	switch {
	case x.BitForBit():
		return s + ", verified bit for bit"
	case x.Verified:
		n := fmt.Sprintf("%d elements", x.Comparison.Tolerated)
		if x.Comparison.Tolerated == 1 {
			n = "1 element"
		}
		return s + fmt.Sprintf(", verified within %g of the sum of magnitudes (%s needed it)", x.Tolerance, n)
	}
	return s + ", NOT VERIFIED"
}

// formatMS renders d in milliseconds with three significant digits.
func formatMS(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'g', 3, 64) + " ms"
}

// mode checks the combinations of flags and reports whether they ask for
// an operator on the user's inputs (--op) rather than the built-in
// workloads.
func (f *benchFlags) mode() (custom bool, err error) {
	r := f.run
	inputs := []struct {
		name  string
		given bool
	}{
		{"data", r.data.given}, {"indices", r.indices.given}, {"updates", r.updates.given},
		{"axis", r.axis.given}, {"reduction", r.reduction.given}, {"use-init-val", r.useInitVal.value != nil}, {"mode", r.mode.given},
		{"start", r.start.given}, {"stop", r.stop.given}, {"step", r.step.given}, {"axes", r.axes.given},
	}
	if !r.op.given {
		for _, in := range inputs {
			if in.given {
				return false, usagef("--%s needs --op: it is an input of the operator to time", in.name)
			}
		}
		if f.quick.value != nil && *f.quick.value && f.scale.given {
			return false, usagef("--quick and --scale are exclusive: --quick is --scale %g", bench.QuickScale)
		}
		return false, nil
	}
	for _, own := range []struct {
		name  string
		given bool
	}{{"workloads", f.workloads.given}, {"quick", f.quick.value != nil}, {"scale", f.scale.given}, {"seed", f.seed.given}} {
		if own.given {
			return false, usagef("--%s applies to the built-in workloads, not to --op", own.name)
		}
	}
	var missing []string
	for _, in := range inputs[:3] {
		if !in.given && in.name != "indices" {
			missing = append(missing, "--"+in.name)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		return false, usagef("missing required flag %s", missing[0])
	default:
		return false, usagef("missing required flags %s", strings.Join(missing, ", "))
	}
	return true, nil
}

// scaleValue returns the scale that --quick and --scale select.
func (f *benchFlags) scaleValue() float64 {
	if f.quick.value != nil && *f.quick.value {
		return bench.QuickScale
	}
	s, _ := strconv.ParseFloat(strings.TrimSpace(f.scale.value), 64)
	return s
}

// builtins returns the workloads --workloads names, sized by --quick or
// --scale.
func (f *benchFlags) builtins() ([]*bench.Workload, error) {
	var names []string
	if f.workloads.given {
		for i, n := range strings.Split(f.workloads.value, ",") {
			n = strings.TrimSpace(n)
			if n == "" {
				return nil, usagef("--workloads %q: element %d of the comma list is empty", f.workloads.value, i+1)
			}
			names = append(names, n)
		}
	}
	seed, _ := strconv.ParseUint(strings.TrimSpace(f.seed.value), 10, 64)
	for _, n := range names {
		known := false
		for _, w := range bench.Names() {
			known = known || strings.EqualFold(n, w)
		}
		if !known {
			hint := suggest.DidYouMean(n, bench.Names(), "")
			if hint != "" {
				hint = " (" + hint + ")"
			}
			return nil, usagef("--workloads: unknown workload %q%s; the workloads are %s",
				n, hint, strings.Join(bench.Names(), ", "))
		}
	}
	ws, err := bench.Select(names, f.scaleValue(), seed)
	return ws, err
}

// openTargets opens the backends that --backend name selects: always the
// CPU, the reference, first; then the GPU for gpu, and for auto when one
// is available (otherwise notice says why not). The GPU backend is used as
// it is, without run's fallback to the CPU for plans it does not support:
// those show as unsupported in the table rather than as CPU times in the
// GPU's row.
func openTargets(ctx context.Context, s gpuSettings, name string) (targets []bench.Target, notice string, err error) {
	targets = []bench.Target{{Label: backendCPU, Backend: newCPUBackend()}}
	switch name {
	case backendCPU:
		return targets, "", nil
	case backendGPU:
		b, err := openGPU(ctx, s, false)
		if err != nil {
			return nil, "", gpuOpenError(err)
		}
		return append(targets, bench.Target{Label: backendGPU, Backend: deviceTimed(b)}), "", nil
	case backendAuto:
		b, err := openGPU(ctx, s, false)
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", ctx.Err()
			}
			if isSelectorError(err) {
				return nil, "", err
			}
			return targets, fmt.Sprintf("--backend auto: %v; only the CPU ran", oneLine(err.Error())), nil
		}
		return append(targets, bench.Target{Label: backendGPU, Backend: deviceTimed(b)}), "", nil
	}
	return nil, "", usagef("--backend %q: %v", name, checkBackendName(name))
}

// failures returns an error naming the results that failed or did not
// match the reference, nil when there are none.
func failures(rep *bench.Report) error {
	bad := rep.Failures()
	if len(bad) == 0 {
		return nil
	}
	x := bad[0]
	var msg string
	if x.Error != "" {
		msg = fmt.Sprintf("%s on %s: %s", x.Workload, x.Backend, x.Error)
	} else {
		what := "the output does not match the " + rep.Results[0].Backend + "'s"
		if x.Backend == rep.Results[0].Backend {
			what = "a timed output does not match the first"
		}
		msg = fmt.Sprintf("%s on %s: %s: %d elements differ, the first at flat position %d, max |diff| %s",
			x.Workload, x.Backend, what, x.Comparison.Mismatches, x.Comparison.First, formatDiff(x.Comparison.MaxAbsDiff))
	}
	if len(bad) > 1 {
		msg += fmt.Sprintf(" (and %d more failed; see the table)", len(bad)-1)
	}
	return errors.New(msg)
}

func formatDiff(d float64) string {
	if math.IsInf(d, 0) {
		return "inf"
	}
	return strconv.FormatFloat(d, 'g', 4, 64)
}

// writeBenchFiles writes the JSON and the plot that the flags ask for. Both
// are rendered before either is written, and a JSON file this call
// created is removed again when the plot cannot be written.
func writeBenchFiles(rep *bench.Report, jsonF, plot stringArg) error {
	var png bytes.Buffer
	if plot.given {
		if err := chart.Render(&png, rep); err != nil {
			return fmt.Errorf("--plot %s: %w", plot.value, err)
		}
	}
	created := false
	if jsonF.given {
		_, statErr := os.Stat(jsonF.value)
		if err := rep.WriteJSON(jsonF.value); err != nil {
			return fmt.Errorf("--json %s: %w", jsonF.value, err)
		}
		created = errors.Is(statErr, os.ErrNotExist)
	}
	if plot.given {
		err := bench.WriteFileAtomic(plot.value, func(w io.Writer) error {
			_, err := w.Write(png.Bytes())
			return err
		})
		if err != nil {
			if created {
				os.Remove(jsonF.value)
			}
			return fmt.Errorf("--plot %s: %w", plot.value, err)
		}
	}
	return nil
}

// update records the stage a bench run has reached.
func (p *progressLine) update(ev bench.Progress) {
	if p == nil {
		return
	}
	stage := ev.Stage
	switch ev.Stage {
	case "timing":
		stage = fmt.Sprintf("timing %d/%d", ev.Repeat, ev.Repeats)
	case "inputs":
		stage = "generating inputs"
	case "memcpy":
		stage = "measuring memcpy"
	}
	if ev.Backend != "" {
		stage = ev.Backend + " " + stage
	}
	p.set(fmt.Sprintf("[%d/%d] %s: %s", ev.Index, ev.Count, ev.Workload, stage))
}
