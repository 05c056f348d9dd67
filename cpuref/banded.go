package cpuref

import (
	"sync"
	"unsafe"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// The banded fold: the serial fold of a float32 sum on two workers with
// the bits of one. out's elements split into two bands, one a worker.
// Each worker walks every unit in order, a chunk at a time: it checks
// the chunk's indices and keeps the units whose targets lie in its band
// in a list (bandKeepFold, 8 at a time), while it folds its list of the
// chunk before into its band. So every element sees its updates in
// position order, as in the one-worker loop, and the workers' random
// accesses into out go on at once, each into its own half of out. Each
// worker reads every index and update: 16M sums with int64 indices into
// 1M elements (SE-sum-dup) took 24 ms a worker on two workers at once,
// against 29 ms for the one-worker loop, on a 2-core AMD EPYC (Zen 2).
// Splitting each chunk between the workers instead, each handing the
// other the list of the other's band, was slower (38-40 ms): reading
// lists that the other core has just written cost more than reading
// every unit from memory.

const (
	// bandChunk is the units of a chunk.
	bandChunk = 8192
	// bandListLen is the entries a list has room for: a chunk's and the
	// 8 more that bandKeepFold needs.
	bandListLen = bandChunk + 8
	// bandWorkers is the workers of a banded fold. With more, each would
	// read every unit again.
	bandWorkers = 2
)

// bandStopped is what serialBanded's function returns where done closed
// before every unit was folded.
const bandStopped = -2

// bandParams are bandKeepFold's parameters: indices in [0, s) are good,
// a negative one gains add (0 where negative indices are refused), keys
// in [lo, hi) are kept, less lo (loM1 is lo-1); flags has 2 for int32
// indices; perm is bandPerm's address. s must be below 2^31. The
// assembly reads the fields at the offsets of this order.
type bandParams struct {
	s, add, lo, loM1, hi, flags int64
	perm                        unsafe.Pointer
}

// bandKept is bandKeepFold's list: at l, its targets in the first
// bandListLen entries and their updates in the next bandListLen, n
// entries so far.
type bandKept struct {
	l unsafe.Pointer
	n int
}

// bandPerm is bandKeepFold's table: for each mask of 8 lanes, the lanes
// whose bits are set, in order, then zeros, as VPERMD's indices.
var bandPerm = func() (t [256][8]int32) {
	for m := range t {
		k := 0
		for l := range 8 {
			if m>>l&1 != 0 {
				t[m][k] = int32(l)
				k++
			}
		}
	}
	return t
}()

// serialBanded returns, for a float32 sum at stride 1 with int32 or
// int64 indices into 2 to 2^31-1 elements, where the AVX2 loop runs
// (haveBands, grain.serialNoAsm unset), on two workers or more with
// grain.serialNoBand unset and at least grain.serialBandUnits units, a
// function that runs the serial fold of every unit into out as the
// banded fold. The function returns the first bad unit (out then holds
// part of the fold), -1 where every unit was folded, or bandStopped
// where done closed first. nil otherwise.
func serialBanded[E any](x *exec, out, upd []E) func(done <-chan struct{}) int {
	p := x.p
	units := x.binUnits()
	if !haveBands || x.g.serialNoAsm || x.g.serialNoDirect || x.g.serialNoBand || x.w < bandWorkers ||
		units < max(1, x.g.serialBandUnits) || p.Reduction != ops.Sum || p.DType != tensor.Float32 {
		return nil
	}
	var s int64
	switch {
	case p.Kind == ops.KindElements && p.Outer == 1 && p.Inner == 1 && p.Strides[p.Axis] == 1:
		s = int64(p.Shape[p.Axis])
	case p.Kind == ops.KindND && p.TupleLen == 1 && p.Inner == 1 && p.Strides[0] == 1:
		s = int64(p.Shape[0])
	default:
		return nil
	}
	o, u := cast[float32](out), cast[float32](upd)
	if s > int64(len(o)) || s < bandWorkers || s >= 1<<31 || len(u) < units {
		return nil
	}
	bp := bandParams{s: s, add: negMask(p.Op.NegativeIndices, s), perm: unsafe.Pointer(&bandPerm)}
	var isize uintptr
	var rawAt func(j int) int64
	switch p.Indices.DType {
	case tensor.Int64:
		raw := tensor.View[int64](p.Indices)
		rawAt, isize = func(j int) int64 { return raw[j] }, 8
	case tensor.Int32:
		raw := tensor.View[int32](p.Indices)
		rawAt, isize = func(j int) int64 { return int64(raw[j]) }, 4
		bp.flags = 2
	default:
		return nil
	}
	idx := unsafe.Pointer(&p.Indices.Data[0])
	return func(done <-chan struct{}) int {
		var bad [bandWorkers]int
		var wg sync.WaitGroup
		for b := range bandWorkers {
			lo, hi := part(b, int(s), bandWorkers)
			w := bandWorker{bp: bp, units: units, idx: idx, isize: isize, rawAt: rawAt, upd: u, band: o[lo:hi]}
			w.bp.lo, w.bp.loM1, w.bp.hi = int64(lo), int64(lo)-1, int64(hi)
			if b == bandWorkers-1 {
				bad[b] = w.run(done)
				break
			}
			wg.Go(func() { bad[b] = w.run(done) })
		}
		wg.Wait()
		first := -1
		for _, b := range bad {
			switch {
			case b == bandStopped:
				return bandStopped
			case b >= 0 && (first < 0 || b < first):
				first = b
			}
		}
		return first
	}
}

// bandWorker is one worker of a banded fold: its band is out's elements
// [bp.lo, bp.hi), at band.
type bandWorker struct {
	bp    bandParams
	units int
	idx   unsafe.Pointer
	isize uintptr
	rawAt func(j int) int64
	upd   []float32
	band  []float32
}

// run folds every unit whose target lies in w's band into it, in order,
// and returns the first bad unit, -1, or bandStopped.
func (w *bandWorker) run(done <-chan struct{}) int {
	var lists [2][]uint32
	for i := range lists {
		lists[i] = scratch[uint32](2 * bandListLen)
		defer release(lists[i])
	}
	prev := 0 // the entries of the chunk before's list
	for lo, c := 0, 0; lo < w.units; lo, c = lo+bandChunk, c+1 {
		if c%64 == 63 && isClosed(done) {
			return bandStopped
		}
		hi := min(w.units, lo+bandChunk)
		cur, last := unsafe.Pointer(&lists[c%2][0]), unsafe.Pointer(&lists[(c+1)%2][0])
		keep := bandKept{l: cur}
		units, folded := bandKeepFold(unsafe.Add(w.idx, uintptr(lo)*w.isize), unsafe.Pointer(&w.upd[lo]), hi-lo, &w.bp, &keep,
			unsafe.Pointer(&w.band[0]), last, prev)
		w.fold(last, folded, prev)
		j := w.tail(lo+units, hi, &keep)
		prev = keep.n
		if j < hi {
			w.fold(cur, 0, prev)
			return j
		}
	}
	w.fold(unsafe.Pointer(&lists[(ceilDiv(w.units, bandChunk)-1)%2][0]), 0, prev)
	return -1
}

// fold folds entries [from, n) of the list at l into w's band.
func (w *bandWorker) fold(l unsafe.Pointer, from, n int) {
	if from < n {
		foldSumF32I32(unsafe.Pointer(&w.band[0]), len(w.band), unsafe.Add(l, 4*from), unsafe.Add(l, 4*(bandListLen+from)), n-from, 0)
	}
}

// tail keeps units [j, hi) that bandKeepFold left (the last short of 8,
// or from a group with a bad index on) one by one, and returns the first
// bad unit, or hi.
func (w *bandWorker) tail(j, hi int, keep *bandKept) int {
	s, m, lo, width := w.bp.s, w.bp.add, w.bp.lo, uint64(w.bp.hi-w.bp.lo)
	for ; j < hi; j++ {
		i := w.rawAt(j)
		i += m & (i >> 63)
		if uint64(i) >= uint64(s) {
			return j
		}
		if t := i - lo; uint64(t) < width {
			*(*int32)(unsafe.Add(keep.l, 4*keep.n)) = int32(t)
			*(*float32)(unsafe.Add(keep.l, 4*(bandListLen+keep.n))) = w.upd[j]
			keep.n++
		}
	}
	return hi
}
