package opstest

import (
	"encoding/binary"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// fatalf reports a failure and ends the test.
func fatalf(t TB, format string, args ...any) {
	t.Helper()
	t.Errorf(format, args...)
	t.FailNow()
}

// floatAt returns element i of a float tensor as float64 (exactly).
func floatAt(t *tensor.Tensor, i int) float64 {
	b := t.Data
	switch t.DType {
	case tensor.Float16:
		return float64(tensor.F16(binary.LittleEndian.Uint16(b[2*i:])).Float32())
	case tensor.BFloat16:
		return float64(tensor.BF16(binary.LittleEndian.Uint16(b[2*i:])).Float32())
	case tensor.Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
}

// floatFormat returns a float dtype's unit roundoff (2^-precision), its
// largest finite value and its smallest normal and subnormal values.
func floatFormat(dt tensor.DType) (u, maxFinite, minNormal, minSub float64) {
	switch dt {
	case tensor.Float16:
		return 0x1p-11, 65504, 0x1p-14, 0x1p-24
	case tensor.BFloat16:
		return 0x1p-8, 0x1.fep127, 0x1p-126, 0x1p-133
	case tensor.Float32:
		return 0x1p-24, math.MaxFloat32, 0x1p-126, 0x1p-149
	}
	return 0x1p-53, math.MaxFloat64, 0x1p-1022, 0x1p-1074
}

// targetsOf returns, for every update element of p, the output element it
// lands on (p's indices must be in range; with p.SkipBadIndices, an
// update whose index is bad lands nowhere: -1).
func targetsOf(t TB, p *ops.Plan) []int {
	index := func(pos int) (int, bool) {
		v, err := p.IndexAt(pos)
		if err != nil && p.SkipBadIndices {
			return 0, false
		}
		require.NoError(t, err)
		return v, true
	}
	n := p.NumUpdates()
	out := make([]int, n)
	switch p.Kind {
	case ops.KindND:
		for u := 0; u < n; u++ {
			j, k := u/p.Inner, u%p.Inner
			row := 0
			for c := 0; c < p.TupleLen && row >= 0; c++ {
				v, ok := index(j*p.TupleLen + c)
				row = row*p.Shape[c] + v
				if !ok {
					row = -1
				}
			}
			out[u] = -1
			if row >= 0 {
				out[u] = row*p.Inner + k
			}
		}
	case ops.KindElements:
		coord := make([]int, len(p.IndicesShape))
		for u := 0; u < n; u++ {
			tensor.Unravel(u, p.IndicesShape, coord)
			v, ok := index(u)
			if !ok {
				out[u] = -1
				continue
			}
			coord[p.Axis] = v
			e := 0
			for d, c := range coord {
				e += c * p.Strides[d]
			}
			out[u] = e
		}
	default:
		t.Errorf("no reductions on %v", p.Kind)
		t.FailNow()
	}
	return out
}

// CheckReduction compares a backend's result with the CPU reference's (with
// p.SkipBadIndices, leaving out the updates of bad indices). Integer,
// bool, min and max results, and every result of the in-order fold, must
// be equal (DiffFor: min and max bit for bit, NaN included; the others
// with any NaN matching any NaN). Float sum, sub, prod and mean
// computed with atomics must lie within the bound gpu/DESIGN.md states,
// element by element:
//
//	sum, sub: |gpu - ref| <= 2*g(n)*S
//	prod:     |gpu - ref| <= 2*g(n)*P
//	mean:     |gpu - ref| <= 2*g(n)*S/c + u*(|gpu| + |ref|) + smallest subnormal
//
// with g(n) = (1+u)^n - 1, u the type's unit roundoff, n the updates into
// the element, S the sum of the magnitudes of its operands (data, when it
// counts, and the updates), P the magnitude of their exact product and c
// the mean's count. Elements whose operands include NaN or infinities
// must match exactly; where an intermediate could overflow (S or P near
// the largest finite value) or a product could leave the normal range,
// the bound does not apply and the element is not checked. It returns
// how many elements were checked against the bound.
func CheckReduction(t TB, p *ops.Plan, got, want *tensor.Tensor, exact bool, what string) int {
	t.Helper()
	if exact || !p.Reduction.OrderSensitive(p.DType) {
		if d := DiffFor(p.Reduction, got, want); d != "" {
			fatalf(t, "%s: %s", what, d)
		}
		return 0
	}
	u, maxFinite, minNormal, minSub := floatFormat(p.DType)
	tg := targetsOf(t, p)
	type acc struct {
		n         int
		sum       float64 // of magnitudes
		logP      float64 // log of the product of magnitudes
		big, tiny float64 // log products of the factors above and below 1
		special   bool    // NaN, inf or (prod) zero among the operands
	}
	accs := make([]acc, want.Len())
	add := func(a *acc, x float64) {
		ax := math.Abs(x)
		a.sum += ax
		if math.IsNaN(x) || math.IsInf(x, 0) || (p.Reduction == ops.Prod && x == 0) {
			a.special = true
			return
		}
		if p.Reduction == ops.Prod {
			l := math.Log(ax)
			a.logP += l
			if l > 0 {
				a.big += l
			} else {
				a.tiny += l
			}
		}
	}
	for e := range accs {
		if p.UseInitVal {
			add(&accs[e], floatAt(p.Data, e))
		}
	}
	for i, e := range tg {
		if e < 0 {
			continue // a bad index's update, skipped (SkipBadIndices)
		}
		accs[e].n++
		add(&accs[e], floatAt(p.Updates, i))
	}
	checked := 0
	for e := range accs {
		a := accs[e]
		g, r := floatAt(got, e), floatAt(want, e)
		if a.n == 0 || a.special {
			if !(math.IsNaN(g) && math.IsNaN(r)) && math.Float64bits(g) != math.Float64bits(r) {
				fatalf(t, "%s: element %d (%d updates, NaN, inf or zero among them): got %v, want %v exactly", what, e, a.n, g, r)
			}
			continue
		}
		gamma := math.Expm1(float64(a.n) * math.Log1p(u))
		var bound float64
		switch p.Reduction {
		case ops.Sum, ops.Sub:
			if a.sum*(1+gamma) >= maxFinite {
				continue
			}
			bound = 2 * gamma * a.sum
		case ops.Mean:
			if a.sum*(1+gamma) >= maxFinite {
				continue
			}
			c := float64(a.n)
			if p.UseInitVal {
				c++
			}
			bound = 2*gamma*a.sum/c + u*(math.Abs(g)+math.Abs(r)) + minSub
		case ops.Prod:
			if a.big+math.Log1p(gamma) >= math.Log(maxFinite) || a.tiny-math.Log1p(gamma) <= math.Log(minNormal) {
				continue
			}
			bound = 2 * gamma * math.Exp(a.logP)
		}
		checked++
		if math.IsNaN(g) || math.IsNaN(r) || math.Abs(g-r) > bound {
			fatalf(t, "%s: element %d (%d updates, sum of magnitudes %g): got %v, want %v; |difference| %g is above the bound %g",
				what, e, a.n, a.sum, g, r, math.Abs(g-r), bound)
		}
	}
	return checked
}

// ReductionOps are the operators that take reductions other than none:
// OpenVINO's in ops.All's order, then ONNX's grouped by family.
var ReductionOps = reductionOps()

func reductionOps() []string {
	var list []*ops.Op
	for _, op := range ops.All() {
		if len(op.Reductions) > 1 {
			list = append(list, op)
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.Source != b.Source {
			return a.Source == "OpenVINO"
		}
		return a.Source == "ONNX" && a.Family < b.Family
	})
	names := make([]string, len(list))
	for i, op := range list {
		names[i] = op.Name
	}
	return names
}

// FoldNames returns the names of the reductions other than none that the
// operator called op takes on data of dtype dt, as it spells them and in
// ops.Op.ReductionNames' order; nil for an operator ops does not know.
func FoldNames(op string, dt tensor.DType) []string {
	o, err := ops.Lookup(op)
	if err != nil {
		return nil
	}
	var names []string
	for _, n := range o.ReductionNames() {
		if r := o.Reductions[n]; r != ops.None && r.Accepts(dt) {
			names = append(names, n)
		}
	}
	return names
}

// RandomReductionRequest is a RandomRequest of an operator with
// reductions, with a reduction other than none that the operator and
// dtype take.
func RandomReductionRequest(rng *rand.Rand, cfg Config) ops.Request {
	cfg.Ops = ReductionOps
	req := RandomRequest(rng, cfg)
	if names := FoldNames(req.Op, req.Data.DType); len(names) > 0 {
		req.Reduction = names[rng.Intn(len(names))]
	}
	return req
}

// ContentionRequest builds a reduction request whose updates pile onto a
// few targets (perTarget updates each on average): ScatterElementsUpdate-12
// into a [targets] tensor, or ScatterNDUpdate-15 into [targets, 3] rows.
// Values suit the reduction: full-range integers (wrapping sums and
// products), floats of mixed magnitudes for sums, factors near 1 for
// products; float min and max see ±0 and, on target 0, one NaN.
func ContentionRequest(rng *rand.Rand, op string, dt tensor.DType, red string, targets, perTarget int, useInit *bool) ops.Request {
	return contentionRequest(rng, op, dt, red, targets, targets*perTarget, func() int { return rng.Intn(targets) }, useInit)
}

// SkewedRequest is ContentionRequest with n updates whose targets follow a
// bounded Zipf law over the targets: the target of rank r (a seeded
// shuffle places the ranks) is drawn with probability proportional to
// r^-s, so that with s near 1 the hottest few take a large share of the
// updates and most targets take one or none, as word frequencies in
// embedding gradients and node degrees in graphs do.
func SkewedRequest(rng *rand.Rand, op string, dt tensor.DType, red string, targets, n int, s float64, useInit *bool) ops.Request {
	cdf := make([]float64, targets)
	var sum float64
	for r := range cdf {
		sum += math.Pow(float64(r+1), -s)
		cdf[r] = sum
	}
	place := rng.Perm(targets)
	pick := func() int {
		r, _ := slices.BinarySearch(cdf, rng.Float64()*sum)
		return place[min(r, targets-1)]
	}
	return contentionRequest(rng, op, dt, red, targets, n, pick, useInit)
}

// contentionRequest builds ContentionRequest's request with n updates
// whose targets pick draws.
func contentionRequest(rng *rand.Rand, op string, dt tensor.DType, red string, targets, n int, pick func() int, useInit *bool) ops.Request {
	inner := 1
	idxShape := []int{n}
	dataShape := []int{targets}
	if strings.HasPrefix(op, "ScatterND") {
		inner = 3
		idxShape = []int{n, 1}
		dataShape = []int{targets, inner}
	}
	idx, _ := tensor.New(tensor.Int64, idxShape)
	iv := tensor.View[int64](idx)
	for i := range iv {
		iv[i] = int64(pick())
		if rng.Intn(3) == 0 {
			iv[i] -= int64(targets) // negative indices count from the end
		}
	}
	updShape := append([]int{n}, dataShape[1:]...)
	data, _ := tensor.New(dt, dataShape)
	upd, _ := tensor.New(dt, updShape)
	r := ops.None
	if o, err := ops.Lookup(op); err == nil {
		r, _ = o.ParseReduction(red)
	}
	fill := func(t *tensor.Tensor, isUpd bool) {
		for i := 0; i < t.Len(); i++ {
			var f float64
			var bits uint64
			switch r {
			case ops.Prod:
				f = math.Exp(0.02 * rng.NormFloat64())
				if rng.Intn(2) == 0 {
					f = -f
				}
				bits = uint64(rng.Intn(7)) - 3
				if rng.Intn(50) == 0 {
					bits = rng.Uint64()
				}
			case ops.Min, ops.Max:
				f = float64(rng.Intn(2001)-1000) / 8
				if rng.Intn(20) == 0 {
					f = math.Copysign(0, float64(rng.Intn(2)*2-1))
				}
				bits = rng.Uint64()
			default:
				// Mixed magnitudes, small enough that float16 sums of
				// thousands stay finite.
				f = rng.NormFloat64() * math.Pow(2, float64(rng.Intn(14)-10))
				bits = rng.Uint64()
			}
			SetNumber(t, i, f, bits)
		}
	}
	fill(data, false)
	fill(upd, true)
	if dt.IsFloat() && (r == ops.Min || r == ops.Max) {
		for i, v := range iv {
			if v == 0 || v == -int64(targets) {
				SetNumber(upd, i*inner, math.NaN(), 0)
				break
			}
		}
	}
	req := ops.Request{Op: op, Data: data, Indices: idx, Updates: upd, Reduction: red, UseInitVal: useInit}
	if !strings.HasPrefix(op, "ScatterND") {
		req.Axis = tensor.Scalar(0)
	}
	return req
}

// SetNumber stores f (float dtypes) or the low bits of bits (integers;
// bool: bit 0) into element i of t.
func SetNumber(t *tensor.Tensor, i int, f float64, bits uint64) {
	b := t.Data
	switch t.DType {
	case tensor.Bool:
		b[i] = byte(bits & 1)
	case tensor.Float16:
		binary.LittleEndian.PutUint16(b[2*i:], uint16(tensor.F16From(float32(f))))
	case tensor.BFloat16:
		binary.LittleEndian.PutUint16(b[2*i:], uint16(tensor.BF16From(float32(f))))
	case tensor.Float32:
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(f)))
	case tensor.Float64:
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(f))
	default:
		for k := 0; k < t.DType.Size(); k++ {
			b[i*t.DType.Size()+k] = byte(bits >> (8 * k))
		}
	}
}
