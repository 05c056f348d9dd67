package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Phase is one part of an execution as a device measured it: an upload, the
// index validation, the scatter, a download.
type Phase struct {
	Name     string
	Duration time.Duration
}

// DeviceTimer is implemented by backends that time their executions on the
// device. After each timed Execute, Run calls LastDeviceTimings and reports
// the sum of the phases as the device time and each phase's median.
type DeviceTimer interface {
	// LastDeviceTimings returns the phases of the last Execute call in the
	// order they ran; nil when the call was not timed.
	LastDeviceTimings() []Phase
}

// DeviceCopier is implemented by device backends that can time a copy of
// device memory to device memory with timestamps (the Vulkan backend's
// CopyTime). Run measures, next to each workload's device time, a device
// copy of half the workload's traffic (so the copy reads and writes as many
// bytes as the scatter counts), the yardstick for copy-bound scatters.
type DeviceCopier interface {
	CopyTime(ctx context.Context, size uint64, repeats int) (time.Duration, error)
}

// ResidentRunner is implemented by device backends that can keep a call's
// inputs in device memory (the Vulkan backend's resident tensors). Run
// times, next to each workload's end-to-end Execute, the same call on
// inputs already on the device, the way a runtime that keeps its tensors
// there runs it: no host transfer. RunResident uploads req's inputs once,
// runs one untimed call and then repeats timed ones, and downloads the
// last output into out; it returns the wall time of each timed call. The
// Vulkan backend's runs in place (the output is data's tensor, restored
// before each call, untimed), so no copy of data is timed either.
type ResidentRunner interface {
	RunResident(ctx context.Context, req ops.Request, repeats int, out *tensor.Tensor) ([]time.Duration, error)
}

// BatchRunner is implemented by device backends that can run many calls
// on resident inputs as one batch (the Vulkan backend's Batch). For a
// workload of several calls (Workload.Calls), Run times them with
// RunResidentBatch instead of RunResident: like RunResident, but each
// timed run is one batch of calls calls of req in place.
// LastRoundTrips returns the host round trips of the last batch: queue
// submissions, waits for a submission, and host transfer pieces.
type BatchRunner interface {
	RunResidentBatch(ctx context.Context, req ops.Request, calls, repeats int, out *tensor.Tensor) ([]time.Duration, error)
	LastRoundTrips() (submits, waits, transferPieces int)
}

// StepRunner is implemented by device backends that can run a decode loop
// (Workload.Decode) on resident inputs as one batch (the Vulkan
// backend's). Run times a Decode workload on such a backend with
// RunResidentSteps alone: like RunResidentBatch, but call i of each batch
// takes steps[i] as its indices, in place, so that the cache carries every
// step to the next; an Execute per step would move the whole cache to the
// device and back each time. LastRoundTrips is BatchRunner's.
type StepRunner interface {
	RunResidentSteps(ctx context.Context, req ops.Request, steps []*tensor.Tensor, repeats int, out *tensor.Tensor) ([]time.Duration, error)
	LastRoundTrips() (submits, waits, transferPieces int)
}

// TrafficPlanner is implemented by device backends that work out from a
// plan alone, before running it, the passes they run and their compute
// dispatches, the device bytes those read and write in all, and the
// device memory they take (internal/gpubench's PlanTraffic). Run reports them next to the one-pass
// bytes (Workload.Traffic), so the cost of each pass on a device shows
// before the device runs it, with the plan's description (its passes,
// kernels and arguments).
type TrafficPlanner interface {
	PlanTraffic(p *ops.Plan) (passes, dispatches int, traffic, memory uint64, plan string, err error)
}

// AtomicCounter is implemented by device backends that can count the
// global atomics of a call on the device (internal/gpubench's
// CountAtomics): CountAtomics executes p into out once, untimed, and
// returns the atomics it issued and the most on one output element. With
// Options.CountAtomics, Run reports them and verifies that output too.
type AtomicCounter interface {
	CountAtomics(ctx context.Context, p *ops.Plan, out *tensor.Tensor) (issued, maxAddress uint64, err error)
}

// ResidentPlanner is implemented by device backends that also plan the
// call a runtime makes on tensors resident on the device, in place
// (internal/gpubench's PlanResidentTraffic): its compute dispatches and
// the device bytes its passes read and write. Run reports them beside
// the Execute plan's.
type ResidentPlanner interface {
	PlanResidentTraffic(p *ops.Plan) (dispatches int, traffic uint64, err error)
}

// Estimator is implemented by device backends that estimate a call's
// time before running it, from figures measured on the machine
// (internal/gpubench's Estimate): calls calls of p on the device and on
// the CPU backend, as host calls or, with resident, in place (on the
// device as one batch on resident tensors), and which backend --backend
// auto runs the host calls on ("cpu" or "gpu"). Run reports the
// estimates beside the measurements.
type Estimator interface {
	Estimate(ctx context.Context, p *ops.Plan, calls int, resident bool) (device, cpu time.Duration, autoChoice string, err error)
	// DeviceFigures returns the figures the estimates are made from,
	// which the report records (Report.Figures).
	DeviceFigures(ctx context.Context) (*cost.Device, error)
}

// PhaseEstimator is implemented by device backends that also estimate
// each pass of the host calls from the figures m (Estimator's
// DeviceFigures; internal/gpubench's EstimatePhases): the device time of
// each pass label of calls calls of p, summed over them, what a
// DeviceTimer's phases measure. Run reports them beside the measured
// phases (Result.PhaseEstimates), so that an estimate off the measured
// time shows which pass it misjudges.
type PhaseEstimator interface {
	EstimatePhases(m *cost.Device, p *ops.Plan, calls int) ([]Phase, error)
}

// Target is a backend to benchmark, under a short label such as "cpu" or
// "gpu".
type Target struct {
	Label   string
	Backend ops.Backend
}

// Options tune Run. The zero value gives the defaults.
type Options struct {
	// Repeats is the number of timed executions per workload and backend;
	// 0 means 5.
	Repeats int
	// Warmups is the number of untimed executions before them; 0 means 1,
	// negative means none (the reference still runs once, untimed, to give
	// the output every other run is checked against).
	Warmups int
	// Tolerance bounds how far a result of another backend may be from
	// the reference for float sum, sub, prod and mean reductions, whose
	// order of operations a parallel device may change: |got - want| <=
	// Tolerance * m, where m is the same reduction computed over the
	// magnitudes of its terms in float64 (the sum of |data| and |updates|
	// landing on the element for sum and sub, their mean for mean, their
	// product for prod). float16 and bfloat16 get at least 8 of their
	// machine epsilons. 0 means DefaultTolerance (1e-5); negative means
	// bit for bit. Every other result must equal the reference bit for bit,
	// except that any NaN equals any NaN.
	Tolerance float64
	// Deterministic says the backends run in deterministic mode, where
	// float reductions must equal the reference bit for bit too.
	Deterministic bool
	// MemoryBudget is the memory, in bytes, that a workload may need; a
	// workload that needs more is skipped with a note in its rows. 0 means
	// what AvailableMemory reports before each workload (no check where it
	// reports nothing); negative means no check.
	MemoryBudget int64
	// MemcpyMinBytes is the smallest buffer of the memory-copy reference;
	// 0 means DefaultMemcpyBytes. The buffer is the size of the workload's
	// data when that is larger.
	MemcpyMinBytes int64
	// Progress, when not nil, is called as the run goes from one stage to
	// the next. It is called from Run's goroutine.
	Progress func(Progress)
	// CountAtomics runs each workload once more on every AtomicCounter,
	// untimed, with its global atomics counted, and reports them
	// (Result.AtomicsIssued, AtomicsMaxAddress).
	CountAtomics bool
	// Measured, when not nil, is called with each result as soon as it is
	// complete: a workload on one backend, timed and verified (or skipped,
	// or failed). It is called from Run's goroutine.
	Measured func(Result)
}

// Progress says where a run is.
type Progress struct {
	Workload string
	// Index counts the workloads from 1 to Count.
	Index, Count int
	// Backend is the label of the target running, "" outside one.
	Backend string
	// Stage is "inputs", "memcpy", "warm-up", "timing" or "verifying".
	Stage string
	// Repeat counts the timed executions from 1 to Repeats in the timing
	// stage.
	Repeat, Repeats int
}

// Result is the outcome of one workload on one backend.
type Result struct {
	Workload    string
	Description string // the operator call with its shapes
	// Backend is the target's label; Device is the backend's Name.
	Backend, Device string
	// Skipped says why the workload did not run on this backend: too
	// little memory (host, or the device's), or a plan the backend does
	// not support. Skipped results are neither verified nor failed.
	Skipped string
	// Error is the error the backend returned; the result then counts as
	// failed.
	Error string
	// Times holds the wall time of every timed Execute call; Median, Min
	// and Max summarise them.
	Times            []time.Duration
	Median, Min, Max time.Duration
	// DeviceTime is the median over the timed calls of the sum of their
	// device phases; Phases holds the median of each phase (for a workload
	// of several calls, each phase summed over them). Both are zero when
	// the backend is not a DeviceTimer.
	DeviceTime time.Duration
	Phases     []Phase
	// DeviceCopyTime is the median device time of a device-to-device copy
	// of Bytes/2 bytes measured in the same run (0 when the backend is not
	// a DeviceCopier, and for a workload of several calls, whose cost is
	// per call); DeviceOverCopy is DeviceTime over it.
	DeviceCopyTime time.Duration
	DeviceOverCopy float64
	// ResidentTime is the median wall time of the call on inputs already
	// in device memory (0 when the backend is not a ResidentRunner); its
	// output is verified like the others.
	ResidentTime time.Duration
	// ResidentBytes is the traffic of the resident call
	// (Workload.ResidentTraffic), set with ResidentTime.
	ResidentBytes int64
	// Calls is the number of operator calls of one execution
	// (Workload.Calls); the times are those of all of them.
	Calls int
	// Submits, Waits and TransferPieces are the host round trips of the
	// last resident batch (BatchRunner; 0 for other backends and for
	// workloads of one call).
	Submits, Waits, TransferPieces int
	// PlanPasses, PlanDispatches, PlanBytes and PlanMemory are what the
	// backend works out before running (TrafficPlanner; 0 for other
	// backends): the passes, their compute dispatches, the device bytes
	// they read and write in all, and the device memory the call takes.
	// Planned reports that the backend worked them out.
	Planned                    bool
	PlanPasses, PlanDispatches int
	PlanBytes, PlanMemory      int64
	// Plan is the backend's description of the call (TrafficPlanner).
	Plan string
	// OnePassBytes is the least traffic of one execution on the device
	// (ops.Plan.OnePassBytes per call, as gpuscatter plan counts it),
	// which the plan's traffic is measured against. Bytes, the host call's
	// floor, also counts data's copy into the output.
	OnePassBytes int64
	// ResidentPlanned reports that the backend planned the call in place
	// on resident tensors (ResidentPlanner): ResidentDispatches compute
	// dispatches moving ResidentPlanBytes device bytes.
	ResidentPlanned    bool
	ResidentDispatches int
	ResidentPlanBytes  int64
	// Estimated reports that the backend estimated the execution
	// (Estimator): Estimate on the device and CPUEstimate on the CPU
	// backend, as the rows measure them (a Decode workload in place, else
	// host calls), and AutoChoice, "cpu" or "gpu", where --backend auto
	// runs the host calls: the lower of their estimates.
	Estimated             bool
	Estimate, CPUEstimate time.Duration
	AutoChoice            string
	// ResidentEstimate is the device's estimate of the resident call
	// (ResidentTime: the call, or the batch of the workload's calls, in
	// place on resident tensors), set with ResidentTime on a backend that
	// estimates; 0 where it has none.
	ResidentEstimate time.Duration
	// PhaseEstimates is the device's estimate of each pass of the host
	// calls, by label as Phases (PhaseEstimator); nil where it has none.
	PhaseEstimates []Phase
	// HottestUpdates is the most updates that meet one output element in
	// one call, where each index names one target (hottestUpdates); 0
	// elsewhere.
	HottestUpdates int64
	// Counted reports that the atomics were counted (Options.CountAtomics,
	// AtomicCounter): the call issued AtomicsIssued global atomics, at
	// most AtomicsMaxAddress on one output element (0 and 0 for a call
	// with no atomic reduction), in one execution of one call.
	Counted                          bool
	AtomicsIssued, AtomicsMaxAddress uint64
	// Bytes is the traffic of one execution (Workload.Traffic); GBps is
	// Bytes over Median.
	Bytes int64
	GBps  float64
	// MemcpyGBps is the bandwidth of a parallel memory copy measured in the
	// same run; FractionOfMemcpy is GBps over it.
	MemcpyGBps, FractionOfMemcpy float64
	// Speedup is the reference's Median over this one's; 0 for the
	// reference itself.
	Speedup float64
	// Verified: every timed output matched the reference's output (for the
	// reference, its own untimed first output). Comparison holds the
	// worst of the timed outputs (the most mismatches, the most elements
	// the tolerance accepted, the largest difference); Tolerance is the
	// relative bound that the comparison allowed, 0 when it was bit for
	// bit. A verified result with Comparison.Tolerated 0 matched bit for
	// bit whatever Tolerance allowed (BitForBit).
	Verified   bool
	Comparison Comparison
	Tolerance  float64
}

// BitForBit reports whether r was verified and every output it checked
// equals the reference's bit for bit (any NaN equal to any NaN), with no
// element needing the tolerance.
func (r *Result) BitForBit() bool { return r.Verified && r.Comparison.Tolerated == 0 }

// Failed reports whether r ran and either failed or did not match the
// reference.
func (r *Result) Failed() bool { return r.Skipped == "" && !r.Verified }

// Report is the outcome of Run.
type Report struct {
	Results []Result
	// Repeats and Warmups are the counts that applied.
	Repeats, Warmups int
	// Tolerance is the relative bound of float reductions (0: bit for bit).
	Tolerance float64
	// CPU names the host's processor; Threads is GOMAXPROCS.
	CPU     string
	Threads int
	// MemcpyBytes is the smallest memory-copy buffer.
	MemcpyBytes int64
	Started     time.Time
	Elapsed     time.Duration
	// Command, Scale and Seed describe how the workloads were chosen;
	// Run leaves them empty for the caller to fill in, and WriteJSON
	// records them.
	Command string
	Scale   float64
	Seed    uint64
	// Interrupted: ctx was done before every workload ran on every
	// backend; Results holds those that completed.
	Interrupted bool
	// Figures holds, by target label, the device figures of the targets
	// that estimate (Estimator).
	Figures map[string]*cost.Device
}

// Failures returns the results that failed or did not match.
func (r *Report) Failures() []Result {
	var out []Result
	for _, x := range r.Results {
		if x.Failed() {
			out = append(out, x)
		}
	}
	return out
}

// RunError is the error Run returns when the reference backend fails on a
// workload: there is then nothing to compare with.
type RunError struct {
	Workload, Backend string
	Err               error
}

// Error returns "WORKLOAD on BACKEND: ERR".
func (e *RunError) Error() string { return e.Workload + " on " + e.Backend + ": " + e.Err.Error() }

// Unwrap returns the backend's error.
func (e *RunError) Unwrap() error { return e.Err }

// Run benchmarks every workload on every target, in order. targets[0] is
// the reference (the CPU backend): it always runs, its output is what every
// other target is checked against, and its time is the baseline of their
// speedup.
//
// For each workload Run builds the inputs once and validates them, then on
// each target runs Warmups untimed executions and Repeats timed ones into
// one output tensor allocated once (so that no timed call pays for fresh
// pages), timing Execute alone. Before each timed call the output is set to
// the inverse of the reference's bits, so an element that is not written
// fails the check that follows every call. A workload that needs more
// memory than the budget is skipped; a target whose backend reports
// ops.ErrUnsupported is skipped on that workload; a target that fails
// otherwise gets the error in its result. Run returns an error only when
// ctx is done, the arguments are unusable or the reference fails (a
// *RunError; for inputs given by the caller, an invalid index, say). When
// ctx is done it returns ctx.Err() together with the report of what was
// measured by then (Interrupted set): every workload on every backend that
// completed, so that an interrupted run still keeps its figures.
func Run(ctx context.Context, targets []Target, workloads []*Workload, opt Options) (*Report, error) {
	if len(targets) == 0 {
		return nil, errors.New("bench: no backend to run")
	}
	if opt.Repeats == 0 {
		opt.Repeats = 5
	}
	if opt.Repeats < 0 {
		return nil, fmt.Errorf("bench: %d repeats", opt.Repeats)
	}
	switch {
	case opt.Warmups == 0:
		opt.Warmups = 1
	case opt.Warmups < 0:
		opt.Warmups = 0
	}
	if opt.Tolerance == 0 {
		opt.Tolerance = DefaultTolerance
	}
	if opt.Tolerance < 0 || opt.Deterministic {
		opt.Tolerance = 0
	}
	if opt.MemcpyMinBytes <= 0 {
		opt.MemcpyMinBytes = DefaultMemcpyBytes
	}
	r := &runner{ctx: ctx, targets: targets, opt: opt}
	rep := &Report{
		Repeats: opt.Repeats, Warmups: opt.Warmups, Tolerance: opt.Tolerance,
		CPU: cpuModel(), Threads: runtime.GOMAXPROCS(0), MemcpyBytes: opt.MemcpyMinBytes,
		Started: time.Now(),
	}
	for _, t := range targets {
		if es, ok := t.Backend.(Estimator); ok {
			if f, err := es.DeviceFigures(ctx); err == nil {
				if rep.Figures == nil {
					rep.Figures = map[string]*cost.Device{}
				}
				rep.Figures[t.Label] = f
			}
		}
	}
	r.figures = rep.Figures
	for i, w := range workloads {
		r.w, r.index, r.count = w, i+1, len(workloads)
		res, err := r.workload()
		if err != nil && ctx.Err() != nil {
			rep.Results = append(rep.Results, r.done...)
			rep.Elapsed, rep.Interrupted = time.Since(rep.Started), true
			return rep, ctx.Err()
		}
		if err != nil {
			return nil, err
		}
		rep.Results = append(rep.Results, res...)
	}
	rep.Elapsed = time.Since(rep.Started)
	return rep, nil
}

// runner is one Run call.
type runner struct {
	// figures holds the Estimators' figures by target label.
	figures map[string]*cost.Device
	ctx     context.Context
	targets []Target
	opt     Options
	mc      memcpy

	// steps are the indices of each call of a Decode workload, and
	// stepPlans its plans, by the cache they run in place on.
	steps     []*tensor.Tensor
	stepPlans map[*tensor.Tensor][]*ops.Plan
	// The workload running, and its results so far.
	w            *Workload
	index, count int
	done         []Result
}

func (r *runner) progress(backend, stage string, repeat int) {
	if r.opt.Progress != nil {
		r.opt.Progress(Progress{Workload: r.w.Name, Index: r.index, Count: r.count,
			Backend: backend, Stage: stage, Repeat: repeat, Repeats: r.opt.Repeats})
	}
}

// skipAll returns one skipped result per target.
func (r *runner) skipAll(why string) []Result {
	out := make([]Result, len(r.targets))
	for i, t := range r.targets {
		out[i] = r.result(t)
		out[i].Skipped = why
	}
	return out
}

func (r *runner) result(t Target) Result {
	return Result{Workload: r.w.Name, Description: r.w.Describe(), Backend: t.Label, Device: t.Backend.Name(), Bytes: r.w.Traffic(),
		OnePassBytes: r.w.ResidentTraffic(), Calls: r.w.calls()}
}

// tolerant reports whether another backend's result may differ from the
// reference's in rounding.
func (r *runner) tolerant() bool {
	return r.opt.Tolerance != 0 && r.w.red.OrderSensitive(r.w.DType)
}

// workload runs r.w on every target.
func (r *runner) workload() ([]Result, error) {
	r.done = nil
	w := r.w
	memSize := max(w.DataBytes, r.opt.MemcpyMinBytes)
	if why := r.memoryCheck(memSize); why != "" {
		res := r.skipAll(why)
		for _, x := range res {
			r.measured(x)
		}
		return res, nil
	}
	r.progress("", "inputs", 0)
	req, err := w.Request()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.Name, err)
	}
	p, err := ops.Prepare(req)
	if err != nil {
		return nil, &RunError{Workload: w.Name, Backend: r.targets[0].Label, Err: err}
	}
	ref, err := tensor.New(p.DType, p.Shape)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.Name, err)
	}
	out, err := tensor.New(p.DType, p.Shape)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.Name, err)
	}
	r.steps, r.stepPlans = nil, map[*tensor.Tensor][]*ops.Plan{}
	if w.Decode {
		r.steps = w.StepIndices(req)
	}
	runtime.GC()

	r.progress("", "memcpy", 0)
	mgbps, err := r.mc.measure(r.ctx, memSize, max(5, r.opt.Repeats))
	if err != nil {
		return nil, err
	}

	hottest := hottestUpdates(p)
	results := make([]Result, len(r.targets))
	var bound []float64
	for ti, t := range r.targets {
		res := r.result(t)
		res.MemcpyGBps, res.HottestUpdates = mgbps, hottest
		if tp, ok := t.Backend.(TrafficPlanner); ok {
			if n, dispatches, traffic, memory, plan, err := tp.PlanTraffic(p); err == nil {
				res.Planned, res.PlanPasses, res.PlanDispatches = true, n, dispatches
				res.PlanBytes, res.PlanMemory, res.Plan = int64(traffic), int64(memory), plan
			}
		}
		if rp, ok := t.Backend.(ResidentPlanner); ok {
			if dispatches, traffic, err := rp.PlanResidentTraffic(p); err == nil {
				res.ResidentPlanned, res.ResidentDispatches, res.ResidentPlanBytes = true, dispatches, int64(traffic)
			}
		}
		if es, ok := t.Backend.(Estimator); ok {
			calls := r.w.calls()
			if dev, cpu, choice, err := es.Estimate(r.ctx, p, calls, w.Decode); err == nil {
				res.Estimated, res.Estimate, res.CPUEstimate, res.AutoChoice = true, dev, cpu, choice
			}
		}
		if pe, ok := t.Backend.(PhaseEstimator); ok && !w.Decode && r.figures[t.Label] != nil {
			if ph, err := pe.EstimatePhases(r.figures[t.Label], p, r.w.calls()); err == nil {
				res.PhaseEstimates = ph
			}
		}
		if ti > 0 && r.tolerant() {
			res.Tolerance = effectiveTolerance(p.DType, r.opt.Tolerance)
		}
		if sr, ok := t.Backend.(StepRunner); ok && w.Decode && ti > 0 {
			if err := r.decodeResident(sr, t, req, ref, out, &res); err != nil {
				return nil, err
			}
			if res.Median > 0 && results[0].Median > 0 {
				res.Speedup = results[0].Median.Seconds() / res.Median.Seconds()
			}
			results[ti] = res
			r.measured(res)
			continue
		}
		times, phases, cmp, err := r.time(t, ti == 0, p, ref, out, func() ([]float64, error) {
			if bound == nil {
				r.progress(t.Label, "verifying", 0)
				b, err := bounds(r.ctx, req, res.Tolerance)
				if err != nil {
					return nil, err
				}
				bound = b
			}
			return bound, nil
		})
		switch {
		case err != nil && r.ctx.Err() != nil:
			return nil, r.ctx.Err()
		case err != nil && ti == 0:
			return nil, &RunError{Workload: w.Name, Backend: t.Label, Err: err}
		case errors.Is(err, ops.ErrUnsupported):
			res.Skipped = "unsupported: " + oneLine(err.Error())
		case errors.Is(err, ops.ErrOutOfMemory):
			res.Skipped = "too little device memory: " + oneLine(err.Error())
		case err != nil:
			res.Error = oneLine(err.Error())
		default:
			res.summarise(times, phases, cmp)
			// A copy of the traffic of many small calls is no yardstick for
			// them: their cost is per call.
			if c, ok := t.Backend.(DeviceCopier); ok && res.DeviceTime > 0 && w.calls() == 1 {
				d, err := c.CopyTime(r.ctx, uint64(res.Bytes/2), r.opt.Repeats)
				if err != nil && r.ctx.Err() != nil {
					return nil, r.ctx.Err()
				}
				if err == nil && d > 0 {
					res.DeviceCopyTime = d
					res.DeviceOverCopy = res.DeviceTime.Seconds() / d.Seconds()
				}
			}
			if rr, ok := t.Backend.(ResidentRunner); ok && ti > 0 {
				if err := r.resident(rr, t, req, p, ref, out, &res); err != nil {
					return nil, err
				}
			}
			if ac, ok := t.Backend.(AtomicCounter); ok && r.opt.CountAtomics && ti > 0 {
				if err := r.countAtomics(ac, t, req, p, ref, out, &res); err != nil {
					return nil, err
				}
			}
			if ti > 0 && res.Median > 0 && results[0].Median > 0 {
				res.Speedup = results[0].Median.Seconds() / res.Median.Seconds()
			}
		}
		results[ti] = res
		r.measured(res)
	}
	return results, nil
}

// measured records res as complete and reports it to Options.Measured.
func (r *runner) measured(res Result) {
	r.done = append(r.done, res)
	if r.opt.Measured != nil {
		r.opt.Measured(res)
	}
}

// resident times req on inputs resident on t's device and verifies the
// output; it returns an error only when ctx is done.
func (r *runner) resident(rr ResidentRunner, t Target, req ops.Request, p *ops.Plan, ref, out *tensor.Tensor, res *Result) error {
	r.progress(t.Label, "resident", 0)
	poison(out, ref)
	var times []time.Duration
	var err error
	br, batched := rr.(BatchRunner)
	switch {
	case r.w.Decode:
		return nil // its steps run as one batch only through a StepRunner
	case r.w.calls() > 1 && !batched:
		return nil // its calls would be timed one at a time
	case r.w.calls() > 1:
		times, err = br.RunResidentBatch(r.ctx, req, r.w.calls(), r.opt.Repeats, out)
	default:
		times, err = rr.RunResident(r.ctx, req, r.opt.Repeats, out)
	}
	switch {
	case err != nil && r.ctx.Err() != nil:
		return r.ctx.Err()
	case errors.Is(err, ops.ErrUnsupported):
		return nil // e.g. strings, which cannot be resident
	case err != nil:
		res.Error = "resident inputs: " + oneLine(err.Error())
		res.Verified = false
		return nil
	}
	res.ResidentTime = median(times)
	res.ResidentBytes = r.w.ResidentTraffic()
	if es, ok := t.Backend.(Estimator); ok {
		if dev, _, _, err := es.Estimate(r.ctx, p, r.w.calls(), true); err == nil {
			res.ResidentEstimate = dev
		}
	}
	if batched && r.w.calls() > 1 {
		res.Submits, res.Waits, res.TransferPieces = br.LastRoundTrips()
	}
	return r.verifyAlso(req, ref, out, res)
}

// countAtomics runs p once more on t with its global atomics counted and
// verifies the output; it returns an error only when ctx is done.
func (r *runner) countAtomics(ac AtomicCounter, t Target, req ops.Request, p *ops.Plan, ref, out *tensor.Tensor, res *Result) error {
	if r.w.calls() > 1 || r.w.Decode {
		return nil // the counts are those of one call of a workload of one
	}
	r.progress(t.Label, "counting atomics", 0)
	poison(out, ref)
	issued, most, err := ac.CountAtomics(r.ctx, p, out)
	switch {
	case err != nil && r.ctx.Err() != nil:
		return r.ctx.Err()
	case err != nil:
		res.Error = "counting atomics: " + oneLine(err.Error())
		res.Verified = false
		return nil
	}
	res.Counted, res.AtomicsIssued, res.AtomicsMaxAddress = true, issued, most
	return r.verifyAlso(req, ref, out, res)
}

// verifyAlso checks out, an untimed output of res's backend, against ref:
// a mismatch makes res unverified, with the worst comparison recorded.
// It returns an error only when ctx is done.
func (r *runner) verifyAlso(req ops.Request, ref, out *tensor.Tensor, res *Result) error {
	c, err := r.check(false, ref, out, func() ([]float64, error) { return bounds(r.ctx, req, res.Tolerance) })
	if err != nil {
		return err
	}
	if c.Mismatches > 0 {
		res.Comparison.worst(c)
		res.Verified = false
	}
	return nil
}

// decodeResident times a Decode workload as one resident batch of its
// steps on t's device (StepRunner) and verifies the cache it leaves; the
// batch is the row's timing, its resident time too. It returns an error
// only when ctx is done.
func (r *runner) decodeResident(sr StepRunner, t Target, req ops.Request, ref, out *tensor.Tensor, res *Result) error {
	r.progress(t.Label, "resident", 0)
	poison(out, ref)
	times, err := sr.RunResidentSteps(r.ctx, req, r.steps, r.opt.Repeats, out)
	switch {
	case err != nil && r.ctx.Err() != nil:
		return r.ctx.Err()
	case errors.Is(err, ops.ErrUnsupported):
		res.Skipped = "unsupported: " + oneLine(err.Error())
		return nil
	case errors.Is(err, ops.ErrOutOfMemory):
		res.Skipped = "too little device memory: " + oneLine(err.Error())
		return nil
	case err != nil:
		res.Error = oneLine(err.Error())
		return nil
	}
	c, err := r.check(false, ref, out, func() ([]float64, error) { return bounds(r.ctx, req, res.Tolerance) })
	if err != nil {
		return err
	}
	res.summarise(times, nil, c)
	res.ResidentTime = res.Median
	res.ResidentBytes = r.w.ResidentTraffic()
	res.ResidentEstimate = res.Estimate
	res.Submits, res.Waits, res.TransferPieces = sr.LastRoundTrips()
	return nil
}

// plans returns the plans one execution of r.w runs into out, in order:
// p Workload.Calls times, or for a Decode workload its steps, each in
// place on out with its own write indices (prepared once per output).
func (r *runner) plans(p *ops.Plan, out *tensor.Tensor) ([]*ops.Plan, error) {
	if !r.w.Decode {
		ps := make([]*ops.Plan, r.w.calls())
		for i := range ps {
			ps[i] = p
		}
		return ps, nil
	}
	if ps, ok := r.stepPlans[out]; ok {
		return ps, nil
	}
	ps := make([]*ops.Plan, len(r.steps))
	for i, idx := range r.steps {
		req := ops.Request{Op: p.Op.Name, Data: out, Indices: idx, Updates: p.Updates, Mode: "linear"}
		if p.Circular {
			req.Mode = "circular"
		}
		req.Axis = tensor.Scalar(int64(p.Axis))
		sp, err := ops.Prepare(req)
		if err != nil {
			return nil, err
		}
		ps[i] = sp
	}
	r.stepPlans[out] = ps
	return ps, nil
}

// reset readies out for an execution: poisoned (every element differs
// from ref), or for a Decode workload, whose steps run in place on it, a
// copy of the cache the loop starts from.
func (r *runner) reset(out, ref, data *tensor.Tensor) {
	if r.w.Decode {
		copy(out.Data, data.Data)
		return
	}
	poison(out, ref)
}

// memoryCheck returns why r.w cannot run in the memory left, or "".
func (r *runner) memoryCheck(memSize int64) string {
	budget := r.opt.MemoryBudget
	if budget < 0 {
		return ""
	}
	measured := budget == 0
	if measured {
		releaseMemory()
		avail, ok := AvailableMemory()
		if !ok {
			return ""
		}
		budget = avail
	}
	need := r.w.footprint(len(r.targets)-1, r.tolerant()) + r.mc.extra(memSize)
	if need <= budget {
		return ""
	}
	if measured {
		return fmt.Sprintf("skipped: needs about %s of memory, %s available", formatBytes(need), formatBytes(budget))
	}
	return fmt.Sprintf("skipped: needs about %s of memory, over the budget of %s", formatBytes(need), formatBytes(budget))
}

// releaseMemory returns the memory of dropped tensors to the system, so
// that the next workload's check sees it and its inputs can use it.
func releaseMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// time runs the warm-ups and the timed executions of p on t. The reference
// writes its first output into ref; every timed output goes into out and is
// checked against ref. bound returns the tolerance bounds when the check
// allows rounding.
func (r *runner) time(t Target, isRef bool, p *ops.Plan, ref, out *tensor.Tensor,
	bound func() ([]float64, error)) (times []time.Duration, phases [][]Phase, cmp Comparison, err error) {
	ctx := r.ctx
	warmups := r.opt.Warmups
	if isRef {
		r.progress(t.Label, "warm-up", 0)
		r.reset(ref, ref, p.Data)
		if err := r.execute(t, p, ref); err != nil {
			return nil, nil, cmp, err
		}
		warmups--
	}
	for range warmups {
		r.progress(t.Label, "warm-up", 0)
		r.reset(out, ref, p.Data)
		if err := r.execute(t, p, out); err != nil {
			return nil, nil, cmp, err
		}
	}
	timer, _ := t.Backend.(DeviceTimer)
	cmp = Comparison{First: -1}
	for i := range r.opt.Repeats {
		if err := ctx.Err(); err != nil {
			return nil, nil, cmp, err
		}
		r.progress(t.Label, "timing", i+1)
		r.reset(out, ref, p.Data)
		start := time.Now()
		ph, err := r.executeTimed(t, p, out, timer)
		d := time.Since(start)
		if err != nil {
			return nil, nil, cmp, err
		}
		times = append(times, d)
		if timer != nil {
			phases = append(phases, ph)
		}
		c, err := r.check(isRef, ref, out, bound)
		if err != nil {
			return nil, nil, cmp, err
		}
		cmp.worst(c)
	}
	return times, phases, cmp, nil
}

// execute runs p on t's backend into out Workload.Calls times, one
// Execute after the other.
func (r *runner) execute(t Target, p *ops.Plan, out *tensor.Tensor) error {
	ps, err := r.plans(p, out)
	if err != nil {
		return err
	}
	for _, pl := range ps {
		if err := t.Backend.Execute(r.ctx, pl, out); err != nil {
			return err
		}
	}
	return nil
}

// executeTimed is execute with the device phases of every call, summed
// phase by phase in the order they first appear (nil when timer is nil).
func (r *runner) executeTimed(t Target, p *ops.Plan, out *tensor.Tensor, timer DeviceTimer) ([]Phase, error) {
	if timer == nil {
		return nil, r.execute(t, p, out)
	}
	ps, err := r.plans(p, out)
	if err != nil {
		return nil, err
	}
	var sum []Phase
	for _, pl := range ps {
		if err := t.Backend.Execute(r.ctx, pl, out); err != nil {
			return nil, err
		}
	next:
		for _, ph := range timer.LastDeviceTimings() {
			for i := range sum {
				if sum[i].Name == ph.Name {
					sum[i].Duration += ph.Duration
					continue next
				}
			}
			sum = append(sum, ph)
		}
	}
	return sum, nil
}

// check compares out with ref: bit for bit, then, for another backend on a
// float reduction that differs, within the tolerance bounds.
func (r *runner) check(isRef bool, ref, out *tensor.Tensor, bound func() ([]float64, error)) (Comparison, error) {
	c, err := Compare(ref, out, nil)
	if err != nil || c.Mismatches == 0 || isRef || !r.tolerant() {
		return c, err
	}
	b, err := bound()
	if err != nil {
		return c, err
	}
	return Compare(ref, out, b)
}

// summarise fills in the timings and the verdict of res.
func (res *Result) summarise(times []time.Duration, phases [][]Phase, cmp Comparison) {
	res.Times = times
	res.Median = median(times)
	res.Min, res.Max = minMax(times)
	if res.Median > 0 {
		res.GBps = float64(res.Bytes) / res.Median.Seconds() / 1e9
	}
	if res.MemcpyGBps > 0 {
		res.FractionOfMemcpy = res.GBps / res.MemcpyGBps
	}
	res.Comparison = cmp
	res.Verified = cmp.Mismatches == 0 && len(times) > 0
	res.DeviceTime, res.Phases = summarisePhases(phases)
}

func minMax(ts []time.Duration) (lo, hi time.Duration) {
	for i, t := range ts {
		if i == 0 || t < lo {
			lo = t
		}
		if t > hi {
			hi = t
		}
	}
	return lo, hi
}

// summarisePhases returns the median of the per-call sums and the median of
// each phase, in the order the phases first appear.
func summarisePhases(calls [][]Phase) (total time.Duration, phases []Phase) {
	var sums []time.Duration
	byName := map[string][]time.Duration{}
	var order []string
	for _, call := range calls {
		if len(call) == 0 {
			continue
		}
		var sum time.Duration
		for _, ph := range call {
			sum += ph.Duration
			if _, ok := byName[ph.Name]; !ok {
				order = append(order, ph.Name)
			}
			byName[ph.Name] = append(byName[ph.Name], ph.Duration)
		}
		sums = append(sums, sum)
	}
	for _, name := range order {
		phases = append(phases, Phase{Name: name, Duration: median(byName[name])})
	}
	return median(sums), phases
}

// oneLine folds the line breaks of s into spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.TrimSpace(strings.ReplaceAll(s, "\r", " "))), " ")
}

// cpuModel returns the processor's name from /proc/cpuinfo, or GOARCH.
// CPUModel returns the processor's model name as /proc/cpuinfo gives it,
// or GOARCH where there is none: what a report names the machine by.
func CPUModel() string { return cpuModel() }

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && strings.TrimSpace(k) == "model name" {
				return strings.Join(strings.Fields(v), " ")
			}
		}
	}
	return runtime.GOARCH
}

// formatBytes renders n as "1.5 GB" (decimal units, like the bandwidths).
func formatBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// hottestUpdates returns the most updates of p that meet one element of
// the output (for a row target, each of its elements), for plans whose
// every index names one target: ScatterElements on 1-D data and ScatterND
// with index tuples of one component; 0 for others. A reduction's atomics
// on that element queue behind each other on a GPU.
func hottestUpdates(p *ops.Plan) int64 {
	if p.Indices == nil || len(p.Shape) == 0 || p.Indices.Len() == 0 ||
		!(p.Kind == ops.KindElements && len(p.Shape) == 1 || p.Kind == ops.KindND && p.TupleLen == 1) {
		return 0
	}
	counts := make([]int32, p.Shape[0])
	var most int32
	for i := range p.Indices.Len() {
		v, err := p.IndexAt(i)
		if err != nil {
			return 0
		}
		counts[v]++
		most = max(most, counts[v])
	}
	return int64(most)
}
