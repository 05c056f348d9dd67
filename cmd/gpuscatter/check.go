//go:build cgo

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuscatter/gpuscatter/bench"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpubench"
	"github.com/gpuscatter/gpuscatter/internal/gpucheck"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

var checkCommand = &command{
	name:    "check",
	summary: "qualify a Vulkan device: the GPU conformance suite, every operator through every path",
	flags:   func() []flagSpec { return newCheckFlags().specs(new(gpuSettings)) },
	details: `Runs on one Vulkan device the conformance suite that 'go test ./gpu' runs
(package internal/gpucheck) and compares every result with the CPU reference
(cpuref): the spec examples, the validation table, out-of-range indices with
guard regions around the output, unchanged inputs, in-place runs and seeded
random requests, over every operator, version, dtype, index dtype, reduction
and use_init_val, through every execution path of the GPU backend (native
atomics, compare-and-swap loops, workgroup accumulation, in-order folds,
column walks, copy commands, chunked tensors, 64-bit positions, split
dispatches, staged transfers, resident tensors). Each path is forced on the
device by the backend's options and internal settings. Float sum, sub,
prod and mean on atomics must lie within the bound stated in gpu/DESIGN.md;
everything else must match bit for bit (any NaN matching any NaN).

Prints the device (name, type, driver, the features the backend uses and
the path each reduction family takes on it), then one row per path and
operator: cases, passed, failed and seconds, and for each failing row its
first mismatch (operator, dtype, reduction, position, expected and got) or
its first error. Rows of the operator "-" are checks of the path as a
whole, and each validation message (--validate) is a failed case of one. A
progress line is shown on stderr when it is a terminal; elsewhere (a pipe,
a log file) a line per path as it finishes: its cases, failures and time.

A call the device cannot run for lack of a feature it needs (float64 sum,
sub, prod and mean without shaderFloat64) is refused by the backend with
ops.ErrUnsupported, which --backend auto answers by running it on the CPU:
such a case counts as refused, in its own column, neither passed nor failed,
and a line under the table names the features and what withholds each:
the device, or the paths that withhold it on purpose from a device that
has it (the 32-bit baseline paths, noInt64..., withhold shaderInt64).

--match TEXT keeps the paths whose name contains TEXT, or with a
comma-separated list (skip/default,hot/default), any of its terms; where
no path's name does and TEXT names operator versions (ScatterElements-18)
or operators (TensorScatter, every version), every path runs with those
operators' cases alone.

--validate turns on the Khronos validation layer with its synchronization
validation and its GPU-assisted validation, which instruments every
kernel so that an access through a buffer device address outside the
buffers is reported. Each message the layer reports is a failed case of
the row of the path's checks as a whole ("-"), and every message is
printed under the table (the first 20 of a row; --json FILE has them all).
Kernels run several times slower under it: make qualify-gpuav runs it on a
bounded set of paths at the quick size (about 75 s on lavapipe). --list prints the paths --match keeps, each with
what it forces, one a line, and runs nothing (--json FILE: the same as a
JSON array of name and doc).

Exit status: 0 when every case passes or is refused, 1 when any fails (or
the device cannot be opened), 2 for a malformed command line.
`,
	run: checkMain,
}

// checkFault, when set, is injected into every backend check opens
// (knobs.Knobs.Fault): tests use it to show that check catches a broken
// path.
var checkFault knobs.Fault

// checkNoShaderFloat64, when set, opens every backend of check as on a
// device without shaderFloat64 (gpucheck.Config.NoShaderFloat64): tests
// use it to show how check reports refused calls.
var checkNoShaderFloat64 bool

// checkResult is what check --json writes.
type checkResult struct {
	Device checkDevice `json:"device"`
	Size   string      `json:"size"`
	Seed   int64       `json:"seed"`
	Match  string      `json:"match,omitempty"`
	// Operators names the operator versions whose cases alone ran, where
	// --match names an operator rather than paths.
	Operators  []string       `json:"operators,omitempty"`
	Validation string         `json:"validation"` // "on", "off" or "not installed"
	Seconds    float64        `json:"seconds"`
	Cases      int            `json:"cases"`
	Failed     int            `json:"failed"`
	Paths      []checkPath    `json:"paths"`
	Rows       []gpucheck.Row `json:"rows"`
	// Refused counts the cases refused for lack of a feature: neither
	// passed nor failed. RefusedFor names the features the device lacks;
	// Withheld, the features that paths withhold on purpose although the
	// device has them (gpucheck.Path.Withholds), each with those paths.
	Refused    int                 `json:"refused"`
	RefusedFor []string            `json:"refused_for,omitempty"`
	Withheld   map[string][]string `json:"withheld,omitempty"`
}

// checkDevice describes the device in check's header.
type checkDevice struct {
	Name          string            `json:"name"`
	Type          string            `json:"type"`
	APIVersion    string            `json:"apiVersion"`
	DriverName    string            `json:"driverName"`
	DriverInfo    string            `json:"driverInfo"`
	DriverVersion uint32            `json:"driverVersion"`
	Features      []string          `json:"features"`
	Reductions    map[string]string `json:"reductions"` // family -> path
	Families      []string          `json:"-"`          // the keys of Reductions in print order
}

// checkPath names a path and what it forces.
type checkPath struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
}

// checkFlags holds the parsed flags of the check command.
type checkFlags struct {
	quick, full, validate, list bool
	seed, match, jsonF          stringArg
}

func newCheckFlags() *checkFlags {
	return &checkFlags{
		seed:  stringArg{name: "seed", check: func(v string) error { _, err := strconv.ParseInt(v, 10, 64); return err }},
		match: stringArg{name: "match"},
		jsonF: stringArg{name: "json"},
	}
}

// specs returns the flags of the check command; --device sets g.
func (f *checkFlags) specs(g *gpuSettings) []flagSpec {
	boolSpec := func(name string, p *bool, usage string) flagSpec {
		return flagSpec{name: name, boolean: true, usage: usage, set: func(v string) (err error) {
			*p, err = strconv.ParseBool(v)
			return err
		}}
	}
	return []flagSpec{
		deviceSpec(g),
		boolSpec("quick", &f.quick, "about a tenth of the random requests, at smaller sizes"),
		boolSpec("full", &f.full, "three times the default's random requests, and tensors beyond the device's storage binding limit"),
		f.seed.spec().with("N", "the base seed of the random requests (default 20240701); the same seed gives the same requests", false),
		f.match.spec().with("TEXT", "only the paths whose name contains TEXT (case-insensitive), for example cas, none/ or resident, "+
			"or any term of a comma-separated list (skip/default,hot/default); "+
			"or, where no path's name does, an operator version or operator (ScatterElements-18, TensorScatter): its cases alone, on every path", false),
		boolSpec("list", &f.list, "print the paths, each with what it forces, one a line (those --match selects), and run nothing; "+
			"with --json FILE, write them there as a JSON array"),
		boolSpec("validate", &f.validate, "enable the Khronos validation layer, with synchronization and GPU-assisted validation, "+
			"and count each of its messages as a failure; when the layer is not installed a line says so and the run goes on without it"),
		f.jsonF.spec().with("FILE", "write the device, the paths and the rows as JSON (atomically)", false),
	}
}

// checkMain is the check command.
func checkMain(ctx context.Context, c *cli, args []string) error {
	f := newCheckFlags()
	if err := parseFlags(args, f.specs(&c.gpu)); err != nil {
		return err
	}
	quick, full, validate, seed, match, jsonF := f.quick, f.full, f.validate, f.seed, f.match, f.jsonF
	if quick && full {
		return usagef("--quick and --full exclude each other")
	}
	cfg := gpucheck.Config{Size: gpucheck.Default, Seed: 20240701, Match: match.value}
	switch {
	case quick:
		cfg.Size = gpucheck.Quick
	case full:
		cfg.Size = gpucheck.Full
	}
	if seed.given {
		cfg.Seed, _ = strconv.ParseInt(seed.value, 10, 64)
	}
	if len(listedPaths(cfg)) == 0 {
		return usagef("--match %q selects no path and names no operator (run 'gpuscatter check --list' for the paths)", match.value)
	}
	paths := cfg.Selected()
	if len(paths) == 0 && !f.list {
		return usagef("--match %q selects only paths of --full", match.value)
	}
	if jsonF.value != "" {
		if err := checkOutPath("json", jsonF.value); err != nil {
			return err
		}
	}
	if f.list {
		return listCheckPaths(c.stdout, cfg, jsonF.value)
	}
	if err := deviceEnv(); err != nil {
		return err
	}
	cfg.Base = gpu.Options{Device: c.gpu.device, PipelineCacheDir: "off"}
	cfg.Fault = checkFault
	cfg.NoShaderFloat64 = checkNoShaderFloat64
	res := checkResult{Size: cfg.Size.String(), Seed: cfg.Seed, Match: cfg.Match, Operators: cfg.Operators(), Validation: "off"}
	if validate {
		ok, err := vk.ValidationAvailable()
		if err != nil {
			return fmt.Errorf("check: %w", err)
		}
		if ok {
			cfg.Base.Validation, cfg.Base.GPUAssistedValidation, res.Validation = true, true, "on"
		} else {
			res.Validation = "not installed"
			fmt.Fprintf(c.stderr, "%s--validate: the Khronos validation layer (VK_LAYER_KHRONOS_validation, Debian package vulkan-validationlayers) is not installed: checking without it\n", prefix)
		}
	}
	// Each path opens its backends anew; they take over the device and
	// the pipelines the last one closed, so that a pipeline is compiled
	// once per run, not once per path (compilation is most of a run's
	// time on lavapipe). They are destroyed at the end of the run. Not
	// under GPU-assisted validation: there the validation layer's work
	// for each submission grows with what the earlier backends on a kept
	// device did (on lavapipe with the 1.3.239 layer, hot/default takes
	// 29 s alone and 101 s after resident/default on a kept device), far
	// more than compiling each path's pipelines again costs.
	gpu.KeepDevices(!cfg.Base.GPUAssistedValidation)
	defer gpu.KeepDevices(false)
	dev, err := describeCheckDevice(ctx, cfg.Base, cfg.NoShaderFloat64)
	if err = selectorOf(c.gpu, err); isSelectorError(err) {
		return err
	} else if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	res.Device = dev
	for _, p := range paths {
		res.Paths = append(res.Paths, checkPath{Name: p.Name, Doc: p.Doc})
	}
	printCheckHeader(c.stdout, res)

	rep := gpucheck.NewReport()
	rep.Ops = res.Operators
	var prog *progressLine
	if isTerminal(c.stderr) {
		prog = startProgress(c.stderr, "check", func() string {
			cases, failed, refused := rep.Totals()
			return fmt.Sprintf("%d cases, %d failed%s", cases, failed, refusedNote(refused))
		})
	}
	start := time.Now()
	root := rep.Root()
	for i, p := range paths {
		if err := ctx.Err(); err != nil {
			prog.close()
			return err
		}
		prog.set(fmt.Sprintf("[%d/%d] %s", i+1, len(paths), p.Name))
		cases0, failed0, refused0 := rep.Totals()
		pathStart := time.Now()
		root.Run(p.Name, func(t opstest.T) { gpucheck.RunPath(t, cfg, p) })
		if prog == nil {
			// Off a terminal (a pipe, a log file, CI) a line per path,
			// the group of rows it fills, as it finishes, as bench
			// prints one per workload.
			cases, failed, refused := rep.Totals()
			fmt.Fprintf(c.stderr, "%scheck [%d/%d] %s: %d cases, %d failed%s, %.1f s\n",
				prefix, i+1, len(paths), p.Name, cases-cases0, failed-failed0, refusedNote(refused-refused0), time.Since(pathStart).Seconds())
		}
	}
	prog.close()
	// What the validation layer reports while the kept devices are
	// destroyed is a failure like a message at any Close.
	if err := gpu.ReleaseInstances(); err != nil {
		root.Run("release", func(t opstest.T) { t.Errorf("destroying the kept devices: %v", err) })
	}
	res.Seconds = time.Since(start).Seconds()
	res.Rows = rep.Rows()
	res.Cases, res.Failed, res.Refused = rep.Totals()
	res.refusals(paths)
	printCheckRows(c.stdout, res)
	if jsonF.value != "" {
		err := bench.WriteFileAtomic(jsonF.value, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		})
		if err != nil {
			return fmt.Errorf("--json %s: %w", jsonF.value, err)
		}
	}
	if res.Failed > 0 {
		return fmt.Errorf("check: %d of %d cases failed on %s", res.Failed, res.Cases, res.Device.Name)
	}
	return nil
}

// refusals sets r.RefusedFor and r.Withheld from the refused rows: a
// feature the row's path withholds on purpose while the device has it
// (one of the header's features) is the path's doing; any other, the
// device's.
func (r *checkResult) refusals(paths []gpucheck.Path) {
	byName := map[string]gpucheck.Path{}
	for _, p := range paths {
		byName[p.Name] = p
	}
	for _, row := range r.Rows {
		for _, f := range strings.Split(row.RefusedFor, ", ") {
			switch {
			case f == "":
			case byName[row.Path].Withholds(f) && slices.Contains(r.Device.Features, f):
				if r.Withheld == nil {
					r.Withheld = map[string][]string{}
				}
				if !slices.Contains(r.Withheld[f], row.Path) {
					r.Withheld[f] = append(r.Withheld[f], row.Path)
				}
			case !slices.Contains(r.RefusedFor, f):
				r.RefusedFor = append(r.RefusedFor, f)
			}
		}
	}
}

// refusedCauses says why the refused cases were refused: "the device
// lacks F" for RefusedFor, and for each feature withheld, "the paths A, B
// and N more withhold F on purpose".
func (r checkResult) refusedCauses() string {
	var causes []string
	if len(r.RefusedFor) > 0 {
		causes = append(causes, "the device lacks "+strings.Join(r.RefusedFor, ", "))
	}
	features := make([]string, 0, len(r.Withheld))
	for f := range r.Withheld {
		features = append(features, f)
	}
	slices.Sort(features)
	for _, f := range features {
		ps := r.Withheld[f]
		switch {
		case len(ps) == 1:
			causes = append(causes, fmt.Sprintf("the path %s withholds %s on purpose", ps[0], f))
		case len(ps) <= 3:
			causes = append(causes, fmt.Sprintf("the paths %s and %s withhold %s on purpose", strings.Join(ps[:len(ps)-1], ", "), ps[len(ps)-1], f))
		default:
			causes = append(causes, fmt.Sprintf("the paths %s, %s and %d more withhold %s on purpose", ps[0], ps[1], len(ps)-2, f))
		}
	}
	return strings.Join(causes, ", and ")
}

// listedPaths returns the paths check --list prints: those --match
// selects whatever the size, the paths of --full included.
func listedPaths(cfg gpucheck.Config) []gpucheck.Path {
	cfg.Size = gpucheck.Full
	return cfg.Selected()
}

// listCheckPaths is check --list: each path cfg selects, with what it
// forces, one a line, and with jsonFile, the same as a JSON array of
// checkPath there.
func listCheckPaths(w io.Writer, cfg gpucheck.Config, jsonFile string) error {
	paths := listedPaths(cfg)
	width := 0
	for _, p := range paths {
		width = max(width, len(p.Name))
	}
	list := []checkPath{}
	for _, p := range paths {
		doc := p.Doc
		if p.FullOnly {
			doc += " (--full only)"
		}
		list = append(list, checkPath{Name: p.Name, Doc: doc})
		if _, err := fmt.Fprintf(w, "%-*s  %s\n", width, p.Name, doc); err != nil {
			return err
		}
	}
	if jsonFile == "" {
		return nil
	}
	err := bench.WriteFileAtomic(jsonFile, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	})
	if err != nil {
		return fmt.Errorf("--json %s: %w", jsonFile, err)
	}
	return nil
}

// describeCheckDevice opens the device once to describe it: its
// properties, the features the backend uses, and the path that each
// reduction family takes there on a large plan ("refused: ..." where the
// device lacks a feature it needs). noFloat64 opens it as check's paths
// are opened (gpucheck.Config.NoShaderFloat64).
func describeCheckDevice(ctx context.Context, base gpu.Options, noFloat64 bool) (checkDevice, error) {
	base.Validation, base.GPUAssistedValidation = false, false
	b, err := knobs.Open[gpu.Options, *gpu.Backend](base, knobs.Knobs{NoShaderFloat64: noFloat64})
	if err != nil {
		return checkDevice{}, err
	}
	defer b.Close()
	info := gpubench.Of(b).Device().Info()
	cp := info.Capabilities
	d := checkDevice{Name: info.Name, Type: string(info.Type), APIVersion: info.APIVersion, DriverName: info.DriverName,
		DriverInfo: info.DriverInfo, DriverVersion: info.DriverVersion, Reductions: map[string]string{}}
	yes := func(ok bool, name string) {
		if ok {
			d.Features = append(d.Features, name)
		}
	}
	yes(cp.Int64BufferAtomics, "int64 atomics")
	yes(cp.Float32AtomicAdd, "float32 atomic add")
	yes(cp.Float32AtomicMinMax, "float32 atomic min/max")
	yes(cp.Float16AtomicAdd, "float16 atomic add")
	yes(cp.Float16AtomicMinMax, "float16 atomic min/max")
	yes(cp.Float64AtomicAdd, "float64 atomic add")
	yes(cp.Float64AtomicMinMax, "float64 atomic min/max")
	yes(cp.DenormPreserveFloat32, "float32 subnormals kept")
	yes(cp.DenormPreserveFloat64, "float64 subnormals kept")
	yes(cp.UnifiedMemory, "unified memory")
	yes(cp.ShaderInt16, "shaderInt16")
	yes(cp.ShaderInt8, "shaderInt8")
	yes(cp.StorageBuffer8BitAccess, "8-bit storage")
	yes(cp.StorageBuffer16BitAccess, "16-bit storage")
	yes(cp.BufferDeviceAddress, "buffer device address")
	yes(cp.ShaderInt64, "shaderInt64")
	yes(cp.ShaderFloat64 && !noFloat64, "shaderFloat64")
	d.Features = append(d.Features, "max storage binding "+mib(cp.MaxStorageBufferRange))
	families := []struct {
		dt  tensor.DType
		red ops.Reduction
	}{
		{tensor.Int32, ops.Sum}, {tensor.Int32, ops.Max}, {tensor.Int64, ops.Sum}, {tensor.Int64, ops.Max},
		{tensor.Float32, ops.Sum}, {tensor.Float32, ops.Max}, {tensor.Float16, ops.Sum}, {tensor.Float16, ops.Max},
		{tensor.Float64, ops.Sum}, {tensor.Float64, ops.Max}, {tensor.Float32, ops.Prod}, {tensor.Bool, ops.Max},
	}
	for _, f := range families {
		family := f.red.String()
		if f.red == ops.Max {
			family = "min/max" // the two take the same path
		}
		name := fmt.Sprintf("%v %s", f.dt, family)
		path, err := reductionPath(ctx, b, f.dt, f.red)
		var fe *gpu.FeatureError
		switch {
		case errors.As(err, &fe):
			path = "refused: the device lacks " + fe.Feature
		case err != nil:
			path = "error: " + err.Error()
		}
		d.Families = append(d.Families, name)
		d.Reductions[name] = path
	}
	return d, nil
}

// reductionPath runs a ScatterElements-18 reduction of 20000 updates onto
// 4096 targets and returns the path it took (gpu.Stats.Reduction).
func reductionPath(ctx context.Context, b *gpu.Backend, dt tensor.DType, r ops.Reduction) (string, error) {
	const n, targets = 20000, 4096
	op, err := ops.Lookup("ScatterElements-18")
	if err != nil {
		return "", err
	}
	red, ok := op.ReductionName(r)
	if !ok {
		return "", fmt.Errorf("%s takes no reduction %v", op.Name, r)
	}
	data, err := tensor.New(dt, []int{targets})
	if err != nil {
		return "", err
	}
	upd, _ := tensor.New(dt, []int{n})
	idx, _ := tensor.New(tensor.Int64, []int{n})
	rng := rand.New(rand.NewSource(1))
	for i, ix := 0, tensor.View[int64](idx); i < n; i++ {
		ix[i] = int64(rng.Intn(targets))
	}
	_, err = ops.Run(ctx, b, ops.Request{Op: op.Name, Data: data, Indices: idx, Updates: upd, Reduction: red})
	if err != nil {
		return "", err
	}
	return b.LastStats().Reduction, nil
}

// printCheckHeader writes the device block above check's table.
func printCheckHeader(w io.Writer, r checkResult) {
	d := r.Device
	fmt.Fprintf(w, "device:      %s (%s, Vulkan %s)\n", d.Name, d.Type, d.APIVersion)
	fmt.Fprintf(w, "driver:      %s %s (version %#x)\n", d.DriverName, d.DriverInfo, d.DriverVersion)
	fmt.Fprintf(w, "features:    %s\n", strings.Join(d.Features, ", "))
	fmt.Fprintf(w, "reductions:  (large plans, default options)\n")
	for _, f := range d.Families {
		fmt.Fprintf(w, "  %-16s %s\n", f, d.Reductions[f])
	}
	only := ""
	if len(r.Operators) > 0 {
		only = ", the cases of " + strings.Join(r.Operators, ", ") + " alone"
	}
	fmt.Fprintf(w, "run:         %s size, seed %d, validation %s, %d paths%s\n\n", r.Size, r.Seed, r.Validation, len(r.Paths), only)
}

// maxValidationShown bounds the validation messages printed per failing
// row.
const maxValidationShown = 20

// printCheckRows writes the table, the first failure of each failing row
// and the totals.
func printCheckRows(w io.Writer, r checkResult) {
	pw, ow := len("PATH"), len("OPERATOR")
	for _, row := range r.Rows {
		pw, ow = max(pw, len(row.Path)), max(ow, len(row.Op))
	}
	fmt.Fprintf(w, "%-*s  %-*s  %6s  %6s  %6s  %7s  %8s\n", pw, "PATH", ow, "OPERATOR", "CASES", "PASSED", "FAILED", "REFUSED", "SECONDS")
	for _, row := range r.Rows {
		fmt.Fprintf(w, "%-*s  %-*s  %6d  %6d  %6d  %7d  %8.2f\n", pw, row.Path, ow, row.Op, row.Cases, row.Passed, row.Failed, row.Refused, row.Seconds)
	}
	for _, row := range r.Rows {
		if row.Failed == 0 {
			continue
		}
		fmt.Fprintf(w, "\nFAIL %s %s: %d of %d cases\n", row.Path, row.Op, row.Failed, row.Cases)
		if m := row.First; m != nil {
			pos := "shape or dtype"
			if m.Position != nil {
				pos = tensor.FormatShape(m.Position)
			}
			fmt.Fprintf(w, "  first mismatch: op %s dtype %s reduction %s path %s at %s: expected %s, got %s\n",
				m.Op, m.DType, m.Reduction, row.Path, pos, m.Want, m.Got)
		}
		if row.FirstError != "" {
			fmt.Fprintf(w, "  first error: %s\n", strings.ReplaceAll(row.FirstError, "\n", "\n    "))
		}
		// Every validation message, up to maxValidationShown.
		for i, m := range row.Validation {
			if i == maxValidationShown {
				fmt.Fprintf(w, "  ... and %d more validation messages (--json FILE has them all)\n", len(row.Validation)-i)
				break
			}
			fmt.Fprintf(w, "  validation: %s\n", strings.ReplaceAll(m, "\n", "\n    "))
		}
		size := ""
		if r.Size != gpucheck.Default.String() {
			size = " --" + r.Size
		}
		fmt.Fprintf(w, "  reproduce: gpuscatter check%s --seed %d --match '%s'\n", size, r.Seed, row.Path)
	}
	if r.Refused > 0 {
		var rows int
		for _, row := range r.Rows {
			if row.Refused > 0 {
				rows++
			}
		}
		fmt.Fprintf(w, "\nREFUSED %d cases in %d rows: %s, which they need; the backend refuses them "+
			"with ops.ErrUnsupported (--backend auto runs them on the CPU)\n", r.Refused, rows, r.refusedCauses())
	}
	verdict := "PASS"
	if r.Failed > 0 {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "\n%s: %d cases, %d failed%s, %d rows, %.1f s\n", verdict, r.Cases, r.Failed, refusedNote(r.Refused), len(r.Rows), r.Seconds)
}

// refusedNote is ", N refused" where N > 0 cases were refused, else "".
func refusedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d refused", n)
}
