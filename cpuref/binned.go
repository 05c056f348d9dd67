package cpuref

import (
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Binned scatters: element scatters (ScatterElements, and ScatterND with
// one-element slices) with many updates per element of an output larger
// than the caches. Folded straight into out, each update costs a miss; here
// they are first partitioned by bin (a range of target elements sized for
// the second-level cache) and then folded bin by bin.
//
//   - Partition: the updates are split into chunks of consecutive
//     positions, one task each. A task checks and decodes its indices a
//     little at a time and appends each (target, update) pair to its bin's
//     list, in position order. A list is a chain of fixed-size blocks taken
//     from the chunk's own region of scratch, so nothing is counted first
//     and the indices are read once. With many bins the pairs go through a
//     write-combining buffer per bin (binWC).
//   - Fold: each bin is one task. It copies its range of data into out and
//     folds the bin's list of chunk 0, then of chunk 1, and so on, each in
//     order; its range of out stays in the cache meanwhile.
//   - Rounds: where out is small enough to stay in the caches (binRounds),
//     the units go in rounds of consecutive positions, each partitioned
//     and then folded before the next, so that the lists go to the caches
//     and back rather than to memory and back. The bins then fold into a
//     copy of data, which is copied into out once every round is done.
//
// Nothing is written to out before every index is checked. The order
// argument is in doc.go.

// planBins decides whether x's plan runs binned and, if so, sets
// x.binShift: bin b holds the targets b<<binShift to (b+1)<<binShift - 1.
// Binning pays for an output larger than the caches with at least one
// update for every four elements.
func (x *exec) planBins() bool {
	p := x.p
	if x.g.binOut <= 0 || !(p.Kind == ops.KindElements || p.Kind == ops.KindND && p.Inner == 1) {
		return false
	}
	esize := p.DType.Size()
	outLen := x.out.Len()
	n := p.NumUpdates()
	// Entries are addressed by int32, with room for the blocks' slack.
	if outLen*esize < x.g.binOut || 4*n < outLen || n >= 1<<30 {
		return false
	}
	// Bins of about g.bin bytes, but at least two per worker when out
	// allows, and at most maxBins. In rounds, bins of g.binRoundBin: the
	// fold finds its range in the caches anyway, and fewer bins make the
	// partition cheaper (SE-sum-dup, 16M float32 updates into 1M: 4 bins
	// of 1 MiB took 15% less time than 8 of 512 KiB).
	bin := x.g.bin
	if x.binRounds(x.binUnits()) > 1 {
		bin = max(bin, x.g.binRoundBin)
	}
	shift := uint(0)
	for esize<<(shift+1) <= max(1, bin) && (outLen-1)>>(shift+1)+1 >= 2*x.w {
		shift++
	}
	for (outLen-1)>>shift >= maxBins {
		shift++
	}
	x.binShift = shift
	return true
}

// maxBins bounds the bins, and so the lists a partition task appends to
// (binsimd_amd64.s's NBINS). Through the write-combining rows the stores
// stay whole cache lines however many bins there are, and bins that fit
// the second-level cache with their share of data pay: 4M float32 updates
// into 64 MiB take 16 ms in 128 bins of 512 KiB, 18 ms in 64 of 1 MiB.
const maxBins = 128

// binPos holds, for each bin, where a partition task's next entry goes.
// It is indexed by a uint8, which needs no bounds check.
type binPos [256]int32

// binList is where one chunk's list of one bin lies: its first block and
// the end of the last (the entry after the last one).
type binList struct{ head, end int32 }

// scatterBinned runs x's plan binned (see planBins).
func scatterBinned[E any, O offset](x *exec, out, upd []E) error {
	shift := x.binShift
	k, err := newKernels[E, O](x)
	if err != nil {
		return err
	}
	if k.free != nil {
		defer k.free()
	}
	chunkFn := chunker[O](x)
	units := x.binUnits()
	nb := (len(out)-1)>>shift + 1
	bb := uint(min(16, max(0, x.g.binBlock))) // blocks of 1<<bb entries
	bs := 1 << bb
	// Rounds: where the lists of a round fit the caches beside out, the
	// units go in rounds, each partitioned and then folded before the
	// next, so that the lists go to the caches and back instead of to
	// memory and back (see binRounds).
	rounds := 1
	if k.neutral == nil && k.finish == nil {
		rounds = x.binRounds(units)
	}
	piped := rounds > 1
	roundMax := ceilDiv(units, rounds)
	// Chunks: enough for every worker to take a few, none smaller than the
	// decode grain or than a block per bin. A round has one per worker:
	// each chunk drains its stage rows and starts its lists afresh, which
	// in rounds of 256K units made four per worker take 40% more time.
	chunks := max(1, min(4*x.w, roundMax/max(1, x.g.decode), roundMax/max(1, nb*bs)))
	if piped {
		chunks = max(1, min(x.w, roundMax/max(1, x.g.decode), roundMax/max(1, nb*bs)))
	}
	// span returns the units of chunk c of round r.
	span := func(r, c int) (lo, hi int) {
		rlo, rhi := part(r, units, rounds)
		lo, hi = part(c, rhi-rlo, chunks)
		return rlo + lo, rlo + hi
	}
	// Chunk c's region holds roundUp(its units, bs) + nb*bs entries: each
	// bin's list wastes less than a block. A round's chunk c reuses the
	// region of the round before.
	regionBlocks := func(c int) int {
		lo, hi := span(0, c)
		if piped {
			hi = lo + ceilDiv(roundMax, chunks)
		}
		return (hi-lo+bs-1)>>bb + nb
	}
	blocks := 0
	for c := range chunks {
		blocks += regionBlocks(c)
	}
	tgtS := scratch[O](blocks << bb)
	defer release(tgtS)
	updS := scratch[E](blocks << bb)
	defer release(updS)
	next := scratch[int32](blocks) // the block after each full one in its list
	defer release(next)
	lists := make([]binList, chunks*nb)
	first := make([]int, chunks+1) // chunk c's first block
	for c := range chunks {
		first[c+1] = first[c] + regionBlocks(c)
	}

	asm, newStage, useAsm := asmPartition(x, upd, tgtS, updS, next, shift, bb, nb, chunkFn, !piped)
	var fast func(lo, hi int, pos *binPos, wc *binWC[E, O], blk int32) (int32, int)
	if !useAsm {
		fast = binDirect(x, upd, tgtS, updS, next, shift, bb)
	}
	var bad atomic.Int64
	bad.Store(math.MaxInt64)
	const step = 2048 // units decoded at a time, into a buffer in L1
	partition := func(r, c int) {
		lo, hi := span(r, c)
		if int64(lo) > bad.Load() {
			return // an earlier position is already known to be bad
		}
		var buf []O
		if fast == nil {
			buf = scratch[O](step)
			defer release(buf)
		}
		var wc *binWC[E, O]
		var stg *binStage
		if useAsm {
			stg = newStage()
			defer releaseStage(stg)
		} else if bb >= wcShift && nb >= x.g.binWC {
			wc = newBinWC(tgtS, updS, !x.g.binNoStream && !piped)
			defer releaseBinWC(wc)
		}
		var pos binPos
		blk := int32(first[c])
		for b := range nb {
			pos[b] = blk << bb
			lists[c*nb+b].head = blk
			blk++
		}
		if stg != nil {
			stg.start(nb, &pos, blk)
		}
		done := x.done()
		for s, i := lo, 0; s < hi; s, i = s+step, i+1 {
			if i%64 == 63 && (isClosed(done) || bad.Load() < int64(lo)) {
				return
			}
			e := min(hi, s+step)
			if stg != nil {
				if b := asm(s, e, stg, buf); b >= 0 {
					lowerBad(&bad, b)
					return
				}
				continue
			}
			if fast != nil {
				var b int
				if blk, b = fast(s, e, &pos, wc, blk); b >= 0 {
					lowerBad(&bad, b)
					return
				}
				continue
			}
			keys := buf[:e-s]
			if b := chunkFn(s, e, keys); b >= 0 {
				lowerBad(&bad, b)
				return
			}
			if wc != nil {
				blk = binAppendWC(keys, upd[s:e], &pos, wc, tgtS, updS, next, blk, shift, bb)
			} else {
				blk = binAppend(keys, upd[s:e], &pos, tgtS, updS, next, blk, shift, bb)
			}
		}
		if wc != nil {
			wc.drain(nb, &pos, tgtS, updS)
		}
		if stg != nil {
			blk = stg.drain(nb, &pos)
		}
		for b, p := range pos[:nb] {
			lists[c*nb+b].end = p
		}
	}

	dat := viewAs[E](x.p.Data.Data)
	fold := k.indexed
	if f := vecFold[E, O](x, k.indexed); f != nil {
		fold = f
	}
	// each calls fn with bin b's entries, chunk after chunk, block after
	// block.
	each := func(b int, fn func(lo, hi int)) {
		for c := range chunks {
			l := lists[c*nb+b]
			last := l.end >> bb
			for blk := l.head; blk != last; blk = next[blk] {
				fn(int(blk)<<bb, int(blk+1)<<bb)
			}
			if s := int(last) << bb; s < int(l.end) {
				fn(s, int(l.end))
			}
		}
	}
	// In rounds the bins fold into acc, a copy of data, which becomes out
	// once every round is done: out is untouched until every index is
	// checked, as without rounds.
	var acc []E
	if piped {
		acc = scratch[E](len(out))
		defer release(acc)
	}
	foldBin := func(b int) {
		dst := acc
		if !piped {
			dst = out
			lo, hi := b<<shift, min(len(out), (b+1)<<shift)
			if !x.inPlace {
				copyCached(out[lo:hi], dat[lo:hi])
			}
		}
		if k.neutral != nil {
			v := *k.neutral
			each(b, func(s, e int) { fillI(dst, tgtS[s:e], v) })
		}
		each(b, func(s, e int) { fold(dst, tgtS[s:e], updS[s:e]) })
		if k.finish != nil {
			each(b, func(s, e int) { k.finish(dst, tgtS[s:e]) })
		}
	}
	if !piped {
		if !forEach(x.done(), x.w, chunks, func(c int) { partition(0, c) }) {
			return x.ctx.Err() // out is untouched
		}
		if err := x.badIndex(bad.Load()); err != nil {
			return err
		}
		if err := x.ctx.Err(); err != nil {
			return err
		}
		if !forEach(x.scatterDone(), x.w, nb, foldBin) {
			return x.cancelled()
		}
		return nil
	}
	copyParallel(x.w, x.g.copy, acc, dat)
	for r := range rounds {
		if !forEach(x.done(), x.w, chunks, func(c int) { partition(r, c) }) {
			return x.ctx.Err() // out is untouched
		}
		if err := x.badIndex(bad.Load()); err != nil {
			return err
		}
		if err := x.ctx.Err(); err != nil {
			return err // a chunk may have stopped early
		}
		if !forEach(x.done(), x.w, nb, foldBin) {
			return x.ctx.Err()
		}
	}
	if err := x.ctx.Err(); err != nil {
		return err
	}
	copyParallel(x.w, x.g.copy, out, acc)
	return nil
}

// binUnits returns the units a binned scatter partitions: updates, or
// ScatterND tuples (of one element each).
func (x *exec) binUnits() int {
	if x.p.Kind == ops.KindElements {
		return x.p.NumUpdates()
	}
	return x.p.J
}

// binRounds returns the rounds a binned scatter of units goes in (see
// scatterBinned): one, unless the fold can go in rounds (no neutral start
// and no finishing step, which must see every update of an element: no
// mean, and use_init_val unless the reduction is none) and out fits the
// caches with the lists of a round, of about grain.binRound entries: out
// of grain.binRoundOut bytes or fewer.
func (x *exec) binRounds(units int) int {
	p := x.p
	if p.Reduction == ops.Mean || !p.UseInitVal && p.Reduction != ops.None ||
		x.g.binRound <= 0 || x.out.Len()*p.DType.Size() > x.g.binRoundOut {
		return 1
	}
	return max(1, units/x.g.binRound)
}

// binAppend appends each key of keys with its update of u to its bin's
// list (bin key>>shift; pos[b] is where its next entry goes, in tgtS and
// updS), in order, chaining a new block (of 1<<bb entries, from blk on)
// to a list whose block is full. It returns the next free block.
//
// The stores go without bounds checks: pos[b] always lies in a block of
// the chunk's region, which the caller sized for every entry the chunk
// can append (see scatterBinned), and a checked store here costs a fifth
// of the loop.
func binAppend[E any, O offset](keys []O, u []E, pos *binPos, tgtS []O, updS []E, next []int32, blk int32, shift, bb uint) int32 {
	u = u[:len(keys)]
	mask := int32(1)<<(bb&31) - 1
	shift &= 63
	bb &= 31
	tb, ub := unsafe.Pointer(unsafe.SliceData(tgtS)), unsafe.Pointer(unsafe.SliceData(updS))
	ts, us := unsafe.Sizeof(keys[0]), unsafe.Sizeof(u[0])
	for j, t := range keys {
		b := uint8(uint(t) >> shift) // < maxBins <= len(binPos)
		p := pos[b]
		*(*O)(unsafe.Add(tb, uintptr(p)*ts)) = t
		*(*E)(unsafe.Add(ub, uintptr(p)*us)) = u[j]
		p++
		if p&mask == 0 {
			next[(p-1)>>bb] = blk
			p = blk << bb
			blk++
		}
		pos[b] = p
	}
	return blk
}

// binDirect returns, for plans whose target is the checked index times a
// stride (one-dimensional ScatterElements, ScatterND with one index per
// tuple onto single elements), a function that checks the indices of the
// units [lo, hi) and appends them to their bins as binAppend does, in one
// pass over the raw indices. It returns the next free block and the first
// bad position, or -1. For other plans it returns nil.
func binDirect[E any, O offset](x *exec, upd []E, tgtS []O, updS []E, next []int32, shift, bb uint) func(lo, hi int, pos *binPos, wc *binWC[E, O], blk int32) (int32, int) {
	switch x.p.Indices.DType {
	case tensor.Int32:
		return binDirectAs[int32](x, upd, tgtS, updS, next, shift, bb)
	case tensor.Int64:
		return binDirectAs[int64](x, upd, tgtS, updS, next, shift, bb)
	}
	return nil
}

func binDirectAs[I intType, E any, O offset](x *exec, upd []E, tgtS []O, updS []E, next []int32, shift, bb uint) func(lo, hi int, pos *binPos, wc *binWC[E, O], blk int32) (int32, int) {
	p := x.p
	var s int64
	var st int
	switch {
	case p.Kind == ops.KindElements && p.Outer == 1 && p.Inner == 1:
		s, st = int64(p.Shape[p.Axis]), p.Strides[p.Axis]
	case p.Kind == ops.KindND && p.TupleLen == 1 && p.Inner == 1:
		s, st = int64(p.Shape[0]), p.Strides[0]
	default:
		return nil
	}
	raw := tensor.View[I](p.Indices)
	neg := p.Op.NegativeIndices
	return func(lo, hi int, pos *binPos, wc *binWC[E, O], blk int32) (int32, int) {
		var b int
		if wc != nil {
			blk, b = binAppendRawWC(raw[lo:hi], upd[lo:hi], s, neg, st, pos, wc, tgtS, updS, next, blk, shift, bb)
		} else {
			blk, b = binAppendRaw(raw[lo:hi], upd[lo:hi], s, neg, st, pos, tgtS, updS, next, blk, shift, bb)
		}
		if b >= 0 {
			b += lo
		}
		return blk, b
	}
}

// binAppendRaw is binAppend on the keys checkIndex(raw[j], s, neg)*st. It
// returns the next free block and the offset in raw of the first value
// out of range, or -1; on a bad value some entries before it may have
// been appended.
func binAppendRaw[I intType, E any, O offset](raw []I, u []E, s int64, neg bool, st int, pos *binPos, tgtS []O, updS []E, next []int32, blk int32, shift, bb uint) (int32, int) {
	u = u[:len(raw)]
	mask := int32(1)<<(bb&31) - 1
	shift &= 63
	bb &= 31
	tb, ub := unsafe.Pointer(unsafe.SliceData(tgtS)), unsafe.Pointer(unsafe.SliceData(updS))
	var t0 O
	ts, us := unsafe.Sizeof(t0), unsafe.Sizeof(u[0])
	for j, v := range raw {
		x, ok := checkIndex(v, s, neg)
		if !ok {
			return blk, j
		}
		t := O(x * st)
		b := uint8(uint(t) >> shift) // < maxBins <= len(binPos)
		p := pos[b]
		*(*O)(unsafe.Add(tb, uintptr(p)*ts)) = t
		*(*E)(unsafe.Add(ub, uintptr(p)*us)) = u[j]
		p++
		if p&mask == 0 {
			next[(p-1)>>bb] = blk
			p = blk << bb
			blk++
		}
		pos[b] = p
	}
	return blk, -1
}

// wcShift is log2 of the entries a bin's write-combining buffer has room
// for (see binWC); blocks of fewer entries go without the buffers, and so do
// fewer than grain.binWC bins, whose few streams of stores do as well
// without (16M updates into 8 bins run 5% slower through them; into 32
// or 64 bins, 15% faster).
const wcShift = 6

// binWC holds a partition task's write-combining buffers: each bin's next
// few entries gather here, in the first-level cache, and go to the bin's
// list last+1 at a time, whole cache lines of consecutive stores, instead
// of one store into each of 2*maxBins streams at a time.
// A bin's entries stay in order: the buffer fills in order and is flushed
// to the end of the list, and drain flushes the rest at the chunk's end.
// Since the blocks hold a multiple of 1<<wcShift entries (so of last+1)
// and every flush but the last is full, a flush never crosses a block's
// end.
type binWC[E any, O offset] struct {
	t [maxBins][1 << wcShift]O
	u [maxBins][1 << wcShift]E
	n [maxBins]uint8
	// last is the index of a full buffer's last entry: 1<<wcShift - 1
	// for targets and updates of 8 bytes together or less, else half
	// that, so that the buffers in use fit the first-level cache.
	last uint8
	// tl and ul are the cache lines of a full buffer of targets and of
	// updates where both are whole lines and the lists are aligned to
	// lines (flush then streams them past the caches), else 0.
	tl, ul int
}

func newBinWC[E any, O offset](tgtS []O, updS []E, stream bool) *binWC[E, O] {
	w := new(binWC[E, O])
	w.last = 1<<wcShift - 1
	if unsafe.Sizeof(w.t[0][0])+unsafe.Sizeof(w.u[0][0]) > 8 {
		w.last = 1<<(wcShift-1) - 1
	}
	n := int(w.last) + 1
	tsz, usz := n*int(unsafe.Sizeof(w.t[0][0])), n*int(unsafe.Sizeof(w.u[0][0]))
	if canStream && stream && tsz%64 == 0 && usz%64 == 0 && len(tgtS) > 0 && len(updS) > 0 &&
		uintptr(unsafe.Pointer(&tgtS[0]))%64 == 0 && uintptr(unsafe.Pointer(&updS[0]))%64 == 0 {
		w.tl, w.ul = tsz/64, usz/64
	}
	return w
}

func releaseBinWC[E any, O offset](w *binWC[E, O]) {
	if w.tl > 0 {
		storeFence()
	}
}

// flush moves bin b's full buffer to the end of its list and returns the
// next free block, as binAppend does.
func (w *binWC[E, O]) flush(b uint, pos *binPos, tgtS []O, updS []E, next []int32, blk int32, bb uint) int32 {
	b &= maxBins - 1
	p := pos[b]
	if w.tl > 0 {
		streamLines(unsafe.Pointer(&tgtS[p]), unsafe.Pointer(&w.t[b]), w.tl)
		streamLines(unsafe.Pointer(&updS[p]), unsafe.Pointer(&w.u[b]), w.ul)
	} else {
		n := int32(w.last) + 1
		copy(tgtS[p:p+n], w.t[b][:n])
		copy(updS[p:p+n], w.u[b][:n])
	}
	p += int32(w.last) + 1
	if p&(int32(1)<<(bb&31)-1) == 0 {
		next[(p-1)>>(bb&31)] = blk
		p = blk << (bb & 31)
		blk++
	}
	pos[b] = p
	w.n[b] = 0
	return blk
}

// drain moves what is left in the buffers of bins [0, nb) to their lists.
func (w *binWC[E, O]) drain(nb int, pos *binPos, tgtS []O, updS []E) {
	for b := range nb {
		n, p := int32(w.n[b]), pos[b]
		copy(tgtS[p:p+n], w.t[b][:n])
		copy(updS[p:p+n], w.u[b][:n])
		pos[b] = p + n
		w.n[b] = 0
	}
}

// binAppendWC is binAppend through w's buffers.
func binAppendWC[E any, O offset](keys []O, u []E, pos *binPos, w *binWC[E, O], tgtS []O, updS []E, next []int32, blk int32, shift, bb uint) int32 {
	u = u[:len(keys)]
	shift &= 63
	for j, t := range keys {
		b := uint(t) >> shift & (maxBins - 1) // < maxBins already
		n := w.n[b] & (1<<wcShift - 1)
		w.t[b][n] = t
		w.u[b][n] = u[j]
		if n == w.last {
			blk = w.flush(b, pos, tgtS, updS, next, blk, bb)
		} else {
			w.n[b] = n + 1
		}
	}
	return blk
}

// binAppendRawWC is binAppendRaw through w's buffers.
func binAppendRawWC[I intType, E any, O offset](raw []I, u []E, s int64, neg bool, st int, pos *binPos, w *binWC[E, O], tgtS []O, updS []E, next []int32, blk int32, shift, bb uint) (int32, int) {
	u = u[:len(raw)]
	shift &= 63
	for j, v := range raw {
		x, ok := checkIndex(v, s, neg)
		if !ok {
			return blk, j
		}
		t := O(x * st)
		b := uint(t) >> shift & (maxBins - 1) // < maxBins already
		n := w.n[b] & (1<<wcShift - 1)
		w.t[b][n] = t
		w.u[b][n] = u[j]
		if n == w.last {
			blk = w.flush(b, pos, tgtS, updS, next, blk, bb)
		} else {
			w.n[b] = n + 1
		}
	}
	return blk, -1
}

// copyCached copies src to dst in pieces small enough that the copy leaves
// dst in the cache: the runtime's memmove streams copies of 1 MiB or more
// past the caches with non-temporal stores, and the fold that follows
// would then miss on every element.
func copyCached[E any](dst, src []E) {
	var e E
	piece := max(1, (256<<10)/int(unsafe.Sizeof(e)))
	for len(src) > piece {
		copy(dst[:piece], src[:piece])
		dst, src = dst[piece:], src[piece:]
	}
	copy(dst, src)
}
