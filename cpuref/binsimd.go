package cpuref

import (
	"unsafe"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// The assembly partition loops of binned scatters (binned.go) for elements
// of 1, 2, 4 or 8 bytes and 4-byte targets, on amd64 (binsimd_amd64.s).
// Each partition task appends its entries to a stage: a row per bin in the
// first-level cache, the bin's write-combining buffer. A row that reaches
// 64 entries goes to the end of its bin's list in one piece, four cache
// lines of targets and one to eight of updates streamed past the caches,
// chaining a new block to the list when one fills.
//
//   - binPartition (AVX-512, 4-byte elements, up to 16 bins in loops for
//     4, 8 and 16, the target the index times a stride): checks and
//     decodes 16 indices at a time and compresses each bin's lanes, in
//     lane order, onto the end of the bin's row.
//   - decodeTargets (AVX-512): checks and decodes 16 indices at a time into
//     targets, plus the column for ScatterElements along the first axis;
//     binPartitionKeys (scalar, AVX2 and BMI2): appends decoded targets to
//     the rows of any number of bins up to maxBins. Without AVX-512 the
//     targets come from the Go decode (chunker).
//
// The lists are the ones binAppendRaw and binAppend build, entry for entry
// and in the same order: a bin's entries enter its row in position order,
// rows flush in order, and what a vector loop leaves (the last units, fewer
// than 16, or a group with a bad index) goes through the same rows one unit
// at a time, or through the Go decode. The first bad index is found by the
// Go code, so errors are the same.

// stageRow is the room of a stage row: 64 entries and a group of 16.
const stageRow = 96

// simdBins is the most bins the vector partition takes.
const simdBins = 16

// stageRowT is a bin's row of a stage: its targets and its updates (of 1,
// 2, 4 or 8 bytes).
type stageRowT struct {
	t [stageRow]uint32
	u [stageRow * 8]byte
}

// binStage is a partition task's stage and the parameters of its loops.
// binsimd_amd64.s reads and writes it at fixed offsets (checked by
// TestSIMDStageLayout).
type binStage struct {
	rows [maxBins]stageRowT
	cnt  [maxBins]int64 // entries in each row
	pos  [maxBins]int64 // where each bin's next entry goes in the lists
	tb   unsafe.Pointer // &tgtS[0]
	ub   unsafe.Pointer // &updS[0]
	nxt  unsafe.Pointer // &next[0]
	blk  int64          // the next free block
	bb   int64          // log2 of a block's entries
	// binPartition's parameters: indices in [0, s) are good, add is s
	// where negative indices count from the end (else 0), a target is the
	// index times mul, and its bin is the target >> shift (binPartitionKeys
	// uses shift too).
	s, add, mul, shift int64
	// flags: 1 for 16 bins, 4 for 4 (else 8), 2 for int32 indices (else
	// int64); stageCached: rows are flushed with plain stores, which leave
	// the lists in the caches (else streamed past them).
	flags int64
	esize int64 // bytes of an update
}

// stageCached is binStage.flags' bit for flushes with plain stores.
const stageCached = 8

// simdPlan reports whether x's plan suits the vector loops: int32 or
// int64 indices, each target the checked index times st, plus the column
// k < inner of the update where inner > 0 (ScatterElements along the first
// axis, inner a multiple of 16). It gives the index bound s, st, inner and
// the loops' flags for the index type.
func simdPlan(x *exec) (s int64, st, inner int, flags int64, ok bool) {
	p := x.p
	if !haveSIMD || x.g.binNoAsm || x.g.binNoVector {
		return 0, 0, 0, 0, false
	}
	switch {
	case p.Kind == ops.KindElements && p.Outer == 1 && p.Inner == 1:
		s, st = int64(p.Shape[p.Axis]), p.Strides[p.Axis]
	case p.Kind == ops.KindElements && p.Outer == 1 && p.Inner%16 == 0 && tensor.SameShape(p.IndicesShape[1:], p.Shape[1:]):
		s, st, inner = int64(p.Shape[0]), p.Strides[0], p.Inner
	case p.Kind == ops.KindND && p.TupleLen == 1 && p.Inner == 1:
		s, st = int64(p.Shape[0]), p.Strides[0]
	default:
		return 0, 0, 0, 0, false
	}
	if s >= 1<<31 || int64(st)*s+int64(inner) >= 1<<31 {
		return 0, 0, 0, 0, false
	}
	switch p.Indices.DType {
	case tensor.Int32:
		flags = 2
	case tensor.Int64:
	default:
		return 0, 0, 0, 0, false
	}
	return s, st, inner, flags, true
}

// decodeParams are decodeTargets' parameters: indices in [0, s) are good,
// add is s where negative indices count from the end (else 0), and a
// target is index*mul + base + k, with k the update's column: it starts at
// k and wraps at inner, or stays 0 where inner is 0. flags: 2 for int32
// indices (else int64).
type decodeParams struct {
	s, add, mul, base, inner, k, flags int64
}

// asmPartition returns, where the processor and x's binned plan allow, the
// assembly partition step: part appends the units [lo, hi) to stg's rows
// (buf, of the step's length, holds decoded targets meanwhile) and returns
// the first bad position, or -1. ok is false where the Go loops must run:
// without the assembly, for elements of other sizes than 1, 2, 4 and 8
// bytes, lists not aligned to cache lines or blocks of fewer than 64
// entries.
func asmPartition[E any, O offset](x *exec, upd []E, tgtS []O, updS []E, next []int32, shift, bb uint, nb int, chunkFn chunkFunc[O], stream bool) (part func(lo, hi int, stg *binStage, buf []O) int, newStage func() *binStage, ok bool) {
	var e E
	var o O
	p := x.p
	es := int(unsafe.Sizeof(e))
	if !haveKeys || x.g.binNoAsm || (es != 1 && es != 2 && es != 4 && es != 8) || unsafe.Sizeof(o) != 4 || nb > maxBins ||
		bb < 6 || bb > 30 || len(tgtS) == 0 || len(updS) == 0 ||
		uintptr(unsafe.Pointer(&tgtS[0]))%64 != 0 || uintptr(unsafe.Pointer(&updS[0]))%64 != 0 {
		return nil, nil, false
	}
	s, st, inner, flags, vec := simdPlan(x)
	add := int64(0)
	if p.Op.NegativeIndices {
		add = s
	}
	switch {
	case nb > 8:
		flags |= 1
	case nb <= 4:
		flags |= 4 // the vector loop compares each group with 4 bins, not 8
	}
	if !stream {
		flags |= stageCached
	}
	newStage = func() *binStage {
		stg := &scratch[binStage](1)[0]
		stg.tb, stg.ub, stg.nxt = unsafe.Pointer(&tgtS[0]), unsafe.Pointer(&updS[0]), unsafe.Pointer(&next[0])
		stg.bb, stg.s, stg.add, stg.mul, stg.shift, stg.flags, stg.esize = int64(bb), s, add, int64(st), int64(shift), flags, int64(es)
		return stg
	}
	isize := uintptr(8)
	if flags&2 != 0 {
		isize = 4
	}
	raw := p.Indices.Data
	ub := unsafe.Pointer(unsafe.SliceData(upd))
	switch {
	case vec && inner == 0 && nb <= simdBins && es == 4:
		// Decode and partition in one loop.
		u := unsafe.Slice((*uint32)(ub), len(upd))
		return func(lo, hi int, stg *binStage, _ []O) int {
			if hi <= lo {
				return -1
			}
			done := lo + binPartition(unsafe.Pointer(&raw[uintptr(lo)*isize]), unsafe.Add(ub, lo*es), hi-lo, stg)
			// The rest, one unit at a time.
			var bad int
			if flags&2 != 0 {
				bad = appendRest(stg, tensor.View[int32](p.Indices)[done:hi], u[done:hi], s, p.Op.NegativeIndices, st, shift)
			} else {
				bad = appendRest(stg, tensor.View[int64](p.Indices)[done:hi], u[done:hi], s, p.Op.NegativeIndices, st, shift)
			}
			if bad >= 0 {
				return done + bad
			}
			return -1
		}, newStage, true
	case vec:
		// Decode 16 at a time, then partition.
		d := decodeParams{s: s, add: add, mul: int64(st), inner: int64(inner), flags: flags}
		return func(lo, hi int, stg *binStage, buf []O) int {
			keys := buf[:hi-lo]
			// The vector loop's groups of 16 start at a multiple of 16
			// of the columns (inner is one): the units before the first
			// such go through chunkFn.
			head := min(hi-lo, (16-lo%16)%16)
			if inner == 0 {
				head = 0
			}
			if b := chunkFn(lo, lo+head, keys[:head]); b >= 0 {
				return b
			}
			done := head
			if done < len(keys) {
				dd := d
				if inner > 0 {
					dd.k = int64((lo + head) % inner)
				}
				done += decodeTargets(unsafe.Pointer(&raw[uintptr(lo+head)*isize]), unsafe.Pointer(&keys[head]), hi-lo-head, &dd)
			}
			if b := chunkFn(lo+done, hi, keys[done:]); b >= 0 {
				return b
			}
			if len(keys) > 0 {
				binPartitionKeys(unsafe.Pointer(&keys[0]), unsafe.Add(ub, lo*es), len(keys), stg)
			}
			return -1
		}, newStage, true
	}
	return func(lo, hi int, stg *binStage, buf []O) int {
		keys := buf[:hi-lo]
		if b := chunkFn(lo, hi, keys); b >= 0 {
			return b
		}
		if len(keys) > 0 {
			binPartitionKeys(unsafe.Pointer(&keys[0]), unsafe.Add(ub, lo*es), len(keys), stg)
		}
		return -1
	}, newStage, true
}

// appendRest appends the units of raw and u to st's rows one at a time, as
// binPartition does 16 at a time, and returns the offset of the first bad
// index, or -1.
func appendRest[I intType](st *binStage, raw []I, u []uint32, s int64, neg bool, mul int, shift uint) int {
	u = u[:len(raw)]
	for j, v := range raw {
		x, ok := checkIndex(v, s, neg)
		if !ok {
			return j
		}
		t := uint32(x * mul)
		b := (t >> (shift & 31)) % maxBins
		n := st.cnt[b] % stageRow
		st.rows[b].t[n] = t
		*(*uint32)(unsafe.Pointer(&st.rows[b].u[4*n])) = u[j]
		st.cnt[b] = n + 1
		if n+1 == 64 {
			st.flush(int(b))
		}
	}
	return -1
}

// flush moves the first 64 entries of bin b's row to the end of its list,
// as binFlush in the assembly does.
func (st *binStage) flush(b int) {
	p, es, r := st.pos[b], st.esize, &st.rows[b]
	if st.flags&stageCached != 0 {
		copy(unsafe.Slice((*uint32)(unsafe.Add(st.tb, p*4)), 64), r.t[:64])
		copy(unsafe.Slice((*byte)(unsafe.Add(st.ub, p*es)), 64*es), r.u[:64*es])
	} else {
		streamLines(unsafe.Add(st.tb, p*4), unsafe.Pointer(&r.t[0]), 4)
		streamLines(unsafe.Add(st.ub, p*es), unsafe.Pointer(&r.u[0]), int(es))
	}
	n := st.cnt[b] - 64
	copy(r.t[:n], r.t[64:64+n])
	copy(r.u[:n*es], r.u[64*es:(64+n)*es])
	st.cnt[b] = n
	p += 64
	if p&(1<<st.bb-1) == 0 {
		*(*int32)(unsafe.Add(st.nxt, (p-1)>>st.bb*4)) = int32(st.blk)
		p = st.blk << st.bb
		st.blk++
	}
	st.pos[b] = p
}

// releaseStage returns a stage from newStage to the pool, without the
// pointers that would keep the lists alive.
func releaseStage(st *binStage) {
	st.tb, st.ub, st.nxt = nil, nil, nil
	release(unsafe.Slice(st, 1))
}

// start points the rows of bins [0, nb) at the list ends in pos, with blk
// the next free block.
func (st *binStage) start(nb int, pos *binPos, blk int32) {
	for b := range nb {
		st.pos[b] = int64(pos[b])
		st.cnt[b] = 0
	}
	st.blk = int64(blk)
}

// drain moves what is left in the rows of bins [0, nb) to their lists,
// sets pos to the lists' ends and returns the next free block. A row holds
// fewer than 64 entries, so it does not reach its block's end.
func (st *binStage) drain(nb int, pos *binPos) int32 {
	storeFence()
	for b := range nb {
		n, p, es := st.cnt[b], st.pos[b], st.esize
		copy(unsafe.Slice((*uint32)(unsafe.Add(st.tb, p*4)), n), st.rows[b].t[:n])
		copy(unsafe.Slice((*byte)(unsafe.Add(st.ub, p*es)), n*es), st.rows[b].u[:n*es])
		pos[b] = int32(p) + int32(n)
		st.cnt[b] = 0
	}
	return int32(st.blk)
}

// The operations of foldVec (binsimd_amd64.s).
const (
	foldMaxI32 = iota
	foldMinI32
	foldMaxU32
	foldMinU32
)

// vecFold returns, where the processor and x's plan allow, a fold of a
// bin's entries (the kernels' indexed) in vector code: foldVec takes 16
// entries at a time, gathering their elements, combining them with the
// updates and scattering them back, and folds a group with a repeated
// target one entry at a time, in order; the Go loop takes the last
// entries, fewer than 16. It serves the min and max of int32 and uint32,
// which the Go loops run through a chain of conditional moves: 5% to 15%
// less CPU time for SND-max-i32 (8M int32 updates into 4M) on one or two
// workers. Float32 sums took as long as the Go loop (a gather waits for
// the scatter before it) and run there. It
// returns nil for other dtypes and reductions, for targets of other than
// 4 bytes, and where the assembly loops are switched off (binNoAsm,
// binNoVector).
func vecFold[E any, O offset](x *exec, indexed func(out []E, tgt []O, upd []E)) func(out []E, tgt []O, upd []E) {
	var e E
	var o O
	p := x.p
	if !haveFold || x.g.binNoAsm || x.g.binNoVector || unsafe.Sizeof(e) != 4 || unsafe.Sizeof(o) != 4 {
		return nil
	}
	op := -1
	switch {
	case p.Reduction == ops.Max && p.DType == tensor.Int32:
		op = foldMaxI32
	case p.Reduction == ops.Min && p.DType == tensor.Int32:
		op = foldMinI32
	case p.Reduction == ops.Max && p.DType == tensor.Uint32:
		op = foldMaxU32
	case p.Reduction == ops.Min && p.DType == tensor.Uint32:
		op = foldMinU32
	}
	if op < 0 {
		return nil
	}
	return func(out []E, tgt []O, upd []E) {
		upd = upd[:len(tgt)]
		n := 0
		if len(tgt) >= 16 {
			n = foldVec(unsafe.Pointer(&out[0]), unsafe.Pointer(&tgt[0]), unsafe.Pointer(&upd[0]), len(tgt), op)
		}
		indexed(out, tgt[n:], upd[n:])
	}
}
