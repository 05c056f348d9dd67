package cpuref

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

type ruleCase struct {
	name string
	req  ops.Request
	want *tensor.Tensor
}

// runRules checks every case; a ScatterNDUpdate-15 or ScatterND case on
// 1-D data also runs as slices (each element doubled along a new last
// dimension), which takes the run-by-run path of the folds.
func runRules(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, c.req, c.want) })
		if s, ok := asSlices(c); ok {
			t.Run(c.name+" (slices)", func(t *testing.T) { check(t, s.req, s.want) })
		}
	}
}

func asSlices(c ruleCase) (ruleCase, bool) {
	op, err := ops.Lookup(c.req.Op)
	if err != nil || op.Kind != ops.KindND || c.req.Data.Rank() != 1 || c.req.Data.DType == tensor.String ||
		c.req.Indices.Rank() != 2 || c.req.Indices.Shape[1] != 1 || c.req.Updates.Rank() != 1 {
		return c, false
	}
	double := func(t *tensor.Tensor) *tensor.Tensor {
		d, _ := tensor.New(t.DType, []int{t.Len(), 2})
		es := t.DType.Size()
		for i := range t.Len() {
			copy(d.Data[2*i*es:], t.Data[i*es:(i+1)*es])
			copy(d.Data[(2*i+1)*es:], t.Data[i*es:(i+1)*es])
		}
		return d
	}
	s := c
	s.req.Data, s.req.Updates, s.want = double(c.req.Data), double(c.req.Updates), double(c.want)
	return s, true
}

func TestBackendIdentity(t *testing.T) {
	b := New()
	assert.Equal(t, "cpu", b.Name())
	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "Close is idempotent")
	got, err := Run(ops.Request{Op: "ScatterNDUpdate-3", Data: vec[int32](1, 2, 3), Indices: idx([]int{1, 1}, 2), Updates: vec[int32](9)})
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2, 9}, tensor.View[int32](got))
}

// specs/README.md: sum = OR, sub = XOR, prod = AND, min = AND, max = OR on
// bool, for every operator version that takes the reduction.
func TestBoolReductions(t *testing.T) {
	data := []bool{false, false, true, true}
	upd := []bool{false, true, false, true}
	or := []bool{false, true, true, true}
	xor := []bool{false, true, true, false}
	and := []bool{false, false, false, true}
	type variant struct {
		op, red string
		want    []bool
	}
	variants := []variant{
		{"ScatterNDUpdate-15", "sum", or}, {"ScatterNDUpdate-15", "sub", xor}, {"ScatterNDUpdate-15", "prod", and},
		{"ScatterNDUpdate-15", "min", and}, {"ScatterNDUpdate-15", "max", or},
		{"ScatterElementsUpdate-12", "sum", or}, {"ScatterElementsUpdate-12", "prod", and},
		{"ScatterElementsUpdate-12", "min", and}, {"ScatterElementsUpdate-12", "max", or},
		{"ScatterND-16", "add", or}, {"ScatterND-16", "mul", and},
		{"ScatterND-18", "add", or}, {"ScatterND-18", "mul", and}, {"ScatterND-18", "min", and}, {"ScatterND-18", "max", or},
		{"ScatterElements-16", "add", or}, {"ScatterElements-16", "mul", and},
		{"ScatterElements-18", "add", or}, {"ScatterElements-18", "mul", and},
		{"ScatterElements-18", "min", and}, {"ScatterElements-18", "max", or},
	}
	var cases []ruleCase
	for _, v := range variants {
		req := ops.Request{Op: v.op, Reduction: v.red, Data: vec(data...), Updates: vec(upd...)}
		if op, _ := ops.Lookup(v.op); op.Kind == ops.KindND {
			req.Indices = idx([]int{4, 1}, 0, 1, 2, 3)
		} else {
			req.Indices = idx([]int{4}, 0, 1, 2, 3)
			if op.AxisRequired {
				req.Axis = tensor.Scalar(0)
			}
		}
		cases = append(cases, ruleCase{v.op + "/bool " + v.red, req, vec(v.want...)})
	}
	// Duplicates fold in order: three XORs of true flip false to true.
	cases = append(cases, ruleCase{"ScatterNDUpdate-15/bool sub folds every duplicate",
		ops.Request{Op: "ScatterNDUpdate-15", Reduction: "sub", Data: vec(false, true),
			Indices: idx([]int{3, 1}, 0, 0, 0), Updates: vec(true, true, true)},
		vec(true, true)})
	runRules(t, cases)
}

func nd15(red string, data, upd *tensor.Tensor) ops.Request {
	n := upd.Len()
	is := make([]int64, n) // every update to element 0
	return ops.Request{Op: "ScatterNDUpdate-15", Reduction: red, Data: data, Indices: idx([]int{n, 1}, is...), Updates: upd}
}

// specs/README.md: integers wrap on overflow (two's complement), every step
// in the data type.
func TestIntegersWrap(t *testing.T) {
	runRules(t, []ruleCase{
		{"int8 sum wraps", nd15("sum", vec[int8](127), vec[int8](1)), vec[int8](-128)},
		{"int8 sub wraps", nd15("sub", vec[int8](-128), vec[int8](1)), vec[int8](127)},
		{"int8 prod wraps", nd15("prod", vec[int8](16), vec[int8](16)), vec[int8](0)},
		{"uint8 sum wraps", nd15("sum", vec[uint8](255), vec[uint8](1)), vec[uint8](0)},
		{"uint8 sub wraps", nd15("sub", vec[uint8](0), vec[uint8](1)), vec[uint8](255)},
		{"uint8 prod wraps", nd15("prod", vec[uint8](16), vec[uint8](17)), vec[uint8](16)},
		{"int16 sum wraps", nd15("sum", vec[int16](math.MaxInt16), vec[int16](2)), vec[int16](math.MinInt16 + 1)},
		{"uint16 sub wraps", nd15("sub", vec[uint16](1), vec[uint16](3)), vec[uint16](math.MaxUint16 - 1)},
		{"int32 prod wraps", nd15("prod", vec[int32](1<<16), vec[int32](1<<16)), vec[int32](0)},
		{"uint32 sum wraps", nd15("sum", vec[uint32](math.MaxUint32), vec[uint32](5)), vec[uint32](4)},
		{"int64 sum wraps", nd15("sum", vec[int64](math.MaxInt64), vec[int64](1)), vec[int64](math.MinInt64)},
		{"int64 prod wraps", nd15("prod", vec[int64](math.MaxInt64), vec[int64](2)), vec[int64](-2)},
		{"int64 sub wraps", nd15("sub", vec[int64](math.MinInt64), vec[int64](1)), vec[int64](math.MaxInt64)},
		{"uint64 sum wraps", nd15("sum", vec[uint64](math.MaxUint64), vec[uint64](2)), vec[uint64](1)},
		// A step that overflows is not undone by a later one in a wider type.
		{"int8 sum wraps at every step", nd15("sum", vec[int8](100), vec[int8](100, -100)), vec[int8](100)},
		{"int8 sum of updates that come back in range", nd15("sum", vec[int8](120), vec[int8](10, -10)), vec[int8](120)},
		{"int32 min and max compare signed", nd15("min", vec[int32](3), vec[int32](-7, 5)), vec[int32](-7)},
		{"uint32 max compares unsigned", nd15("max", vec[uint32](3), vec[uint32](math.MaxUint32, 5)), vec[uint32](math.MaxUint32)},
	})
}

// specs/README.md: float min and max propagate NaN, in either operand
// order, and order -0 below +0 whatever the order.
func TestFloatMinMaxNaNAndSignedZero(t *testing.T) {
	nan32 := float32(math.NaN())
	nan64 := math.NaN()
	type variant struct {
		name        string
		a, b        float64
		wantMin     float64
		wantMax     float64
		wantIsNaN   bool
		minIsNegZer bool
	}
	vs := []variant{
		{name: "NaN then number", a: nan64, b: 1, wantIsNaN: true},
		{name: "number then NaN", a: 1, b: nan64, wantIsNaN: true},
		{name: "NaN then -inf", a: nan64, b: math.Inf(-1), wantIsNaN: true},
		{name: "-0 then +0", a: negZero64(), b: 0, wantMin: negZero64(), wantMax: 0},
		{name: "+0 then -0", a: 0, b: negZero64(), wantMin: negZero64(), wantMax: 0},
		{name: "-0 then -0", a: negZero64(), b: negZero64(), wantMin: negZero64(), wantMax: negZero64()},
		{name: "ordinary", a: -2, b: 3, wantMin: -2, wantMax: 3},
	}
	type dtype struct {
		name string
		make func(v ...float64) *tensor.Tensor
	}
	dtypes := []dtype{
		{"float32", func(v ...float64) *tensor.Tensor {
			f := make([]float32, len(v))
			for i, x := range v {
				f[i] = float32(x)
			}
			return vec(f...)
		}},
		{"float64", func(v ...float64) *tensor.Tensor { return vec(v...) }},
		{"float16", func(v ...float64) *tensor.Tensor {
			f := make([]float32, len(v))
			for i, x := range v {
				f[i] = float32(x)
			}
			return f16s(f...)
		}},
		{"bfloat16", func(v ...float64) *tensor.Tensor {
			f := make([]float32, len(v))
			for i, x := range v {
				f[i] = float32(x)
			}
			return bf16s(f...)
		}},
	}
	_ = nan32
	var cases []ruleCase
	for _, dt := range dtypes {
		for _, v := range vs {
			for _, red := range []string{"min", "max"} {
				want := v.wantMin
				if red == "max" {
					want = v.wantMax
				}
				wantT := dt.make(want)
				if v.wantIsNaN {
					// The NaN operand itself comes out.
					wantT = dt.make(v.a)
					if !math.IsNaN(v.a) {
						wantT = dt.make(v.b)
					}
				}
				cases = append(cases, ruleCase{dt.name + " " + red + " " + v.name, nd15(red, dt.make(v.a), dt.make(v.b)), wantT})
				// The same through ScatterElements-18, a different operator
				// path (per-element targets).
				cases = append(cases, ruleCase{dt.name + " " + red + " " + v.name + " (ScatterElements-18)",
					ops.Request{Op: "ScatterElements-18", Reduction: red, Data: dt.make(v.a), Indices: idx([]int{1}, 0), Updates: dt.make(v.b)}, wantT})
			}
		}
	}
	runRules(t, cases)
}

// specs/README.md, "Floats": where NaNs meet an element (in data or in
// the updates), float min and max give the NaN whose bits, read as an
// unsigned integer of the element's width, are the greatest among them,
// bits unchanged (no quieting, no change of sign), in any order of the
// updates; numbers never displace a NaN. For float16, bfloat16, float32
// and float64, min and max, through ScatterNDUpdate-15 (also as rows of
// slices), ScatterND-18 and ScatterElements-18.
func TestFloatMinMaxGreatestNaNBitsWin(t *testing.T) {
	// Each type's NaNs, in increasing unsigned order: positive
	// signalling, quiet, quiet with a payload; then negative likewise.
	type nans struct{ ps, p, pp, ns, n, np uint64 }
	types := []struct {
		dt   tensor.DType
		nan  nans
		bits func(float32) uint64
	}{
		{tensor.Float16, nans{0x7C01, 0x7E00, 0x7E05, 0xFC01, 0xFE00, 0xFE05}, func(v float32) uint64 { return uint64(tensor.F16From(v).Bits()) }},
		{tensor.BFloat16, nans{0x7F81, 0x7FC0, 0x7FC5, 0xFF81, 0xFFC0, 0xFFC5}, func(v float32) uint64 { return uint64(tensor.BF16From(v)) }},
		{tensor.Float32, nans{0x7F800001, 0x7FC00000, 0x7FC00005, 0xFF800001, 0xFFC00000, 0xFFC00005}, func(v float32) uint64 { return uint64(math.Float32bits(v)) }},
		{tensor.Float64, nans{0x7FF0000000000001, 0x7FF8000000000000, 0x7FF8000000000005, 0xFFF0000000000001, 0xFFF8000000000000, 0xFFF8000000000005},
			func(v float32) uint64 { return math.Float64bits(float64(v)) }},
	}
	inf := float32(math.Inf(1))
	var cases []ruleCase
	for _, ty := range types {
		n, x := ty.bits, ty.nan
		for _, c := range []struct {
			name       string
			data, want uint64
			upd        []uint64
		}{
			{"one positive NaN update comes out as it went in", n(1), x.pp, []uint64{x.pp}},
			{"one negative NaN update comes out as it went in", n(1), x.np, []uint64{x.np}},
			{"a positive signalling NaN is not quieted", n(-1), x.ps, []uint64{x.ps}},
			{"a negative signalling NaN is not quieted", n(-1), x.ns, []uint64{x.ns}},
			{"a NaN in data stays whatever numbers follow", x.n, x.n, []uint64{n(-inf), n(inf), n(0)}},
			{"a negative NaN beats a positive one", n(1), x.n, []uint64{x.p, x.n}},
			{"a negative NaN beats a positive one, other order", n(1), x.n, []uint64{x.n, x.p}},
			{"the greater payload wins", n(1), x.pp, []uint64{x.p, x.pp}},
			{"the greater payload wins, other order", n(1), x.np, []uint64{x.np, x.n}},
			{"an update's NaN beats a lesser one in data", x.p, x.ns, []uint64{x.ns}},
			{"data's NaN beats lesser ones in the updates", x.np, x.np, []uint64{x.pp, x.n}},
			{"several NaNs among numbers", n(2), x.ns, []uint64{x.pp, n(5), x.ns, n(-inf), x.p}},
			{"several NaNs among numbers, reversed", n(2), x.ns, []uint64{x.p, n(-inf), x.ns, n(5), x.pp}},
			{"several NaNs among numbers, rotated", n(2), x.ns, []uint64{x.ns, n(-inf), x.p, x.pp, n(5)}},
		} {
			for _, red := range []string{"min", "max"} {
				name := ty.dt.String() + " " + red + ": " + c.name
				data, upd, want := opstest.FloatBits(ty.dt, c.data), opstest.FloatBits(ty.dt, c.upd...), opstest.FloatBits(ty.dt, c.want)
				cases = append(cases, ruleCase{name, nd15(red, data, upd), want})
				nd := nd15(red, data, upd)
				nd.Op = "ScatterND-18"
				cases = append(cases, ruleCase{name + " (ScatterND-18)", nd, want})
				cases = append(cases, ruleCase{name + " (ScatterElements-18)",
					ops.Request{Op: "ScatterElements-18", Reduction: red, Data: data, Indices: idx([]int{len(c.upd)}, make([]int64, len(c.upd))...), Updates: upd}, want})
			}
		}
	}
	runRules(t, cases)
}

// specs/README.md: every reduction step is computed in the data type; a
// float16 or bfloat16 step rounds to that type.
func TestReductionStepsRoundToTheDataType(t *testing.T) {
	runRules(t, []ruleCase{
		// 2048 + 1 = 2049 is a tie between 2048 and 2050 in float16 and
		// rounds to even, 2048, at each step; exact arithmetic gives 2050.
		{"float16 sum rounds every step", nd15("sum", f16s(2048), f16s(1, 1)), f16s(2048)},
		{"bfloat16 sum rounds every step", nd15("sum", bf16s(256), bf16s(1, 1)), bf16s(256)},
		{"float32 sum rounds every step", nd15("sum", vec[float32](1<<24), vec[float32](1, 1)), vec[float32](1 << 24)},
		{"float16 sub rounds every step", nd15("sub", f16s(2048), f16s(-1, -1)), f16s(2048)},
		// (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20 rounds to 1 + 2^-9 in float16.
		{"float16 prod rounds every step", nd15("prod", f16s(1+1.0/1024), f16s(1+1.0/1024)), f16s(1 + 1.0/512)},
		// 300 * 300 overflows float16 (max 65504) to +inf.
		{"float16 prod overflows to inf", nd15("prod", f16s(300), f16s(300)), f16s(float32(math.Inf(1)))},
		{"bfloat16 sum of a large and a small value", nd15("sum", bf16s(1), bf16s(1.0/256)), bf16s(1)},
		// Mean: 2048 + 1 + 1 sums to 2048 in float16, and 2048/3 = 682.67
		// rounds to 682.5 (exact arithmetic would give 683.5).
		{"float16 mean sums in float16", ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "mean", Axis: tensor.Scalar(0),
			Data: f16s(2048), Indices: idx([]int{2}, 0, 0), Updates: f16s(1, 1)}, f16s(682.5)},
	})
}

func mean12(data, upd *tensor.Tensor, indices []int64, useInit *bool) ops.Request {
	return ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "mean", UseInitVal: useInit, Axis: tensor.Scalar(0),
		Data: data, Indices: idx([]int{len(indices)}, indices...), Updates: upd}
}

// specs/README.md: ScatterElementsUpdate-12 mean is sum / count, count
// including the original element when use_init_val is true; integers of 32
// bits or less sum exactly, 64-bit integers and floats in their own type;
// integer results round toward negative infinity.
func TestMeanRoundsTowardNegativeInfinity(t *testing.T) {
	runRules(t, []ruleCase{
		{"int32 negative mean -2.5 rounds to -3", mean12(vec[int32](-3), vec[int32](-2), []int64{0}, nil), vec[int32](-3)},
		{"int32 positive mean 303.5 rounds to 303", mean12(vec[int32](300), vec[int32](307), []int64{0}, nil), vec[int32](303)},
		{"int16 negative mean -1/3 rounds to -1", mean12(vec[int16](0), vec[int16](0, -1), []int64{0, 0}, nil), vec[int16](-1)},
		{"int8 sums exactly beyond its range", mean12(vec[int8](127), vec[int8](127, 127), []int64{0, 0}, nil), vec[int8](127)},
		{"int8 negative exact sum rounds down", mean12(vec[int8](-128), vec[int8](-128, -127), []int64{0, 0}, nil), vec[int8](-128)},
		{"uint8 sums exactly", mean12(vec[uint8](255), vec[uint8](255, 254), []int64{0, 0}, nil), vec[uint8](254)},
		{"uint32 sums exactly", mean12(vec[uint32](math.MaxUint32), vec[uint32](math.MaxUint32), []int64{0}, nil), vec[uint32](math.MaxUint32)},
		{"int32 sums exactly", mean12(vec[int32](math.MinInt32), vec[int32](math.MinInt32, -1), []int64{0, 0}, nil), vec[int32](-1431655766)},
		// 64-bit integers accumulate in their own type, wrapping.
		{"int64 sums in int64", mean12(vec[int64](math.MaxInt64), vec[int64](1), []int64{0}, nil), vec[int64](math.MinInt64 / 2)},
		{"uint64 sums in uint64", mean12(vec[uint64](math.MaxUint64), vec[uint64](3), []int64{0}, nil), vec[uint64](1)},
		{"int64 rounds toward negative infinity", mean12(vec[int64](-4), vec[int64](-1), []int64{0}, nil), vec[int64](-3)},
		{"float32 mean", mean12(vec[float32](1, 9), vec[float32](2), []int64{0}, nil), vec[float32](1.5, 9)},
		{"float64 mean of three", mean12(vec[float64](1), vec[float64](2, 4), []int64{0, 0}, nil), vec(7.0 / 3)},
		{"bfloat16 mean", mean12(bf16s(1), bf16s(2), []int64{0}, nil), bf16s(1.5)},
		{"elements without updates keep data", mean12(vec[int32](5, -7, 9), vec[int32](1), []int64{2}, nil), vec[int32](5, -7, 5)},
	})
}

// specs/README.md: with use_init_val false, the mean of an element that
// receives updates is that of its updates alone; others keep data.
func TestMeanWithoutInitVal(t *testing.T) {
	no := boolPtr(false)
	runRules(t, []ruleCase{
		{"int32 mean of the updates alone", mean12(vec[int32](100, 7), vec[int32](-1, -2), []int64{0, 0}, no), vec[int32](-2, 7)},
		{"uint8 mean of the updates alone", mean12(vec[uint8](100, 7), vec[uint8](1, 2, 4), []int64{1, 1, 1}, no), vec[uint8](100, 2)},
		{"int64 mean of the updates alone", mean12(vec[int64](100, 7), vec[int64](-5), []int64{0}, no), vec[int64](-5, 7)},
		{"float32 mean of the updates alone", mean12(vec[float32](100, 7), vec[float32](1, 2), []int64{0, 0}, no), vec[float32](1.5, 7)},
		{"float16 mean of the updates alone", mean12(f16s(100, 7), f16s(1, 2), []int64{1, 1}, no), f16s(100, 1.5)},
		{"float64 mean of -0 alone starts from +0", mean12(vec(5.0), vec(negZero64()), []int64{0}, no), vec(0.0)},
	})
}

func elems12(red string, data, upd *tensor.Tensor, indices []int64, useInit bool) ops.Request {
	return ops.Request{Op: "ScatterElementsUpdate-12", Reduction: red, UseInitVal: boolPtr(useInit), Axis: tensor.Scalar(0),
		Data: data, Indices: idx([]int{len(indices)}, indices...), Updates: upd}
}

// specs/README.md: use_init_val=false: every element that receives updates
// becomes the reduction of its updates alone, as if it started from the
// neutral value (sum 0, prod 1, min +inf or the type's maximum, max -inf or
// the type's minimum); elements that receive none keep data. No effect
// with reduction none.
func TestUseInitValFalse(t *testing.T) {
	i := []int64{0, 0}
	runRules(t, []ruleCase{
		{"int32 sum of the updates alone", elems12("sum", vec[int32](100, 7), vec[int32](3, 4), i, false), vec[int32](7, 7)},
		{"int32 prod of the updates alone", elems12("prod", vec[int32](100, 7), vec[int32](3, 4), i, false), vec[int32](12, 7)},
		{"int32 min of the updates alone", elems12("min", vec[int32](-100, 7), vec[int32](3, 4), i, false), vec[int32](3, 7)},
		{"int32 max of the updates alone", elems12("max", vec[int32](100, 7), vec[int32](3, 4), i, false), vec[int32](4, 7)},
		{"uint8 min starts from 255", elems12("min", vec[uint8](0, 7), vec[uint8](200), []int64{0}, false), vec[uint8](200, 7)},
		{"int8 max starts from -128", elems12("max", vec[int8](100, 7), vec[int8](-128), []int64{0}, false), vec[int8](-128, 7)},
		{"uint64 min starts from the maximum", elems12("min", vec[uint64](0), vec[uint64](math.MaxUint64), []int64{0}, false), vec[uint64](math.MaxUint64)},
		{"int64 max starts from the minimum", elems12("max", vec[int64](0), vec[int64](math.MinInt64), []int64{0}, false), vec[int64](math.MinInt64)},
		{"float32 min starts from +inf", elems12("min", vec[float32](-100, 7), vec[float32](3, 4), i, false), vec[float32](3, 7)},
		{"float32 max starts from -inf", elems12("max", vec[float32](100, 7), vec[float32](-3, -4), i, false), vec[float32](-3, 7)},
		{"float64 max of -inf alone", elems12("max", vec(1.0), vec(math.Inf(-1)), []int64{0}, false), vec(math.Inf(-1))},
		{"float16 sum of the updates alone", elems12("sum", f16s(100, 7), f16s(0.5, 0.25), i, false), f16s(0.75, 7)},
		{"bfloat16 prod of the updates alone", elems12("prod", bf16s(100, 7), bf16s(3, 4), []int64{1, 1}, false), bf16s(100, 12)},
		{"float32 sum of -0 alone starts from +0", elems12("sum", vec[float32](5), vec(negZero32()), []int64{0}, false), vec[float32](0)},
		{"bool sum (OR) starts from false", elems12("sum", vec(true, true), vec(false), []int64{0}, false), vec(false, true)},
		{"bool prod (AND) starts from true", elems12("prod", vec(false, false), vec(true), []int64{0}, false), vec(true, false)},
		{"bool min (AND) starts from true", elems12("min", vec(false), vec(true), []int64{0}, false), vec(true)},
		{"bool max (OR) starts from false", elems12("max", vec(true), vec(false), []int64{0}, false), vec(false)},
		{"use_init_val true keeps data in the fold", elems12("sum", vec[int32](100, 7), vec[int32](3, 4), i, true), vec[int32](107, 7)},
		{"no effect with reduction none", elems12("none", vec[int32](100, 7), vec[int32](3, 4), i, false), vec[int32](4, 7)},
	})
}

// specs/README.md: with reduction none and duplicate targets, the last
// update in row-major order wins, in every operator kind.
func TestDuplicatesLastWins(t *testing.T) {
	runRules(t, []ruleCase{
		{"ScatterUpdate-3", ops.Request{Op: "ScatterUpdate-3", Axis: tensor.Scalar(0), Data: tens([]int{3, 2}, int32(0), 0, 0, 0, 0, 0),
			Indices: idx([]int{3}, 1, 1, 1), Updates: tens([]int{3, 2}, int32(10), 11, 20, 21, 30, 31)},
			tens([]int{3, 2}, int32(0), 0, 30, 31, 0, 0)},
		{"ScatterUpdate-3 along the last axis", ops.Request{Op: "ScatterUpdate-3", Axis: tensor.Scalar(-1), Data: tens([]int{2, 3}, uint8(0), 0, 0, 0, 0, 0),
			Indices: idx([]int{2, 2}, 2, 0, 2, 2), Updates: tens([]int{2, 2, 2}, uint8(1), 2, 3, 4, 5, 6, 7, 8)},
			tens([]int{2, 3}, uint8(2), 0, 4, 6, 0, 8)},
		{"ScatterNDUpdate-3", ops.Request{Op: "ScatterNDUpdate-3", Data: vec[int32](0, 0, 0),
			Indices: idx([]int{3, 1}, 1, 2, 1), Updates: vec[int32](5, 6, 7)}, vec[int32](0, 7, 6)},
		{"ScatterNDUpdate-15 slices", ops.Request{Op: "ScatterNDUpdate-15", Data: tens([]int{2, 2}, 0.0, 0, 0, 0),
			Indices: idx([]int{3, 1}, 1, 0, -1), Updates: tens([]int{3, 2}, 1.0, 2, 3, 4, 5, 6)}, tens([]int{2, 2}, 3.0, 4, 5, 6)},
		{"ScatterND-11", ops.Request{Op: "ScatterND-11", Data: vec[uint8](0, 0),
			Indices: idx([]int{2, 1}, 0, 0), Updates: vec[uint8](1, 2)}, vec[uint8](2, 0)},
		{"ScatterElementsUpdate-3", ops.Request{Op: "ScatterElementsUpdate-3", Axis: tensor.Scalar(1), Data: tens([]int{2, 2}, 0.0, 0, 0, 0),
			Indices: idx([]int{2, 3}, 0, 0, 1, 1, 1, 1), Updates: tens([]int{2, 3}, 1.0, 2, 3, 4, 5, 6)}, tens([]int{2, 2}, 2.0, 3, 0, 6)},
		{"ScatterElementsUpdate-12 none", ops.Request{Op: "ScatterElementsUpdate-12", Axis: tensor.Scalar(0), Data: vec[int16](0, 0),
			Indices: idx([]int{3}, 1, 1, 1), Updates: vec[int16](1, 2, 3)}, vec[int16](0, 3)},
		{"Scatter-9", ops.Request{Op: "Scatter-9", Data: tens([]int{3, 1}, 0.0, 0, 0),
			Indices: idx([]int{3, 1}, 2, 2, 0), Updates: tens([]int{3, 1}, 1.0, 2, 3)}, tens([]int{3, 1}, 3.0, 0, 2)},
		{"Scatter-11", ops.Request{Op: "Scatter-11", Data: vec[int64](0, 0), Indices: idx([]int{2}, -1, 1), Updates: vec[int64](1, 2)}, vec[int64](0, 2)},
		{"ScatterElements-13", ops.Request{Op: "ScatterElements-13", Axis: tensor.Scalar(0), Data: vec[float32](0, 0),
			Indices: idx([]int{4}, 0, 1, 0, 1), Updates: vec[float32](1, 2, 3, 4)}, vec[float32](3, 4)},
	})
}

// Many duplicates over more elements than one task takes, so that the
// parallel paths (groups by target, split runs) must keep the order.
func TestDuplicatesLastWinsAtScale(t *testing.T) {
	const n, m = 37, 5000
	ei := make([]int64, m)
	eu := make([]int32, m)
	want := make([]int32, n)
	for u := range ei {
		ei[u] = int64(u * 7 % n)
		eu[u] = int32(u)
		want[ei[u]] = eu[u]
	}
	const rows, inner, tuples = 50, 3, 2000
	ni := make([]int64, tuples)
	nu := make([]int32, tuples*inner)
	nwant := make([]int32, rows*inner)
	for j := range ni {
		ni[j] = int64(j * 13 % rows)
		for k := range inner {
			nu[j*inner+k] = int32(j*inner + k)
			nwant[int(ni[j])*inner+k] = nu[j*inner+k]
		}
	}
	const s, J = 6, 300
	ai := make([]int64, J)
	au := make([]int32, 2*J)
	awant := make([]int32, 2*s)
	for j := range ai {
		ai[j] = int64(j * 5 % s)
		for o := range 2 {
			au[o*J+j] = int32(o*J + j)
			awant[o*s+int(ai[j])] = au[o*J+j]
		}
	}
	runRules(t, []ruleCase{
		{"ScatterElements-18 1-D", ops.Request{Op: "ScatterElements-18", Data: vec(make([]int32, n)...),
			Indices: idx([]int{m}, ei...), Updates: vec(eu...)}, vec(want...)},
		{"ScatterND-18 rows", ops.Request{Op: "ScatterND-18", Data: tens([]int{rows, inner}, make([]int32, rows*inner)...),
			Indices: idx([]int{tuples, 1}, ni...), Updates: tens([]int{tuples, inner}, nu...)}, tens([]int{rows, inner}, nwant...)},
		{"ScatterUpdate-3 axis 1", ops.Request{Op: "ScatterUpdate-3", Axis: tensor.Scalar(1), Data: tens([]int{2, s}, make([]int32, 2*s)...),
			Indices: idx([]int{J}, ai...), Updates: tens([]int{2, J}, au...)}, tens([]int{2, s}, awant...)},
	})
}

// ScatterNDUpdate-15 sum with many duplicates folds them in order; float32
// sums are order dependent, so the result must be exactly the sequential
// one.
func TestReductionsFoldInOrderAtScale(t *testing.T) {
	const n, m = 23, 4000
	ei := make([]int64, m)
	eu := make([]float32, m)
	want := make([]float32, n)
	for i := range want {
		want[i] = 1e7
	}
	data := append([]float32(nil), want...)
	for u := range ei {
		ei[u] = int64(u * 11 % n)
		eu[u] = 1 / float32(u+1)
		want[ei[u]] += eu[u]
	}
	const rows, inner = 19, 2
	ni := make([]int64, m)
	nu := make([]float32, m*inner)
	nwant := make([]float32, rows*inner)
	for i := range nwant {
		nwant[i] = 1e7
	}
	ndata := append([]float32(nil), nwant...)
	for j := range ni {
		ni[j] = int64(j * 3 % rows)
		for k := range inner {
			nu[j*inner+k] = 1 / float32(j*inner+k+1)
			nwant[int(ni[j])*inner+k] += nu[j*inner+k]
		}
	}
	runRules(t, []ruleCase{
		{"ScatterElements-18 add", ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: vec(data...),
			Indices: idx([]int{m}, ei...), Updates: vec(eu...)}, vec(want...)},
		{"ScatterNDUpdate-15 sum", ops.Request{Op: "ScatterNDUpdate-15", Reduction: "sum", Data: tens([]int{rows, inner}, ndata...),
			Indices: idx([]int{m, 1}, ni...), Updates: tens([]int{m, inner}, nu...)}, tens([]int{rows, inner}, nwant...)},
	})
}

// Negative indices count from the end where the version allows them
// (ScatterNDUpdate-15, ScatterElementsUpdate-12, ONNX from version 11).
func TestNegativeIndices(t *testing.T) {
	runRules(t, []ruleCase{
		{"ScatterNDUpdate-15", ops.Request{Op: "ScatterNDUpdate-15", Data: vec[int32](0, 0, 0, 0, 0),
			Indices: idx([]int{2, 1}, -1, -5), Updates: vec[int32](9, 8)}, vec[int32](8, 0, 0, 0, 9)},
		{"ScatterNDUpdate-15 tuple", ops.Request{Op: "ScatterNDUpdate-15", Data: tens([]int{2, 3}, int64(0), 0, 0, 0, 0, 0),
			Indices: idx([]int{1, 2}, -1, -2), Updates: vec[int64](7)}, tens([]int{2, 3}, int64(0), 0, 0, 0, 7, 0)},
		{"ScatterElementsUpdate-12 axis 1", ops.Request{Op: "ScatterElementsUpdate-12", Axis: tensor.Scalar(-1), Data: tens([]int{2, 3}, int16(0), 0, 0, 0, 0, 0),
			Indices: idx([]int{2, 1}, -3, -1), Updates: tens([]int{2, 1}, int16(1), 2)}, tens([]int{2, 3}, int16(1), 0, 0, 0, 0, 2)},
		{"ScatterElements-11", ops.Request{Op: "ScatterElements-11", Data: vec[int8](0, 0, 0),
			Indices: tensor.MustFromSlice([]int{1}, []int8{-2}), Updates: vec[int8](4)}, vec[int8](0, 4, 0)},
		{"ScatterND-11", ops.Request{Op: "ScatterND-11", Data: vec[int8](0, 0, 0),
			Indices: tensor.MustFromSlice([]int{1, 1}, []int16{-3}), Updates: vec[int8](4)}, vec[int8](4, 0, 0)},
	})
}

// ScatterUpdate-3 and the other early versions reject negative indices.
func TestNegativeIndicesRejected(t *testing.T) {
	checkErr(t, ops.Request{Op: "ScatterUpdate-3", Axis: tensor.Scalar(0), Data: vec[int32](0, 0, 0, 0, 0),
		Indices: idx([]int{1}, -1), Updates: vec[int32](1)},
		ops.ErrIndexRange, "ScatterUpdate-3: indices[0] = -1 is out of range [0, 4] for axis 0 of data")
	checkErr(t, ops.Request{Op: "Scatter-9", Data: vec[int32](0, 0),
		Indices: idx([]int{2}, 0, -2), Updates: vec[int32](1, 2)},
		ops.ErrIndexRange, "Scatter-9: indices[1] = -2 is out of range [0, 1] for axis 0 of data")
}

// specs/README.md: zero-size indices or updates give a copy of data.
func TestEmptyIndicesGiveACopyOfData(t *testing.T) {
	data := tens([]int{2, 2}, 1.0, 2, 3, 4)
	runRules(t, []ruleCase{
		{"ScatterUpdate-3", ops.Request{Op: "ScatterUpdate-3", Axis: tensor.Scalar(0), Data: data,
			Indices: idx([]int{0}), Updates: tens[float64]([]int{0, 2})}, data.Clone()},
		{"ScatterNDUpdate-15", ops.Request{Op: "ScatterNDUpdate-15", Reduction: "prod", Data: data,
			Indices: idx([]int{0, 2}), Updates: tens[float64]([]int{0})}, data.Clone()},
		{"ScatterElementsUpdate-12 mean", ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "mean", Axis: tensor.Scalar(1), Data: data,
			Indices: idx([]int{2, 0}), Updates: tens[float64]([]int{2, 0})}, data.Clone()},
		{"ScatterND-13 with empty slices", ops.Request{Op: "ScatterND-13", Data: tens[float64]([]int{2, 0}),
			Indices: idx([]int{1, 1}, 1), Updates: tens[float64]([]int{1, 0})}, tens[float64]([]int{2, 0})},
		{"SliceScatter-15 empty slice", ops.Request{Op: "SliceScatter-15", Data: data, Updates: tens[float64]([]int{0, 2}),
			Start: tensor.Ints(1), Stop: tensor.Ints(1), Step: tensor.Ints(1)}, data.Clone()},
	})
	got, err := Run(ops.Request{Op: "ScatterND-18", Data: data, Indices: idx([]int{0, 1}), Updates: tens[float64]([]int{0, 2})})
	require.NoError(t, err)
	got.Data[0] = 0xff
	assert.Equal(t, 1.0, tensor.View[float64](data)[0], "the result is a copy, not data itself")
}

// An index out of range is an error even when no update lands through it.
func TestIndicesAreCheckedWithoutUpdates(t *testing.T) {
	_, err := Run(ops.Request{Op: "ScatterND-13", Data: tens[float64]([]int{2, 0}),
		Indices: idx([]int{1, 1}, 7), Updates: tens[float64]([]int{1, 0})})
	require.ErrorIs(t, err, ops.ErrIndexRange)
	assert.EqualError(t, err, "ScatterND-13: indices[0,0] = 7 is out of range [-2, 1] for axis 0 of data")
	_, err = Run(ops.Request{Op: "ScatterUpdate-3", Data: tens[float64]([]int{0, 3}), Axis: tensor.Scalar(1),
		Indices: idx([]int{1}, 3), Updates: tens[float64]([]int{0, 1})})
	require.ErrorIs(t, err, ops.ErrIndexRange)
	assert.EqualError(t, err, "ScatterUpdate-3: indices[0] = 3 is out of range [0, 2] for axis 1 of data")
}

// A tuple of length 0 (indices.shape[-1] = 0) addresses all of data: the
// ScatterNDUpdate-15 snippet's out[()] = updates[ndidx].
func TestNDTuplesOfLengthZeroAddressAllOfData(t *testing.T) {
	runRules(t, []ruleCase{
		{"none, last wins", ops.Request{Op: "ScatterNDUpdate-15", Data: vec[int32](1, 2, 3),
			Indices: idx([]int{2, 0}), Updates: tens([]int{2, 3}, int32(4), 5, 6, 7, 8, 9)}, vec[int32](7, 8, 9)},
		{"sum folds every tuple", ops.Request{Op: "ScatterNDUpdate-15", Reduction: "sum", Data: vec[int32](1, 2, 3),
			Indices: idx([]int{2, 0}), Updates: tens([]int{2, 3}, int32(4), 5, 6, 7, 8, 9)}, vec[int32](12, 15, 18)},
	})
}

// ONNX's Scatter, ScatterElements and ScatterND move complex and string
// data with reduction none.
func TestStringsAndComplexMove(t *testing.T) {
	runRules(t, []ruleCase{
		{"ScatterElements-18 strings, last wins", ops.Request{Op: "ScatterElements-18", Data: strs("a", "b", "c"),
			Indices: tensor.MustFromSlice([]int{3}, []int8{2, -1, 0}), Updates: strs("x", "y", "z")}, strs("z", "b", "y")},
		{"ScatterND-16 string slices", ops.Request{Op: "ScatterND-16", Data: strs("a", "b", "c", "d"),
			Indices: idx([]int{1, 1}, 1), Updates: strs("é")}, strs("a", "é", "c", "d")},
		{"Scatter-9 complex64", ops.Request{Op: "Scatter-9", Data: vec[complex64](1, 2, 3),
			Indices: idx([]int{2}, 2, 0), Updates: vec[complex64](complex(0, 1), complex(-1, -1))}, vec[complex64](complex(-1, -1), 2, complex(0, 1))},
		{"ScatterND-13 complex128 slices", ops.Request{Op: "ScatterND-13", Data: tens([]int{2, 2}, complex128(1), 2, 3, 4),
			Indices: idx([]int{2, 1}, 1, 1), Updates: tens([]int{2, 2}, complex(5, 5), 6, 7, complex(0, 8))},
			tens([]int{2, 2}, complex128(1), 2, 7, complex(0, 8))},
		{"ScatterElements-11 complex128", ops.Request{Op: "ScatterElements-11", Data: vec[complex128](1, 2),
			Indices: idx([]int{1}, -1), Updates: vec(complex(3, -3))}, vec(complex128(1), complex(3, -3))},
	})
	// Strings at scale through the parallel paths.
	const n, m = 11, 600
	data := make([]string, n)
	upd := make([]string, m)
	ind := make([]int64, m)
	want := make([]string, n)
	for i := range data {
		data[i] = string(rune('A' + i))
		want[i] = data[i]
	}
	for u := range upd {
		upd[u] = string(rune('a'+u%26)) + string(rune('0'+u%10))
		ind[u] = int64(u * 3 % (n - 1)) // the last element keeps data
		want[ind[u]] = upd[u]
	}
	check(t, ops.Request{Op: "ScatterElements-18", Data: strs(data...), Indices: idx([]int{m}, ind...), Updates: strs(upd...)}, strs(want...))
}

// SliceScatter-15: Python slices, negative steps walking backwards, strides
// in several dimensions, and slices that cover all of data.
func TestSliceScatter(t *testing.T) {
	seq := func(shape []int) *tensor.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(i)
		}
		return tens(shape, v...)
	}
	runRules(t, []ruleCase{
		{"every second element of both axes", ops.Request{Op: "SliceScatter-15", Data: tens([]int{3, 5}, 0.0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14),
			Updates: tens([]int{2, 2}, 50.0, 60, 70, 80), Start: tensor.Ints(0, 1), Stop: tensor.Ints(3, 5), Step: tensor.Ints(2, 2)},
			tens([]int{3, 5}, 0.0, 50, 2, 60, 4, 5, 6, 7, 8, 9, 10, 70, 12, 80, 14)},
		{"negative step to the end", ops.Request{Op: "SliceScatter-15", Data: vec[float32](0, 1, 2, 3, 4), Updates: vec[float32](10, 20, 30),
			Start: tensor.Ints(-1), Stop: tensor.MustFromSlice([]int{1}, []int32{math.MinInt32}), Step: tensor.Ints(-2)},
			vec[float32](30, 1, 20, 3, 10)},
		{"inner rows of a 3-D tensor", ops.Request{Op: "SliceScatter-15", Data: seq([]int{2, 3, 4}),
			Updates: tens([]int{2, 1, 4}, int32(-1), -2, -3, -4, -5, -6, -7, -8), Start: tensor.Ints(1), Stop: tensor.Ints(2), Step: tensor.Ints(1), Axes: tensor.Ints(1)},
			tens([]int{2, 3, 4}, int32(0), 1, 2, 3, -1, -2, -3, -4, 8, 9, 10, 11, 12, 13, 14, 15, -5, -6, -7, -8, 20, 21, 22, 23)},
		{"reversed, covering all of data", ops.Request{Op: "SliceScatter-15", Data: vec[uint16](1, 2, 3, 4), Updates: vec[uint16](5, 6, 7, 8),
			Start: tensor.Ints(-1), Stop: tensor.Ints(math.MinInt64), Step: tensor.Ints(-1)}, vec[uint16](8, 7, 6, 5)},
		{"whole tensor", ops.Request{Op: "SliceScatter-15", Data: seq([]int{3, 4}), Updates: tens([]int{3, 4}, make([]int32, 12)...),
			Start: tensor.Ints(0), Stop: tensor.Ints(math.MaxInt64), Step: tensor.Ints(1)}, tens([]int{3, 4}, make([]int32, 12)...)},
		{"strided last axis of a 3-D tensor", ops.Request{Op: "SliceScatter-15", Data: seq([]int{2, 2, 5}),
			Updates: tens([]int{2, 1, 2}, int32(-1), -2, -3, -4), Start: tensor.Ints(4, 1), Stop: tensor.Ints(0, 2), Step: tensor.Ints(-3, 1), Axes: tensor.Ints(2, 1)},
			tens([]int{2, 2, 5}, int32(0), 1, 2, 3, 4, 5, -2, 7, 8, -1, 10, 11, 12, 13, 14, 15, -4, 17, 18, -3)},
	})
}

// Every dtype moves through every operator kind that takes it, whatever
// its element size: data [d0 d1 d2] with updates [u0 u1 u2] at indices
// [2 0 2] gives [u1 d1 u2] (the last update to element 2 wins).
func TestEveryDTypeMoves(t *testing.T) {
	for _, dt := range tensor.DTypes() {
		t.Run(dt.String(), func(t *testing.T) {
			data, _ := tensor.New(dt, []int{3})
			upd, _ := tensor.New(dt, []int{3})
			want, _ := tensor.New(dt, []int{3})
			if dt == tensor.String {
				copy(data.Strings, []string{"d0", "d1", "d2"})
				copy(upd.Strings, []string{"u0", "u1", "u2"})
				copy(want.Strings, []string{"u1", "d1", "u2"})
			} else {
				es := dt.Size()
				for i := range data.Data {
					data.Data[i] = byte(0x10 + i%es)
					upd.Data[i] = byte(0x20 + i)
				}
				if dt == tensor.Bool {
					copy(data.Data, []byte{0, 1, 0})
					copy(upd.Data, []byte{0, 1, 1})
				}
				copy(want.Data[:es], upd.Data[es:2*es])
				copy(want.Data[es:2*es], data.Data[es:2*es])
				copy(want.Data[2*es:], upd.Data[2*es:])
			}
			ops3 := []ops.Request{
				{Op: "ScatterND-18", Indices: idx([]int{3, 1}, 2, 0, -1)},
				{Op: "ScatterElements-18", Indices: idx([]int{3}, 2, 0, -1)},
				{Op: "Scatter-9", Indices: tensor.MustFromSlice([]int{3}, []uint8{2, 0, 2})},
			}
			if dt.IsNumeric() {
				ops3 = append(ops3,
					ops.Request{Op: "ScatterUpdate-3", Axis: tensor.Scalar(0), Indices: tensor.MustFromSlice([]int{3}, []uint16{2, 0, 2})},
					ops.Request{Op: "ScatterNDUpdate-3", Indices: tensor.MustFromSlice([]int{3, 1}, []uint32{2, 0, 2})},
					ops.Request{Op: "ScatterElementsUpdate-3", Axis: tensor.Scalar(0), Indices: tensor.MustFromSlice([]int{3}, []int32{2, 0, 2})})
			}
			for _, req := range ops3 {
				req.Data, req.Updates = data, upd
				t.Run(req.Op, func(t *testing.T) { check(t, req, want) })
			}
			if dt.IsNumeric() {
				// SliceScatter-15: [::2] takes u0 and u1.
				sw := data.Clone()
				if dt == tensor.String {
					t.Fatal("unreachable")
				}
				es := dt.Size()
				copy(sw.Data[:es], upd.Data[:es])
				copy(sw.Data[2*es:], upd.Data[es:2*es])
				u2, _ := tensor.New(dt, []int{2})
				copy(u2.Data, upd.Data[:2*es])
				check(t, ops.Request{Op: "SliceScatter-15", Data: data, Updates: u2,
					Start: tensor.Ints(0), Stop: tensor.Ints(3), Step: tensor.Ints(2)}, sw)
			}
		})
	}
}

// Every integer dtype of indices reads the same values.
func TestEveryIndexDType(t *testing.T) {
	vals := []int64{3, -1, 0, -4, 2}
	for _, dt := range tensor.DTypes() {
		if !dt.IsInteger() {
			continue
		}
		t.Run(dt.String(), func(t *testing.T) {
			ind, _ := tensor.New(dt, []int{5})
			nd, _ := tensor.New(dt, []int{5, 1})
			want := vec[int32](0, 0, 0, 0, 0)
			w := tensor.View[int32](want)
			for i, v := range vals {
				if !dt.IsSigned() && v < 0 {
					v += 5 // unsigned types cannot count from the end
				}
				for j := range dt.Size() {
					ind.Data[i*dt.Size()+j] = byte(v >> (8 * j))
				}
				w[(v+5)%5] += int32(i + 1)
			}
			copy(nd.Data, ind.Data)
			upd := vec[int32](1, 2, 3, 4, 5)
			check(t, ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: vec[int32](0, 0, 0, 0, 0), Indices: ind, Updates: upd}, want)
			check(t, ops.Request{Op: "ScatterND-18", Reduction: "add", Data: vec[int32](0, 0, 0, 0, 0), Indices: nd, Updates: upd}, want)
		})
	}
}

// With use_init_val false an element with a single update becomes that
// update: the neutral value is the identity of every reduction, for every
// dtype.
func TestNeutralValuesAreIdentities(t *testing.T) {
	for _, dt := range tensor.DTypes() {
		if !dt.IsNumeric() {
			continue
		}
		for _, red := range []string{"sum", "prod", "min", "max"} {
			t.Run(dt.String()+" "+red, func(t *testing.T) {
				// Update values: small, the type's extremes (all bits set, the
				// sign bit alone) and, for floats, infinities.
				var words []uint64
				switch {
				case dt == tensor.Bool:
					words = []uint64{0, 1}
				case dt.IsInteger():
					bits := 8 * dt.Size()
					words = []uint64{3, 1<<(bits-1) - 1, 1 << (bits - 1), 1<<bits - 1}
				default:
					words = []uint64{ops.Min.NeutralBits(dt), ops.Max.NeutralBits(dt), ops.Prod.NeutralBits(dt)}
				}
				for _, word := range words {
					data, _ := tensor.New(dt, []int{2})
					upd, _ := tensor.New(dt, []int{1})
					es := dt.Size()
					for j := range es {
						upd.Data[j] = byte(word >> (8 * j))
						data.Data[j] = 0x3c // something else
						data.Data[es+j] = 0x11
					}
					if dt == tensor.Bool {
						data.Data[0] = 1 - upd.Data[0]
						data.Data[1] = 1
					}
					want := data.Clone()
					copy(want.Data[:es], upd.Data)
					check(t, elems12(red, data, upd, []int64{0}, false), want)
				}
			})
		}
	}
}

// A ScatterUpdate-3 axis far larger than its indices: the last writers are
// not looked for, and the updates apply in order.
func TestScatterUpdateOnALongAxis(t *testing.T) {
	const s = 70000
	data := make([]int16, s)
	want := make([]int16, s)
	ind := []int64{5, 69999, 5, 12, 5}
	for j, i := range ind {
		want[i] = int16(j + 1)
	}
	check(t, ops.Request{Op: "ScatterUpdate-3", Axis: tensor.Scalar(0), Data: vec(data...),
		Indices: idx([]int{5}, ind...), Updates: vec[int16](1, 2, 3, 4, 5)}, vec(want...))
}

// ScatterUpdate-3 copies from data only the slices no update writes: into
// an output that holds other values, gaps at the start, in the middle and
// at the end of the axis, with few and many rows before it (the copy split
// by rows, or each gap split in pieces), and every slice written (nothing
// copied), must give the naive result.
func TestScatterUpdateCopiesOnlyUncoveredSlices(t *testing.T) {
	seed := int64(20261126)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	cases := []struct {
		name  string
		shape []int // data; the axis is 1
		ind   []int64
	}{
		{"gaps at both ends and inside, one row", []int{1, 9, 5}, []int64{2, 3, 3, 6}},
		{"gaps at both ends and inside, many rows", []int{40, 9, 3}, []int64{6, 2, 3, 3}},
		{"one gap in the middle", []int{3, 6, 7}, []int64{0, 1, 5, 4, 0}},
		{"every slice written", []int{5, 4, 2}, []int64{3, 1, 2, 0, 1}},
		{"no slice written but one", []int{2, 50, 1}, []int64{49}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, dt := range []tensor.DType{tensor.Float32, tensor.Uint8, tensor.Float64} {
				ushape := []int{c.shape[0], len(c.ind), c.shape[2]}
				req := ops.Request{Op: "ScatterUpdate-3", Axis: tensor.Scalar(1), Data: randomBits(rng, dt, c.shape),
					Indices: idx([]int{len(c.ind)}, c.ind...), Updates: randomBits(rng, dt, ushape)}
				want, err := opstest.Naive(req)
				require.NoError(t, err)
				p, err := ops.Prepare(req)
				require.NoError(t, err)
				for _, tb := range testBackends {
					out := opstest.SentinelOutput(p) // not a copy of data
					require.NoError(t, tb.b.Execute(context.Background(), p, out))
					assert.True(t, tensor.Equal(want, out), "seed %d, %v, backend %s:\n got  %v\n want %v", seed, dt, tb.name, out, want)
				}
			}
		})
	}
}

// randomBits returns a numeric tensor of dt and shape with random bytes.
func randomBits(rng *rand.Rand, dt tensor.DType, shape []int) *tensor.Tensor {
	t, err := tensor.New(dt, shape)
	if err != nil {
		panic(err)
	}
	rng.Read(t.Data)
	return t
}
