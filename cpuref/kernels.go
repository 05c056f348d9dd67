package cpuref

import (
	"fmt"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// kernels is what a scatter does with each piece of its work, for one
// dtype and reduction. E is the element's storage type (its size class, or
// string); the folds reinterpret it as the dtype's Go type.
type kernels[E any, O offset] struct {
	// indexed applies upd[i] to out[tgt[i]] in order of i.
	indexed func(out []E, tgt []O, upd []E)
	// contig applies upd[i] to out[i]; nil means a plain copy.
	contig func(out, upd []E)
	// neutral, when set, is the value every target starts from before its
	// first update (use_init_val = false).
	neutral *E
	// finish, when set, runs over a task's targets after all its updates
	// (the division of mean).
	finish func(out []E, tgt []O)
	// free, when set, returns the kernels' scratch memory once the scatter
	// is over.
	free func()
}

// newKernels returns the kernels of x's plan. mean allocates its count
// (and, for integers, sum) arrays, one entry per element of out.
func newKernels[E any, O offset](x *exec) (kernels[E, O], error) {
	p := x.p
	switch p.Reduction {
	case ops.None:
		return kernels[E, O]{indexed: moveI[E, O]}, nil
	case ops.Mean:
		return meanKernels[E, O](x)
	}
	var k kernels[E, O]
	switch p.DType {
	case tensor.Bool:
		k = boolKernels[E, O](p.Reduction)
	case tensor.Int8:
		k = intKernels[int8, E, O](p.Reduction)
	case tensor.Int16:
		k = intKernels[int16, E, O](p.Reduction)
	case tensor.Int32:
		k = intKernels[int32, E, O](p.Reduction)
	case tensor.Int64:
		k = intKernels[int64, E, O](p.Reduction)
	case tensor.Uint8:
		k = intKernels[uint8, E, O](p.Reduction)
	case tensor.Uint16:
		k = intKernels[uint16, E, O](p.Reduction)
	case tensor.Uint32:
		k = intKernels[uint32, E, O](p.Reduction)
	case tensor.Uint64:
		k = intKernels[uint64, E, O](p.Reduction)
	case tensor.Float32:
		k = nativeKernels[float32, E, O](p.Reduction)
	case tensor.Float64:
		k = nativeKernels[float64, E, O](p.Reduction)
	case tensor.Float16:
		k = halfKernels[f16Format, E, O](p.Reduction)
	case tensor.BFloat16:
		k = halfKernels[bf16Format, E, O](p.Reduction)
	default:
		return k, unsupported(p)
	}
	if !p.UseInitVal {
		n := fromBits[E](p.Reduction.NeutralBits(p.DType))
		k.neutral = &n
	}
	return k, nil
}

// unsupported is the error for a reduction on a dtype it does not apply to,
// which Prepare rejects before a plan reaches a backend.
func unsupported(p *ops.Plan) error {
	return &ops.Error{Op: p.Op.Name, Input: "reduction", Err: ops.ErrReduction,
		Msg: fmt.Sprintf("reduction %q does not apply to %v data", p.Reduction, p.DType)}
}

func nativeKernels[T native, E any, O offset](r ops.Reduction) kernels[E, O] {
	var c func(out, upd []T)
	var i func(out []T, tgt []O, upd []T)
	switch r {
	case ops.Sum:
		c, i = sumC[T], sumI[T, O]
	case ops.Sub:
		c, i = subC[T], subI[T, O]
	case ops.Prod:
		c, i = prodC[T], prodI[T, O]
	case ops.Min:
		c, i = minC[T], minI[T, O]
	case ops.Max:
		c, i = maxC[T], maxI[T, O]
	}
	return kernels[E, O]{
		contig:  func(out, upd []E) { c(cast[T](out), cast[T](upd)) },
		indexed: func(out []E, tgt []O, upd []E) { i(cast[T](out), tgt, cast[T](upd)) },
	}
}

// intKernels are nativeKernels with branch-free min and max.
func intKernels[T integer, E any, O offset](r ops.Reduction) kernels[E, O] {
	var c func(out, upd []T)
	var i func(out []T, tgt []O, upd []T)
	switch r {
	case ops.Min:
		c, i = intMinC[T], intMinI[T, O]
	case ops.Max:
		c, i = intMaxC[T], intMaxI[T, O]
	default:
		return nativeKernels[T, E, O](r)
	}
	return kernels[E, O]{
		contig:  func(out, upd []E) { c(cast[T](out), cast[T](upd)) },
		indexed: func(out []E, tgt []O, upd []E) { i(cast[T](out), tgt, cast[T](upd)) },
	}
}

func halfKernels[F halfFormat, E any, O offset](r ops.Reduction) kernels[E, O] {
	var c func(out, upd []uint16)
	var i func(out []uint16, tgt []O, upd []uint16)
	switch r {
	case ops.Sum:
		c, i = halfSumC[F], halfSumI[F, O]
	case ops.Sub:
		c, i = halfSubC[F], halfSubI[F, O]
	case ops.Prod:
		c, i = halfProdC[F], halfProdI[F, O]
	case ops.Min:
		c, i = halfMinC[F], halfMinI[F, O]
	case ops.Max:
		c, i = halfMaxC[F], halfMaxI[F, O]
	}
	return kernels[E, O]{
		contig:  func(out, upd []E) { c(cast[uint16](out), cast[uint16](upd)) },
		indexed: func(out []E, tgt []O, upd []E) { i(cast[uint16](out), tgt, cast[uint16](upd)) },
	}
}

func boolKernels[E any, O offset](r ops.Reduction) kernels[E, O] {
	c, i := orC, orI[O]
	switch r {
	case ops.Sub:
		c, i = xorC, xorI[O]
	case ops.Prod, ops.Min:
		c, i = andC, andI[O]
	}
	return kernels[E, O]{
		contig:  func(out, upd []E) { c(cast[uint8](out), cast[uint8](upd)) },
		indexed: func(out []E, tgt []O, upd []E) { i(cast[uint8](out), tgt, cast[uint8](upd)) },
	}
}

func meanKernels[E any, O offset](x *exec) (kernels[E, O], error) {
	p := x.p
	n := x.out.Len()
	init := p.UseInitVal
	// cnt starts all zero, and a finished mean leaves it so (the division
	// resets every count it reads), so a finished one goes back to the pool.
	cnt := scratch[int64](n)
	clear(cnt)
	var k kernels[E, O]
	var acc64 []int64
	var accU64 []uint64
	switch p.DType {
	case tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Uint8, tensor.Uint16, tensor.Uint32:
		acc64 = scratch[int64](n)
	case tensor.Uint64:
		accU64 = scratch[uint64](n)
	}
	switch p.DType {
	case tensor.Int8:
		k = intMeanKernels[int8, int64, E, O](cnt, acc64, init)
	case tensor.Int16:
		k = intMeanKernels[int16, int64, E, O](cnt, acc64, init)
	case tensor.Int32:
		k = intMeanKernels[int32, int64, E, O](cnt, acc64, init)
	case tensor.Int64:
		k = intMeanKernels[int64, int64, E, O](cnt, acc64, init)
	case tensor.Uint8:
		k = intMeanKernels[uint8, int64, E, O](cnt, acc64, init)
	case tensor.Uint16:
		k = intMeanKernels[uint16, int64, E, O](cnt, acc64, init)
	case tensor.Uint32:
		k = intMeanKernels[uint32, int64, E, O](cnt, acc64, init)
	case tensor.Uint64:
		k = intMeanKernels[uint64, uint64, E, O](cnt, accU64, init)
	case tensor.Float32:
		k = floatMeanKernels[float32, E, O](cnt, init)
	case tensor.Float64:
		k = floatMeanKernels[float64, E, O](cnt, init)
	case tensor.Float16:
		k = halfMeanKernels[f16Format, E, O](cnt, init)
	case tensor.BFloat16:
		k = halfMeanKernels[bf16Format, E, O](cnt, init)
	default:
		release(cnt)
		return k, unsupported(p)
	}
	k.free = func() {
		if x.ctx.Err() != nil {
			clear(cnt) // a stopped mean leaves counts behind
		}
		release(cnt)
		release(acc64)
		release(accU64)
	}
	return k, nil
}

func intMeanKernels[T native, A int64 | uint64, E any, O offset](cnt []int64, acc []A, init bool) kernels[E, O] {
	return kernels[E, O]{
		indexed: func(out []E, tgt []O, upd []E) { intMeanAcc(cast[T](out), acc, cnt, tgt, cast[T](upd), init) },
		finish:  func(out []E, tgt []O) { intMeanEnd(cast[T](out), acc, cnt, tgt) },
	}
}

func floatMeanKernels[T float32 | float64, E any, O offset](cnt []int64, init bool) kernels[E, O] {
	return kernels[E, O]{
		indexed: func(out []E, tgt []O, upd []E) { floatMeanAcc(cast[T](out), cnt, tgt, cast[T](upd), init) },
		finish:  func(out []E, tgt []O) { floatMeanEnd(cast[T](out), cnt, tgt) },
	}
}

func halfMeanKernels[F halfFormat, E any, O offset](cnt []int64, init bool) kernels[E, O] {
	return kernels[E, O]{
		indexed: func(out []E, tgt []O, upd []E) { halfMeanAcc[F](cast[uint16](out), cnt, tgt, cast[uint16](upd), init) },
		finish:  func(out []E, tgt []O) { halfMeanEnd[F](cast[uint16](out), cnt, tgt) },
	}
}
