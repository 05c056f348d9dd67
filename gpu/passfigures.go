//go:build cgo

package gpu

import (
	"context"
	"math/rand"
	"time"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// passPoint is one measured pass of a kind: its invocations, positions
// and device time.
type passPoint struct {
	inv, pos float64
	ns       float64
	// dispatches is the passes' dispatches, whose launches
	// (cost.Device.LaunchUs) the figure leaves out.
	dispatches int
}

// measurePasses sets m.Passes (Figures): the in-order fold's kinds of
// pass, timed with its own kernels on resident tensors, in place, from
// the device's timestamps. Each kind's figure is fitted to the passes of
// two sizes of a call that takes it: a ScatterElements-18 add of 64K and
// of 1M float32 updates into 4096 elements (the bucketed fold), and a
// ScatterND-18 add of 4K and 64K rows of 16 into 4096 rows (the in-order
// fold of rows); the radix passes are fitted to all four. The probes run
// in deterministic mode whatever the backend's: a call on another
// goroutine during a new measurement may then fold in order too (the
// same result, exact). m.Passes is left all zero (not measured) on a
// device without timestamps. On lavapipe it takes 2-4 s, once.
func (b *Backend) measurePasses(ctx context.Context, m *cost.Device) (err error) {
	m.Passes = &cost.PassFigures{}
	b.mu.Lock()
	was := b.deterministic
	b.deterministic = true
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.deterministic = was
		b.mu.Unlock()
	}()
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
	if err != nil {
		return err
	}
	points := map[cost.PassKind][]passPoint{}
	for _, c := range calls {
		p, err := b.prepareCall(c)
		if err != nil {
			return err
		}
		n, err := b.NeedsInPlace(p)
		if err != nil {
			return err
		}
		// The device time by label, the fastest of reps runs after one
		// (fastest: a loaded moment stays out of the figure).
		times := map[string][]time.Duration{}
		for i := -1; i < reps; i++ {
			if err := b.Run(ctx, c); err != nil {
				return err
			}
			if i < 0 {
				continue
			}
			by := map[string]time.Duration{}
			for _, ps := range b.LastStats().Passes {
				by[ps.Label] += ps.Duration
			}
			for l, d := range by {
				times[l] = append(times[l], d)
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
			pt.dispatches += ps.Dispatches
			if !seen[ps.Name] {
				seen[ps.Name] = true
				if ts := times[ps.Name]; len(ts) == reps {
					pt.ns += float64(fastest(ts))
				}
			}
		}
		for k, pt := range kinds {
			pt.ns = max(pt.ns-float64(pt.dispatches)*m.LaunchUs*1e3, 0)
			if pt.ns > 0 {
				points[k] = append(points[k], *pt)
			}
		}
	}
	m.Passes.Radix = fitPass(points[cost.PassRadix])
	m.Passes.Fold = fitPass(points[cost.PassFold])
	m.Passes.Bucket = fitPass(points[cost.PassBucket])
	return nil
}

// fitPass fits t = inv*InvocationNs + pos*PositionNs to the points by
// least squares; where either figure comes out negative (noise, or
// points whose invocations and positions keep one ratio), the positions
// alone carry the time. Figures below cost.MinElementNs that are not 0
// are raised to it. No points: the zero figure (not measured).
func fitPass(pts []passPoint) cost.PassFigure {
	if len(pts) == 0 {
		return cost.PassFigure{}
	}
	var ii, ip, pp, it, pt, tPos, posSum float64
	for _, p := range pts {
		ii += p.inv * p.inv
		ip += p.inv * p.pos
		pp += p.pos * p.pos
		it += p.inv * p.ns
		pt += p.pos * p.ns
		tPos += p.ns
		posSum += p.pos
	}
	var f cost.PassFigure
	if det := ii*pp - ip*ip; det > 1e-9*ii*pp {
		f.InvocationNs = (it*pp - pt*ip) / det
		f.PositionNs = (pt*ii - it*ip) / det
	}
	if f.InvocationNs < 0 || f.PositionNs <= 0 {
		f = cost.PassFigure{PositionNs: tPos / max(posSum, 1)}
	}
	if f.InvocationNs > 0 {
		f.InvocationNs = max(f.InvocationNs, cost.MinElementNs)
	}
	f.PositionNs = max(f.PositionNs, cost.MinElementNs)
	return f
}
