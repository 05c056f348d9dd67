package gpu

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// reductionOps are the operators that take reductions other than none.
var reductionOps = []string{"ScatterNDUpdate-15", "ScatterElementsUpdate-12", "ScatterElements-16", "ScatterElements-18",
	"ScatterND-16", "ScatterND-18"}

// reductionConfigs are the device configurations the reduction tests run
// in: native atomics and compare-and-swap loops, each with and without
// the workgroup-memory accumulation, deterministic mode, and every Element
// plan walking its columns (walkMin 1).
var reductionConfigs = []struct {
	name      string
	opts      Options
	noPrivate bool
	walk      bool
}{
	{"native", Options{}, false, false},
	{"native-global", Options{}, true, false},
	{"cas", Options{ForceCAS: true}, false, false},
	{"cas-global", Options{ForceCAS: true}, true, false},
	{"deterministic", Options{Deterministic: true}, false, false},
	{"walk", Options{}, false, true},
}

// openReduction opens a backend in a configuration of reductionConfigs.
func openReduction(t *testing.T, opts Options, noPrivate, walk bool) *Backend {
	b := openTest(t, opts)
	b.noPrivate = noPrivate
	if walk {
		b.walkMin = 1
	}
	return b
}

// exactPath reports whether a reduction path must give the CPU
// reference's bits for float sum, sub, prod and mean: the in-order fold,
// the column walk (also in index order), and reduction none ("").
func exactPath(path string) bool {
	return path == "ordered" || path == "walk" || path == ""
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
// lands on (p's indices must be in range).
func targetsOf(t *testing.T, p *ops.Plan) []int {
	n := p.NumUpdates()
	out := make([]int, n)
	switch p.Kind {
	case ops.KindND:
		for u := 0; u < n; u++ {
			j, k := u/p.Inner, u%p.Inner
			row := 0
			for c := 0; c < p.TupleLen; c++ {
				v, err := p.IndexAt(j*p.TupleLen + c)
				require.NoError(t, err)
				row = row*p.Shape[c] + v
			}
			out[u] = row*p.Inner + k
		}
	case ops.KindElements:
		coord := make([]int, len(p.IndicesShape))
		for u := 0; u < n; u++ {
			tensor.Unravel(u, p.IndicesShape, coord)
			v, err := p.IndexAt(u)
			require.NoError(t, err)
			coord[p.Axis] = v
			e := 0
			for d, c := range coord {
				e += c * p.Strides[d]
			}
			out[u] = e
		}
	default:
		t.Fatalf("no reductions on %v", p.Kind)
	}
	return out
}

// checkReduction compares a GPU result with the CPU reference's. Integer,
// bool, min and max results, and every result of the in-order fold, must
// be equal (any NaN matching any NaN). Float sum, sub, prod and mean
// computed with atomics must lie within the bound of the package
// documentation, element by element:
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
func checkReduction(t *testing.T, p *ops.Plan, got, want *tensor.Tensor, exact bool, what string) int {
	t.Helper()
	if exact || !floatOrderSensitive(p.DType, p.Reduction) {
		if d := opstest.Diff(got, want); d != "" {
			t.Fatalf("%s: %s", what, d)
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
		accs[e].n++
		add(&accs[e], floatAt(p.Updates, i))
	}
	checked := 0
	for e := range accs {
		a := accs[e]
		g, r := floatAt(got, e), floatAt(want, e)
		if a.n == 0 || a.special {
			if !(math.IsNaN(g) && math.IsNaN(r)) && math.Float64bits(g) != math.Float64bits(r) {
				t.Fatalf("%s: element %d (%d updates, NaN, inf or zero among them): got %v, want %v exactly", what, e, a.n, g, r)
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
			t.Fatalf("%s: element %d (%d updates, sum of magnitudes %g): got %v, want %v; |difference| %g is above the bound %g",
				what, e, a.n, a.sum, g, r, math.Abs(g-r), bound)
		}
	}
	return checked
}

// runBoth runs p on b (into an output filled with a pattern) and on the
// CPU reference and returns both results.
func runBoth(t *testing.T, b *Backend, p *ops.Plan) (got, want *tensor.Tensor) {
	t.Helper()
	want, _ = tensor.New(p.DType, p.Shape)
	require.NoError(t, cpuref.New().Execute(context.Background(), p, want))
	got = sentinelOutput(p)
	require.NoError(t, b.Execute(context.Background(), p, got))
	return got, want
}

// randomReductionRequest is a RandomRequest of an operator with
// reductions, with a reduction other than none that the operator and
// dtype take.
func randomReductionRequest(rng *rand.Rand, cfg opstest.Config) ops.Request {
	cfg.Ops = reductionOps
	req := opstest.RandomRequest(rng, cfg)
	op, _ := ops.Lookup(req.Op)
	var names []string
	for _, n := range op.ReductionNames() {
		r := op.Reductions[n]
		if r == ops.None || (r == ops.Mean && req.Data.DType == tensor.Bool) || !req.Data.DType.IsNumeric() {
			continue
		}
		names = append(names, n)
	}
	if len(names) > 0 {
		req.Reduction = names[rng.Intn(len(names))]
	}
	return req
}

// TestDifferentialAtomics runs random reduction requests (every operator,
// dtype and reduction, use_init_val both ways, heavy duplicates now and
// then) with the in-order fold off for small plans, so that float sum,
// sub, prod and mean use the atomics, natively and with CAS loops, and
// checks the results against the CPU reference: exactly, or within the
// documented bound for those floats.
func TestDifferentialAtomics(t *testing.T) {
	seed := testSeed(t, 31337)
	n := 1000
	if testing.Short() {
		n = 300
	}
	for i, cfg := range []struct {
		name string
		opts Options
	}{{"native", Options{}}, {"cas", Options{ForceCAS: true}}} {
		t.Run(cfg.name, func(t *testing.T) {
			b := openTest(t, cfg.opts)
			b.orderedMax = 0
			rng := rand.New(rand.NewSource(seed + int64(i)))
			var floats, bounded int
			for c := 0; c < n; c++ {
				req := randomReductionRequest(rng, opstest.Config{})
				p, err := ops.Prepare(req)
				require.NoError(t, err, "case %d (seed %d): %s", c, seed, opstest.Describe(req))
				if p.Reduction == ops.None {
					continue
				}
				got, want := runBoth(t, b, p)
				what := fmt.Sprintf("case %d (seed %d) on %s\n%s", c, seed, b.LastStats().Reduction, opstest.Describe(req))
				bounded += checkReduction(t, p, got, want, false, what)
				if floatOrderSensitive(p.DType, p.Reduction) && p.NumUpdates() > 0 {
					floats++
					assert.NotEqual(t, "ordered", b.LastStats().Reduction)
				}
			}
			t.Logf("%d requests, %d float sum/sub/prod/mean ones on atomics, %d elements checked against the bound", n, floats, bounded)
		})
	}
}

// contentionRequest builds a reduction request whose updates pile onto a
// few targets (perTarget updates each on average): ScatterElementsUpdate-12
// into a [targets] tensor, or ScatterNDUpdate-15 into [targets, 3] rows.
// Values suit the reduction: full-range integers (wrapping sums and
// products), floats of mixed magnitudes for sums, factors near 1 for
// products; float min and max see ±0 and, on target 0, one NaN.
func contentionRequest(rng *rand.Rand, op string, dt tensor.DType, red string, targets, perTarget int, useInit *bool) ops.Request {
	n := targets * perTarget
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
		iv[i] = int64(rng.Intn(targets))
		if rng.Intn(3) == 0 {
			iv[i] -= int64(targets) // negative indices count from the end
		}
	}
	updShape := append([]int{n}, dataShape[1:]...)
	data, _ := tensor.New(dt, dataShape)
	upd, _ := tensor.New(dt, updShape)
	fill := func(t *tensor.Tensor, isUpd bool) {
		for i := 0; i < t.Len(); i++ {
			var f float64
			var bits uint64
			switch red {
			case "prod", "mul":
				f = math.Exp(0.02 * rng.NormFloat64())
				if rng.Intn(2) == 0 {
					f = -f
				}
				bits = uint64(rng.Intn(7)) - 3
				if rng.Intn(50) == 0 {
					bits = rng.Uint64()
				}
			case "min", "max":
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
			setNumber(t, i, f, bits)
		}
	}
	fill(data, false)
	fill(upd, true)
	if dt.IsFloat() && (red == "min" || red == "max") {
		for i, v := range iv {
			if v == 0 || v == -int64(targets) {
				setNumber(upd, i*inner, math.NaN(), 0)
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

// setNumber stores f (float dtypes) or the low bits of bits (integers;
// bool: bit 0) into element i of t.
func setNumber(t *tensor.Tensor, i int, f float64, bits uint64) {
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

// TestReductionsUnderContention runs every dtype and reduction of
// ScatterElementsUpdate-12 (use_init_val true and false) and
// ScatterNDUpdate-15 with thousands of updates per target (hundreds with
// -short), in every configuration: atomics must stay exact where the
// reduction is, within the bound for float sum, sub, prod and mean, and
// deterministic mode must give the CPU reference's bits.
func TestReductionsUnderContention(t *testing.T) {
	seed := testSeed(t, 4242)
	perTarget := 2000
	if testing.Short() {
		perTarget = 300
	}
	type tc struct {
		op, red string
		dt      tensor.DType
		useInit *bool
	}
	no := false
	var cases []tc
	for _, dt := range tensor.DTypes() {
		if !dt.IsNumeric() {
			continue
		}
		for _, red := range []string{"sum", "prod", "min", "max", "mean"} {
			if red == "mean" && dt == tensor.Bool {
				continue
			}
			cases = append(cases, tc{"ScatterElementsUpdate-12", red, dt, nil}, tc{"ScatterElementsUpdate-12", red, dt, &no})
		}
		for _, red := range []string{"sum", "sub", "prod", "min", "max"} {
			cases = append(cases, tc{"ScatterNDUpdate-15", red, dt, nil})
		}
	}
	for ci, cfg := range reductionConfigs {
		t.Run(cfg.name, func(t *testing.T) {
			b := openReduction(t, cfg.opts, cfg.noPrivate, cfg.walk)
			b.orderedMax = 0 // -short plans are small
			rng := rand.New(rand.NewSource(seed + int64(ci)))
			paths := map[string]int{}
			bounded := 0
			for i, c := range cases {
				targets, per := 8, perTarget
				if c.op == "ScatterNDUpdate-15" {
					targets, per = 5, perTarget/2
				}
				req := contentionRequest(rng, c.op, c.dt, c.red, targets, per, c.useInit)
				p, err := ops.Prepare(req)
				require.NoError(t, err)
				got, want := runBoth(t, b, p)
				path := b.LastStats().Reduction
				paths[path]++
				what := fmt.Sprintf("case %d: %s %s %v use_init_val=%v on %s (seed %d)", i, c.op, c.red, c.dt, p.UseInitVal, path, seed)
				bounded += checkReduction(t, p, got, want, exactPath(path), what)
				switch {
				case cfg.walk && c.op == "ScatterElementsUpdate-12":
					assert.Equal(t, "walk", path, what)
				case floatOrderSensitive(p.DType, p.Reduction):
					assert.Equal(t, cfg.opts.Deterministic, exactPath(path), what)
				}
			}
			t.Logf("%d cases by path %v, %d elements checked against the bound", len(cases), paths, bounded)
		})
	}
}

// f16s and bf16s build 16-bit float tensors.
func f16s(shape []int, vals ...float32) *tensor.Tensor {
	h := make([]tensor.F16, len(vals))
	for i, v := range vals {
		h[i] = tensor.F16From(v)
	}
	return tensor.MustFromSlice(shape, h)
}

func bf16s(shape []int, vals ...float32) *tensor.Tensor {
	h := make([]tensor.BF16, len(vals))
	for i, v := range vals {
		h[i] = tensor.BF16From(v)
	}
	return tensor.MustFromSlice(shape, h)
}

// TestReductionTable checks the contract's rules (specs/README.md) case by
// case in every configuration, with small plans on the atomics too:
// integer wrap-around, bool reductions, NaN and signed zeros in min and
// max, float16 rounding, use_init_val = false, and the mean's rounding.
// Each result must be the CPU reference's bit for bit and, where given,
// the value worked out by hand.
func TestReductionTable(t *testing.T) {
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	no := false
	elems := func(red string, data, upd *tensor.Tensor, idx []int64, useInit *bool) ops.Request {
		return ops.Request{Op: "ScatterElementsUpdate-12", Reduction: red, Data: data, Updates: upd,
			Indices: tensor.MustFromSlice([]int{len(idx)}, idx), Axis: tensor.Scalar(0), UseInitVal: useInit}
	}
	nd := func(red string, data, upd *tensor.Tensor, idx []int64) ops.Request {
		return ops.Request{Op: "ScatterNDUpdate-15", Reduction: red, Data: data, Updates: upd,
			Indices: tensor.MustFromSlice([]int{len(idx), 1}, idx)}
	}
	cases := []struct {
		name string
		req  ops.Request
		want *tensor.Tensor // nil: the CPU reference's only
	}{
		{"int8 sum wraps", elems("sum", tensor.MustFromSlice([]int{2}, []int8{100, 1}), tensor.MustFromSlice([]int{3}, []int8{100, 27, 1}), []int64{0, 0, 0}, nil),
			tensor.MustFromSlice([]int{2}, []int8{-28, 1})},
		{"int8 prod wraps", nd("prod", tensor.MustFromSlice([]int{2}, []int8{16, -128}), tensor.MustFromSlice([]int{3}, []int8{16, 3, -1}), []int64{0, 1, 1}),
			tensor.MustFromSlice([]int{2}, []int8{0, -128})},
		{"uint64 sum wraps", elems("sum", tensor.MustFromSlice([]int{1}, []uint64{math.MaxUint64 - 1}), tensor.MustFromSlice([]int{3}, []uint64{1, 2, 3}), []int64{0, 0, 0}, nil),
			tensor.MustFromSlice([]int{1}, []uint64{4})},
		{"uint64 prod wraps", nd("prod", tensor.MustFromSlice([]int{2}, []uint64{1 << 32, math.MaxUint64}), tensor.MustFromSlice([]int{2}, []uint64{1 << 32, math.MaxUint64}), []int64{0, 1}),
			tensor.MustFromSlice([]int{2}, []uint64{0, 1})},
		{"int32 sub wraps", nd("sub", tensor.MustFromSlice([]int{1}, []int32{math.MinInt32}), tensor.MustFromSlice([]int{1}, []int32{1}), []int64{0}),
			tensor.MustFromSlice([]int{1}, []int32{math.MaxInt32})},
		{"int64 min max", elems("min", tensor.MustFromSlice([]int{2}, []int64{5, math.MinInt64}), tensor.MustFromSlice([]int{3}, []int64{-7, math.MaxInt64, 3}), []int64{0, 1, 0}, nil),
			tensor.MustFromSlice([]int{2}, []int64{-7, math.MinInt64})},
		{"uint16 max", nd("max", tensor.MustFromSlice([]int{3}, []uint16{1, 65535, 7}), tensor.MustFromSlice([]int{3}, []uint16{65534, 3, 9}), []int64{0, 1, 0}),
			tensor.MustFromSlice([]int{3}, []uint16{65534, 65535, 7})},
		{"bool sum is OR", nd("sum", tensor.MustFromSlice([]int{3}, []bool{false, false, true}), tensor.MustFromSlice([]int{3}, []bool{false, true, false}), []int64{0, 1, 2}),
			tensor.MustFromSlice([]int{3}, []bool{false, true, true})},
		{"bool sub is XOR", nd("sub", tensor.MustFromSlice([]int{2}, []bool{true, false}), tensor.MustFromSlice([]int{3}, []bool{true, true, true}), []int64{0, 1, 1}),
			tensor.MustFromSlice([]int{2}, []bool{false, false})},
		{"bool prod and min are AND", elems("min", tensor.MustFromSlice([]int{2}, []bool{true, true}), tensor.MustFromSlice([]int{2}, []bool{true, false}), []int64{0, 1}, nil),
			tensor.MustFromSlice([]int{2}, []bool{true, false})},
		{"float32 min propagates NaN", elems("min", tensor.MustFromSlice([]int{3}, []float32{1, nan, 5}), tensor.MustFromSlice([]int{4}, []float32{nan, 3, 2, -1}), []int64{0, 1, 2, 0}, nil), nil},
		{"float64 max propagates NaN", elems("max", tensor.MustFromSlice([]int{2}, []float64{1, 2}), tensor.MustFromSlice([]int{3}, []float64{3, math.NaN(), 9}), []int64{0, 0, 1}, nil), nil},
		{"float16 min propagates NaN", nd("min", f16s([]int{2}, 1, 2), f16s([]int{3}, nan, -4, 0), []int64{0, 0, 1}), nil},
		{"bfloat16 max propagates NaN", nd("max", bf16s([]int{2}, nan, 2), bf16s([]int{2}, 5, 3), []int64{0, 1}), nil},
		{"float32 min of zeros is -0", elems("min", tensor.MustFromSlice([]int{2}, []float32{0, negZero}), tensor.MustFromSlice([]int{2}, []float32{negZero, 0}), []int64{0, 1}, nil),
			tensor.MustFromSlice([]int{2}, []float32{negZero, negZero})},
		{"float32 max of zeros is +0", elems("max", tensor.MustFromSlice([]int{2}, []float32{0, negZero}), tensor.MustFromSlice([]int{2}, []float32{negZero, 0}), []int64{0, 1}, nil),
			tensor.MustFromSlice([]int{2}, []float32{0, 0})},
		{"float16 zeros", nd("min", f16s([]int{2}, 0, negZero), f16s([]int{2}, negZero, 0), []int64{0, 1}), f16s([]int{2}, negZero, negZero)},
		{"float64 zeros", nd("max", tensor.MustFromSlice([]int{2}, []float64{0, math.Copysign(0, -1)}), tensor.MustFromSlice([]int{2}, []float64{math.Copysign(0, -1), 0}), []int64{0, 1}),
			tensor.MustFromSlice([]int{2}, []float64{0, 0})},
		{"float16 sum rounds to even each step", elems("sum", f16s([]int{1}, 2048), f16s([]int{3}, 1, 1, 1), []int64{0, 0, 0}, nil), f16s([]int{1}, 2048)},
		{"bfloat16 sum rounds each step", elems("sum", bf16s([]int{1}, 256), bf16s([]int{2}, 1, 1), []int64{0, 0}, nil), bf16s([]int{1}, 256)},
		{"float16 overflow", nd("sum", f16s([]int{1}, 60000), f16s([]int{1}, 10000), []int64{0}), f16s([]int{1}, float32(math.Inf(1)))},
		{"use_init_val false sum", elems("sum", tensor.MustFromSlice([]int{3}, []float32{10, 20, 30}), tensor.MustFromSlice([]int{3}, []float32{1, 2, negZero}), []int64{0, 0, 2}, &no),
			tensor.MustFromSlice([]int{3}, []float32{3, 20, 0})},
		{"use_init_val false prod", elems("prod", tensor.MustFromSlice([]int{3}, []int32{10, 20, 30}), tensor.MustFromSlice([]int{3}, []int32{1, 2, 5}), []int64{0, 0, 2}, &no),
			tensor.MustFromSlice([]int{3}, []int32{2, 20, 5})},
		{"use_init_val false min", elems("min", tensor.MustFromSlice([]int{3}, []uint8{1, 20, 30}), tensor.MustFromSlice([]int{3}, []uint8{200, 250, 5}), []int64{0, 0, 2}, &no),
			tensor.MustFromSlice([]int{3}, []uint8{200, 20, 5})},
		{"use_init_val false max", elems("max", tensor.MustFromSlice([]int{3}, []float64{100, 20, 30}), tensor.MustFromSlice([]int{3}, []float64{-1, -2, 5}), []int64{0, 0, 2}, &no),
			tensor.MustFromSlice([]int{3}, []float64{-1, 20, 5})},
		{"use_init_val false bool prod", elems("prod", tensor.MustFromSlice([]int{2}, []bool{false, true}), tensor.MustFromSlice([]int{1}, []bool{true}), []int64{0}, &no),
			tensor.MustFromSlice([]int{2}, []bool{true, true})},
		{"use_init_val false mean", elems("mean", tensor.MustFromSlice([]int{3}, []float32{10, 20, 30}), tensor.MustFromSlice([]int{3}, []float32{1, 2, 5}), []int64{0, 0, 2}, &no),
			tensor.MustFromSlice([]int{3}, []float32{1.5, 20, 5})},
		{"mean floors toward -inf", elems("mean", tensor.MustFromSlice([]int{2}, []int32{0, 300}), tensor.MustFromSlice([]int{3}, []int32{-2, -3, 307}), []int64{0, 0, 1}, &no),
			tensor.MustFromSlice([]int{2}, []int32{-3, 307})},
		{"mean counts the original", elems("mean", tensor.MustFromSlice([]int{2}, []int32{0, 300}), tensor.MustFromSlice([]int{3}, []int32{-2, -3, 307}), []int64{0, 0, 1}, nil),
			tensor.MustFromSlice([]int{2}, []int32{-2, 303})},
		{"int8 mean sums without wrapping", elems("mean", tensor.MustFromSlice([]int{1}, []int8{127}), tensor.MustFromSlice([]int{3}, []int8{127, 127, 126}), []int64{0, 0, 0}, nil),
			tensor.MustFromSlice([]int{1}, []int8{126})},
		{"uint32 mean sums in 64 bits", elems("mean", tensor.MustFromSlice([]int{1}, []uint32{math.MaxUint32}), tensor.MustFromSlice([]int{1}, []uint32{math.MaxUint32 - 2}), []int64{0}, nil),
			tensor.MustFromSlice([]int{1}, []uint32{math.MaxUint32 - 1})},
		{"int64 mean wraps in its own type", elems("mean", tensor.MustFromSlice([]int{1}, []int64{math.MaxInt64}), tensor.MustFromSlice([]int{1}, []int64{3}), []int64{0}, nil), nil},
		{"float32 mean of subnormals ties to even", elems("mean", tensor.MustFromSlice([]int{1}, []float32{math.Float32frombits(3)}), tensor.MustFromSlice([]int{0}, []float32{}), []int64{}, nil), nil},
		{"float32 mean subnormal tie", elems("mean", tensor.MustFromSlice([]int{1}, []float32{math.Float32frombits(2)}), tensor.MustFromSlice([]int{1}, []float32{math.Float32frombits(1)}), []int64{0}, nil),
			tensor.MustFromSlice([]int{1}, []float32{math.Float32frombits(2)})},
		{"float16 mean", elems("mean", f16s([]int{2}, 1, 7), f16s([]int{4}, 2, 2, 1, 0.1), []int64{0, 0, 1, 1}, nil), nil},
		{"bfloat16 mean by 3", elems("mean", bf16s([]int{1}, 1), bf16s([]int{2}, 1, 2), []int64{0, 0}, &no), nil},
		{"float64 mean by 7", elems("mean", tensor.MustFromSlice([]int{1}, []float64{1}), tensor.MustFromSlice([]int{6}, []float64{1, 1, 1, 1, 1, 1.5}), []int64{0, 0, 0, 0, 0, 0}, nil), nil},
	}
	ref := cpuref.New()
	for _, cfg := range reductionConfigs {
		t.Run(cfg.name, func(t *testing.T) {
			b := openReduction(t, cfg.opts, cfg.noPrivate, cfg.walk)
			if !cfg.opts.Deterministic {
				b.orderedMax = 0
			}
			for _, c := range cases {
				got, err := ops.Run(context.Background(), b, c.req)
				require.NoError(t, err, c.name)
				want, err := ops.Run(context.Background(), ref, c.req)
				require.NoError(t, err, c.name)
				if d := opstest.Diff(got, want); d != "" {
					t.Errorf("%s on %s: %s", c.name, b.LastStats().Reduction, d)
				}
				if c.want != nil {
					assert.Empty(t, opstest.DiffExact(want, c.want), "%s: the CPU reference", c.name)
				}
			}
		})
	}
}

// TestReductionIndexErrors: an out-of-range index in a reduction plan is
// reported as the CPU reference reports it, whatever the path, and out is
// left untouched.
func TestReductionIndexErrors(t *testing.T) {
	ref := cpuref.New()
	for _, cfg := range reductionConfigs {
		t.Run(cfg.name, func(t *testing.T) {
			b := openReduction(t, cfg.opts, cfg.noPrivate, cfg.walk)
			rng := rand.New(rand.NewSource(5))
			for _, c := range []struct {
				op, red string
				dt      tensor.DType
			}{
				{"ScatterElementsUpdate-12", "sum", tensor.Float32},
				{"ScatterElementsUpdate-12", "mean", tensor.Int16},
				{"ScatterElementsUpdate-12", "max", tensor.Float64},
				{"ScatterNDUpdate-15", "prod", tensor.BFloat16},
				{"ScatterNDUpdate-15", "sub", tensor.Int64},
			} {
				no := false
				req := contentionRequest(rng, c.op, c.dt, c.red, 8, 600, &no)
				if c.op == "ScatterNDUpdate-15" {
					req.UseInitVal = nil
				}
				tensor.View[int64](req.Indices)[3001] = 8 // first bad
				tensor.View[int64](req.Indices)[4000] = -9
				p, err := ops.Prepare(req)
				require.NoError(t, err)
				want, _ := tensor.New(p.DType, p.Shape)
				werr := ref.Execute(context.Background(), p, want)
				require.ErrorIs(t, werr, ops.ErrIndexRange)
				out := sentinelOutput(p)
				before := out.Clone()
				gerr := b.Execute(context.Background(), p, out)
				require.ErrorIs(t, gerr, ops.ErrIndexRange, "%s %s", c.op, c.red)
				assert.Equal(t, werr.Error(), gerr.Error())
				assert.True(t, tensor.Equal(out, before), "out untouched")
			}
		})
	}
}

// TestReductionPaths checks which path each kind of plan takes (Stats).
func TestReductionPaths(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	big := func(dt tensor.DType, red string, targets int) *ops.Plan {
		p, err := ops.Prepare(contentionRequest(rng, "ScatterElementsUpdate-12", dt, red, targets, max(8192/targets, 4), nil))
		require.NoError(t, err)
		return p
	}
	small, err := ops.Prepare(contentionRequest(rng, "ScatterElementsUpdate-12", tensor.Float32, "sum", 4, 4, nil))
	require.NoError(t, err)
	caps := openTest(t, Options{}).Device().Capabilities()
	native := "cas"
	if caps.Float32AtomicAdd {
		native = "native"
	}
	for _, c := range []struct {
		name string
		opts Options
		p    *ops.Plan
		want string
	}{
		{"float32 sum, many targets", Options{}, big(tensor.Float32, "sum", 3000), native},
		{"float32 sum, few targets", Options{}, big(tensor.Float32, "sum", 4), native + "+private"},
		{"float32 sum, CAS", Options{ForceCAS: true}, big(tensor.Float32, "sum", 3000), "cas"},
		{"float32 sum, deterministic", Options{Deterministic: true}, big(tensor.Float32, "sum", 4), "ordered"},
		{"float32 sum, small plan", Options{}, small, "ordered"},
		{"float32 max, deterministic", Options{Deterministic: true}, big(tensor.Float32, "max", 3000), "cas"},
		{"int32 sum, deterministic", Options{Deterministic: true}, big(tensor.Int32, "sum", 3000), "native"},
		{"int32 sum, CAS", Options{ForceCAS: true}, big(tensor.Int32, "sum", 3000), "cas"},
		{"int16 mean", Options{}, big(tensor.Int16, "mean", 3000), "native"},
		{"float16 prod", Options{}, big(tensor.Float16, "prod", 5000), "cas"},
		{"float16 prod, few targets", Options{}, big(tensor.Float16, "prod", 3000), "cas+private"},
		{"bool max, few targets", Options{}, big(tensor.Bool, "max", 4), "cas"},
	} {
		b := openTest(t, c.opts)
		out, _ := tensor.New(c.p.DType, c.p.Shape)
		require.NoError(t, b.Execute(context.Background(), c.p, out))
		assert.Equal(t, c.want, b.LastStats().Reduction, c.name)
	}
}

// TestReductionDeviceShapes runs random reduction requests, larger ones
// included, in the device configurations TestDifferentialNone uses for
// moves: 16-byte chunks, 64-bit positions, runs of 1 (as on GPUs) and 3
// positions per invocation, and tiny workgroup-count limits that make
// every pass (the sort's and scan's included) a 2-D or 3-D grid split
// over several dispatches. Each runs deterministic (bit for bit) and on
// the atomics (within the bound).
func TestReductionDeviceShapes(t *testing.T) {
	seed := testSeed(t, 777)
	n := 250
	if testing.Short() {
		n = 80
	}
	large := opstest.Config{MaxRank: 3, MaxDim: 40, MaxElements: 5000}
	for i, shape := range []struct {
		name  string
		alloc uint64 // Options.MaxAllocationBytes
		tweak func(b *Backend)
	}{
		{"chunks16B", 0, func(b *Backend) { b.shift = chunkShift(minChunk) }},
		{"wide", testChunk, func(b *Backend) { b.forceWide = true }},
		{"run1", testChunk, func(b *Backend) { b.run = 1 }},
		{"run3", testChunk, func(b *Backend) { b.run = 3 }},
		{"grids", 0, func(b *Backend) { b.maxGroups = [3]uint32{1, 2, 65535} }},
	} {
		for _, mode := range []string{"atomics", "deterministic", "walk"} {
			t.Run(shape.name+"/"+mode, func(t *testing.T) {
				b := openReduction(t, Options{Deterministic: mode == "deterministic", MaxAllocationBytes: shape.alloc}, false, mode == "walk")
				shape.tweak(b)
				b.orderedMax = 0
				rng := rand.New(rand.NewSource(seed + int64(i)))
				for c := 0; c < n; c++ {
					cfg := opstest.Config{}
					if c%3 == 0 {
						cfg = large
					}
					req := randomReductionRequest(rng, cfg)
					p, err := ops.Prepare(req)
					require.NoError(t, err)
					if p.Reduction == ops.None {
						continue
					}
					got, want := runBoth(t, b, p)
					path := b.LastStats().Reduction
					checkReduction(t, p, got, want, exactPath(path),
						fmt.Sprintf("case %d (seed %d) on %s\n%s", c, seed, path, opstest.Describe(req)))
				}
			})
		}
	}
}

// TestOrderedManySlots folds in order with more slots than two levels of
// scan blocks hold (runs of 1: blocks of 256 words), so that the scans
// take three levels, and checks the CPU reference's bits.
func TestOrderedManySlots(t *testing.T) {
	b := openTest(t, Options{Deterministic: true})
	b.run = 1
	rng := rand.New(rand.NewSource(3))
	size, n := 70000, 150000
	if testing.Short() {
		size, n = 66000, 70000
	}
	idx, _ := tensor.New(tensor.Int32, []int{n})
	for i, v := 0, tensor.View[int32](idx); i < len(v); i++ {
		v[i] = int32(rng.Intn(size))
	}
	data, upd := randomFloats(rng, []int{size}), randomFloats(rng, []int{n})
	for i, v := 0, tensor.View[float32](upd); i < len(v); i++ {
		v[i] *= float32(rng.NormFloat64()) // inexact sums
	}
	p, err := ops.Prepare(ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "sum", Data: data, Indices: idx, Updates: upd, Axis: tensor.Scalar(0)})
	require.NoError(t, err)
	got, want := runBoth(t, b, p)
	require.Equal(t, "ordered", b.LastStats().Reduction)
	require.Empty(t, opstest.DiffExact(got, want))
}

// TestOrderedWithout64BitAtomics runs every reduction on 8-byte elements as
// on a device without 64-bit atomics, where they fold in order, and
// requires the CPU reference's bits.
func TestOrderedWithout64BitAtomics(t *testing.T) {
	b := openTest(t, Options{})
	b.noInt64Atomics = true
	rng := rand.New(rand.NewSource(12))
	no := false
	for _, dt := range []tensor.DType{tensor.Int64, tensor.Uint64, tensor.Float64} {
		for _, c := range []struct {
			op, red string
			useInit *bool
		}{
			{"ScatterElementsUpdate-12", "sum", nil}, {"ScatterElementsUpdate-12", "prod", &no},
			{"ScatterElementsUpdate-12", "min", nil}, {"ScatterElementsUpdate-12", "max", &no},
			{"ScatterElementsUpdate-12", "mean", nil}, {"ScatterElementsUpdate-12", "mean", &no},
			{"ScatterNDUpdate-15", "sub", nil}, {"ScatterNDUpdate-15", "max", nil},
		} {
			p, err := ops.Prepare(contentionRequest(rng, c.op, dt, c.red, 6, 300, c.useInit))
			require.NoError(t, err)
			got, want := runBoth(t, b, p)
			require.Equal(t, "ordered", b.LastStats().Reduction)
			require.Empty(t, opstest.Diff(got, want), "%s %s %v", c.op, c.red, dt)
		}
	}
}
