//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"time"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Work returns the call's work as cost.Device.Estimate takes it: its
// transfers, submissions, dispatches, and each pass's bytes, positions
// and atomics; the caller sets Compiles (Backend.Uncompiled).
func (n PlanNeeds) Work() cost.GPUWork {
	w := cost.GPUWork{UploadBytes: n.HostBytes - n.DownloadBytes, DownloadBytes: n.DownloadBytes,
		Submits: n.Submits, Dispatches: n.Dispatches}
	if n.HostBytes > 0 {
		w.HostCalls = 1
	}
	for _, ps := range n.Passes {
		w.Passes = append(w.Passes, cost.Pass{Bytes: ps.Read + ps.Written, Positions: ps.Positions, Atomics: ps.Atomics,
			RunAtomics: ps.RunAtomics, Invocations: ps.Invocations, Groups: ps.Groups, Dispatches: ps.Dispatches, Hottest: ps.Hottest, Checks: ps.Checks, Kind: ps.Kind})
	}
	return w
}

// Work returns the work of Execute of p on this device, as Work of its
// Needs gives it with its compilation set to the pipelines it would
// compile (CompileWork), without formatting the plan's text: what --backend auto
// weighs before every call.
func (b *Backend) Work(p *ops.Plan) (cost.GPUWork, error) {
	if b == nil {
		return cost.GPUWork{}, closedPlanError(p)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return cost.GPUWork{}, closedPlanError(p)
	}
	f := b.facts(true)
	pl, err := f.callFigures(p, false)
	b.mu.Unlock()
	if err != nil {
		return cost.GPUWork{}, err
	}
	n := pl.figures(false)
	w := n.Work()
	cw := b.CompileWork(n)
	w.Compiles, w.CompileKeptMs = cw.Pipelines, cw.KeptMs
	return w, nil
}

// probeElements is the size of the calls Figures times: 8 MiB of
// updates, large enough for a pass to outlast its launch on a discrete
// GPU, small enough to take well under a second on lavapipe.
const probeElements = 1 << 21

// probeReps is how many timed runs each probe takes after its first.
const probeReps = 7

// With knobs.QuickFigures the probes are quickProbeDiv times smaller
// and each takes quickProbeReps timed runs.
const quickProbeDiv, quickProbeReps = 64, 2

// probeScale returns the divisor of the probes' sizes and the timed runs
// of each: 1 and reps, or as knobs.QuickFigures makes them.
func (b *Backend) probeScale(reps int) (div, runs int) {
	if b.quickFigures {
		return quickProbeDiv, quickProbeReps
	}
	return 1, reps
}

// Figures returns the device's figures (cost.Device): those kept beside
// the pipeline cache from an earlier measurement of the same device and
// driver, or, when there are none or remeasure is set, new ones, which it
// keeps there. A new measurement takes the transfers, the device copy and
// the submission from vk.Device.Measure, then times the backend's own
// kernels on resident tensors (about 2M elements; on lavapipe about 1.5 s
// once the pipelines are compiled), each timing the fastest of seven runs
// after a first (other work on the machine only slows a run, so the
// fastest is the device's own time, not the load of the moment):
//
//   - LaunchUs: the device time of a small SliceScatter call's pass;
//   - DispatchUs: a batch of 32 of those calls against a batch of one,
//     per dispatch, less LaunchUs;
//   - ExecuteUs: an Execute of the small call on host tensors over the
//     batch of one;
//   - ElementNs: two SliceScatter calls in place, of 2M float32 elements
//     (every other one: 4-byte positions) and of 128K rows of 16 (every
//     other row: wider positions), the geometric mean of their passes'
//     device times (timestamps; else the wall time less a submission)
//     per position: a position's time varies with its width and its
//     kernel (on lavapipe 10-24 ns, and the narrow probe at 10 or at 20
//     from one process to the next; on SwiftShader 33-111), and the mean
//     of the two keeps the passes of every bench workload nearer;
//   - AtomicNs: a ScatterND-18 add of 2M int32 updates in place, 16 on
//     each target on average (a reduction folds duplicates, and how many
//     meet one address decides what its atomics cost; int32, whose sum
//     takes the atomics in deterministic mode too), without the
//     hot-target census a resident call would plan (its figure is
//     Passes.Hot), its scatter pass's time per position less ElementNs;
//   - RunAtomicNs: the same of 128K rows of 16 int32, 16 on each row;
//   - ConcurrentGroups: a SliceScatter of one workgroup's positions, its
//     time per position over the narrow probe's (at most the narrow
//     probe's workgroups);
//   - CompileMs: the first run of each of these calls over its median,
//     per pipeline it compiled (pipelines not compiled before on this
//     device and driver: vk.Device.PipelineKnown); 0 when there were none;
//   - Passes: the in-order fold's radix passes, its fold of rows and the
//     bucketed fold, the resolves, the last-writer table, the indexed
//     scatter and the hot-target census, each fitted to its passes'
//     device times in two sizes of a call that takes it (measurePasses;
//     on lavapipe about 6 s more, once).
//
// more, when not nil, adds further figures (the host CPU's: cost.Device.CPU)
// before they are kept.
//
// Where there is no cache folder (PipelineCacheDir "off") the Backend
// keeps the figures itself: a later call gives those it gave before,
// unless it asks to remeasure, or for more and the earlier one did not.
func (b *Backend) Figures(ctx context.Context, remeasure bool, more func(*cost.Device) error) (cost.Device, error) {
	if b == nil {
		return cost.Device{}, ErrClosed
	}
	b.mu.Lock()
	closed, dev := b.closed, b.dev
	b.mu.Unlock()
	if closed {
		return cost.Device{}, ErrClosed
	}
	if dev.PipelineCachePath() != "" {
		return b.measureFigures(ctx, remeasure, more)
	}
	b.figuresMu.Lock()
	defer b.figuresMu.Unlock()
	if b.figures != nil && !remeasure && (more == nil || b.figuresMore) {
		return b.figures.Clone(), nil
	}
	m, err := b.measureFigures(ctx, remeasure, more)
	if err == nil {
		c := m.Clone()
		b.figures, b.figuresMore = &c, more != nil
	}
	return m, err
}

// measureFigures is Figures without the Backend's copy: the kept file's
// figures, or those measured now.
func (b *Backend) measureFigures(ctx context.Context, remeasure bool, more func(*cost.Device) error) (cost.Device, error) {
	b.mu.Lock()
	closed, dev := b.closed, b.dev
	b.mu.Unlock()
	if closed {
		return cost.Device{}, ErrClosed
	}
	measure := func(m *cost.Device) error {
		if err := b.measureKernels(ctx, m); err != nil {
			return fmt.Errorf("measuring the kernels: %w", err)
		}
		if err := b.measurePasses(ctx, m); err != nil {
			return fmt.Errorf("measuring the in-order fold's passes: %w", err)
		}
		if more != nil {
			return more(m)
		}
		return nil
	}
	m, err := dev.MeasuredFigures(ctx, remeasure, measure)
	if err == nil && (m.Passes == nil || m.ExecuteUs == 0 || m.RunAtomicNs == 0 || m.ConcurrentGroups == 0) && !remeasure {
		// Kept by an older version, without the pass figures.
		m, err = dev.MeasuredFigures(ctx, true, measure)
	}
	return m, err
}

// measureKernels sets m's DispatchUs, ElementNs and AtomicNs (Figures).
func (b *Backend) measureKernels(ctx context.Context, m *cost.Device) (err error) {
	upload, closeAll := b.probeUploads(ctx, &err)
	defer closeAll()
	// timed runs calls once, then reps times, and returns the least wall
	// time and the least device time of the last call's pass named pass
	// (0 without timestamps): the least (fastest), so that a moment of
	// other work on the machine, which only slows runs, stays out of the
	// figure.
	// The first run's extra time over the median compiles the pipelines
	// the calls use that were not compiled before (compiles of them).
	var compiles int
	var compileTime time.Duration
	timed := func(reps int, pass string, calls ...Call) (wall, device time.Duration, dispatches int, err error) {
		fresh := 0
		for _, c := range calls[:1] {
			p, err := b.prepareCall(c)
			if err != nil {
				return 0, 0, 0, err
			}
			n, err := b.NeedsInPlace(p)
			if err != nil {
				return 0, 0, 0, err
			}
			fresh = b.Uncompiled(n)
		}
		var first time.Duration
		walls, devs := make([]time.Duration, reps), make([]time.Duration, reps)
		for i := -1; i < reps; i++ {
			bt := b.NewBatch()
			for _, c := range calls {
				if err := bt.Add(c); err != nil {
					return 0, 0, 0, err
				}
			}
			t0 := time.Now()
			s, err := bt.Submit(ctx)
			if err == nil {
				err = s.Wait(ctx)
			}
			if err != nil {
				return 0, 0, 0, err
			}
			if i < 0 {
				first = time.Since(t0)
				continue
			}
			walls[i] = time.Since(t0)
			st := b.LastStats()
			dispatches = st.Dispatches
			for _, p := range st.Passes {
				if p.Label == pass {
					devs[i] = p.Duration
				}
			}
		}
		if fresh > 0 {
			compiles += fresh
			compileTime += max(first-median(walls), 0)
		}
		return fastest(walls), fastest(devs), dispatches, nil
	}
	div, reps := b.probeScale(probeReps)
	n := probeElements / div
	slice := func(data, upd *Tensor, n int) Call {
		return Call{Op: "SliceScatter-15", Data: data, Updates: upd, Out: data,
			Start: tensor.Ints(0), Stop: tensor.Ints(int64(2 * n)), Step: tensor.Ints(2), Axes: tensor.Ints(0)}
	}
	data := upload(mustNew(tensor.Float32, 2*n))
	upd := upload(mustNew(tensor.Float32, n))
	small := upload(mustNew(tensor.Float32, 64))
	// One workgroup's positions of the slice kernel.
	loneN := groupSize * int(max(b.run, 1))
	loneData := upload(mustNew(tensor.Float32, 2*loneN))
	loneUpd := upload(mustNew(tensor.Float32, loneN))
	smallUpd := upload(mustNew(tensor.Float32, 32))
	// The atomic probes fold 16 updates into each target on average, at
	// random: a reduction folds duplicates, and how many meet one address
	// decides what its atomics cost (on SwiftShader 2-3 times the cost on
	// distinct targets).
	const dups = 16
	rng := rand.New(rand.NewSource(1))
	idx := make([]int64, n)
	for i := range idx {
		idx[i] = int64(rng.Intn(n / dups))
	}
	rows := n / 16
	rowsTarget := upload(tensor.MustFromSlice([]int{rows / dups, 16}, make([]int32, n/dups)))
	rowsValues := upload(tensor.MustFromSlice([]int{rows, 16}, make([]int32, n)))
	rowIdx := make([]int64, rows)
	for i := range rowIdx {
		rowIdx[i] = int64(rng.Intn(rows / dups))
	}
	rowsIndices := upload(tensor.MustFromSlice([]int{rows, 1}, rowIdx))
	wideData := upload(tensor.MustFromSlice([]int{2 * rows, 16}, make([]float32, 2*n)))
	wideUpd := upload(tensor.MustFromSlice([]int{rows, 16}, make([]float32, n)))
	target := upload(mustNew(tensor.Int32, n/dups))
	indices := upload(tensor.MustFromSlice([]int{n, 1}, idx))
	values := upload(mustNew(tensor.Int32, n))
	if err != nil {
		return err
	}

	// Dispatches: 32 calls against one.
	var batch []Call
	for range 32 {
		batch = append(batch, slice(small, smallUpd, 32))
	}
	one, launch, _, err := timed(reps, "scatter", batch[0])
	if err != nil {
		return err
	}
	many, _, d, err := timed(reps, "", batch...)
	if err != nil {
		return err
	}
	// The small call's pass on the device is a dispatch with almost no
	// work: its launch (cost.Device.LaunchUs), which the dispatches of the
	// batch each took too.
	if launch > 0 {
		m.LaunchUs = max(float64(launch)/1e3, cost.MinUs)
	}
	m.DispatchUs = max(float64(many-one)/1e3/float64(max(d-d/32, 1))-m.LaunchUs, cost.MinUs)

	// A host call: the same small call as an Execute of host tensors,
	// over the resident one (its transfers of a few hundred bytes left
	// out).
	hostCall, err := ops.Prepare(ops.Request{Op: "SliceScatter-15", Data: mustNew(tensor.Float32, 64), Updates: mustNew(tensor.Float32, 32),
		Start: tensor.Ints(0), Stop: tensor.Ints(64), Step: tensor.Ints(2), Axes: tensor.Ints(0)})
	if err != nil {
		return err
	}
	hostOut := mustNew(tensor.Float32, 64)
	execs := make([]time.Duration, reps)
	for i := -1; i < len(execs); i++ {
		t0 := time.Now()
		if err := b.Execute(ctx, hostCall, hostOut); err != nil {
			return err
		}
		if i >= 0 {
			execs[i] = time.Since(t0)
		}
	}
	m.ExecuteUs = max(float64(fastest(execs)-one)/1e3, cost.MinUs)

	// Elements: one streaming pass.
	perPosition := func(c Call, wall, dev time.Duration) (float64, error) {
		pos, _, err := b.passCounts(c, "scatter")
		if err != nil {
			return 0, err
		}
		if dev == 0 {
			dev = max(wall-time.Duration(m.SubmitWaitUs*1e3), time.Nanosecond)
		}
		dev = max(dev-time.Duration(m.LaunchUs*1e3), time.Nanosecond)
		return float64(dev) / float64(max(pos, 1)), nil
	}
	// positionNs times c's scatter pass per position.
	positionNs := func(c Call) (float64, error) {
		wall, dev, _, err := timed(reps, "scatter", c)
		if err != nil {
			return 0, err
		}
		return perPosition(c, wall, dev)
	}
	elements := slice(data, upd, n)
	narrowNs, err := positionNs(elements)
	if err != nil {
		return err
	}
	wide := Call{Op: "SliceScatter-15", Data: wideData, Updates: wideUpd, Out: wideData,
		Start: tensor.Ints(0), Stop: tensor.Ints(int64(2 * rows)), Step: tensor.Ints(2), Axes: tensor.Ints(0)}
	wideNs, err := positionNs(wide)
	if err != nil {
		return err
	}
	m.ElementNs = max(math.Sqrt(narrowNs*wideNs), cost.MinElementNs)

	// Occupancy: a SliceScatter of one workgroup's positions against the
	// narrow probe's time per position at full occupancy.
	lone := slice(loneData, loneUpd, loneN)
	loneNs, err := positionNs(lone)
	if err != nil {
		return err
	}
	_, loneGroups, err := b.passCounts(lone, "scatter")
	if err != nil {
		return err
	}
	_, fullGroups, err := b.passCounts(elements, "scatter")
	if err != nil {
		return err
	}
	m.ConcurrentGroups = min(max(loneNs/max(narrowNs, cost.MinElementNs)*float64(loneGroups), 1), float64(max(fullGroups, 1)))

	// Atomics: one per update, each with an index of its own, and one
	// per unit of rows of 16, without the hot-target census (a resident
	// call's plan would take it: its figure is cost.PassHot's).
	defer b.setFlag(&b.noHot, true)()
	atomic := Call{Op: "ScatterND-18", Data: target, Indices: indices, Updates: values, Out: target, Reduction: "add"}
	awall, adev, _, err := timed(reps, "scatter", atomic)
	if err != nil {
		return err
	}
	atomicNs, err := perPosition(atomic, awall, adev)
	if err != nil {
		return err
	}
	m.AtomicNs = max(atomicNs-m.ElementNs, cost.MinElementNs)
	runs := Call{Op: "ScatterND-18", Data: rowsTarget, Indices: rowsIndices, Updates: rowsValues, Out: rowsTarget, Reduction: "add"}
	rwall, rdev, _, err := timed(reps, "scatter", runs)
	if err != nil {
		return err
	}
	runNs, err := perPosition(runs, rwall, rdev)
	if err != nil {
		return err
	}
	m.RunAtomicNs = max(runNs-m.ElementNs, cost.MinElementNs)
	if compiles > 0 {
		m.CompileMs = max(float64(compileTime)/1e6/float64(compiles), cost.MinCompileMs)
	}
	return nil
}

// passCounts returns the positions and the workgroups with work of c's
// passes labelled label, as its plan in place on resident tensors counts
// them.
func (b *Backend) passCounts(c Call, label string) (positions, groups uint64, err error) {
	p, err := b.prepareCall(c)
	if err != nil {
		return 0, 0, err
	}
	n, err := b.NeedsInPlace(p)
	if err != nil {
		return 0, 0, err
	}
	for _, ps := range n.Passes {
		if ps.Name == label {
			positions += ps.Positions
			groups += ps.Groups
		}
	}
	return positions, groups, nil
}

// mustNew returns a zeroed 1-D tensor of n elements of dt.
func mustNew(dt tensor.DType, n int) *tensor.Tensor {
	t, err := tensor.New(dt, []int{n})
	if err != nil {
		panic(err) // a probe's size is valid
	}
	return t
}

// median returns the middle of ds (sorted in place).
func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

// fastest returns the least of ds: what a figure takes of its repeats.
// Other work on the machine only ever slows a run, so the fastest of
// several short runs is the device's own time, where a median of a few
// follows a loaded moment into every estimate made from the figure.
func fastest(ds []time.Duration) time.Duration {
	return slices.Min(ds)
}

// probeUploads returns upload, which uploads a probe call's tensor unless
// *err is set (and sets *err when the upload fails), and closeAll, which
// closes every tensor upload made.
func (b *Backend) probeUploads(ctx context.Context, err *error) (upload func(*tensor.Tensor) *Tensor, closeAll func()) {
	var open []*Tensor
	upload = func(src *tensor.Tensor) *Tensor {
		if *err != nil {
			return nil
		}
		t, e := b.Upload(ctx, src)
		if e != nil {
			*err = e
			return nil
		}
		open = append(open, t)
		return t
	}
	closeAll = func() {
		for _, t := range open {
			t.Close()
		}
	}
	return upload, closeAll
}
