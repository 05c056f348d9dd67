package cpuref

import (
	"unsafe"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// The scatters are generic over E, the element's storage: a type of the
// dtype's size (uint8 ... uint64, [2]uint64 for complex128) or string, so
// that moves are plain assignments and copies whatever the dtype.

// scatter runs a KindND or KindElements plan.
func scatter[O offset](x *exec) error {
	if x.p.DType != tensor.String {
		if x.planBins() {
			if x.foldSerial() {
				return bySize(x, scatterSerial[uint8, O], scatterSerial[uint16, O], scatterSerial[uint32, O],
					scatterSerial[uint64, O], scatterSerial[[2]uint64, O])
			}
			return bySize(x, scatterBinned[uint8, O], scatterBinned[uint16, O], scatterBinned[uint32, O],
				scatterBinned[uint64, O], scatterBinned[[2]uint64, O])
		}
		if x.planOwned() {
			return bySize(x, scatterOwned[uint8, O], scatterOwned[uint16, O], scatterOwned[uint32, O],
				scatterOwned[uint64, O], scatterOwned[[2]uint64, O])
		}
		if x.planGroups() {
			return bySize(x, scatterGrouped[uint8, O], scatterGrouped[uint16, O], scatterGrouped[uint32, O],
				scatterGrouped[uint64, O], scatterGrouped[[2]uint64, O])
		}
	}
	tgt, err := decode[O](x)
	if err != nil {
		return err
	}
	defer release(tgt)
	if err := x.copyData(); err != nil {
		return err
	}
	out, upd := x.out, x.p.Updates
	if x.p.DType == tensor.String {
		return scatterAs(x, out.Strings, upd.Strings, tgt)
	}
	switch x.p.DType.Size() {
	case 1:
		return scatterAs(x, viewAs[uint8](out.Data), viewAs[uint8](upd.Data), tgt)
	case 2:
		return scatterAs(x, viewAs[uint16](out.Data), viewAs[uint16](upd.Data), tgt)
	case 4:
		return scatterAs(x, viewAs[uint32](out.Data), viewAs[uint32](upd.Data), tgt)
	case 8:
		return scatterAs(x, viewAs[uint64](out.Data), viewAs[uint64](upd.Data), tgt)
	}
	return scatterAs(x, viewAs[[2]uint64](out.Data), viewAs[[2]uint64](upd.Data), tgt)
}

// bySize calls the function for the size of x's element type with out and
// updates viewed as that type.
func bySize(x *exec,
	f1 func(*exec, []uint8, []uint8) error, f2 func(*exec, []uint16, []uint16) error,
	f4 func(*exec, []uint32, []uint32) error, f8 func(*exec, []uint64, []uint64) error,
	f16 func(*exec, [][2]uint64, [][2]uint64) error) error {
	out, upd := x.out.Data, x.p.Updates.Data
	switch x.p.DType.Size() {
	case 1:
		return f1(x, viewAs[uint8](out), viewAs[uint8](upd))
	case 2:
		return f2(x, viewAs[uint16](out), viewAs[uint16](upd))
	case 4:
		return f4(x, viewAs[uint32](out), viewAs[uint32](upd))
	case 8:
		return f8(x, viewAs[uint64](out), viewAs[uint64](upd))
	}
	return f16(x, viewAs[[2]uint64](out), viewAs[[2]uint64](upd))
}

func scatterAs[E any, O offset](x *exec, out, upd []E, tgt []O) error {
	k, err := newKernels[E, O](x)
	if err != nil {
		return err
	}
	if k.free != nil {
		defer k.free()
	}
	if x.p.Kind == ops.KindND && x.p.Inner > 1 {
		return scatterRuns(x, out, upd, tgt, k)
	}
	// ScatterElements, and ScatterND with one-element slices, whose rows
	// are then the target elements themselves.
	return scatterElems(x, out, upd, tgt, k)
}

// scatterElems applies update u to out[tgt[u]] for every u. Updates that
// differ in o or k never meet, so tasks take ranges of o and of k and walk
// j in order.
func scatterElems[E any, O offset](x *exec, out, upd []E, tgt []O, k kernels[E, O]) error {
	p := x.p
	J, inner := p.J, p.Inner
	apply := func(each func(fn func(t []O, u []E))) {
		if k.neutral != nil {
			v := *k.neutral
			each(func(t []O, _ []E) { fillI(out, t, v) })
		}
		each(func(t []O, u []E) { k.indexed(out, t, u) })
		if k.finish != nil {
			each(func(t []O, _ []E) { k.finish(out, t) })
		}
	}
	g := planGrid(p.Outer, J, inner, false, x.want(len(tgt)), x.g.piece)
	ok := forEach(x.scatterDone(), x.w, g.tasks(), func(t int) {
		oLo, oHi, _, _, kLo, kHi := g.task(t)
		if kLo == 0 && kHi == inner {
			// Whole blocks of o: one piece, in u order.
			lo, hi := oLo*J*inner, oHi*J*inner
			apply(func(fn func([]O, []E)) { fn(tgt[lo:hi], upd[lo:hi]) })
			return
		}
		apply(func(fn func([]O, []E)) {
			for o := oLo; o < oHi; o++ {
				for j := range J {
					b := (o*J + j) * inner
					fn(tgt[b+kLo:b+kHi], upd[b+kLo:b+kHi])
				}
			}
		})
	})
	if !ok {
		return x.cancelled()
	}
	return nil
}

// scatterRuns applies, for every tuple j, the run of Inner updates at
// j*Inner to the slice at rows[j]*Inner. Different k never meet, so tasks
// take ranges of k and walk j in order.
func scatterRuns[E any, O offset](x *exec, out, upd []E, rows []O, k kernels[E, O]) error {
	J, inner := x.p.J, x.p.Inner
	move := func(dst, src, n int) {
		if k.contig == nil {
			copy(out[dst:dst+n], upd[src:src+n])
		} else {
			k.contig(out[dst:dst+n], upd[src:src+n])
		}
	}
	g := planGrid(1, J, inner, false, x.want(J*inner), x.g.run)
	if !forEach(x.scatterDone(), x.w, g.tasks(), func(t int) {
		_, _, _, _, kLo, kHi := g.task(t)
		for j, r := range rows {
			move(int(r)*inner+kLo, j*inner+kLo, kHi-kLo)
		}
	}) {
		return x.cancelled()
	}
	return nil
}

// axis runs a ScatterUpdate-3 plan: for every o and j, the run of Inner
// updates at (o*J + j)*Inner replaces the slice at (o*s + idx[j])*Inner.
func (x *exec) axis() error {
	idx, err := decode[int](x)
	if err != nil {
		return err
	}
	defer release(idx)
	var keep []int
	distinct := false
	if !x.keepOverwritten {
		keep, distinct = lastWriters(idx, x.p.Shape[x.p.Axis])
	}
	if err := x.ctx.Err(); err != nil {
		return err
	}
	// Every update replaces a whole slice: only the slices no update
	// writes are copied from data.
	x.copyUncovered(idx)
	out, upd := x.out, x.p.Updates
	if x.p.DType == tensor.String {
		return axisMoves(x, out.Strings, upd.Strings, idx, keep, distinct)
	}
	switch x.p.DType.Size() {
	case 1:
		return axisMoves(x, viewAs[uint8](out.Data), viewAs[uint8](upd.Data), idx, keep, distinct)
	case 2:
		return axisMoves(x, viewAs[uint16](out.Data), viewAs[uint16](upd.Data), idx, keep, distinct)
	case 4:
		return axisMoves(x, viewAs[uint32](out.Data), viewAs[uint32](upd.Data), idx, keep, distinct)
	case 8:
		return axisMoves(x, viewAs[uint64](out.Data), viewAs[uint64](upd.Data), idx, keep, distinct)
	}
	return axisMoves(x, viewAs[[2]uint64](out.Data), viewAs[[2]uint64](upd.Data), idx, keep, distinct)
}

// copyUncovered copies into out the slices of data along the axis of a
// ScatterUpdate-3 plan that no index in idx names: for every o, the runs
// of consecutive slices t with no update, (o*s + t)*Inner onwards.
// Nothing is copied in place.
func (x *exec) copyUncovered(idx []int) {
	if x.inPlace {
		return
	}
	p := x.p
	s := p.Shape[p.Axis]
	hit := make([]bool, s)
	for _, t := range idx {
		hit[t] = true
	}
	var gaps [][2]int // runs [t0, t1) of slices no update writes
	for t := 0; t < s; {
		if hit[t] {
			t++
			continue
		}
		t0 := t
		for t < s && !hit[t] {
			t++
		}
		gaps = append(gaps, [2]int{t0, t})
	}
	switch {
	case len(gaps) == 0:
		return
	case gaps[0] == [2]int{0, s}:
		x.forceCopy()
		return
	}
	if p.DType == tensor.String {
		copyGaps(x, x.out.Strings, p.Data.Strings, gaps)
		return
	}
	copyGaps(x, x.out.Data, p.Data.Data, gaps)
}

// copyGaps copies the runs of slices gaps (see copyUncovered) of every o
// from dat into out, where a slice is Inner elements of E, or Inner*size
// bytes.
func copyGaps[E any](x *exec, out, dat []E, gaps [][2]int) {
	p := x.p
	outer, s := p.Outer, p.Shape[p.Axis]
	inner := len(dat) / (outer * s) // elements of E per slice
	gapLen := 0
	for _, g := range gaps {
		gapLen += g[1] - g[0]
	}
	var z E
	bytes := outer * gapLen * inner * int(unsafe.Sizeof(z))
	parts := max(1, min(4*x.w, bytes/x.g.copy))
	copyO := func(o int) {
		for _, g := range gaps {
			lo, hi := (o*s+g[0])*inner, (o*s+g[1])*inner
			copy(out[lo:hi], dat[lo:hi])
		}
	}
	if outer >= parts {
		forEach(nil, x.w, parts, func(i int) {
			lo, hi := part(i, outer, parts)
			for o := lo; o < hi; o++ {
				copyO(o)
			}
		})
		return
	}
	// Few rows of o: each gap is copied in parallel pieces.
	for o := range outer {
		for _, g := range gaps {
			lo, hi := (o*s+g[0])*inner, (o*s+g[1])*inner
			copyParallel(x.w, x.g.copy, out[lo:hi], dat[lo:hi])
		}
	}
}

// axisMoves applies the updates j in keep (all when nil), in order. When
// their targets are distinct, tasks may split j as well as o and k.
func axisMoves[E any](x *exec, out, upd []E, idx, keep []int, distinct bool) error {
	p := x.p
	outer, J, inner, s := p.Outer, p.J, p.Inner, p.Shape[p.Axis]
	m := J
	if keep != nil {
		m = len(keep)
	}
	g := planGrid(outer, m, inner, distinct, x.want(outer*m*inner), x.g.run)
	if !forEach(x.scatterDone(), x.w, g.tasks(), func(t int) {
		oLo, oHi, mLo, mHi, kLo, kHi := g.task(t)
		n := kHi - kLo
		for o := oLo; o < oHi; o++ {
			for i := mLo; i < mHi; i++ {
				j := i
				if keep != nil {
					j = keep[i]
				}
				dst := (o*s+idx[j])*inner + kLo
				src := (o*J+j)*inner + kLo
				if n == 1 {
					out[dst] = upd[src]
				} else {
					copy(out[dst:dst+n], upd[src:src+n])
				}
			}
		}
	}) {
		return x.cancelled()
	}
	return nil
}

// slice runs a SliceScatter-15 plan. Trailing dimensions that the slice
// covers whole merge, with the next one if its step is 1, into contiguous
// runs; the dimension before them is walked with its stride, and the ones
// before that are rows. When the slice covers all of data, the copy of data
// is skipped; otherwise, where the slice has enough coordinates along the
// first dimension, the copy is interleaved with the moves (see
// sliceMoves), so that the rows the slice writes are still in the caches.
func (x *exec) slice() error {
	p := x.p
	run, d := 1, len(p.Shape)-1
	for d >= 0 && p.SliceStep[d] == 1 && p.SliceCount[d] == p.Shape[d] {
		run *= p.Shape[d]
		d--
	}
	base := 0
	if d >= 0 && p.SliceStep[d] == 1 {
		run *= p.SliceCount[d]
		base = p.SliceStart[d] * p.Strides[d]
		d--
	}
	s := sliceJob{d: d, run: run, base: base}
	if p.NumUpdates() < x.out.Len() && !x.inPlace {
		// Interleave when every task can take a range of first-dimension
		// coordinates (d < 0: the slice is one contiguous block, copied
		// around as a whole).
		s.tasks = x.want(p.NumUpdates())
		s.fused = d >= 0 && p.SliceCount[0] >= s.tasks
		if !s.fused {
			if err := x.copyData(); err != nil {
				return err
			}
		}
	} else if err := x.ctx.Err(); err != nil {
		return err
	}
	out, upd, dat := x.out, x.p.Updates, x.p.Data
	if x.p.DType == tensor.String {
		return sliceMoves(x, out.Strings, upd.Strings, dat.Strings, s)
	}
	switch x.p.DType.Size() {
	case 1:
		return sliceMoves(x, viewAs[uint8](out.Data), viewAs[uint8](upd.Data), viewAs[uint8](dat.Data), s)
	case 2:
		return sliceMoves(x, viewAs[uint16](out.Data), viewAs[uint16](upd.Data), viewAs[uint16](dat.Data), s)
	case 4:
		return sliceMoves(x, viewAs[uint32](out.Data), viewAs[uint32](upd.Data), viewAs[uint32](dat.Data), s)
	case 8:
		return sliceMoves(x, viewAs[uint64](out.Data), viewAs[uint64](upd.Data), viewAs[uint64](dat.Data), s)
	}
	return sliceMoves(x, viewAs[[2]uint64](out.Data), viewAs[[2]uint64](upd.Data), viewAs[[2]uint64](dat.Data), s)
}

// sliceJob is the shape of a slice's moves (see slice).
type sliceJob struct {
	d, run, base int
	// fused: the copy of data is interleaved with the moves; each of the
	// tasks takes a range of first-dimension slice coordinates.
	fused bool
	tasks int
}

// sliceMoves writes the slice: dimensions 0..d-1 are rows, dimension d
// (none when d < 0) is walked with its stride, and each of its coordinates
// takes a contiguous run of updates starting at base.
//
// Fused, each task takes a range of slice coordinates c0 along dimension
// 0 and, for each, copies from data the rows of dimension 0 that c0 owns
// (its own, up to the next coordinate's; the first and the last also own
// the rows before and after the slice) and then writes c0's updates into
// them while they are in the caches. Every row is copied exactly once,
// and each is copied before the updates land on it: the traffic is that
// of one pass over data, updates and out, not a copy and then a second,
// scattered pass over the rows. Where the slice takes every second
// element of single-element runs of a row (two dimensions, 4-byte
// elements), the row is built in one pass from data and its updates
// (interleave2) instead of copied and then stored into with a stride.
func sliceMoves[E any](x *exec, out, upd, dat []E, s sliceJob) error {
	p := x.p
	d, run, base := s.d, s.run, s.base
	count, stride := 1, 0
	if d >= 0 {
		count = p.SliceCount[d]
		stride = p.SliceStep[d] * p.Strides[d]
		base += p.SliceStart[d] * p.Strides[d]
	} else {
		d = 0
	}
	rowShape := p.SliceCount[:d]
	rows := 1
	for _, c := range rowShape {
		rows *= c
	}
	// move writes the updates of rows [oLo, oHi), coordinates [mLo, mHi)
	// of dimension d and elements [kLo, kHi) of each run.
	move := func(oLo, oHi, mLo, mHi, kLo, kHi int) {
		n := kHi - kLo
		coord := make([]int, len(rowShape))
		tensor.Unravel(oLo, rowShape, coord)
		for row := oLo; row < oHi; row++ {
			off := base
			for i, c := range coord {
				off += (p.SliceStart[i] + c*p.SliceStep[i]) * p.Strides[i]
			}
			src := row * count * run
			if run == 1 {
				storeStrided(out, off+mLo*stride, stride, upd[src+mLo:src+mHi])
			} else {
				for c := mLo; c < mHi; c++ {
					dst, s := off+c*stride+kLo, src+c*run+kLo
					copy(out[dst:dst+n], upd[s:s+n])
				}
			}
			for i := len(coord) - 1; i >= 0; i-- {
				if coord[i]++; coord[i] < rowShape[i] {
					break
				}
				coord[i] = 0
			}
		}
	}
	var ok bool
	if s.fused {
		n0, s0, t0, dim0, row0 := p.SliceCount[0], p.SliceStart[0], p.SliceStep[0], p.Shape[0], p.Strides[0]
		perC0 := rows / n0 // rows of dimensions 0..d-1 per coordinate c0 (d >= 1)
		// Two dimensions, a step of 2 along the second, 4-byte elements:
		// each row the slice writes is built in one pass from data and
		// its updates (interleave2).
		var z E
		build := s.d == 1 && run == 1 && stride == 2 && unsafe.Sizeof(z) == 4 && !x.g.sliceNoBuild
		ok = forEach(x.scatterDone(), x.w, s.tasks, func(t int) {
			lo, hi := part(t, n0, s.tasks)
			for c0 := lo; c0 < hi; c0++ {
				// The rows of dimension 0 that c0 owns: [a, b).
				var a, b int
				if t0 > 0 {
					a, b = s0+c0*t0, s0+(c0+1)*t0
					if c0 == 0 {
						a = 0
					}
					if c0 == n0-1 {
						b = dim0
					}
				} else {
					a, b = s0+(c0+1)*t0+1, s0+c0*t0+1
					if c0 == n0-1 {
						a = 0
					}
					if c0 == 0 {
						b = dim0
					}
				}
				if build {
					// The span of row r from the slice's first element to
					// its last: updates at even places, data between.
					r := s0 + c0*t0
					first := base + r*row0
					end := first + 2*count - 1
					copy(out[a*row0:first], dat[a*row0:first])
					interleave2(cast[uint32](out[first:end]), cast[uint32](dat[first:end]), cast[uint32](upd[c0*count:(c0+1)*count]), &x.g)
					copy(out[end:b*row0], dat[end:b*row0])
					continue
				}
				copy(out[a*row0:b*row0], dat[a*row0:b*row0])
				if s.d == 0 {
					move(0, 1, c0, c0+1, 0, run)
				} else {
					move(c0*perC0, (c0+1)*perC0, 0, count, 0, run)
				}
			}
		})
	} else {
		// The slice selects distinct elements, so tasks may split any
		// dimension.
		g := planGrid(rows, count, run, true, x.want(len(upd)), x.g.run)
		ok = forEach(x.scatterDone(), x.w, g.tasks(), func(t int) {
			move(g.task(t))
		})
	}
	if !ok {
		return x.cancelled()
	}
	return nil
}

// storeStrided sets out[first + i*stride] = u[i] for every i. It checks
// the first and last positions once and then writes without a bounds check
// per element: the strided loop of a SliceScatter with a step on the last
// axis is otherwise bound by the checks.
func storeStrided[E any](out []E, first, stride int, u []E) {
	if len(u) == 0 {
		return
	}
	last := first + (len(u)-1)*stride
	_, _ = out[first], out[last] // every position lies between these two
	base := unsafe.Pointer(unsafe.SliceData(out))
	size := int(unsafe.Sizeof(u[0]))
	for i, v := range u {
		*(*E)(unsafe.Add(base, (first+i*stride)*size)) = v
	}
}
