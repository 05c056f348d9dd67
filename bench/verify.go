package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// DefaultTolerance is the default bound on the difference of a float sum,
// sub, prod or mean reduction from the reference, relative to the sum of
// the magnitudes of its terms; see Options.Tolerance.
const DefaultTolerance = 1e-5

// Comparison is the outcome of checking one output against the reference.
type Comparison struct {
	// Mismatches counts the elements that differ from the reference beyond
	// what the check allows.
	Mismatches int64
	// Tolerated counts the elements whose bits differ from the
	// reference's (NaN payloads aside) but that the bound accepts: 0 when
	// the output matched bit for bit, or when no bound applied.
	Tolerated int64
	// First is the flat position of the first mismatch, -1 when none.
	First int
	// MaxAbsDiff is the largest |got - want| over every element, those
	// within the tolerance included: 0 when the outputs are equal bit for
	// bit, +Inf when a NaN meets a number or infinities differ. It is 0 for
	// string and bool tensors, where Mismatches alone tells.
	MaxAbsDiff float64
}

// worst folds c2, the comparison of another output of the same shape,
// into c: the larger count of mismatches, the earlier first one, the larger
// difference.
func (c *Comparison) worst(c2 Comparison) {
	c.Mismatches = max(c.Mismatches, c2.Mismatches)
	c.Tolerated = max(c.Tolerated, c2.Tolerated)
	if c2.First >= 0 && (c.First < 0 || c2.First < c.First) {
		c.First = c2.First
	}
	if c2.MaxAbsDiff > c.MaxAbsDiff || math.IsNaN(c2.MaxAbsDiff) {
		c.MaxAbsDiff = c2.MaxAbsDiff
	}
}

// merge folds c2, which covers other positions of the same output, into c.
func (c *Comparison) merge(c2 Comparison) {
	if c2.Mismatches > 0 && (c.First < 0 || (c2.First >= 0 && c2.First < c.First)) {
		c.First = c2.First
	}
	c.Mismatches += c2.Mismatches
	c.Tolerated += c2.Tolerated
	if c2.MaxAbsDiff > c.MaxAbsDiff || math.IsNaN(c2.MaxAbsDiff) {
		c.MaxAbsDiff = c2.MaxAbsDiff
	}
}

// Compare checks got against want, which must have the same dtype and
// shape, element by element: equal bits match, and so do two NaNs whatever
// their payloads (for complex numbers, part by part). Where bound is not
// nil, an element i whose bits differ still matches when |got - want| <=
// bound[i]. Work is spread over GOMAXPROCS goroutines; equal chunks cost a
// memory comparison.
func Compare(want, got *tensor.Tensor, bound []float64) (Comparison, error) {
	if want.DType != got.DType || !tensor.SameShape(want.Shape, got.Shape) {
		return Comparison{}, fmt.Errorf("bench: comparing %v%s with %v%s",
			got.DType, tensor.FormatShape(got.Shape), want.DType, tensor.FormatShape(want.Shape))
	}
	if want.DType == tensor.String {
		c := Comparison{First: -1}
		for i := range want.Strings {
			if want.Strings[i] != got.Strings[i] {
				c.merge(Comparison{Mismatches: 1, First: i})
			}
		}
		return c, nil
	}
	size := want.DType.Size()
	diff := differ(want.DType)
	n := want.Len()
	const chunk = 1 << 16 // elements
	chunks := (n + chunk - 1) / chunk
	results := make([]Comparison, chunks)
	parallel(chunks, func(ci int) {
		lo, hi := ci*chunk, min(n, (ci+1)*chunk)
		c := Comparison{First: -1}
		a, b := want.Data[lo*size:hi*size], got.Data[lo*size:hi*size]
		if !bytes.Equal(a, b) {
			for i := lo; i < hi; i++ {
				x, y := want.Data[i*size:(i+1)*size], got.Data[i*size:(i+1)*size]
				if bytes.Equal(x, y) {
					continue
				}
				d, same := diff(x, y)
				if same {
					continue
				}
				if d > c.MaxAbsDiff || math.IsNaN(d) {
					c.MaxAbsDiff = d
				}
				if bound != nil && d <= bound[i] {
					c.Tolerated++
					continue
				}
				if c.First < 0 {
					c.First = i
				}
				c.Mismatches++
			}
		}
		results[ci] = c
	})
	total := Comparison{First: -1}
	for _, c := range results {
		total.merge(c)
	}
	return total, nil
}

// differ returns, for two encoded elements of dt whose bits differ, their
// absolute difference and whether they count as equal anyway (both NaN).
func differ(dt tensor.DType) func(a, b []byte) (float64, bool) {
	le := binary.LittleEndian
	signed := func(x, y int64) (float64, bool) {
		if x < y {
			x, y = y, x
		}
		return float64(uint64(x) - uint64(y)), false
	}
	switch dt {
	case tensor.Int8:
		return func(a, b []byte) (float64, bool) { return signed(int64(int8(a[0])), int64(int8(b[0]))) }
	case tensor.Uint8:
		return func(a, b []byte) (float64, bool) { return signed(int64(a[0]), int64(b[0])) }
	case tensor.Int16:
		return func(a, b []byte) (float64, bool) {
			return signed(int64(int16(le.Uint16(a))), int64(int16(le.Uint16(b))))
		}
	case tensor.Uint16:
		return func(a, b []byte) (float64, bool) { return signed(int64(le.Uint16(a)), int64(le.Uint16(b))) }
	case tensor.Int32:
		return func(a, b []byte) (float64, bool) {
			return signed(int64(int32(le.Uint32(a))), int64(int32(le.Uint32(b))))
		}
	case tensor.Uint32:
		return func(a, b []byte) (float64, bool) { return signed(int64(le.Uint32(a)), int64(le.Uint32(b))) }
	case tensor.Int64:
		return func(a, b []byte) (float64, bool) { return signed(int64(le.Uint64(a)), int64(le.Uint64(b))) }
	case tensor.Uint64:
		return func(a, b []byte) (float64, bool) {
			x, y := le.Uint64(a), le.Uint64(b)
			if x < y {
				x, y = y, x
			}
			return float64(x - y), false
		}
	case tensor.Float16:
		return func(a, b []byte) (float64, bool) {
			return floatDiff(float64(tensor.F16(le.Uint16(a)).Float32()), float64(tensor.F16(le.Uint16(b)).Float32()))
		}
	case tensor.BFloat16:
		return func(a, b []byte) (float64, bool) {
			return floatDiff(float64(tensor.BF16(le.Uint16(a)).Float32()), float64(tensor.BF16(le.Uint16(b)).Float32()))
		}
	case tensor.Float32:
		return func(a, b []byte) (float64, bool) {
			return floatDiff(float64(math.Float32frombits(le.Uint32(a))), float64(math.Float32frombits(le.Uint32(b))))
		}
	case tensor.Float64:
		return func(a, b []byte) (float64, bool) {
			return floatDiff(math.Float64frombits(le.Uint64(a)), math.Float64frombits(le.Uint64(b)))
		}
	case tensor.Complex64:
		f := differ(tensor.Float32)
		return func(a, b []byte) (float64, bool) { return pairDiff(f, a[:4], b[:4], a[4:], b[4:]) }
	case tensor.Complex128:
		f := differ(tensor.Float64)
		return func(a, b []byte) (float64, bool) { return pairDiff(f, a[:8], b[:8], a[8:], b[8:]) }
	}
	// bool: any other bits differ.
	return func(a, b []byte) (float64, bool) { return 0, false }
}

// floatDiff compares two floats whose bits differ.
func floatDiff(x, y float64) (float64, bool) {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0, true
	case xn || yn:
		return math.Inf(1), false
	case math.IsInf(x, 0) || math.IsInf(y, 0):
		return math.Inf(1), false // equal infinities have equal bits
	}
	return math.Abs(x - y), false
}

// pairDiff compares complex numbers part by part.
func pairDiff(f func(a, b []byte) (float64, bool), ra, rb, ia, ib []byte) (float64, bool) {
	var dr, di float64
	sr, si := true, true
	if !bytes.Equal(ra, rb) {
		dr, sr = f(ra, rb)
	}
	if !bytes.Equal(ia, ib) {
		di, si = f(ia, ib)
	}
	return max(dr, di), sr && si
}

// tolerant reports whether backends other than the reference may differ
// from it in rounding for p: float sums, subs, products and means, whose
// order of operations a parallel device may change.
func tolerant(p *ops.Plan) bool {
	return p.Reduction.OrderSensitive(p.DType)
}

// effectiveTolerance returns the relative bound used for dt: tol, and at
// least 8 machine epsilons for float16 (2^-10) and bfloat16 (2^-7), whose
// every reduction step rounds to 11 or 8 significant bits, so that a
// different order alone moves a result by several of their epsilons.
func effectiveTolerance(dt tensor.DType, tol float64) float64 {
	switch dt {
	case tensor.Float16:
		return max(tol, 8*math.Ldexp(1, -10))
	case tensor.BFloat16:
		return max(tol, 8*math.Ldexp(1, -7))
	}
	return tol
}

// bounds returns, for every output element of req, tol times the magnitude
// of the terms that make it: the reduction of |data| and |updates| in
// float64 with the operator's own rules, i.e. the sum of the magnitudes for
// sum and sub, their mean for mean, and the product of the magnitudes (the
// magnitude of the exact product) for prod. The CPU reference computes it.
func bounds(ctx context.Context, req ops.Request, tol float64) ([]float64, error) {
	abs := req
	abs.Data = absFloat64(req.Data)
	abs.Updates = absFloat64(req.Updates)
	if op, err := ops.Lookup(req.Op); err == nil {
		if r, ok := op.ParseReduction(req.Reduction); ok && r == ops.Sub {
			abs.Reduction, _ = op.ReductionName(ops.Sum) // |a - b| <= |a| + |b|
		}
	}
	out, err := ops.Run(ctx, cpuref.New(), abs)
	if err != nil {
		return nil, fmt.Errorf("bench: the tolerance of %s: %w", req.Op, err)
	}
	m := tensor.View[float64](out)
	parallel((len(m)+1<<16-1)>>16, func(c int) {
		for i := c << 16; i < min(len(m), (c+1)<<16); i++ {
			m[i] *= tol
		}
	})
	return m, nil
}

// absFloat64 returns the magnitudes of the float tensor t as float64.
func absFloat64(t *tensor.Tensor) *tensor.Tensor {
	out, _ := tensor.New(tensor.Float64, t.Shape) // t's shape is valid
	dst := tensor.View[float64](out)
	le := binary.LittleEndian
	var get func(i int) float64
	switch t.DType {
	case tensor.Float16:
		get = func(i int) float64 { return float64(tensor.F16(le.Uint16(t.Data[2*i:])).Float32()) }
	case tensor.BFloat16:
		get = func(i int) float64 { return float64(tensor.BF16(le.Uint16(t.Data[2*i:])).Float32()) }
	case tensor.Float32:
		get = func(i int) float64 { return float64(math.Float32frombits(le.Uint32(t.Data[4*i:]))) }
	default:
		get = func(i int) float64 { return math.Float64frombits(le.Uint64(t.Data[8*i:])) }
	}
	parallel((len(dst)+1<<16-1)>>16, func(c int) {
		for i := c << 16; i < min(len(dst), (c+1)<<16); i++ {
			dst[i] = math.Abs(get(i))
		}
	})
	return out
}

// poison makes every element of out differ from the same element of ref
// (every byte inverted: the inverse of a NaN is never a NaN), so that an
// element a backend fails to write cannot pass the comparison.
func poison(out, ref *tensor.Tensor) {
	if out.DType == tensor.String {
		for i, s := range ref.Strings {
			out.Strings[i] = s + "\x00unwritten"
		}
		return
	}
	src, dst := ref.Data, out.Data
	const chunk = 1 << 20
	parallel((len(dst)+chunk-1)/chunk, func(c int) {
		for i := c * chunk; i < min(len(dst), (c+1)*chunk); i++ {
			dst[i] = ^src[i]
		}
	})
}

// parallel calls f(i) for every i in [0, n) on GOMAXPROCS goroutines.
func parallel(n int, f func(i int)) {
	w := min(runtime.GOMAXPROCS(0), n)
	if w <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range w {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}
