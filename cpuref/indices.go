package cpuref

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// offset is the integer type that holds element offsets and positions.
type offset interface{ int32 | int }

// intType is the set of Go types behind the integer dtypes an index tensor
// may have.
type intType interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64
}

// decode checks every index of p against the range its version allows and
// returns them normalised, one entry per unit:
//
//   - KindAxis: the index in [0, s) of each of the J positions of indices;
//   - KindND: for each of the J tuples, the row it addresses, i.e. the
//     offset of the target slice in data divided by Inner;
//   - KindElements: for each update position u, the offset in data of the
//     element it lands on.
//
// On an out-of-range index it returns p.IndexAt's error for the first bad
// position in row-major order. Nothing is written outside the result, which
// comes from scratch: the caller releases it.
func decode[O offset](x *exec) ([]O, error) { return decodeWith[O](x, nil) }

// decodeWith is decode handing each task's keys to sink, when not nil, in
// place of returning them all (it then returns nil).
func decodeWith[O offset](x *exec, sink chunkSink[O]) ([]O, error) {
	switch x.p.Indices.DType {
	case tensor.Int8:
		return decodeAs[int8, O](x, sink)
	case tensor.Int16:
		return decodeAs[int16, O](x, sink)
	case tensor.Int32:
		return decodeAs[int32, O](x, sink)
	case tensor.Int64:
		return decodeAs[int64, O](x, sink)
	case tensor.Uint8:
		return decodeAs[uint8, O](x, sink)
	case tensor.Uint16:
		return decodeAs[uint16, O](x, sink)
	case tensor.Uint32:
		return decodeAs[uint32, O](x, sink)
	case tensor.Uint64:
		return decodeAs[uint64, O](x, sink)
	}
	return nil, &ops.Error{Op: x.p.Op.Name, Input: "indices", Err: ops.ErrDType,
		Msg: fmt.Sprintf("indices has dtype %v; it must be an integer type", x.p.Indices.DType)}
}

// chunkFunc decodes the units [lo, hi) into dst[:hi-lo] and returns the
// first bad position (of indices, row-major) or -1.
type chunkFunc[O offset] func(lo, hi int, dst []O) int

// chunker returns the chunkFunc of x's plan (nil for kinds without
// indices to decode).
func chunker[O offset](x *exec) chunkFunc[O] {
	switch x.p.Indices.DType {
	case tensor.Int8:
		return chunkerAs[int8, O](x)
	case tensor.Int16:
		return chunkerAs[int16, O](x)
	case tensor.Int32:
		return chunkerAs[int32, O](x)
	case tensor.Int64:
		return chunkerAs[int64, O](x)
	case tensor.Uint8:
		return chunkerAs[uint8, O](x)
	case tensor.Uint16:
		return chunkerAs[uint16, O](x)
	case tensor.Uint32:
		return chunkerAs[uint32, O](x)
	case tensor.Uint64:
		return chunkerAs[uint64, O](x)
	}
	return nil
}

func chunkerAs[I intType, O offset](x *exec) chunkFunc[O] {
	p := x.p
	raw := tensor.View[I](p.Indices)
	neg := p.Op.NegativeIndices
	var chunk chunkFunc[O]
	switch p.Kind {
	case ops.KindAxis:
		s := int64(p.Shape[p.Axis])
		chunk = func(lo, hi int, dst []O) int {
			if b := normalise(raw[lo:hi], dst, s, neg); b >= 0 {
				return lo + b
			}
			return -1
		}
	case ops.KindND:
		tl := p.TupleLen
		shape := p.Shape[:tl]
		rowStride := make([]int, tl) // strides of data's leading tl dimensions, in rows of Inner
		for c := range rowStride {
			rowStride[c] = p.Strides[c] / p.Inner // Inner > 0: there are updates
		}
		chunk = func(lo, hi int, dst []O) int {
			if b := ndRows(raw[lo*tl:hi*tl], dst[:hi-lo], shape, rowStride, neg); b >= 0 {
				return lo*tl + b
			}
			return -1
		}
	case ops.KindElements:
		s := int64(p.Shape[p.Axis])
		oOff, kOff := elementOffsets(p)
		st := p.Strides[p.Axis]
		chunk = func(lo, hi int, dst []O) int {
			if b := elemTargets(raw[lo:hi], dst, lo, s, neg, p.J*p.Inner, p.Inner, oOff, kOff, st); b >= 0 {
				return lo + b
			}
			return -1
		}
	}
	return chunk
}

func decodeAs[I intType, O offset](x *exec, sink chunkSink[O]) ([]O, error) {
	chunk := chunkerAs[I, O](x)
	if chunk == nil {
		return nil, nil
	}
	units, tasks := x.decodeTasks(sink != nil)
	var dst []O
	if sink == nil {
		dst = scratch[O](units)
	}
	var bad atomic.Int64
	bad.Store(math.MaxInt64)
	ok := forEach(x.done(), x.w, tasks, func(i int) {
		lo, hi := part(i, units, tasks)
		if int64(lo) > bad.Load() {
			return // an earlier position is already known to be bad
		}
		var buf []O
		if sink == nil {
			buf = dst[lo:hi]
		} else {
			// The chunk's keys stay in the cache until sink has used them.
			buf = scratch[O](hi - lo)
			defer release(buf)
		}
		if b := chunk(lo, hi, buf); b >= 0 {
			lowerBad(&bad, b)
		} else if sink != nil {
			sink(i, lo, buf)
		}
	})
	if !ok {
		release(dst)
		return nil, x.ctx.Err()
	}
	if err := x.badIndex(bad.Load()); err != nil {
		release(dst)
		return nil, err
	}
	return dst, nil
}

// lowerBad lowers bad to b when b is smaller.
func lowerBad(bad *atomic.Int64, b int) {
	for {
		cur := bad.Load()
		if int64(b) >= cur || bad.CompareAndSwap(cur, int64(b)) {
			return
		}
	}
}

// badIndex returns the error for the out-of-range index at position b of
// indices, or nil when b is math.MaxInt64 (none).
func (x *exec) badIndex(b int64) error {
	if b == math.MaxInt64 {
		return nil
	}
	p := x.p
	if _, err := p.IndexAt(int(b)); err != nil {
		return err
	}
	return &ops.Error{Op: p.Op.Name, Input: "indices", Err: ops.ErrIndexRange,
		Msg: fmt.Sprintf("cpuref: indices element %d is out of range but Plan.IndexAt accepts it", b)}
}

// chunkSink receives the decoded keys of the units [lo, lo+len(keys)) of
// decode task i, instead of a slice of all keys.
type chunkSink[O offset] func(i, lo int, keys []O)

// decodeTasks returns the number of units decode produces and the number
// of tasks it splits them into; grouped, the tasks are also the chunks
// whose updates are grouped, and each must be large enough to fill every
// group with more than a few updates.
func (x *exec) decodeTasks(grouped bool) (units, tasks int) {
	units = x.p.J
	if x.p.Kind == ops.KindElements {
		units = x.p.NumUpdates()
	}
	size := max(1, x.g.decode)
	if grouped {
		size = max(size, 32*x.groups)
	}
	return units, ceilDiv(units, size)
}

// normalise checks every value of raw against [-s, s-1] (neg) or [0, s-1]
// and stores it in dst, negative values counted from the end. It returns
// the offset in raw of the first value out of range, or -1.
func normalise[I intType, O offset](raw []I, dst []O, s int64, neg bool) int {
	dst = dst[:len(raw)]
	for i, v := range raw {
		x, ok := checkIndex(v, s, neg)
		if !ok {
			return i
		}
		dst[i] = O(x)
	}
	return -1
}

// ndRows checks the index tuples in raw (len(shape) components each, the
// c-th indexing a dimension of size shape[c]) and stores in rows the row
// each addresses: the sum of its normalised components times rowStride. It
// returns the offset in raw of the first value out of range, or -1.
func ndRows[I intType, O offset](raw []I, rows []O, shape, rowStride []int, neg bool) int {
	tl := len(shape)
	for j := range rows {
		tuple := raw[j*tl : j*tl+tl]
		r := 0
		for c, v := range tuple {
			x, ok := checkIndex(v, int64(shape[c]), neg)
			if !ok {
				return j*tl + c
			}
			r += x * rowStride[c]
		}
		rows[j] = O(r)
	}
	return -1
}

// elementOffsets returns, for a KindElements plan, the offset in data of
// the coordinates before the axis of every o (the coordinates of o in
// indices.shape[:axis]) and of those after it of every k; kOff is nil when
// indices and data agree after the axis, and the offset of k is k.
func elementOffsets(p *ops.Plan) (oOff, kOff []int) {
	is, ax := p.IndicesShape, p.Axis
	oOff = make([]int, p.Outer)
	coord := make([]int, ax)
	for o := range oOff {
		off := 0
		for d, c := range coord {
			off += c * p.Strides[d]
		}
		oOff[o] = off
		for d := ax - 1; d >= 0; d-- {
			if coord[d]++; coord[d] < is[d] {
				break
			}
			coord[d] = 0
		}
	}
	if tensor.SameShape(is[ax+1:], p.Shape[ax+1:]) {
		return oOff, nil
	}
	kOff = make([]int, p.Inner)
	coord = make([]int, len(is)-ax-1)
	for k := range kOff {
		off := 0
		for d, c := range coord {
			off += c * p.Strides[ax+1+d]
		}
		kOff[k] = off
		for d := len(coord) - 1; d >= 0; d-- {
			if coord[d]++; coord[d] < is[ax+1+d] {
				break
			}
			coord[d] = 0
		}
	}
	return oOff, kOff
}

// elemTargets checks the indices raw of update positions lo, lo+1, ...
// like normalise and stores in dst the offsets of their target elements:
// oOff[o] + index*st + kOff[k] (k when kOff is nil) for u = o*block + j*inner
// + k. It returns the offset in raw of the first value out of range, or -1.
func elemTargets[I intType, O offset](raw []I, dst []O, lo int, s int64, neg bool, block, inner int, oOff, kOff []int, st int) int {
	dst = dst[:len(raw)]
	o, r := lo/block, lo%block
	for i := 0; i < len(raw); o, r = o+1, 0 {
		// The positions of this o: [i, end).
		end := min(len(raw), i+block-r)
		base := oOff[o]
		if inner == 1 {
			for ; i < end; i++ {
				x, ok := checkIndex(raw[i], s, neg)
				if !ok {
					return i
				}
				dst[i] = O(base + x*st)
			}
			continue
		}
		k := r % inner
		for ; i < end; i++ {
			x, ok := checkIndex(raw[i], s, neg)
			if !ok {
				return i
			}
			off := base + x*st
			if kOff == nil {
				off += k
			} else {
				off += kOff[k]
			}
			dst[i] = O(off)
			if k++; k == inner {
				k = 0
			}
		}
	}
	return -1
}

// checkIndex normalises v against [-s, s-1] (neg) or [0, s-1]; ok is false
// when v is out of range.
func checkIndex[I intType](v I, s int64, neg bool) (x int, ok bool) {
	w := int64(v)
	if w < 0 {
		// v > 0 with w < 0: a uint64 above MaxInt64.
		if !neg || w < -s || v > 0 {
			return 0, false
		}
		w += s
	} else if w >= s {
		return 0, false
	}
	return int(w), true
}

// lastWriters returns, for a ScatterUpdate-3 plan whose J indices into an
// axis of size s are idx, the positions j of the updates that no later
// update to the same slice overwrites, in increasing order; keep is nil
// when that is all of them. distinct reports whether the updates to apply
// (keep, or all when nil) have distinct targets; it is false when finding
// the last writers would cost more than it saves.
func lastWriters(idx []int, s int) (keep []int, distinct bool) {
	J := len(idx)
	if J < 2 {
		return nil, true
	}
	if J >= math.MaxInt32 || s > 4*J+1<<16 {
		return nil, false
	}
	last := make([]int32, s) // j+1 of the last update to each slice; 0 for none
	for j, i := range idx {
		last[i] = int32(j + 1)
	}
	keep = make([]int, 0, min(s, J))
	for j, i := range idx {
		if int(last[i]) == j+1 {
			keep = append(keep, j)
		}
	}
	if len(keep) == J {
		return nil, true
	}
	return keep, true
}
