package opstest

import (
	"math"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/examples"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// ContractCases returns small requests whose results the contract of
// specs/README.md fixes where the specs are silent, with outputs worked out
// by hand: update order and duplicates, bool reductions, integer
// wrap-around, NaN and signed zeros in min and max, rounding of every
// float16 step, the mean's rounding and exact sums, use_init_val=false, and
// SliceScatter's Python slices. Each call builds fresh tensors.
func ContractCases() []examples.Example {
	nan, inf := math.NaN(), math.Inf(1)
	negZero := math.Copysign(0, -1)
	idx := func(vals ...int64) *tensor.Tensor { return ints(tensor.Int32, []int{len(vals), 1}, vals...) }
	nd := func(red string, dt tensor.DType, data, updates, want []float64, indices ...int64) ops.Request {
		return ops.Request{Op: "ScatterNDUpdate-15", Reduction: red, Data: tens(dt, []int{len(data)}, data...),
			Indices: idx(indices...), Updates: tens(dt, []int{len(updates)}, updates...)}
	}
	ex := func(name, source string, req ops.Request, want *tensor.Tensor) examples.Example {
		return examples.Example{Name: "contract/" + name, Source: "specs/README.md: " + source, Request: req, Want: want}
	}
	mean := func(dt tensor.DType, init bool, data, updates []float64, indices ...int64) ops.Request {
		return ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "mean", UseInitVal: boolPtr(init),
			Data: tens(dt, []int{len(data)}, data...), Indices: ints(tensor.Int64, []int{len(indices)}, indices...),
			Updates: tens(dt, []int{len(updates)}, updates...), Axis: tensor.Scalar(0)}
	}
	boolData, boolUpd := []float64{0, 1, 0, 1}, []float64{1, 1, 0, 0}
	// twoNaNs: two NaNs into each of four elements, each pair in both
	// orders: positive and negative, then two payloads.
	twoNaNs := func() *tensor.Tensor {
		return FloatBits(tensor.Float32, 0x7FC00000, 0xFFC00000, 0xFFC00000, 0x7FC00000, 0x7FC00001, 0x7FC00002, 0x7FC00002, 0x7FC00001)
	}
	cs := []examples.Example{
		ex("duplicates-last-wins", "with reduction none and duplicate targets, the last one in row-major order wins",
			ops.Request{Op: "ScatterElements-11", Data: tens(tensor.Float32, []int{2, 3}, 0, 0, 0, 0, 0, 0),
				Indices: ints(tensor.Int64, []int{2, 2}, 2, 2, 0, 0), Updates: tens(tensor.Float32, []int{2, 2}, 1, 2, 3, 4), Axis: tensor.Scalar(1)},
			tens(tensor.Float32, []int{2, 3}, 0, 0, 2, 4, 0, 0)),
		ex("nd-order-of-sub", "reductions fold every update in, in row-major order: 10-3-2",
			nd("sub", tensor.Int32, []float64{10, 0}, []float64{3, 2}, nil, 0, 0), tens(tensor.Int32, []int{2}, 5, 0)),
		ex("bool-sum-is-or", "booleans: sum = OR", nd("sum", tensor.Bool, boolData, boolUpd, nil, 0, 1, 2, 3),
			tens(tensor.Bool, []int{4}, 1, 1, 0, 1)),
		ex("bool-sub-is-xor", "booleans: sub = XOR", nd("sub", tensor.Bool, boolData, boolUpd, nil, 0, 1, 2, 3),
			tens(tensor.Bool, []int{4}, 1, 0, 0, 1)),
		ex("bool-prod-is-and", "booleans: prod = AND", nd("prod", tensor.Bool, boolData, boolUpd, nil, 0, 1, 2, 3),
			tens(tensor.Bool, []int{4}, 0, 1, 0, 0)),
		ex("bool-min-is-and", "booleans: min = AND", nd("min", tensor.Bool, boolData, boolUpd, nil, 0, 1, 2, 3),
			tens(tensor.Bool, []int{4}, 0, 1, 0, 0)),
		ex("bool-max-is-or", "booleans: max = OR", nd("max", tensor.Bool, boolData, boolUpd, nil, 0, 1, 2, 3),
			tens(tensor.Bool, []int{4}, 1, 1, 0, 1)),
		ex("int8-sum-wraps", "integers wrap on overflow (two's complement)",
			nd("sum", tensor.Int8, []float64{127, -128}, []float64{1, -1}, nil, 0, 1), tens(tensor.Int8, []int{2}, -128, 127)),
		ex("int8-prod-wraps", "integers wrap on overflow: 16*16 = 256 = 0 in int8, 3*(-128) = 128 = -128",
			nd("prod", tensor.Int8, []float64{16, 3}, []float64{16, -128}, nil, 0, 1), tens(tensor.Int8, []int{2}, 0, -128)),
		ex("uint8-sub-wraps", "integers wrap on overflow: 0-1 = 255 in uint8",
			nd("sub", tensor.Uint8, []float64{0}, []float64{1}, nil, 0), tens(tensor.Uint8, []int{1}, 255)),
		ex("uint64-max-is-unsigned", "max compares uint64 as unsigned",
			ops.Request{Op: "ScatterND-18", Reduction: "max", Data: ints(tensor.Uint64, []int{1}, 1), Indices: idx(0),
				Updates: u64Huge([]int{1})}, u64Huge([]int{1})),
		ex("float-max-propagates-nan", "floats: max propagates NaN; max(-0, +0) = +0",
			ops.Request{Op: "ScatterElements-18", Reduction: "max", Axis: tensor.Scalar(0),
				Data: tens(tensor.Float32, []int{5}, 1, nan, 0, negZero, -inf), Indices: ints(tensor.Int64, []int{5}, 0, 1, 2, 3, 4),
				Updates: tens(tensor.Float32, []int{5}, nan, 1, negZero, 0, nan)},
			tens(tensor.Float32, []int{5}, nan, nan, 0, 0, nan)),
		ex("float-min-propagates-nan", "floats: min propagates NaN; min(-0, +0) = -0",
			ops.Request{Op: "ScatterElements-18", Reduction: "min", Axis: tensor.Scalar(0),
				Data: tens(tensor.Float64, []int{5}, 1, nan, 0, negZero, inf), Indices: ints(tensor.Int64, []int{5}, 0, 1, 2, 3, 4),
				Updates: tens(tensor.Float64, []int{5}, nan, 1, negZero, 0, nan)},
			tens(tensor.Float64, []int{5}, nan, nan, negZero, negZero, nan)),
		ex("float-min-nan-then-number", "floats: once NaN, min stays NaN whatever follows",
			nd("min", tensor.Float16, []float64{5}, []float64{nan, 1}, nil, 0, 0), tens(tensor.Float16, []int{1}, nan)),
		// The NaN of min and max: the greatest bit pattern, unsigned, of
		// the NaNs an element meets, unchanged. One NaN of each sign
		// (with a payload, and a signalling one) comes out as it went in,
		// against numbers in data or in the updates.
		ex("float-max-keeps-nan-bits", "floats: max gives a lone NaN bit for bit, sign and payload kept",
			ops.Request{Op: "ScatterElements-18", Reduction: "max", Axis: tensor.Scalar(0),
				Data: FloatBits(tensor.Float32, 0x3F800000, 0xFFC00001, 0x7F800001, 0xFF800000), Indices: ints(tensor.Int64, []int{4}, 0, 1, 2, 3),
				Updates: FloatBits(tensor.Float32, 0xFFC12345, 0x7F800000, 0x00000000, 0x7FC00002)},
			FloatBits(tensor.Float32, 0xFFC12345, 0xFFC00001, 0x7F800001, 0x7FC00002)),
		ex("float-min-keeps-nan-bits", "floats: min gives a lone NaN bit for bit, sign and payload kept",
			ops.Request{Op: "ScatterElements-18", Reduction: "min", Axis: tensor.Scalar(0),
				Data:    FloatBits(tensor.Float64, 0x3FF0000000000000, 0x7FF8000000000001, 0xFFF0000000000001, 0x7FF0000000000000),
				Indices: ints(tensor.Int64, []int{4}, 0, 1, 2, 3),
				Updates: FloatBits(tensor.Float64, 0x7FF8000000012345, 0xFFF0000000000000, 0x8000000000000000, 0xFFF8000000000002)},
			FloatBits(tensor.Float64, 0x7FF8000000012345, 0x7FF8000000000001, 0xFFF0000000000001, 0xFFF8000000000002)),
		// Two NaNs meeting one element, in either order: the greater
		// unsigned pattern, so a negative NaN beats a positive one;
		// the element's NaN against an update's likewise.
		ex("float-max-greatest-nan", "floats: of several NaNs, max gives the greatest bit pattern (unsigned), in any order",
			ops.Request{Op: "ScatterNDUpdate-15", Reduction: "max", Data: FloatBits(tensor.Float32, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000),
				Indices: idx(0, 0, 1, 1, 2, 2, 3, 3), Updates: twoNaNs()},
			FloatBits(tensor.Float32, 0xFFC00000, 0xFFC00000, 0x7FC00002, 0x7FC00002)),
		ex("float-min-greatest-nan", "floats: of several NaNs, min gives the greatest bit pattern (unsigned), in any order",
			ops.Request{Op: "ScatterNDUpdate-15", Reduction: "min", Data: FloatBits(tensor.Float32, 0x3F800000, 0x3F800000, 0x3F800000, 0x3F800000),
				Indices: idx(0, 0, 1, 1, 2, 2, 3, 3), Updates: twoNaNs()},
			FloatBits(tensor.Float32, 0xFFC00000, 0xFFC00000, 0x7FC00002, 0x7FC00002)),
		ex("float16-min-data-nan-against-update-nan", "floats: the element's NaN meets the updates' as one more operand",
			ops.Request{Op: "ScatterND-18", Reduction: "min", Data: FloatBits(tensor.Float16, 0x7E00, 0xFE00, 0x7E07),
				Indices: idx(0, 1, 2), Updates: FloatBits(tensor.Float16, 0xFE00, 0x7E00, 0x7E03)},
			FloatBits(tensor.Float16, 0xFE00, 0xFE00, 0x7E07)),
		ex("bfloat16-max-data-nan-against-update-nan", "floats: the element's NaN meets the updates' as one more operand",
			ops.Request{Op: "ScatterND-18", Reduction: "max", Data: FloatBits(tensor.BFloat16, 0x7FC0, 0xFFC0, 0x7FC7),
				Indices: idx(0, 1, 2), Updates: FloatBits(tensor.BFloat16, 0xFFC0, 0x7FC0, 0x7FC3)},
			FloatBits(tensor.BFloat16, 0xFFC0, 0xFFC0, 0x7FC7)),
		ex("float16-sum-rounds-each-step", "a float16 step rounds to float16: 2048+1 = 2048 (ties to even), twice",
			nd("sum", tensor.Float16, []float64{2048}, []float64{1, 1}, nil, 0, 0), tens(tensor.Float16, []int{1}, 2048)),
		ex("bfloat16-sum-rounds-each-step", "a bfloat16 step rounds to bfloat16: 256+1 = 256, twice",
			nd("sum", tensor.BFloat16, []float64{256}, []float64{1, 1}, nil, 0, 0), tens(tensor.BFloat16, []int{1}, 256)),
		ex("float16-sum-overflows-to-inf", "float16 steps overflow to +inf: 60000+60000",
			nd("sum", tensor.Float16, []float64{60000}, []float64{60000, -60000}, nil, 0, 0), tens(tensor.Float16, []int{1}, inf)),
		ex("mean-rounds-down-negative", "integer mean rounds toward negative infinity: -2.5 -> -3",
			mean(tensor.Int32, true, []float64{-5}, []float64{0}, 0), tens(tensor.Int32, []int{1}, -3)),
		ex("mean-rounds-down-positive", "integer mean rounds toward negative infinity: 303.5 -> 303",
			mean(tensor.Int16, true, []float64{300}, []float64{307}, 0), tens(tensor.Int16, []int{1}, 303)),
		ex("mean-int8-sum-is-exact", "for integers of 32 bits or less the mean's sum is exact: (100+100+100)/3 in int8",
			mean(tensor.Int8, true, []float64{100}, []float64{100, 100}, 0, 0), tens(tensor.Int8, []int{1}, 100)),
		ex("mean-uint32-sum-is-exact", "for integers of 32 bits or less the mean's sum is exact",
			mean(tensor.Uint32, true, []float64{4294967295}, []float64{4294967293}, 0), tens(tensor.Uint32, []int{1}, 4294967294)),
		ex("mean-int64-sum-wraps", "64-bit integers accumulate in their own type: MaxInt64+1 wraps to MinInt64, /2",
			ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "mean", Axis: tensor.Scalar(0),
				Data: ints(tensor.Int64, []int{1}, math.MaxInt64), Indices: ints(tensor.Int64, []int{1}, 0), Updates: ints(tensor.Int64, []int{1}, 1)},
			ints(tensor.Int64, []int{1}, math.MinInt64/2)),
		ex("mean-without-init", "use_init_val=false: the mean of the updates alone, -7/2 -> -4; untouched elements keep data",
			mean(tensor.Int32, false, []float64{9, 8}, []float64{-3, -4}, 0, 0), tens(tensor.Int32, []int{2}, -4, 8)),
		ex("mean-float", "float mean: sum divided by count, in the type: (1+2)/2 and (1+2+2)/3",
			mean(tensor.Float32, true, []float64{1, 1}, []float64{2, 2, 2}, 0, 1, 1), tens(tensor.Float32, []int{2}, 1.5, float64(float32(5.0)/3))),
		ex("mean-float16", "float16 mean rounds to float16: (1+2+2)/3",
			mean(tensor.Float16, true, []float64{1}, []float64{2, 2}, 0, 0), tens(tensor.Float16, []int{1}, float64(tensor.F16From(5.0/3).Float32()))),
		ex("sum-without-init", "use_init_val=false: sum starts from 0",
			ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "sum", UseInitVal: boolPtr(false), Axis: tensor.Scalar(0),
				Data: tens(tensor.Int32, []int{2}, 5, 7), Indices: ints(tensor.Int64, []int{2}, 0, 0), Updates: tens(tensor.Int32, []int{2}, 1, 2)},
			tens(tensor.Int32, []int{2}, 3, 7)),
		ex("min-without-init", "use_init_val=false: min starts from the type's maximum",
			ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "min", UseInitVal: boolPtr(false), Axis: tensor.Scalar(0),
				Data: tens(tensor.Uint8, []int{2}, 5, 7), Indices: ints(tensor.Int64, []int{1}, 0), Updates: tens(tensor.Uint8, []int{1}, 9)},
			tens(tensor.Uint8, []int{2}, 9, 7)),
		ex("max-without-init", "use_init_val=false: max starts from -inf",
			ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "max", UseInitVal: boolPtr(false), Axis: tensor.Scalar(0),
				Data: tens(tensor.Float32, []int{2}, 5, 7), Indices: ints(tensor.Int64, []int{1}, 0), Updates: tens(tensor.Float32, []int{1}, -inf)},
			tens(tensor.Float32, []int{2}, -inf, 7)),
		ex("prod-without-init", "use_init_val=false: prod starts from 1",
			ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "prod", UseInitVal: boolPtr(false), Axis: tensor.Scalar(0),
				Data: tens(tensor.Float64, []int{2}, 0, 7), Indices: ints(tensor.Int64, []int{2}, 0, 0), Updates: tens(tensor.Float64, []int{2}, 3, -2)},
			tens(tensor.Float64, []int{2}, -6, 7)),
		ex("none-ignores-use-init-val", "use_init_val has no effect with reduction none",
			ops.Request{Op: "ScatterElementsUpdate-12", UseInitVal: boolPtr(false), Axis: tensor.Scalar(0),
				Data: tens(tensor.Int32, []int{2}, 5, 7), Indices: ints(tensor.Int64, []int{1}, 1), Updates: tens(tensor.Int32, []int{1}, 1)},
			tens(tensor.Int32, []int{2}, 5, 1)),
		ex("slice-negative-step", "SliceScatter-15: a negative step walks backwards from start; INT_MIN means to the end",
			ops.Request{Op: "SliceScatter-15", Data: tens(tensor.Float32, []int{5}, 0, 1, 2, 3, 4), Updates: tens(tensor.Float32, []int{3}, 10, 20, 30),
				Start: ints(tensor.Int32, []int{1}, -1), Stop: ints(tensor.Int32, []int{1}, math.MinInt32), Step: ints(tensor.Int32, []int{1}, -2)},
			tens(tensor.Float32, []int{5}, 30, 1, 20, 3, 10)),
		ex("slice-clamped-negative-step", "SliceScatter-15: start beyond the end clamps to the last element when walking backwards",
			ops.Request{Op: "SliceScatter-15", Data: tens(tensor.Int64, []int{2, 4}, 0, 1, 2, 3, 4, 5, 6, 7),
				Updates: tens(tensor.Int64, []int{2, 2}, 10, 20, 30, 40), Start: i64s(100), Stop: i64s(-3), Step: i64s(-1),
				Axes: ints(tensor.Int8, []int{1}, -1)},
			tens(tensor.Int64, []int{2, 4}, 0, 1, 20, 10, 4, 5, 40, 30)),
		ex("slice-empty", "SliceScatter-15: empty slices are allowed and give a copy of data",
			ops.Request{Op: "SliceScatter-15", Data: tens(tensor.Uint16, []int{3}, 1, 2, 3), Updates: tens(tensor.Uint16, []int{0}),
				Start: i64s(2), Stop: i64s(2), Step: i64s(1)},
			tens(tensor.Uint16, []int{3}, 1, 2, 3)),
		ex("empty-indices", "zero-size indices or updates give a copy of data",
			ops.Request{Op: "ScatterND-16", Reduction: "mul", Data: tens(tensor.Float32, []int{3}, 1, 2, 3), Indices: ints(tensor.Int64, []int{0, 1}),
				Updates: tens(tensor.Float32, []int{0})},
			tens(tensor.Float32, []int{3}, 1, 2, 3)),
		ex("scatterupdate-rank0-indices", "rank-0 indices are allowed in ScatterUpdate-3",
			ops.Request{Op: "ScatterUpdate-3", Data: tens(tensor.Int32, []int{2, 3}, 1, 2, 3, 4, 5, 6), Indices: tensor.Scalar(1),
				Updates: tens(tensor.Int32, []int{2}, 8, 9), Axis: tensor.Scalar(-1)},
			tens(tensor.Int32, []int{2, 3}, 1, 8, 3, 4, 9, 6)),
		ex("strings-move", "ONNX string data moves with reduction none, duplicates last wins",
			ops.Request{Op: "ScatterElements-18", Data: mustStrings([]int{3}, "a", "b", "c"), Indices: ints(tensor.Int8, []int{3}, 2, -1, 0),
				Updates: mustStrings([]int{3}, "x", "y", "z")},
			mustStrings([]int{3}, "z", "b", "y")),
		ex("tensorscatter-only-the-sequence-wraps", "TensorScatter-24 circular: only the sequence position wraps, "+
			"not the batch coordinate (3 sequences, max_sequence_length 2: the ONNX reference code would send sequence 2 to sequence 0)",
			ops.Request{Op: "TensorScatter-24", Mode: "circular", Axis: tensor.Scalar(1), Data: tens(tensor.Int32, []int{3, 2, 1}, 0, 1, 2, 3, 4, 5),
				Indices: i64s(1, 2, 3), Updates: tens(tensor.Int32, []int{3, 1, 1}, 10, 20, 30)},
			tens(tensor.Int32, []int{3, 2, 1}, 0, 10, 20, 3, 4, 30)),
		ex("tensorscatter-circular-any-int64", "TensorScatter-24 circular: any int64 write index wraps to a position in [0, max_sequence_length)",
			ops.Request{Op: "TensorScatter-24", Mode: "circular", Data: tens(tensor.Float32, []int{3, 3, 1}, 0, 0, 0, 0, 0, 0, 0, 0, 0),
				Indices: i64s(-1, math.MinInt64, math.MaxInt64), Updates: tens(tensor.Float32, []int{3, 2, 1}, 1, 2, 3, 4, 5, 6)},
			// -1 -> 2, 0; MinInt64 = -2^63 = 1 (mod 3) -> 1, 2; MaxInt64 = 1 (mod 3) -> 1, 2
			tens(tensor.Float32, []int{3, 3, 1}, 2, 0, 1, 0, 3, 4, 0, 5, 6)),
		ex("tensorscatter-strings", "TensorScatter-24 moves string data; write_indices absent are zeros",
			ops.Request{Op: "TensorScatter-24", Data: mustStrings([]int{1, 3, 1}, "a", "b", "c"), Updates: mustStrings([]int{1, 2, 1}, "x", "y")},
			mustStrings([]int{1, 3, 1}, "x", "y", "c")),
	}
	return cs
}

func mustStrings(shape []int, vals ...string) *tensor.Tensor {
	t, err := tensor.FromStrings(shape, vals)
	if err != nil {
		panic(err)
	}
	return t
}
