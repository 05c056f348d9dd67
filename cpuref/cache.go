package cpuref

import (
	"github.com/gpuscatter/gpuscatter/tensor"
)

// cache runs a TensorScatter-24 plan (ops.KindCache). Every write index is
// checked before anything is written; then each update row (o, j), Inner
// contiguous elements, is copied to its row along the axis. Within one
// call no two rows of one prefix o land on the same position (the
// sequence is at most the axis long), so the moves commute and tasks may
// split j as well as o and k.
func (x *exec) cache() error {
	p := x.p
	batch := p.Shape[0]
	starts := make([]int, batch)
	for b := range starts {
		s, err := p.CacheStart(b)
		if err != nil {
			return err
		}
		starts[b] = s
	}
	if err := x.copyData(); err != nil {
		return err
	}
	out, upd := x.out, p.Updates
	if p.DType == tensor.String {
		return cacheMoves(x, out.Strings, upd.Strings, starts)
	}
	switch p.DType.Size() {
	case 1:
		return cacheMoves(x, viewAs[uint8](out.Data), viewAs[uint8](upd.Data), starts)
	case 2:
		return cacheMoves(x, viewAs[uint16](out.Data), viewAs[uint16](upd.Data), starts)
	case 4:
		return cacheMoves(x, viewAs[uint32](out.Data), viewAs[uint32](upd.Data), starts)
	case 8:
		return cacheMoves(x, viewAs[uint64](out.Data), viewAs[uint64](upd.Data), starts)
	}
	return cacheMoves(x, viewAs[[2]uint64](out.Data), viewAs[[2]uint64](upd.Data), starts)
}

// cacheMoves copies update row (o, j) to row o*s + position of out, the
// position being starts[batch of o] + j, wrapped modulo s in circular mode
// (only the sequence position wraps; the other coordinates are o's own).
func cacheMoves[E any](x *exec, out, upd []E, starts []int) error {
	p := x.p
	outer, J, inner, s := p.Outer, p.J, p.Inner, p.Shape[p.Axis]
	per := p.CacheRowsPerBatch()
	g := planGrid(outer, J, inner, true, x.want(outer*J*inner), x.g.run)
	if !forEach(x.scatterDone(), x.w, g.tasks(), func(t int) {
		oLo, oHi, jLo, jHi, kLo, kHi := g.task(t)
		n := kHi - kLo
		for o := oLo; o < oHi; o++ {
			start := starts[o/per]
			for j := jLo; j < jHi; j++ {
				pos := start + j
				if pos >= s { // circular: start < s and j < s
					pos -= s
				}
				dst := (o*s+pos)*inner + kLo
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
