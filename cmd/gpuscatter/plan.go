//go:build cgo

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpubench"
	"github.com/gpuscatter/gpuscatter/npy"
	"github.com/gpuscatter/gpuscatter/onnx"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

var planCommand = &command{
	name:    "plan",
	summary: "print the passes, traffic and device memory of a call on the GPU, without running it",
	flags:   func() []flagSpec { return newPlanFlags().specs(new(gpuSettings)) },
	details: `Prints the plan the Vulkan backend makes for run's call on these inputs,
without running it and without reading the payloads of --data, --indices
and --updates (their dtypes and shapes come from the .npy headers, which
may be files of the header alone, or from the .pb files with their
raw_data skipped; with --model, the call is the
model's node as for run, the inputs not given its initializers): the path
it takes, every pass with its compute dispatches, the invocations that
have work in them, and
the device bytes it reads and writes (at most what the shapes allow; the
index values decide how many targets an update meets), the dispatches and
the traffic in all against the one-pass bytes (below), the device
memory the call allocates, the bytes it moves between host and device,
and the passes as recorded, with their kernels and the device bytes of
each tensor. The text and --json print each figure as one value. With
the index values unread, an atomic reduction into many targets plans the
hot-target fold (path "+hot", which moves the same bytes in the same
dispatches); run and bench, which hold the indices, plan it only where a
sample of them looks skewed.

--in-place plans the call a runtime makes instead: on tensors resident on
the device, with data as the output (gpu.Backend's Run or Batch with Out
= Data), which moves nothing between host and device and copies no data.

The one-pass bytes are the least traffic any implementation of the call
moves: the indices and the updates read once, and each output element the
call may change (at most one per update, at most the whole output) read
and written once (ops.Plan.OnePassBytes; bench uses the same).

The plan is the Vulkan device's (--device), or, with --facts FILE, that of
the device FILE describes: one element of what 'gpuscatter devices --json'
prints on the machine with that device (an array of one element is taken
too), so that a plan for any GPU can be read without it. Every limit
planning reads must be there and be one a device can have (deviceLocalMemory,
maxMemoryAllocationSize, maxComputeWorkGroupCount, maxComputeWorkGroupSize,
maxComputeWorkGroupInvocations, maxComputeSharedMemorySize): a file that
lacks one, or gives 0 or a value no device has, is an error naming the
field. --deterministic plans deterministic mode.

--json prints an object instead: op, reduction (as the operator spells
it, as the text does), device, device_type, deterministic, in_place,
path, passes (each with name, dispatches, invocations, read_bytes and
written_bytes), dispatches, traffic_bytes, one_pass_bytes,
device_memory_bytes, host_bytes (moved between host and device),
data_copy_bytes, first_clear_bytes (owner words a backend clears on their
first use only, which every call leaves clear: not in the traffic; absent
for run's one call, which clears them), tensors (each with name and
bytes), plan (the passes as
recorded), for TensorScatter-24 also axis and mode, where run would
refuse the call, refused, and, where the device's figures are known
(below), estimate_ms and estimate (ms and parts, each with name and ms),
cpu_estimate_ms and cpu_estimate, auto_choice and figures.

The estimates come from the device's figures as 'gpuscatter devices'
shows them (measured once and kept; with --facts, the file's measured
object, which the discrete profile in gpu/testdata/facts carries): on the
device, the upload and download at their measured rates, each pass the
longer of its bytes at the device copy rate and its positions and
atomics at theirs, each dispatch and submission, and, for pipelines never
compiled on this device and driver, their compilation; on the CPU
backend, the output's copy of data and the rows, elements or folds of
the call at its measured rates. auto_choice is where run --backend auto
runs the call: the lower estimate, and the device in place (--in-place).

The traffic is the passes' device bytes. It leaves out, for every
operator, the output's starting copy of data (data_copy_bytes): run
uploads data straight into the output, which is host traffic, and a call
in place on tensors resident on the device copies nothing.

A call that needs more device memory than the device has free (with
--facts: its largest device-local heap) is planned, and the plan says, on
a line "refused: ..." and in --json's refused, that run --backend gpu would
refuse it before any work, and why, in run's words; plan then exits 1, as
run does.

Exit status: 0 on success; 1 for invalid input, for a call the device
cannot run or has not the memory for, and without a Vulkan device and
without --facts, with one line on stderr; 2 for a malformed command line.
`,
	run: planMain,
}

// planFlags holds the parsed flags of the plan command: run's operator
// and input flags, and its own.
type planFlags struct {
	run     *runFlags
	model   stringArg
	facts   stringArg
	asJSON  bool
	inPlace bool
	// compiles is the compilation of the plan's pipelines not yet
	// compiled on the device (gpu.Backend.CompileWork; none with --facts).
	compiles gpu.CompileWork
}

func newPlanFlags() *planFlags {
	return &planFlags{run: newRunFlags(), model: newModelArg(), facts: stringArg{name: "facts", check: nonEmptyPath}}
}

// specs returns the flags of the plan command: run's but --out and
// --backend, then --json and --facts; --device and --deterministic set g.
func (f *planFlags) specs(g *gpuSettings) []flagSpec {
	var specs []flagSpec
	for _, s := range f.run.specs(&f.model, g) {
		if s.name != "out" && s.name != "backend" {
			specs = append(specs, s)
		}
	}
	js := jsonListSpec(&f.asJSON)
	js.usage = "print the plan as a JSON object, for tools"
	ip := switchSpec("in-place", &f.inPlace, "plan the call a runtime makes on tensors resident on the device, "+
		"with data as the output (a Run or Batch call), instead of run's call on host tensors")
	return append(specs, js, ip,
		f.facts.spec().with("FILE", "plan for the device FILE describes, one element of 'gpuscatter devices --json', "+
			"instead of this machine's Vulkan device", false))
}

// planMain is the plan command: parse, read the inputs' shapes, plan,
// print.
func planMain(ctx context.Context, c *cli, args []string) error {
	f := newPlanFlags()
	if err := parseFlags(args, f.specs(&c.gpu)); err != nil {
		return err
	}
	r := f.run
	if f.facts.given && c.gpu.device != "" {
		return usagef("--device and --facts are exclusive: --facts describes the device to plan for")
	}
	var req ops.Request
	if f.model.given {
		if err := r.modelExcludes(); err != nil {
			return err
		}
		load, err := modelRequest(ctx, r, f.model.value, (*tensorArg).loadShape)
		if err != nil {
			return err
		}
		if req, err = load(); err != nil {
			return err
		}
	} else if err := f.callShapes(&req); err != nil {
		return err
	}
	p, err := ops.PrepareShapes(req)
	if err != nil {
		return err
	}
	n, info, refused, err := f.plan(ctx, c, p)
	if err != nil {
		return err
	}
	if f.asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(newPlanJSON(p, info, c.gpu.deterministic, f.inPlace, n, refused, f.compiles))
	} else {
		_, err = fmt.Fprint(c.stdout, planText(p, info, c.gpu.deterministic, f.inPlace, n, refused, f.compiles))
	}
	if err == nil && refused != nil {
		// The plan is printed; the status is run's.
		return fmt.Errorf("run --backend gpu would refuse this call: %w", refused)
	}
	return err
}

// callShapes sets req to the call --op and the input flags describe,
// with data, indices and updates read from their files' headers alone.
func (f *planFlags) callShapes(req *ops.Request) error {
	r := f.run
	var op *ops.Op
	if r.op.given {
		var err error
		if op, err = lookupOp(r.op.value); err != nil {
			return err
		}
	}
	var missing []string
	for _, given := range []struct {
		name string
		ok   bool
	}{{"op", r.op.given}, {"data", r.data.given}, {"updates", r.updates.given}} {
		if !given.ok {
			missing = append(missing, "--"+given.name)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		return usagef("missing required flag %s", missing[0])
	default:
		return usagef("missing required flags %s", strings.Join(missing, ", "))
	}
	if err := r.missingFor(op); err != nil {
		return err
	}
	var err error
	*req, err = r.shapes(op)
	return err
}

// plan works out p's plan for the device --facts describes, or else for
// the Vulkan device --device selects, and returns it with the device's
// description, and, as refused, the error run would refuse it with
// before any work for lack of device memory (the backend's own rule,
// gpu.Backend.CheckFits), or nil.
func (f *planFlags) plan(ctx context.Context, c *cli, p *ops.Plan) (n gpu.PlanNeeds, info vk.DeviceInfo, refused, err error) {
	// As run opens the backend for its one call; in place, as a runtime
	// keeps it for many.
	opts := gpu.Options{Deterministic: c.gpu.deterministic, MaxPoolBytes: -1}
	if f.inPlace {
		opts.MaxPoolBytes = 0
	}
	if f.facts.given {
		b, err := os.ReadFile(f.facts.value)
		if err != nil {
			return n, info, nil, fileError("facts", f.facts.value, err)
		}
		info, err := vk.ParseDeviceInfo(b)
		if err != nil {
			return n, info, nil, fmt.Errorf("--facts %s: %w", f.facts.value, err)
		}
		planFor := gpu.PlanFor
		if f.inPlace {
			planFor = gpu.PlanInPlaceFor
		}
		n, err := planFor(info, opts, p)
		if err != nil {
			return n, info, nil, err
		}
		return n, info, gpu.CheckFitsFor(info, p, n), nil
	}
	b, err := openGPU(ctx, c.gpu, !f.inPlace)
	if errors.Is(err, ops.ErrNoDevice) && !isSelectorError(err) {
		return n, info, nil, fmt.Errorf("no Vulkan device to plan for (%w); give --facts FILE, "+
			"one element of 'gpuscatter devices --json' from the machine with the device", err)
	}
	if err != nil {
		return n, info, nil, err
	}
	defer b.Close()
	g, ok := b.(*gpu.Backend)
	if !ok {
		return n, info, nil, fmt.Errorf("backend %s does not plan its calls", b.Name())
	}
	needs := g.Needs
	if f.inPlace {
		needs = g.NeedsInPlace
	}
	if n, err = needs(p); err != nil {
		return n, info, nil, err
	}
	refused = g.CheckFits(p, n)
	f.compiles = g.CompileWork(n)
	info = gpubench.Of(g).Device().Info()
	if m, err := gpubench.Of(g).Figures(ctx, false); err == nil {
		info.Measured = &m
	} else if ctx.Err() != nil {
		return n, info, nil, ctx.Err()
	}
	return n, info, refused, g.Close()
}

// shapes returns op's call on f's inputs with data, indices and updates
// as tensors without payloads, read from their files' headers; the other
// inputs are read whole (they are small).
func (f *runFlags) shapes(op *ops.Op) (ops.Request, error) {
	req := ops.Request{Op: op.Name, Reduction: f.reduction.value, UseInitVal: f.useInitVal.value, Mode: f.mode.value,
		SkipBadIndices: f.skipBad}
	for _, in := range []struct {
		arg *tensorArg
		dst **tensor.Tensor
	}{{&f.data, &req.Data}, {&f.indices, &req.Indices}, {&f.updates, &req.Updates}} {
		t, err := in.arg.loadShape()
		if err != nil {
			return ops.Request{}, err
		}
		*in.dst = t
	}
	for _, in := range []struct {
		arg *tensorArg
		dst **tensor.Tensor
	}{{&f.axis, &req.Axis}, {&f.start, &req.Start}, {&f.stop, &req.Stop}, {&f.step, &req.Step}, {&f.axes, &req.Axes}} {
		t, err := in.arg.load()
		if err != nil {
			return ops.Request{}, err
		}
		*in.dst = t
	}
	return req, nil
}

// loadShape returns the flag's tensor without its payload: the dtype and
// shape of the .npy header (read alone: the payload may be missing), or
// of the .pb file read without its raw_data; nil when the flag was not
// given. A file error names the flag and the path.
func (a *tensorArg) loadShape() (*tensor.Tensor, error) {
	if !a.given {
		return nil, nil
	}
	if isPBPath(a.path) {
		h, err := onnx.ReadHeaderFile(a.path)
		if err != nil {
			return nil, fileError(a.name, a.path, err)
		}
		return &tensor.Tensor{DType: h.DType, Shape: h.Shape}, nil
	}
	h, err := npy.ReadHeaderFile(a.path)
	if err != nil {
		return nil, fileError(a.name, a.path, err)
	}
	return &tensor.Tensor{DType: h.DType, Shape: h.Shape}, nil
}

// planJSON is what plan --json prints.
type planJSON struct {
	Op string `json:"op"`
	// Reduction is the call's reduction as the operator spells it ("add"
	// for ONNX's sum), "none" for none.
	Reduction         string     `json:"reduction"`
	Device            string     `json:"device"`
	DeviceType        string     `json:"device_type"`
	Deterministic     bool       `json:"deterministic"`
	InPlace           bool       `json:"in_place"`
	Axis              *int       `json:"axis,omitempty"` // TensorScatter-24's, normalised
	Mode              string     `json:"mode,omitempty"` // TensorScatter-24's
	Path              string     `json:"path"`
	Passes            []passJSON `json:"passes"`
	Dispatches        int        `json:"dispatches"`
	TrafficBytes      uint64     `json:"traffic_bytes"`
	OnePassBytes      uint64     `json:"one_pass_bytes"`
	DeviceMemoryBytes uint64     `json:"device_memory_bytes"`
	HostBytes         uint64     `json:"host_bytes"`
	DataCopyBytes     uint64     `json:"data_copy_bytes"`
	// FirstClearBytes is the owner words cleared on their first use only
	// (gpu.PlanNeeds.FirstClearBytes), not in the traffic.
	FirstClearBytes uint64       `json:"first_clear_bytes,omitempty"`
	Tensors         []tensorJSON `json:"tensors"`
	Plan            string       `json:"plan"`
	// Refused is why run would refuse the call before any work (more
	// device memory than the device has free); absent when it would not.
	Refused string `json:"refused,omitempty"`
	// The estimates (planEstimates); absent without the device's
	// figures.
	EstimateMS    *float64       `json:"estimate_ms,omitempty"`
	Estimate      *cost.Estimate `json:"estimate,omitempty"`
	CPUEstimateMS *float64       `json:"cpu_estimate_ms,omitempty"`
	CPUEstimate   *cost.Estimate `json:"cpu_estimate,omitempty"`
	AutoChoice    string         `json:"auto_choice,omitempty"`
	// Figures are the device's figures the estimates are made from
	// ('gpuscatter devices'; with --facts, the file's measured).
	Figures *cost.Device `json:"figures,omitempty"`
}

// planEstimates returns the estimates of the call planned as n, whose
// first run compiles what compiles says, from the device's figures
// (info.Measured; unknown without them): on the device,
// on the CPU backend as a host call (unknown without the CPU's figures),
// and where --backend auto runs it: "cpu" or "gpu" by the lower estimate,
// and "gpu" in place, where the tensors stay on the device.
func planEstimates(p *ops.Plan, info vk.DeviceInfo, inPlace bool, n gpu.PlanNeeds, compiles gpu.CompileWork) (dev, cpu cost.Estimate, choice string) {
	m := info.Measured
	if m == nil {
		return dev, cpu, ""
	}
	w := n.Work()
	w.Compiles, w.CompileKeptMs = compiles.Pipelines, compiles.KeptMs
	dev, cpu = gpubench.Estimates(m, w, p, 1, inPlace)
	if inPlace {
		_, cpu = gpubench.Estimates(m, w, p, 1, false)
	}
	if choice = "gpu"; !inPlace {
		choice = gpubench.Choice(dev, cpu)
	}
	return dev, cpu, choice
}

type passJSON struct {
	Name         string `json:"name"`
	Dispatches   int    `json:"dispatches"`
	Invocations  uint64 `json:"invocations"`
	ReadBytes    uint64 `json:"read_bytes"`
	WrittenBytes uint64 `json:"written_bytes"`
}

type tensorJSON struct {
	Name  string `json:"name"`
	Bytes uint64 `json:"bytes"`
}

func newPlanJSON(p *ops.Plan, info vk.DeviceInfo, deterministic, inPlace bool, n gpu.PlanNeeds, refused error, compiles gpu.CompileWork) planJSON {
	j := planJSON{Op: p.Op.Name, Reduction: p.ReductionName(), Device: info.Name, DeviceType: string(info.Type), Deterministic: deterministic, InPlace: inPlace,
		Path: n.Path, Passes: []passJSON{}, Dispatches: n.Dispatches, TrafficBytes: n.TrafficBytes, OnePassBytes: n.OnePassBytes,
		DeviceMemoryBytes: n.DeviceBytes, HostBytes: n.HostBytes, DataCopyBytes: n.DataCopyBytes, FirstClearBytes: n.FirstClearBytes, Tensors: []tensorJSON{}, Plan: n.Plan}
	if p.Op.TakesMode() {
		j.Axis, j.Mode = &p.Axis, cacheMode(p)
	}
	if refused != nil {
		j.Refused = refused.Error()
	}
	j.Figures = info.Measured
	if dev, cpu, choice := planEstimates(p, info, inPlace, n, compiles); dev.Known() {
		j.EstimateMS, j.Estimate, j.AutoChoice = &dev.Ms, &dev, choice
		if cpu.Known() {
			j.CPUEstimateMS, j.CPUEstimate = &cpu.Ms, &cpu
		}
	}
	for _, ps := range n.Passes {
		j.Passes = append(j.Passes, passJSON{ps.Name, ps.Dispatches, ps.Invocations, ps.Read, ps.Written})
	}
	for _, t := range n.Tensors {
		j.Tensors = append(j.Tensors, tensorJSON{t.Name, t.Bytes})
	}
	return j
}

// planText is what plan prints without --json.
func planText(p *ops.Plan, info vk.DeviceInfo, deterministic, inPlace bool, n gpu.PlanNeeds, refused error, compiles gpu.CompileWork) string {
	var b strings.Builder
	mode := ""
	if deterministic {
		mode = ", deterministic"
	}
	if inPlace {
		mode += ", in place on resident tensors"
	}
	red := ""
	if p.Reduction != ops.None {
		red = " reduction " + p.ReductionName()
	}
	if p.Op.TakesMode() {
		red += fmt.Sprintf(" axis %d mode %s", p.Axis, cacheMode(p))
	}
	fmt.Fprintf(&b, "%s %v%s%s on %q (%s%s): path %s\n", p.Op.Name, p.DType, tensor.FormatShape(p.Shape), red, info.Name, info.Type, mode, n.Path)
	if len(n.Passes) > 0 {
		fmt.Fprintf(&b, "  %3s %-13s %10s %12s %14s %14s\n", "#", "pass", "dispatches", "invocations", "read bytes", "written bytes")
		for i, ps := range n.Passes {
			fmt.Fprintf(&b, "  %3d %-13s %10d %12d %14d %14d\n", i+1, ps.Name, ps.Dispatches, ps.Invocations, ps.Read, ps.Written)
		}
	}
	fmt.Fprintf(&b, "passes: %d, dispatches: %d\n", len(n.Passes), n.Dispatches)
	fmt.Fprintf(&b, "traffic: %d bytes read and written; one pass: %d bytes", n.TrafficBytes, n.OnePassBytes)
	if n.OnePassBytes > 0 {
		fmt.Fprintf(&b, "; %.2fx that", float64(n.TrafficBytes)/float64(n.OnePassBytes))
	}
	b.WriteString("\n")
	if n.DataCopyBytes > 0 {
		fmt.Fprintf(&b, "  not in the traffic: data's %d bytes, uploaded into the output before the passes run (on resident tensors in place, no copy)\n",
			n.DataCopyBytes)
	}
	if n.FirstClearBytes > 0 {
		fmt.Fprintf(&b, "  not in the traffic: the owner words' %d bytes, cleared on their first use only (every call leaves them clear)\n",
			n.FirstClearBytes)
	}
	fmt.Fprintf(&b, "device memory: %d bytes", n.DeviceBytes)
	if n.DeviceBytes >= 1<<20 {
		fmt.Fprintf(&b, " (%s)", mib(n.DeviceBytes))
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "host transfers: %d bytes\n", n.HostBytes)
	if dev, cpu, choice := planEstimates(p, info, inPlace, n, compiles); dev.Known() {
		fmt.Fprintf(&b, "estimate: %s on the device\n", dev)
		if cpu.Known() {
			fmt.Fprintf(&b, "cpu estimate: %s\n", cpu)
		}
		if inPlace {
			b.WriteString("--backend auto: in place, the tensors stay on the device\n")
		} else {
			fmt.Fprintf(&b, "--backend auto: runs it on the %s\n", choice)
		}
	} else {
		b.WriteString("estimate: none (no measured figures for the device)\n")
	}
	if refused != nil {
		fmt.Fprintf(&b, "refused: run --backend gpu would refuse this call before any work (--backend auto runs it on the CPU): %v\n", refused)
	}
	fmt.Fprintf(&b, "as recorded:\n  %s\n", strings.ReplaceAll(n.Plan, "\n", "\n  "))
	return b.String()
}

// cacheMode returns the mode of a TensorScatter-24 plan.
func cacheMode(p *ops.Plan) string {
	if p.Circular {
		return ops.ModeCircular
	}
	return ops.ModeLinear
}
