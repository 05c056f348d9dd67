package cpuref

import (
	"context"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// The CPU backend's side of package cost: WorkOf says what work Execute
// does for a plan, in the units of cost.CPUWork, and Measure measures the
// rates of those units on this machine by running Execute on small
// synthetic calls. Measure derives each figure from its probe's WorkOf, so
// the two always count alike.

// runLineBytes is what a run of updates (a ScatterUpdate-3 slice or a
// ScatterND row of Inner >= 2 elements) moves beyond its own bytes: it
// lands at an unrelated place of out, so the cache lines at its two ends
// are only partly its own, about one line in all. This is what makes runs
// of a few elements cost more per byte than long ones: on a 2-core EPYC,
// ScatterND-18 of 1M rows of 8 bytes into 16 MiB took about 22 ns a row,
// of rows of 1 KiB about 160 ns, 7 times as long for 128 times the bytes.
const runLineBytes = 64

// WorkOf returns the work Execute does for p on a Backend of the default
// number of workers (New(): runtime.GOMAXPROCS(0)); inPlace says that out
// shares data's storage. p may come from ops.PrepareShapes: WorkOf reads
// index values only where they change the count (ScatterUpdate-3) and
// only when p carries them.
//
// CopyBytes is the output's starting copy of data: 2 x data's bytes (read
// and written), 0 in place, with these exceptions, which follow what
// Execute does:
//
//   - ScatterUpdate-3 copies only the slices along its axis that no index
//     names (copyUncovered);
//   - SliceScatter-15 copies nothing when the slice covers all of data;
//   - a reduction of single elements that Execute folds owned (owned.go:
//     2 to 4 workers, between a quarter of and four times as many updates
//     as elements of out, out too small to run binned, under 2 MiB)
//     copies data into each owner's scratch and from there into out:
//     4 x data's bytes, in place too. Each owner also walks every update
//     to pick out its own, which counts as a single-element pass,
//     Elements = updates: on 2 workers such a call (1M float32 sums into
//     256K elements) took 2.2 times as long as on 1 worker, which folds
//     them plainly: about what Reduced and Elements together estimate.
//
// A run is a ScatterUpdate-3 slice or a ScatterND row of Inner >= 2
// elements, which Execute moves with copy() (a run of one element it
// assigns, as it does the updates of ScatterElements). A run counts its
// bytes plus runLineBytes. With reduction none:
//
//   - MoveBytes is the runs that Execute moves. ScatterUpdate-3 applies
//     only the last update to each slice where lastWriters finds them (J
//     >= 2 and an axis of s <= 4J + 65536 slices): then Outer x (distinct
//     indices) runs, never more than the output holds, else Outer x J.
//     ScatterND moves every row, duplicates included. SliceScatter-15 and
//     TensorScatter-24 count their update bytes alone: their runs are
//     dense and in order (a slice's at fixed strides, the J rows of a
//     cache entry contiguous), so no run pays for a line of its own.
//   - Elements is the single-element updates Execute stores, each at a
//     random place: every update of ScatterElements and of ScatterND of
//     Inner 1, and the applied updates of ScatterUpdate-3 of Inner 1.
//
// A float sum, sub, prod or mean that Execute folds serially or binned as
// the fold figures choose (one that would run binned: foldSerial) also
// counts its updates, out's elements and out's bytes as FoldUpdates,
// FoldOutLen and FoldOutBytes, which cost.CPU.Estimate times with the
// faster fold's figures, as Execute chooses, in place of their share of
// Reduced.
//
// With a reduction, Reduced is the update elements folded one by one;
// mean counts each twice, since its division pass visits every target
// again, and use_init_val false adds Elements = updates, the neutral
// value stored at each target first. ScatterND float32 sums of rows
// (Inner >= 2) are folded a row at a time by a vector loop (rowadd.go)
// at about the rate of a move: they count as runs, MoveBytes. Other
// reductions of rows fold element by element, Reduced = updates; a row's
// elements are adjacent, so they take from about half (integers) to
// twice (float16) ReduceNs, which is measured on random single elements.
//
// Without index values, ScatterUpdate-3 counts the distinct indices
// expected of J uniform random ones among s slices: s(1 - (1 - 1/s)^J).
func WorkOf(p *ops.Plan, inPlace bool) cost.CPUWork {
	return workOf(p, inPlace, runtime.GOMAXPROCS(0))
}

// workOf is WorkOf on w workers.
func workOf(p *ops.Plan, inPlace bool, w int) cost.CPUWork {
	eb := uint64(elemBytes(p.DType))
	outLen := uint64(prodShape(p.Shape))
	data := outLen * eb
	var wk cost.CPUWork
	if !inPlace {
		wk.CopyBytes = 2 * data
	}
	n := uint64(p.NumUpdates())
	if n == 0 {
		return wk
	}
	run := uint64(p.Inner)*eb + runLineBytes
	switch p.Kind {
	case ops.KindAxis:
		s := p.Shape[p.Axis]
		named := distinctIndices(p, s)
		applied := float64(p.J)
		if p.J >= 2 && p.J < math.MaxInt32 && s <= 4*p.J+1<<16 {
			applied = named
		}
		if !inPlace && s > 0 {
			uncovered := max(0, float64(s)-named) / float64(s)
			wk.CopyBytes = uint64(math.Round(uncovered * float64(2*data)))
		}
		runs := uint64(math.Round(float64(p.Outer) * applied))
		if p.Inner == 1 {
			wk.Elements = runs
		} else {
			wk.MoveBytes = runs * run
		}
		return wk
	case ops.KindSlice:
		if n >= outLen {
			wk.CopyBytes = 0
		}
		wk.MoveBytes = n * eb
		return wk
	case ops.KindCache:
		wk.MoveBytes = n * eb
		return wk
	}
	// ScatterND and ScatterElements.
	if p.Kind == ops.KindND && p.Inner > 1 {
		switch {
		case p.Reduction == ops.None || p.Reduction == ops.Sum && p.DType == tensor.Float32:
			wk.MoveBytes = uint64(p.Outer*p.J) * run
		default:
			wk.Reduced = n
		}
		return wk
	}
	switch p.Reduction {
	case ops.None:
		wk.Elements = n
		return wk
	case ops.Mean:
		wk.Reduced = 2 * n
	default:
		wk.Reduced = n
		if !p.UseInitVal {
			wk.Elements = n
		}
	}
	if p.DType != tensor.String && ownedElements(p, w) {
		wk.CopyBytes = 4 * data
		wk.Elements += n
	}
	if foldFollowsFigures(p, w) {
		wk.FoldUpdates, wk.FoldOutLen, wk.FoldOutBytes = n, outLen, data
	}
	return wk
}

// foldFollowsFigures reports whether Execute on w workers folds p, a
// ScatterElements or ScatterND plan of single elements, serially or
// binned as the fold figures choose (foldSerial).
func foldFollowsFigures(p *ops.Plan, w int) bool {
	x := &exec{g: defaultGrain, p: p, out: &tensor.Tensor{DType: p.DType, Shape: p.Shape}, w: w}
	return foldChosen(p) && x.planBins()
}

// ownedElements reports whether Execute on w workers folds p, a
// ScatterElements or ScatterND plan of single elements, owned (owned.go),
// as scatter decides: binned first, then owned.
func ownedElements(p *ops.Plan, w int) bool {
	x := &exec{g: defaultGrain, p: p, out: &tensor.Tensor{DType: p.DType, Shape: p.Shape}, w: w}
	return !x.planBins() && x.planOwned()
}

// distinctIndices returns the number of distinct slices the indices of a
// ScatterUpdate-3 plan name along its axis of size s: counted when p
// carries the index values, else expected of J uniform random ones.
func distinctIndices(p *ops.Plan, s int) float64 {
	if s <= 0 {
		return 0
	}
	if t := p.Indices; t != nil && t.Len() > 0 && len(t.Data) >= t.Len()*t.DType.Size() {
		seen := make([]bool, s)
		n := 0
		for pos := range t.Len() {
			i, err := p.IndexAt(pos)
			if err != nil || seen[i] {
				continue
			}
			seen[i] = true
			n++
		}
		return float64(n)
	}
	return float64(s) * -math.Expm1(float64(p.J)*math.Log1p(-1/float64(s)))
}

// elemBytes returns the bytes Execute moves per element of dt: a Go
// string's header for strings, which the CPU moves in place of the
// handle Size counts.
func elemBytes(dt tensor.DType) int {
	if dt == tensor.String {
		return int(unsafe.Sizeof(""))
	}
	return dt.Size()
}

// prodShape returns the elements of a valid shape (tensor.NumElements).
func prodShape(shape []int) int {
	n, _ := tensor.NumElements(shape)
	return n
}

// The probes of Measure. Each runs Execute (or, for the copy, the copy
// Execute makes) once to warm up and then probeRuns times; its figure
// comes from the median. Their inputs lie in one arena of probeArenaBytes,
// one probe after the other, so that its pages are faulted in once.
const (
	probeRuns = 3
	// probeCopyBytes is what the copy probe copies, from one half of the
	// arena to the other: 32 MiB, read and written, the size of a large
	// last-level cache.
	probeCopyBytes = 32 << 20
	// probeArenaBytes holds the largest probe: the move probe's data and
	// updates, 32 MiB each, and its 2 KiB of indices.
	probeArenaBytes = 2*probeCopyBytes + 64<<10
	// The move probe: ScatterUpdate-3 in place along axis 1 of a
	// [512, 256, 64] float32 tensor, each slice of 256 B named once in a
	// shuffled order: 128K runs, 32 MiB of updates into 32 MiB, more than
	// the caches hold (with 16 MiB, which they partly keep, the figure
	// varied twice as much from run to run), nothing copied from data.
	probeMoveOuter, probeMoveAxis, probeMoveInner = 512, 256, 64
	// The element probe: ScatterElements-18 none along axis 0 of a
	// [1024, 2048] float32 matrix (8 MiB), updates [512, 2048]: 1M
	// single-element stores at random rows (binned, like the bench's SE).
	probeElemRows, probeElemCols, probeElemUpdRows = 1024, 2048, 512
	// The reduction probe: ScatterElements-18 add of 2M float32 updates
	// at random among 256K elements (1 MiB), 8 per element.
	probeReduceOut, probeReduceUpd = 1 << 18, 1 << 21
	// probeFloor is the least share of a probe's time left to its own
	// work once the copy of data is taken off: a copy that the measured
	// rate says took (nearly) all the time would otherwise leave a
	// figure of zero or less.
	probeFloor = 0.1
)

// Measure measures the CPU backend's figures (cost.CPU) on this machine
// by running its own code on small synthetic probes:
//
//   - MoveGBps: ScatterUpdate-3 in place of 128K slices of 256 B, each
//     named once (32 MiB of updates into 32 MiB);
//   - ElementNs: ScatterElements-18 none of 1M float32 updates at random
//     rows of a [1024, 2048] matrix (8 MiB);
//   - ReduceNs: ScatterElements-18 add of 2M float32 updates at random
//     among 256K elements (1 MiB);
//   - Fold: the serial and the binned fold (cost.FoldPoint) of
//     ScatterElements-18 add of float32 updates into outputs of 2, 4 and
//     8 MiB, each with a quarter as many updates as elements and with 1M;
//   - CopyGBps: copyParallel, the copy Execute makes of data, of 32 MiB,
//     in bytes read and written per second. It runs last: run first, on
//     a machine that had been idle, it measured up to half the rate.
//
// Each Execute figure is the work WorkOf counts for its probe over the
// probe's time less its copy of data at CopyGBps, leaving at least a
// tenth of the time (probeFloor), so that every figure stays positive.
// Each time is the median of 3 timed runs after a warm-up, run after the
// probe's inputs are built and the garbage collected. The whole took 0.4
// to 0.5 s on a loaded 2-core machine, most of it the fold probes. Threads is runtime.GOMAXPROCS(0),
// the workers of New(), which runs the probes. Measure returns ctx's
// error when ctx is done before a run, or a run stops for it.
func Measure(ctx context.Context) (cost.CPU, error) {
	c := cost.CPU{Threads: runtime.GOMAXPROCS(0)}
	b := New()
	arena := make([]byte, probeArenaBytes)
	probes := []struct {
		plan    func(a *probeArena) (*ops.Plan, error)
		inPlace bool
		set     func(wk cost.CPUWork, secs float64)
		work    cost.CPUWork
		secs    float64
	}{
		{plan: probeMovePlan, inPlace: true, set: func(wk cost.CPUWork, secs float64) { c.MoveGBps = float64(wk.MoveBytes) / secs / 1e9 }},
		{plan: probeElementPlan, set: func(wk cost.CPUWork, secs float64) { c.ElementNs = secs * 1e9 / float64(wk.Elements) }},
		{plan: probeReducePlan, set: func(wk cost.CPUWork, secs float64) { c.ReduceNs = secs * 1e9 / float64(wk.Reduced) }},
	}
	for i := range probes {
		pr := &probes[i]
		if err := ctx.Err(); err != nil {
			return cost.CPU{}, err
		}
		a := &probeArena{buf: arena}
		p, err := pr.plan(a)
		if err != nil {
			return cost.CPU{}, err
		}
		out := p.Data
		if !pr.inPlace {
			out = a.take(p.DType, p.Shape)
			copy(out.Data, p.Data.Data)
		}
		if pr.secs, err = probeMedian(ctx, func() error { return b.Execute(ctx, p, out) }); err != nil {
			return cost.CPU{}, err
		}
		pr.work = WorkOf(p, pr.inPlace)
	}
	var err error
	if c.CopyGBps, err = measureCopy(ctx, c.Threads, arena); err != nil {
		return cost.CPU{}, err
	}
	for _, pr := range probes {
		own := pr.secs - float64(pr.work.CopyBytes)/(c.CopyGBps*1e9)
		pr.set(pr.work, max(own, probeFloor*pr.secs))
	}
	if c.Fold, err = measureFold(ctx, b, arena, c.CopyGBps); err != nil {
		return cost.CPU{}, err
	}
	if err := c.Check(); err != nil {
		return cost.CPU{}, err
	}
	return c, nil
}

// probeMedian runs fn once and then probeRuns times, checking ctx before
// each run, and returns the median seconds of the timed runs. It collects
// the garbage first: a collection that building the probe started would
// otherwise take a worker's thread during the runs.
func probeMedian(ctx context.Context, fn func() error) (float64, error) {
	runtime.GC()
	var secs []float64
	for i := range probeRuns + 1 {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		start := time.Now()
		if err := fn(); err != nil {
			return 0, err
		}
		if i > 0 {
			secs = append(secs, time.Since(start).Seconds())
		}
	}
	slices.Sort(secs)
	return max(secs[len(secs)/2], 1e-9), nil // 0: below the clock's resolution
}

// probeArena hands out the tensors of a probe from buf, one after the
// other, each at a multiple of 64 bytes.
type probeArena struct {
	buf []byte
	off int
}

// take returns a tensor of dt and shape whose payload is the next bytes
// of the arena, holding whatever they held.
func (a *probeArena) take(dt tensor.DType, shape []int) *tensor.Tensor {
	n := prodShape(shape) * dt.Size()
	t := &tensor.Tensor{DType: dt, Shape: shape, Data: a.buf[a.off : a.off+n : a.off+n]}
	a.off += (n + 63) &^ 63
	return t
}

// probeRand is a xorshift generator for the probes' inputs: fast, and
// the same inputs on every run.
type probeRand uint64

func (r *probeRand) next() uint64 {
	x := uint64(*r)
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	*r = probeRand(x)
	return x
}

// below returns a number in [0, n), n < 2^32.
func (r *probeRand) below(n int) int { return int((r.next() >> 32) * uint64(n) >> 32) }

// probeFloats returns a float32 tensor of shape from a holding values in
// [0, 1): 4096 random ones, repeated (the probes' times do not depend on
// the values).
func probeFloats(a *probeArena, shape []int, seed uint64) *tensor.Tensor {
	t := a.take(tensor.Float32, shape)
	v := tensor.View[float32](t)
	r := probeRand(seed*0x9e3779b97f4a7c15 | 1)
	for i := range min(len(v), 4096) {
		v[i] = float32(r.next()>>40) / (1 << 24)
	}
	for n := 4096; n < len(v); n *= 2 {
		copy(v[n:], v[:n])
	}
	return t
}

// probePlan takes the tensors of a probe from a, the indices idx(i) at
// flat position i, and prepares its call.
func probePlan(a *probeArena, op, reduction string, data, indices, updates []int, idx func(i int) int) (*ops.Plan, error) {
	ix := a.take(tensor.Int64, indices)
	for i, v := 0, tensor.View[int64](ix); i < len(v); i++ {
		v[i] = int64(idx(i))
	}
	req := ops.Request{Op: op, Reduction: reduction, Data: probeFloats(a, data, 1), Indices: ix, Updates: probeFloats(a, updates, 2)}
	if op == "ScatterUpdate-3" {
		req.Axis = tensor.Scalar(1)
	}
	return ops.Prepare(req)
}

func probeMovePlan(a *probeArena) (*ops.Plan, error) {
	perm := make([]int, probeMoveAxis)
	for i := range perm {
		perm[i] = i
	}
	r := probeRand(3)
	for i := len(perm) - 1; i > 0; i-- {
		j := r.below(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	shape := []int{probeMoveOuter, probeMoveAxis, probeMoveInner}
	return probePlan(a, "ScatterUpdate-3", "", shape, []int{probeMoveAxis}, shape, func(i int) int { return perm[i] })
}

func probeElementPlan(a *probeArena) (*ops.Plan, error) {
	r := probeRand(5)
	shape := []int{probeElemUpdRows, probeElemCols}
	return probePlan(a, "ScatterElements-18", "", []int{probeElemRows, probeElemCols}, shape, shape,
		func(int) int { return r.below(probeElemRows) })
}

func probeReducePlan(a *probeArena) (*ops.Plan, error) {
	r := probeRand(7)
	shape := []int{probeReduceUpd}
	return probePlan(a, "ScatterElements-18", "add", []int{probeReduceOut}, shape, shape,
		func(int) int { return r.below(probeReduceOut) })
}

// The fold probes (cost.CPU.Fold): ScatterElements-18 add of float32
// updates at random among the elements of a one-dimensional out of each
// of foldProbeBytes, int32 indices, run with the serial and with the
// binned fold forced, once with a quarter as many updates as out has
// elements and once with foldProbeUpdates, so that each fold's time
// splits into a part per update and a part per element of out. The
// largest out with its data, indices and updates takes 32 MiB of the
// arena. Above 8 MiB the fold stays binned (cost.CPU.FoldMs): measuring
// larger outs took more time than the rest of Measure together.
var foldProbeBytes = [...]int{2 << 20, 4 << 20, 8 << 20}

const foldProbeUpdates = 1 << 20

// measureFold measures the fold figures on b's workers with the probes'
// inputs in arena; copyGBps is the copy of data each call makes, which
// each time is taken less (leaving at least probeFloor of it).
func measureFold(ctx context.Context, b *Backend, arena []byte, copyGBps float64) ([]cost.FoldPoint, error) {
	var pts []cost.FoldPoint
	for _, size := range foldProbeBytes {
		outLen := size / 4
		a := &probeArena{buf: arena}
		data := probeFloats(a, []int{outLen}, 11)
		out := a.take(tensor.Float32, []int{outLen})
		ix := a.take(tensor.Int32, []int{foldProbeUpdates})
		r := probeRand(13)
		for i, v := 0, tensor.View[int32](ix); i < len(v); i++ {
			v[i] = int32(r.below(outLen))
		}
		upd := probeFloats(a, []int{foldProbeUpdates}, 17)
		counts := [2]int{outLen / 4, foldProbeUpdates}
		var secs [2][2]float64 // [serial, binned][counts]
		for ci, n := range counts {
			idx := &tensor.Tensor{DType: tensor.Int32, Shape: []int{n}, Data: ix.Data[:4*n]}
			u := &tensor.Tensor{DType: tensor.Float32, Shape: []int{n}, Data: upd.Data[:4*n]}
			p, err := ops.Prepare(ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: data, Indices: idx, Updates: u})
			if err != nil {
				return nil, err
			}
			for fi, f := range [2]int{foldForceSerial, foldForceBinned} {
				g := defaultGrain
				if b.grain != nil {
					g = *b.grain
				}
				g.fold = f
				fb := &Backend{Workers: b.Workers, grain: &g}
				s, err := probeMedian(ctx, func() error { return fb.Execute(ctx, p, out) })
				if err != nil {
					return nil, err
				}
				secs[fi][ci] = max(s-float64(2*size)/(copyGBps*1e9), probeFloor*s)
			}
		}
		fit := func(t [2]float64) (ns, outNs float64) {
			ns = (t[1] - t[0]) / float64(counts[1]-counts[0]) * 1e9
			if ns < cost.MinElementNs {
				// Noise made the longer run no longer: all of it per update.
				return t[1] / float64(counts[1]) * 1e9, 0
			}
			outNs = (t[0]*1e9 - float64(counts[0])*ns) / float64(outLen)
			if outNs < cost.MinElementNs {
				outNs = 0
			}
			return ns, outNs
		}
		pt := cost.FoldPoint{OutBytes: uint64(size)}
		pt.SerialNs, pt.SerialOutNs = fit(secs[0])
		pt.BinnedNs, pt.BinnedOutNs = fit(secs[1])
		pts = append(pts, pt)
	}
	return pts, nil
}

// measuredFold holds the figures foldFigures measured for the process.
var measuredFold struct {
	sync.Mutex
	fig *cost.CPU
}

// foldFigures returns this machine's figures for a Backend given none
// with fold figures: Measure's, measured the first time (fresh is then
// true), then kept for the process. It returns nil when ctx stops the
// measurement, which the next call tries again.
func foldFigures(ctx context.Context) (fig *cost.CPU, fresh bool) {
	measuredFold.Lock()
	defer measuredFold.Unlock()
	if measuredFold.fig != nil {
		return measuredFold.fig, false
	}
	c, err := Measure(ctx)
	if err != nil {
		return nil, false
	}
	measuredFold.fig = &c
	return &c, true
}

// measureCopy measures copyParallel on w workers of probeCopyBytes from one
// half of arena to the other, in bytes read and written per second.
func measureCopy(ctx context.Context, w int, arena []byte) (float64, error) {
	dst, src := arena[:probeCopyBytes], arena[probeCopyBytes:2*probeCopyBytes]
	secs, err := probeMedian(ctx, func() error {
		copyParallel(w, defaultGrain.copy, dst, src)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return 2 * probeCopyBytes / secs / 1e9, nil
}
