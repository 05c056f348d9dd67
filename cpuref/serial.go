package cpuref

import (
	"unsafe"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Serial folds: a plan that planBins would run binned folds instead, in
// one goroutine, every update straight into out in position order, a
// step of indices at a time decoded into a buffer that stays in the
// first-level cache. This is the in-order fold itself, so its bits are
// those of every other path; it wins where out stays in the caches and
// random accesses to it are cheap, and loses to the binned fold where they
// miss (x.foldSerial chooses, from the machine's figures).
//
// Nothing is written to out before every index is checked: out of place
// the fold goes into a copy of data in scratch, which becomes out once
// the fold is done (a second copy of out, cheap beside the fold); in
// place, and for mean, whose counts must not be left half folded, every
// index is checked first in a parallel pass that writes nothing.

// serialStep is the units a serial fold decodes at a time: 2048 targets of
// 4 or 8 bytes stay in the first-level cache until they are folded.
const serialStep = 2048

// scatterSerial runs x's plan (one that planBins accepts) as a serial
// fold.
func scatterSerial[E any, O offset](x *exec, out, upd []E) error {
	k, err := newKernels[E, O](x)
	if err != nil {
		return err
	}
	if k.free != nil {
		defer k.free()
	}
	chunkFn := chunker[O](x)
	units := x.binUnits()
	if x.inPlace || k.finish != nil {
		if _, err := decodeWith[O](x, func(int, int, []O) {}); err != nil {
			return err
		}
	}
	if err := x.ctx.Err(); err != nil {
		return err
	}
	// Out of place the fold goes into acc, a copy of data, which is
	// copied into out at the end: out is untouched until every index is
	// checked.
	acc := out
	if !x.inPlace {
		acc = scratch[E](len(out))
		defer release(acc)
		copyParallel(x.w, x.g.copy, acc, viewAs[E](x.p.Data.Data))
	}
	done := x.scatterDone()
	finish := func() error {
		if !x.inPlace {
			copyParallel(x.w, x.g.copy, out, acc)
		}
		return nil
	}
	if band := serialBanded(x, acc, upd); band != nil && k.neutral == nil && k.finish == nil {
		switch b := band(done); {
		case b >= 0:
			return x.badIndex(int64(b))
		case b == bandStopped:
			return x.ctx.Err()
		}
		return finish()
	}
	if direct := serialDirect(x, acc, upd); direct != nil && k.neutral == nil && k.finish == nil {
		for s, i := 0, 0; s < units; s, i = s+serialStep, i+1 {
			if i%64 == 63 && isClosed(done) {
				return x.ctx.Err()
			}
			if b := direct(s, min(units, s+serialStep)); b >= 0 {
				return x.badIndex(int64(s + b))
			}
		}
		return finish()
	}
	fold := k.indexed
	if f := vecFold[E, O](x, k.indexed); f != nil {
		fold = f
	}
	buf := scratch[O](serialStep)
	defer release(buf)
	// pass walks every unit in order, step by step, handing fn each
	// step's decoded targets and updates. It returns nil, or the error of
	// a bad index or of done closing.
	pass := func(fn func(tgt []O, u []E)) error {
		for s, i := 0, 0; s < units; s, i = s+serialStep, i+1 {
			if i%64 == 63 && isClosed(done) {
				return x.ctx.Err()
			}
			e := min(units, s+serialStep)
			keys := buf[:e-s]
			if b := chunkFn(s, e, keys); b >= 0 {
				return x.badIndex(int64(b))
			}
			fn(keys, upd[s:e])
		}
		return nil
	}
	if k.neutral != nil {
		v := *k.neutral
		if err := pass(func(t []O, _ []E) { fillI(acc, t, v) }); err != nil {
			return err
		}
	}
	if err := pass(func(t []O, u []E) { fold(acc, t, u) }); err != nil {
		return err
	}
	if k.finish != nil {
		if err := pass(func(t []O, _ []E) { k.finish(acc, t) }); err != nil {
			return err
		}
	}
	return finish()
}

// foldSerial reports whether x's plan, which planBins accepts, runs as a
// serial fold rather than binned: as grain.fold forces, else, for a float
// sum, sub, prod or mean (whose bits depend on the order, so that no
// other split applies), where the machine's fold figures (Backend.Figures,
// else foldFigures, handed to Backend.Keep when measured now) estimate it
// faster.
func (x *exec) foldSerial() bool {
	switch x.g.fold {
	case foldForceSerial:
		return true
	case foldForceBinned:
		return false
	}
	if !foldChosen(x.p) {
		return false
	}
	fig := x.fig
	if fig == nil || len(fig.Fold) == 0 {
		var fresh bool
		if fig, fresh = foldFigures(x.ctx); fig == nil {
			return false
		}
		if fresh && x.keep != nil {
			x.keep(*fig)
		}
	}
	return serialFaster(fig, x.p, x.out.Len(), x.w)
}

// foldChosen reports whether the fold of p, a plan that planBins
// accepts, is chosen by the figures: a sum, sub, prod or mean of a float
// dtype. Other reductions run binned: integer folds and min and max do
// not depend on the order of their updates (and int32 min and max fold
// binned with vector loops), and the figures are of a float32 sum.
func foldChosen(p *ops.Plan) bool {
	switch p.DType {
	case tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64:
	default:
		return false
	}
	switch p.Reduction {
	case ops.Sum, ops.Sub, ops.Prod, ops.Mean:
		return true
	}
	return false
}

// serialFaster reports whether, by the fold figures of c, the serial fold
// of p's updates onto out (outLen elements) is estimated faster than the
// binned fold on w workers: cost.CPU.FoldMs at out's size in bytes, the
// binned time scaled from c.Threads workers to w (no faster for workers
// beyond c.Threads). Where the figures do not speak for out's size the
// fold stays binned.
func serialFaster(c *cost.CPU, p *ops.Plan, outLen, w int) bool {
	serial, binned, ok := c.FoldMs(uint64(outLen*p.DType.Size()), uint64(outLen), uint64(p.NumUpdates()))
	if !ok {
		return false
	}
	binned *= float64(c.Threads) / float64(max(1, min(w, c.Threads)))
	return serial < binned
}

// The values of grain.fold.
const (
	foldByFigures = iota
	foldForceSerial
	foldForceBinned
)

// serialDirect returns, for plans whose target is the checked index times
// a stride (one-dimensional ScatterElements, ScatterND with one index per
// tuple onto single elements; binDirect's) with int32 or int64 indices, a
// native float sum, sub or prod and grain.serialNoDirect unset, a
// function that checks the indices of units [lo, hi) and folds each
// update into out as it goes, in one pass over the raw indices: the
// decode into a buffer and the second loop over it took half as long
// again as the fold (16M float32 sums into 4 MiB on a 2-core EPYC:
// 48 ms against 30). float32 sums at stride 1 run an assembly loop on
// amd64 (serialSumAsm; grain.serialNoAsm keeps them to the Go loop). It
// returns the offset of the first bad unit, having folded the ones before
// it, or -1; nil for other plans.
func serialDirect[E any](x *exec, out, upd []E) func(lo, hi int) int {
	p := x.p
	if x.g.serialNoDirect || p.Reduction != ops.Sum && p.Reduction != ops.Sub && p.Reduction != ops.Prod {
		return nil
	}
	switch p.DType {
	case tensor.Float32:
		return serialDirectIdx[float32](x, cast[float32](out), cast[float32](upd))
	case tensor.Float64:
		return serialDirectIdx[float64](x, cast[float64](out), cast[float64](upd))
	}
	return nil
}

func serialDirectIdx[T float32 | float64](x *exec, out, upd []T) func(lo, hi int) int {
	switch x.p.Indices.DType {
	case tensor.Int32:
		return serialDirectAs[int32](x, out, upd)
	case tensor.Int64:
		return serialDirectAs[int64](x, out, upd)
	}
	return nil
}

func serialDirectAs[I int32 | int64, T float32 | float64](x *exec, out, upd []T) func(lo, hi int) int {
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
	r := p.Reduction
	if f := serialSumAsm[I](x, out, upd, raw, s, st); f != nil {
		return f
	}
	return func(lo, hi int) int {
		switch r {
		case ops.Sum:
			return foldRawSum(out, raw[lo:hi], upd[lo:hi], s, neg, st)
		case ops.Sub:
			return foldRawSub(out, raw[lo:hi], upd[lo:hi], s, neg, st)
		}
		return foldRawProd(out, raw[lo:hi], upd[lo:hi], s, neg, st)
	}
}

// serialSumAsm returns, for a float32 sum at stride 1 where the assembly
// loops run (haveSerialAsm, grain.serialNoAsm unset), serialDirect's
// function through foldSumF32I64 or foldSumF32I32; nil otherwise.
func serialSumAsm[I int32 | int64, T float32 | float64](x *exec, out, upd []T, raw []I, s int64, st int) func(lo, hi int) int {
	if !haveSerialAsm || x.g.serialNoAsm || x.p.Reduction != ops.Sum || st != 1 || s > int64(len(out)) {
		return nil
	}
	o, ok := any(out).([]float32)
	if !ok || len(o) == 0 {
		return nil
	}
	u := any(upd).([]float32)
	m := int(negMask(x.p.Op.NegativeIndices, s))
	var z I
	wide := unsafe.Sizeof(z) == 8
	return func(lo, hi int) int {
		if lo >= hi {
			return -1
		}
		r, v := unsafe.Pointer(&raw[lo:hi][0]), unsafe.Pointer(&u[lo:hi][0])
		if wide {
			return foldSumF32I64(unsafe.Pointer(&o[0]), int(s), r, v, hi-lo, m)
		}
		return foldSumF32I32(unsafe.Pointer(&o[0]), int(s), r, v, hi-lo, m)
	}
}

// foldRawSum adds u[j] to out[checkIndex(raw[j], s, neg)*st] for every j
// in order and returns the first j whose index is out of range (the ones
// before it folded), or -1. foldRawSub and foldRawProd subtract and
// multiply. The check has no branch but the one out of the loop: a
// negative index gains s where neg allows (m), and is then out of range
// exactly when it is still negative or s or more, as an unsigned number
// (checkIndex's two branches took a third of the loop's time).
func negMask(neg bool, s int64) int64 {
	if neg {
		return s
	}
	return 0
}

func foldRawSum[I int32 | int64, T float32 | float64](out []T, raw []I, u []T, s int64, neg bool, st int) int {
	u = u[:len(raw)]
	m := negMask(neg, s)
	for j, v := range raw {
		i := int64(v)
		i += m & (i >> 63)
		if uint64(i) >= uint64(s) {
			return j
		}
		out[int(i)*st] += u[j]
	}
	return -1
}

func foldRawSub[I int32 | int64, T float32 | float64](out []T, raw []I, u []T, s int64, neg bool, st int) int {
	u = u[:len(raw)]
	m := negMask(neg, s)
	for j, v := range raw {
		i := int64(v)
		i += m & (i >> 63)
		if uint64(i) >= uint64(s) {
			return j
		}
		out[int(i)*st] -= u[j]
	}
	return -1
}

func foldRawProd[I int32 | int64, T float32 | float64](out []T, raw []I, u []T, s int64, neg bool, st int) int {
	u = u[:len(raw)]
	m := negMask(neg, s)
	for j, v := range raw {
		i := int64(v)
		i += m & (i >> 63)
		if uint64(i) >= uint64(s) {
			return j
		}
		out[int(i)*st] *= u[j]
	}
	return -1
}
