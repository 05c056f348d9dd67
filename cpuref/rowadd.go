package cpuref

import (
	"unsafe"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Batched row folds for the owned path (owned.go): a batch of ScatterND
// rows, each an update row src[i] folded into the output row dst[i], in
// order of i. For float32 sum on amd64 an assembly loop adds a row 16 (or
// 8) columns at a time and prefetches the output and update rows ahead in
// the same loop, one call per batch. Vectors run across a row's columns, never
// across rows, so each element still folds its updates one at a time in
// index order, with the same roundings as the Go loop.

// rowsKernel returns the batched row fold of x's plan, or nil where the
// owned path folds row by row with the kernels' contig. The assembly
// loops check nothing: every row of dst must lie in out and every row of
// src in upd. The callers' rows come from checked indices and their
// positions from the updates' own range: ownRows keeps rows inside the
// owner's range with positions of the batch, and a group's segment holds
// the decoded rows with their positions.
func rowsKernel[E any, O offset](x *exec) func(out, upd []E, dst, src []O, inner int) {
	if x.p.DType != tensor.Float32 || x.p.Reduction != ops.Sum {
		return nil
	}
	var o O
	var e E
	asm := unsafe.Sizeof(o) == 4 && unsafe.Sizeof(e) == 4 && !x.g.rowNoAsm
	var f func(out, upd, dst, src unsafe.Pointer, n, inner int)
	switch {
	case asm && haveRowAVX512 && !x.g.rowNoAVX512:
		f = addRowsAVX512
	case asm && haveRowAVX2:
		f = addRowsAVX2
	default:
		return func(out, upd []E, dst, src []O, inner int) {
			sumRowsGo(cast[float32](out), cast[float32](upd), dst, src, inner)
		}
	}
	return func(out, upd []E, dst, src []O, inner int) {
		if len(dst) > 0 {
			f(unsafe.Pointer(unsafe.SliceData(out)), unsafe.Pointer(unsafe.SliceData(upd)),
				unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src)), len(dst), inner)
		}
	}
}

// sumRowsGo is the Go loop of the batched float32 sum: out's row dst[i]
// plus upd's row src[i], for i in order.
func sumRowsGo[O offset](out, upd []float32, dst, src []O, inner int) {
	src = src[:len(dst)]
	for i, d := range dst {
		if a := i + runAhead; a < len(dst) {
			prefetch(unsafe.Pointer(&out[int(dst[a])*inner]))
			prefetch(unsafe.Pointer(&upd[int(src[a])*inner]))
		}
		o, s := int(d)*inner, int(src[i])*inner
		sumC(out[o:o+inner], upd[s:s+inner])
	}
}

// ownRows copies to dst and src, in order, the rows of rows (whose
// positions start at j0) that lie in [lo, lo+span), with their positions,
// and returns how many there are; like ownTargets, without a branch on
// the rows.
func ownRows[O offset](dst, src, rows []O, j0, lo int, span uint) int {
	dst, src = dst[:len(rows)], src[:len(rows)]
	n := 0
	for i, r := range rows {
		dst[n] = r
		src[n] = O(j0 + i)
		n += b2i(uint(int(r)-lo) < span)
	}
	return n
}
