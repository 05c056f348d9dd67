package cpuref

import "github.com/gpuscatter/gpuscatter/ops"

// Grouped scatters (KindND and KindElements). The index pass is split into
// chunks of consecutive positions; each chunk, once its indices are
// checked and decoded, sorts its updates stably by group (a range of
// target elements sized for the caches) into its own region of scratch.
// The scatter then gives each group to one task, which copies the group's
// elements of data into out and folds the group's updates of every chunk,
// chunk after chunk. The order argument is in doc.go.

// planGroups decides whether x's ScatterND or ScatterElements plan runs
// grouped and, if so, sets the groups up. Grouping pays when the split by
// o and k leaves too few tasks for the workers, and there are many workers
// or an output larger than the caches (every access to out then hits the
// cache, and the copy of data joins the same pass).
func (x *exec) planGroups() bool {
	p := x.p
	esize := p.DType.Size()
	n := p.NumUpdates()
	want := x.want(n)
	if want <= 1 {
		return false
	}
	runs := p.Kind == ops.KindND && p.Inner > 1
	x.keyElems = 1
	var g grid
	if runs {
		x.keyElems = p.Inner
		g = planGrid(1, p.J, p.Inner, false, want, x.g.run)
	} else {
		g = planGrid(p.Outer, p.J, p.Inner, false, want, x.g.piece)
	}
	outBytes := x.out.Len() * esize
	if g.tasks() >= min(want, 2*x.w) || (x.w < 4 && outBytes < x.g.bigOut) {
		return false
	}
	x.keyRange = x.out.Len() / x.keyElems
	keyBytes := x.keyElems * esize
	// Groups small enough that the elements of one stay in the cache while
	// it is folded, at least two per worker, and at most maxGroups.
	x.groupShift = 0
	for (x.keyRange-1)>>x.groupShift >= 2*x.w &&
		(keyBytes<<(x.groupShift+1) <= x.g.bucket || (x.keyRange-1)>>x.groupShift >= maxGroups) {
		x.groupShift++
	}
	x.groups = (x.keyRange-1)>>x.groupShift + 1
	return true
}

// maxGroups bounds the groups, and so the streams that a chunk's sort
// writes and the segments a group's task reads.
const maxGroups = 1024

// scatterGrouped runs x's plan grouped (see planGroups): E is the element
// storage, O the offset type.
func scatterGrouped[E any, O offset](x *exec, out, upd []E) error {
	k, err := newKernels[E, O](x)
	if err != nil {
		return err
	}
	if k.free != nil {
		defer k.free()
	}
	units, chunks := x.decodeTasks(true)
	ng, shift := x.groups, x.groupShift
	runs := x.keyElems > 1
	// off[c*(ng+1)+b] is where group b of chunk c starts, from the chunk's
	// first unit.
	off := make([]int, chunks*(ng+1))
	keyS := scratch[O](units)
	defer release(keyS)
	// Grouped, a chunk moves its updates (elements) or positions (runs).
	var updS []E
	var posS []O
	if runs {
		posS = scratch[O](units)
		defer release(posS)
	} else {
		updS = scratch[E](units)
		defer release(updS)
	}
	sink := func(c, lo int, keys []O) {
		// Counted in a slice of the task's own: the chunks' rows of off
		// share cache lines between workers.
		cur := scratch[int](ng + 1)
		defer release(cur)
		clear(cur)
		for _, t := range keys {
			cur[int(t)>>shift+1]++
		}
		for b := 1; b <= ng; b++ {
			cur[b] += cur[b-1]
		}
		copy(off[c*(ng+1):(c+1)*(ng+1)], cur)
		ks := keyS[lo : lo+len(keys)]
		if runs {
			ps := posS[lo : lo+len(keys)]
			for i, t := range keys {
				b := int(t) >> shift
				d := cur[b]
				cur[b] = d + 1
				ks[d] = t
				ps[d] = O(lo + i)
			}
			return
		}
		us := updS[lo : lo+len(keys)]
		u := upd[lo : lo+len(keys)]
		for i, t := range keys {
			b := int(t) >> shift
			d := cur[b]
			cur[b] = d + 1
			ks[d] = t
			us[d] = u[i]
		}
	}
	if _, err := decodeWith[O](x, sink); err != nil {
		return err
	}
	if err := x.ctx.Err(); err != nil {
		return err // out is untouched
	}
	dat := viewAs[E](x.p.Data.Data)
	inner := x.keyElems
	var rk func(out, upd []E, dst, src []O, inner int)
	if runs {
		rk = rowsKernel[E, O](x)
	}
	// each calls fn with the segments of group b, chunk after chunk.
	each := func(b int, fn func(lo, hi int)) {
		for c := range chunks {
			base, _ := part(c, units, chunks)
			o := off[c*(ng+1):]
			if lo, hi := base+o[b], base+o[b+1]; lo < hi {
				fn(lo, hi)
			}
		}
	}
	ok := forEach(x.scatterDone(), x.w, ng, func(b int) {
		lo := (b << shift) * inner
		hi := min(x.keyRange, (b+1)<<shift) * inner
		if !x.inPlace {
			copy(out[lo:hi], dat[lo:hi])
		}
		if runs && rk != nil {
			each(b, func(s, e int) { rk(out, upd, keyS[s:e], posS[s:e], inner) })
			return
		}
		if runs {
			each(b, func(s, e int) {
				for i, r := range keyS[s:e] {
					dst, src := int(r)*inner, int(posS[s+i])*inner
					if k.contig == nil {
						copy(out[dst:dst+inner], upd[src:src+inner])
					} else {
						k.contig(out[dst:dst+inner], upd[src:src+inner])
					}
				}
			})
			return
		}
		if k.neutral != nil {
			v := *k.neutral
			each(b, func(s, e int) { fillI(out, keyS[s:e], v) })
		}
		each(b, func(s, e int) { k.indexed(out, keyS[s:e], updS[s:e]) })
		if k.finish != nil {
			each(b, func(s, e int) { k.finish(out, keyS[s:e]) })
		}
	})
	if !ok {
		return x.cancelled()
	}
	return nil
}
