//go:build cgo

package gpu

import (
	"context"
	"math/rand"
	"time"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// passPoint is one measured pass of a kind: its invocations, positions
// and device time.
type passPoint struct {
	inv, pos float64
	ns       float64
	// groups is the passes' workgroups with work.
	groups uint64
	// dispatches is the passes' dispatches, whose launches
	// (cost.Device.LaunchUs) the figure leaves out.
	dispatches int
}

// probeRunsBudget is the time after which a pass probe stops taking
// timed runs, once it has two (measurePasses).
const probeRunsBudget = 1500 * time.Millisecond

// measurePasses sets m.Passes (Figures): the kinds of pass with figures
// of their own (cost.PassKind), timed with the backend's kernels on
// resident tensors, in place, from the device's timestamps, each pass's
// time less its launches and over its occupancy (cost.Device.Occupancy,
// from m.ConcurrentGroups). Each kind's figure is fitted to the passes of
// two sizes of a call that takes it:
//
//   - the in-order fold: a ScatterElements-18 add of 64K and of 1M
//     float32 updates into 4096 elements (the bucketed fold), and a
//     ScatterND-18 add of 4K and 64K rows of 16 into 4096 rows (the
//     in-order fold of rows); the radix passes are fitted to all four;
//   - resolve: a ScatterElements-18 of 64K and 1M updates into 256K
//     elements, with the fold's resolves;
//   - table: a ScatterNDUpdate-15 of 128 and 2048 rows of 16 into 8192,
//     per dispatch and per position;
//   - indexed: a ScatterND-18 of 4K and 64K distinct rows of 16, with the
//     ScatterElements-18 probe's scatter;
//   - hot: a ScatterND-18 int32 add of 64K and 1M updates, 16 on each
//     target, into 256K elements; its KeyNs from the 1M updates drawn
//     from a Zipf law over 4096 targets instead, and the bucketed fold's
//     from a ScatterElements-18 add of 64K such updates.
//
// The probes run in deterministic mode whatever the backend's: a call
// on another goroutine during a new measurement may then fold in order
// too (the same result, exact). m.Passes is left all zero (not measured)
// on a device without timestamps. On lavapipe it takes about 6 s, once.
func (b *Backend) measurePasses(ctx context.Context, m *cost.Device) (err error) {
	m.Passes = &cost.PassFigures{}
	defer b.setFlag(&b.deterministic, true)()
	upload, closeAll := b.probeUploads(ctx, &err)
	defer closeAll()
	rng := rand.New(rand.NewSource(1))
	indices := func(n, dim int, shape []int) *tensor.Tensor {
		idx := make([]int64, n)
		for i := range idx {
			idx[i] = int64(rng.Intn(dim))
		}
		return tensor.MustFromSlice(shape, idx)
	}
	values := func(shape []int) *tensor.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%13)*0.25 - 1
		}
		return tensor.MustFromSlice(shape, v)
	}
	const slots = 4096
	// The timed runs of each call, after a first.
	div, reps := b.probeScale(5)
	var calls []Call
	for _, n := range []int{1 << 16 / div, 1 << 20 / div} {
		data := upload(mustNew(tensor.Float32, slots))
		calls = append(calls, Call{Op: "ScatterElements-18", Reduction: "add", Data: data, Out: data,
			Indices: upload(indices(n, slots, []int{n})), Updates: upload(values([]int{n}))})
	}
	for _, rows := range []int{1 << 12 / div, 1 << 16 / div} {
		data := upload(values([]int{slots, 16}))
		calls = append(calls, Call{Op: "ScatterND-18", Reduction: "add", Data: data, Out: data,
			Indices: upload(indices(rows, slots, []int{rows, 1})), Updates: upload(values([]int{rows, 16}))})
	}
	// The resolve of a ScatterElements-18 of 64K and of 1M float32
	// updates (reduction none) into 256K elements.
	for _, n := range []int{1 << 16 / div, 1 << 20 / div} {
		data := upload(mustNew(tensor.Float32, 1<<18))
		calls = append(calls, Call{Op: "ScatterElements-18", Data: data, Out: data,
			Indices: upload(indices(n, 1<<18, []int{n})), Updates: upload(values([]int{n}))})
	}
	// The last-writer table's resolve: a ScatterNDUpdate-15 of 128 and
	// of 2048 rows of 16 into 8192 rows.
	for _, rows := range []int{128, 2048} {
		data := upload(values([]int{8192, 16}))
		calls = append(calls, Call{Op: "ScatterNDUpdate-15", Data: data, Out: data,
			Indices: upload(indices(rows, 8192, []int{rows, 1})), Updates: upload(values([]int{rows, 16}))})
	}
	// The indexed scatter: a ScatterND-18 of 4K and of 64K distinct rows
	// of 16 float32 (reduction none) into twice as many rows.
	for _, rows := range []int{1 << 12 / div, 1 << 16 / div} {
		data := upload(values([]int{2 * rows, 16}))
		perm := rng.Perm(2 * rows)[:rows]
		idx := make([]int64, rows)
		for i, r := range perm {
			idx[i] = int64(r)
		}
		calls = append(calls, Call{Op: "ScatterND-18", Data: data, Out: data,
			Indices: upload(tensor.MustFromSlice([]int{rows, 1}, idx)), Updates: upload(values([]int{rows, 16}))})
	}
	// The hot-target census: a ScatterND-18 add of 64K and of 1M int32
	// updates, 16 on each target on average, into 256K elements (too
	// many for workgroup memory; int32, whose sum takes the atomics in
	// deterministic mode too).
	for _, n := range []int{1 << 16 / div, 1 << 20 / div} {
		data := upload(mustNew(tensor.Int32, 1<<18))
		calls = append(calls, Call{Op: "ScatterND-18", Reduction: "add", Data: data, Out: data,
			Indices: upload(indices(n, max(n/16, 1), []int{n, 1})), Updates: upload(mustNew(tensor.Int32, n))})
	}
	// Calls whose targets are drawn from a power law (Zipf, s=1.1, over
	// 4096 targets placed at random: the hottest takes about a tenth of
	// the updates), what
	// skewed calls meet: what each update on the hottest target adds
	// (cost.PassFigure.KeyNs) to the hot-target census, with the larger
	// census probe's updates, and to the bucketed fold, whose hottest
	// slot's list one workgroup folds, with 64K float32 updates (the
	// fold's own probes' smaller size). With every update on one target
	// the census folds them all in workgroup memory at almost no cost,
	// while a power law's many warm targets crowd it.
	zipf := rand.NewZipf(rng, 1.1, 1, 4095)
	skewed := map[int]skewProbe{}
	for _, c := range []struct {
		op   string
		n    int
		kind cost.PassKind
		data *tensor.Tensor
		upd  func(n int) *tensor.Tensor
	}{
		{"ScatterND-18", 1 << 20 / div, cost.PassHot, mustNew(tensor.Int32, 1<<18), func(n int) *tensor.Tensor { return mustNew(tensor.Int32, n) }},
		{"ScatterElements-18", 1 << 16 / div, cost.PassBucket, mustNew(tensor.Float32, slots), func(n int) *tensor.Tensor { return values([]int{n}) }},
	} {
		// The ranks placed at random: the hot targets in buckets of their
		// own, not all in the first.
		perm := rng.Perm(4096)
		idx := make([]int64, c.n)
		for i := range idx {
			idx[i] = int64(perm[zipf.Uint64()])
		}
		shape := []int{c.n}
		if c.op == "ScatterND-18" {
			shape = []int{c.n, 1}
		}
		req := ops.Request{Op: c.op, Reduction: "add", Data: c.data, Indices: tensor.MustFromSlice(shape, idx), Updates: c.upd(c.n)}
		p, perr := ops.Prepare(req)
		if perr != nil {
			return perr
		}
		data := upload(c.data)
		skewed[len(calls)] = skewProbe{kind: c.kind, hottest: hottestUpdates(p)}
		calls = append(calls, Call{Op: c.op, Reduction: "add", Data: data, Out: data,
			Indices: upload(req.Indices), Updates: upload(req.Updates)})
	}
	keyPts := map[cost.PassKind]passPoint{}
	if err != nil {
		return err
	}
	points := map[cost.PassKind][]passPoint{}
	for ci, c := range calls {
		p, err := b.prepareCall(c)
		if err != nil {
			return err
		}
		n, err := b.NeedsInPlace(p)
		if err != nil {
			return err
		}
		// The device time by label, the fastest of reps runs after one
		// (fastest: a loaded moment stays out of the figure), or of
		// fewer, at least two, once the timed runs have taken
		// probeRunsBudget: a probe that takes a second a run (the
		// in-order fold of 1M updates on lavapipe) gains little from
		// more, and costs every first measurement seconds.
		times := map[string][]time.Duration{}
		runs := 0
		var spent time.Duration
		for i := -1; i < reps; i++ {
			t0 := time.Now()
			if err := b.Run(ctx, c); err != nil {
				return err
			}
			if i < 0 {
				continue
			}
			runs++
			spent += time.Since(t0)
			by := map[string]time.Duration{}
			for _, ps := range b.LastStats().Passes {
				by[ps.Label] += ps.Duration
			}
			for l, d := range by {
				times[l] = append(times[l], d)
			}
			if runs >= 2 && spent >= probeRunsBudget {
				break
			}
		}
		kinds := map[cost.PassKind]*passPoint{}
		seen := map[string]bool{}
		for _, ps := range n.Passes {
			if ps.Kind == cost.PassPlain {
				continue
			}
			pt := kinds[ps.Kind]
			if pt == nil {
				pt = &passPoint{}
				kinds[ps.Kind] = pt
			}
			pt.inv += float64(ps.Invocations)
			pt.pos += float64(ps.Positions)
			pt.groups += ps.Groups
			pt.dispatches += ps.Dispatches
			if !seen[ps.Name] {
				seen[ps.Name] = true
				if ts := times[ps.Name]; len(ts) == runs {
					pt.ns += float64(fastest(ts))
				}
			}
		}
		for k, pt := range kinds {
			// The figure is the time at full occupancy (cost.Device.Occupancy).
			pt.ns = max(pt.ns-float64(pt.dispatches)*m.LaunchUs*1e3, 0) /
				m.Occupancy(cost.Pass{Groups: pt.groups, Dispatches: pt.dispatches})
			sk, isSkewed := skewed[ci]
			switch {
			case isSkewed && k == sk.kind:
				keyPts[k] = *pt
			case !isSkewed && pt.ns > 0:
				points[k] = append(points[k], *pt)
			}
		}
	}
	m.Passes.Radix = fitPass(points[cost.PassRadix], false)
	m.Passes.Fold = fitPass(points[cost.PassFold], false)
	m.Passes.Bucket = fitPass(points[cost.PassBucket], false)
	m.Passes.Resolve = fitPass(points[cost.PassResolve], false)
	m.Passes.Table = fitPass(points[cost.PassTable], true)
	m.Passes.Hot = fitPass(points[cost.PassHot], false)
	for _, sk := range skewed {
		f := &m.Passes.Bucket
		if sk.kind == cost.PassHot {
			f = &m.Passes.Hot
		}
		key := keyPts[sk.kind]
		if sk.hottest == 0 || key.ns <= 0 || f.PositionNs <= 0 {
			continue
		}
		if extra := (key.ns - key.pos*f.PositionNs - key.inv*f.InvocationNs) / float64(sk.hottest); extra > 0 {
			f.KeyNs = max(extra, cost.MinElementNs)
		}
	}
	m.Passes.Indexed = fitPass(points[cost.PassIndexed], false)
	return nil
}

// skewProbe is a probe call whose targets follow a power law: the kind
// of pass whose KeyNs it measures, and the updates on its hottest target
// (hottestUpdates).
type skewProbe struct {
	kind    cost.PassKind
	hottest uint64
}

// fitPass fits t = inv*InvocationNs + pos*PositionNs to the points by
// least squares, or, with perDispatch, t = dispatches*DispatchNs +
// pos*PositionNs (a kind whose workgroup pays a fixed cost whatever its
// work: the table); where either figure comes out negative (noise, or
// points whose two counts keep one ratio), the positions alone carry the
// time. Figures below cost.MinElementNs that are not 0 are raised to it.
// No points: the zero figure (not measured).
func fitPass(pts []passPoint, perDispatch bool) cost.PassFigure {
	if len(pts) == 0 {
		return cost.PassFigure{}
	}
	first := func(p passPoint) float64 {
		if perDispatch {
			return float64(p.dispatches)
		}
		return p.inv
	}
	var ii, ip, pp, it, pt, tPos, posSum float64
	for _, p := range pts {
		x := first(p)
		ii += x * x
		ip += x * p.pos
		pp += p.pos * p.pos
		it += x * p.ns
		pt += p.pos * p.ns
		tPos += p.ns
		posSum += p.pos
	}
	var a, b float64
	if det := ii*pp - ip*ip; det > 1e-9*ii*pp {
		a = (it*pp - pt*ip) / det
		b = (pt*ii - it*ip) / det
	}
	if a < 0 || b <= 0 {
		a, b = 0, tPos/max(posSum, 1)
	}
	if a > 0 {
		a = max(a, cost.MinElementNs)
	}
	f := cost.PassFigure{PositionNs: max(b, cost.MinElementNs)}
	if perDispatch {
		f.DispatchNs = a
	} else {
		f.InvocationNs = a
	}
	return f
}
