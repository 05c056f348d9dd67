package cpuref

import (
	"unsafe"

	"github.com/gpuscatter/gpuscatter/ops"
)

// Owned scatters: reductions with about as many updates as elements of out
// (or ScatterND runs), on a few workers. Each worker owns a contiguous range of target elements (or
// rows, for ScatterND runs) and walks every update in position order,
// folding those that land in its range; no two workers touch the same
// element, and each walks in order, so every element folds its updates in
// index order. Each worker reads the decoded targets and the updates once,
// and nothing is sorted. The order argument is in doc.go.

// ownedChunk is the number of updates an owner takes at a time: their
// local targets stay in the first-level cache until they are folded.
const ownedChunk = 2048

// planOwned reports whether x's ScatterND or ScatterElements plan runs
// owned. Each worker reads every update, so it is for a few workers (at
// most grain.owned) and between a quarter and four times as many updates
// as elements of out; the reduction must fold each update alone (no start
// from a neutral value, no mean, whose steps span every update of an
// element).
func (x *exec) planOwned() bool {
	p := x.p
	if x.w < 2 || x.w > x.g.owned || p.Reduction == ops.None || p.Reduction == ops.Mean || !p.UseInitVal {
		return false
	}
	n := p.NumUpdates()
	if x.want(n) <= 1 || 4*n < x.out.Len() {
		return false
	}
	// Each owner of a range of elements walks every update: with many
	// updates per element that costs more than the single fold of the
	// split by o and k saves, ScatterND runs excepted (one decoded row
	// per Inner updates).
	return p.Kind == ops.KindND && p.Inner > 1 || n <= 4*x.out.Len()
}

// scatterOwned runs x's plan owned (see planOwned).
func scatterOwned[E any, O offset](x *exec, out, upd []E) error {
	k, err := newKernels[E, O](x)
	if err != nil {
		return err
	}
	if k.free != nil {
		defer k.free()
	}
	if x.p.Kind == ops.KindND && x.p.Inner > 1 {
		return scatterOwnedRuns(x, out, upd, k)
	}
	// Decoded first, in parallel: the decoded targets are half the size
	// of int64 indices, and each owner reads them all.
	tgt, err := decode[O](x)
	if err != nil {
		return err
	}
	defer release(tgt)
	owners := min(x.w, len(out))
	dat := viewAs[E](x.p.Data.Data)
	// Each owner folds into loc[r], a copy of its range of data, so that
	// out stays untouched until every owner is done.
	loc := make([][]E, owners)
	defer func() {
		for _, l := range loc {
			release(l)
		}
	}()
	ok := forEach(x.done(), x.w, owners, func(r int) {
		lo, hi := part(r, len(out), owners)
		span := hi - lo
		l := scratch[E](span)
		loc[r] = l
		copy(l[:span], dat[lo:hi])
		bt, bu := scratch[O](ownedChunk), scratch[E](ownedChunk)
		defer release(bt)
		defer release(bu)
		done := x.done()
		size := min(ownedChunk, max(1, x.g.decode)) // tests split finer
		for c, i := 0, 0; c < len(tgt); c, i = c+size, i+1 {
			if i%64 == 0 && isClosed(done) {
				return
			}
			e := min(len(tgt), c+size)
			n := ownTargets(bt, bu, tgt[c:e], upd[c:e], O(lo), span)
			k.indexed(l, bt[:n], bu[:n])
		}
	})
	if !ok || x.ctx.Err() != nil {
		return x.ctx.Err() // out is untouched
	}
	forEach(nil, x.w, owners, func(r int) {
		lo, hi := part(r, len(out), owners)
		copy(out[lo:hi], loc[r][:hi-lo])
	})
	return nil
}

// ownTargets copies to dt and du, in order, the targets (made relative to
// lo) and updates of src and upd that lie in [lo, lo+span), and returns
// how many there are. It is free of branches that depend on the targets:
// about every other one is another owner's, at random, and a mispredicted
// branch each time would cost more than the fold.
func ownTargets[E any, O offset](dt []O, du []E, src []O, upd []E, lo O, span int) int {
	upd = upd[:len(src)]
	dt, du = dt[:len(src)], du[:len(src)]
	n := 0
	for i, v := range src {
		r := v - lo
		dt[n] = r
		du[n] = upd[i]
		n += b2i(uint(r) < uint(span))
	}
	return n
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// scatterOwnedRuns is scatterOwned for ScatterND runs: the tuples are
// decoded first (they are few: one per Inner updates), then each owner
// copies its rows of data into out and folds, in order of j, the runs
// that land in them. A run is long enough that skipping the others with a
// branch costs little; where the plan has a batched row fold (rowadd.go),
// each owner gathers its rows a batch at a time and folds the batch in one
// call.
func scatterOwnedRuns[E any, O offset](x *exec, out, upd []E, k kernels[E, O]) error {
	rows, err := decode[O](x)
	if err != nil {
		return err
	}
	defer release(rows)
	if err := x.ctx.Err(); err != nil {
		return err
	}
	inner := x.p.Inner
	nrows := len(out) / inner
	owners := min(x.w, nrows)
	dat := viewAs[E](x.p.Data.Data)
	rk := rowsKernel[E, O](x)
	if !forEach(x.scatterDone(), x.w, owners, func(r int) {
		lo, hi := part(r, nrows, owners)
		if !x.inPlace {
			copy(out[lo*inner:hi*inner], dat[lo*inner:hi*inner])
		}
		span := uint(hi - lo)
		if rk != nil {
			// In batches: the rows this owner takes, then one call
			// folds them.
			size := min(ownedChunk, max(1, x.g.decode)) // tests split finer
			bd, bs := scratch[O](size), scratch[O](size)
			defer release(bd)
			defer release(bs)
			for c := 0; c < len(rows); c += size {
				e := min(len(rows), c+size)
				n := ownRows(bd, bs, rows[c:e], c, lo, span)
				rk(out, upd, bd[:n], bs[:n], inner)
			}
			return
		}
		for j, row := range rows {
			if a := j + runAhead; a < len(rows) && uint(int(rows[a])-lo) < span {
				prefetch(unsafe.Pointer(&out[int(rows[a])*inner]))
			}
			if uint(int(row)-lo) < span {
				d, s := int(row)*inner, j*inner
				if k.contig == nil {
					copy(out[d:d+inner], upd[s:s+inner])
				} else {
					k.contig(out[d:d+inner], upd[s:s+inner])
				}
			}
		}
	}) {
		return x.cancelled()
	}
	return nil
}

// runAhead is how many runs ahead scatterOwnedRuns asks for the target
// rows' cache lines.
const runAhead = 16
