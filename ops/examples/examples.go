package examples

import (
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Example is one spec example: a request and the output it must give.
type Example struct {
	// Name is "<operator>/<where in the spec>", e.g.
	// "ScatterNDUpdate-15/xml-2-sum".
	Name string
	// Source says which spec file and example the values come from, the
	// dtypes chosen where the spec leaves them open, and any correction.
	Source  string
	Request ops.Request
	Want    *tensor.Tensor
}

// All returns every spec example, in a fixed order. Each call builds fresh
// tensors, so callers may modify them.
func All() []Example {
	var all []Example
	all = append(all, scatterUpdate3()...)
	all = append(all, scatterNDUpdate3()...)
	all = append(all, scatterNDUpdate15()...)
	all = append(all, sliceScatter15()...)
	all = append(all, onnxScatter()...)
	all = append(all, tensorScatter24()...)
	return all
}

func f32(shape []int, v ...float32) *tensor.Tensor { return tensor.MustFromSlice(shape, v) }
func i32(shape []int, v ...int32) *tensor.Tensor   { return tensor.MustFromSlice(shape, v) }
func i64(shape []int, v ...int64) *tensor.Tensor   { return tensor.MustFromSlice(shape, v) }

func f16(shape []int, v ...float32) *tensor.Tensor {
	h := make([]tensor.F16, len(v))
	for i, x := range v {
		h[i] = tensor.F16From(x)
	}
	return tensor.MustFromSlice(shape, h)
}

// scatterUpdate3: ScatterUpdate-3.openvino.txt. Example 1 gives shapes only.
func scatterUpdate3() []Example {
	return []Example{{
		Name: "ScatterUpdate-3/xml-2",
		Source: "ScatterUpdate-3.openvino.txt, example 2: data and updates float32 (the spec writes 1.0f), " +
			"indices int32 (T_IND is open), axis a 1-element 1-D int64 tensor {1}",
		Request: ops.Request{
			Op: "ScatterUpdate-3",
			Data: f32([]int{3, 5},
				-1, 1, -1, 3, 4,
				-1, 6, -1, 8, 9,
				-1, 11, 1, 13, 14),
			Indices: i32([]int{2}, 0, 2),
			Updates: f32([]int{3, 2},
				1, 1,
				1, 1,
				1, 2),
			Axis: tensor.Ints(1),
		},
		Want: f32([]int{3, 5},
			1, 1, 1, 3, 4,
			1, 6, 1, 8, 9,
			1, 11, 2, 13, 14),
	}}
}

// ndSlices is example 2 of ScatterNDUpdate-3 (ja) and the second text
// example of ScatterNDUpdate-15: two 4x4 slices replaced.
func ndSlices(op, name, source string) Example {
	a := []int32{1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1}
	b := []int32{8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8}
	u0 := []int32{5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8}
	u1 := []int32{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4}
	cat := func(parts ...[]int32) []int32 {
		var out []int32
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	return Example{
		Name:   op + "/" + name,
		Source: source,
		Request: ops.Request{
			Op:      op,
			Data:    i32([]int{4, 4, 4}, cat(a, a, b, b)...),
			Indices: i64([]int{2, 1}, 0, 2),
			Updates: i32([]int{2, 4, 4}, cat(u0, u1)...),
		},
		Want: i32([]int{4, 4, 4}, cat(u0, a, u1, b)...),
	}
}

// scatterNDUpdate3: ScatterNDUpdate-3.openvino.ja.txt. The XML example gives
// shapes only.
func scatterNDUpdate3() []Example {
	return []Example{
		{
			Name: "ScatterNDUpdate-3/text-1",
			Source: "ScatterNDUpdate-3.openvino.ja.txt, example 1 (例 1): integer values, so data and updates " +
				"int32; indices int64",
			Request: ops.Request{
				Op:      "ScatterNDUpdate-3",
				Data:    i32([]int{8}, 1, 2, 3, 4, 5, 6, 7, 8),
				Indices: i64([]int{4, 1}, 4, 3, 1, 7),
				Updates: i32([]int{4}, 9, 10, 11, 12),
			},
			Want: i32([]int{8}, 1, 11, 3, 10, 9, 6, 7, 12),
		},
		ndSlices("ScatterNDUpdate-3", "text-2",
			"ScatterNDUpdate-3.openvino.ja.txt, example 2 (例 2): integer values, so data and updates int32; indices int64"),
	}
}

// scatterNDUpdate15: ScatterNDUpdate-15.openvino.txt, with the errata of
// specs/README.md corrected. XML example 5 gives shapes only.
func scatterNDUpdate15() []Example {
	xml := func(n int, red string, data, updates, want *tensor.Tensor, source string) Example {
		return Example{
			Name:   "ScatterNDUpdate-15/xml-" + string(rune('0'+n)) + "-" + red,
			Source: source,
			Request: ops.Request{
				Op:        "ScatterNDUpdate-15",
				Data:      data,
				Indices:   i32([]int{5, 1}, 0, 2, -3, -3, 0),
				Updates:   updates,
				Reduction: red,
			},
			Want: want,
		}
	}
	const shape5 = " The spec shows indices of shape [5]; by its own rule they are [5, 1] (specs/README.md)."
	return []Example{
		{
			Name: "ScatterNDUpdate-15/text-1",
			Source: "ScatterNDUpdate-15.openvino.txt, text example 1 (reduction none): integer values, so data and " +
				"updates int32; indices int64. The printed output [1, 11, 3, 10, 4, 6, 13, 12] is wrong: index -4 " +
				"is 4, which receives 9 and then 14 (specs/README.md errata).",
			Request: ops.Request{
				Op:      "ScatterNDUpdate-15",
				Data:    i32([]int{8}, 1, 2, 3, 4, 5, 6, 7, 8),
				Indices: i64([]int{6, 1}, 4, 3, 1, 7, -2, -4),
				Updates: i32([]int{6}, 9, 10, 11, 12, 13, 14),
			},
			Want: i32([]int{8}, 1, 11, 3, 10, 14, 6, 13, 12),
		},
		ndSlices("ScatterNDUpdate-15", "text-2",
			"ScatterNDUpdate-15.openvino.txt, text example 2 (two 4x4 slices, reduction none): integer values, "+
				"so data and updates int32; indices int64"),
		xml(1, "none",
			f32([]int{4}, 1, 2, 3, 4),
			f32([]int{5}, 10, 20, 30, 40, 50),
			f32([]int{4}, 50, 40, 20, 4),
			"ScatterNDUpdate-15.openvino.txt, XML example 1: FP32 data and updates, I32 indices. The printed "+
				"output [50, 20, 20, 4] is wrong: index -3 is 1, which receives 30 and then 40 (specs/README.md errata)."+shape5),
		xml(2, "sum",
			f16([]int{4}, 1, 2, 3, 4),
			f16([]int{5}, 10, 20, 30, 40, 50),
			f16([]int{4}, 61, 72, 23, 4),
			"ScatterNDUpdate-15.openvino.txt, XML example 2: FP16 data and updates, I32 indices."+shape5),
		xml(3, "sub",
			i32([]int{4}, 1, 2, 3, 4),
			i32([]int{5}, 10, 20, 30, 40, 50),
			i32([]int{4}, -59, -68, -17, 4),
			"ScatterNDUpdate-15.openvino.txt, XML example 3: I32 data, updates and indices."+shape5),
		xml(4, "prod",
			f32([]int{4}, 1, 2, 3, 4),
			f32([]int{5}, 10, 20, 30, 40, 50),
			f32([]int{4}, 500, 2400, 60, 4),
			"ScatterNDUpdate-15.openvino.txt, XML example 4: FP32 data and updates, I32 indices. The printed "+
				"output [500, 3600, 40, 4] is wrong: index 1 gets 2*30*40 = 2400 and index 2 gets 3*20 = 60 "+
				"(specs/README.md errata)."+shape5),
	}
}

// sliceScatter15: SliceScatter-15.openvino.txt, examples 1 to 3.
func sliceScatter15() []Example {
	data25 := func() *tensor.Tensor { return f32([]int{2, 5}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9) }
	return []Example{
		{
			Name:   "SliceScatter-15/xml-1",
			Source: "SliceScatter-15.openvino.txt, example 1 (fill a slice over axis 0): FP32 data and updates, I32 start, stop, step and axes",
			Request: ops.Request{
				Op:      "SliceScatter-15",
				Data:    data25(),
				Updates: f32([]int{1, 5}, 10, 20, 30, 40, 50),
				Start:   i32([]int{1}, 0),
				Stop:    i32([]int{1}, 1),
				Step:    i32([]int{1}, 1),
				Axes:    i32([]int{1}, 0),
			},
			Want: f32([]int{2, 5}, 10, 20, 30, 40, 50, 5, 6, 7, 8, 9),
		},
		{
			Name: "SliceScatter-15/xml-2",
			Source: "SliceScatter-15.openvino.txt, example 2 (every second value over axis 1, start -25 and stop 25 " +
				"clamped): FP32 data and updates, I32 start, stop, step and axes",
			Request: ops.Request{
				Op:      "SliceScatter-15",
				Data:    data25(),
				Updates: f32([]int{2, 3}, 10, 20, 30, 40, 50, 60),
				Start:   i32([]int{1}, -25),
				Stop:    i32([]int{1}, 25),
				Step:    i32([]int{1}, 2),
				Axes:    i32([]int{1}, 1),
			},
			Want: f32([]int{2, 5}, 10, 1, 20, 3, 30, 40, 6, 50, 8, 60),
		},
		{
			Name: "SliceScatter-15/xml-3",
			Source: "SliceScatter-15.openvino.txt, example 3 (every second value over both axes, axes omitted): FP32 " +
				"data and updates, I32 start, stop and step. The spec shows start, stop and step with <dim>1</dim> " +
				"but two values each; they have shape [2].",
			Request: ops.Request{
				Op:      "SliceScatter-15",
				Data:    f32([]int{3, 5}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14),
				Updates: f32([]int{2, 2}, 50, 60, 70, 80),
				Start:   i32([]int{2}, 0, 1),
				Stop:    i32([]int{2}, 3, 5),
				Step:    i32([]int{2}, 2, 2),
			},
			Want: f32([]int{3, 5}, 0, 50, 2, 60, 4, 5, 6, 7, 8, 9, 10, 70, 12, 80, 14),
		},
	}
}

// onnxScatter: the two examples of Scatter-9-11.onnx.zh.txt (示例 1 and 示例
// 2, the same in both versions), run on every operator with ScatterElements
// semantics: Scatter-9 and -11, ScatterElements-11/13/16/18 (Scatter-11 is
// its deprecated alias) and OpenVINO's ScatterElementsUpdate-3/12, whose axis
// is a required input rather than an attribute that defaults to 0.
func onnxScatter() []Example {
	targets := []struct {
		name         string
		axisRequired bool
	}{
		{"Scatter-9", false}, {"Scatter-11", false},
		{"ScatterElements-11", false}, {"ScatterElements-13", false},
		{"ScatterElements-16", false}, {"ScatterElements-18", false},
		{"ScatterElementsUpdate-3", true}, {"ScatterElementsUpdate-12", true},
	}
	const dtypes = "data and updates float32 (ONNX float), indices int64"
	var out []Example
	for _, op := range targets {
		from := "Scatter-9-11.onnx.zh.txt"
		if op.name != "Scatter-9" && op.name != "Scatter-11" {
			from += " (same semantics as Scatter-11)"
		}
		ex1 := Example{
			Name:   op.name + "/onnx-1",
			Source: from + ", example 1 (示例 1, axis 0 by default): " + dtypes,
			Request: ops.Request{
				Op:      op.name,
				Data:    f32([]int{3, 3}, 0, 0, 0, 0, 0, 0, 0, 0, 0),
				Indices: i64([]int{2, 3}, 1, 0, 2, 0, 2, 1),
				Updates: f32([]int{2, 3}, 1.0, 1.1, 1.2, 2.0, 2.1, 2.2),
			},
			Want: f32([]int{3, 3}, 2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2),
		}
		if op.axisRequired {
			ex1.Request.Axis = tensor.Scalar(0)
			ex1.Source += "; axis given as the scalar input 0, which the OpenVINO operator requires"
		}
		ex2 := Example{
			Name:   op.name + "/onnx-2",
			Source: from + ", example 2 (示例 2, axis 1): " + dtypes + "; axis a scalar int64",
			Request: ops.Request{
				Op:      op.name,
				Data:    f32([]int{1, 5}, 1.0, 2.0, 3.0, 4.0, 5.0),
				Indices: i64([]int{1, 2}, 1, 3),
				Updates: f32([]int{1, 2}, 1.1, 2.1),
				Axis:    tensor.Scalar(1),
			},
			Want: f32([]int{1, 5}, 1.0, 1.1, 3.0, 2.1, 5.0),
		}
		out = append(out, ex1, ex2)
	}
	return out
}

// repeat returns v n times over.
func repeat(n int, v ...float32) []float32 {
	var out []float32
	for range n {
		out = append(out, v...)
	}
	return out
}

// join concatenates parts.
func join(parts ...[]float32) []float32 {
	var out []float32
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// tensorScatter24: TensorScatter-24 (ONNX opset 24). Its operator text
// states the rule (a pseudocode loop over the prefixes before the axis,
// linear and circular modes) with no values; the values are those of the
// three node tests ONNX ships with it
// (onnx/backend/test/case/node/tensorscatter.py), which
// cmd/gpuscatter/testdata/node holds as ONNX node tests too.
func tensorScatter24() []Example {
	const from = "ONNX TensorScatter-24, whose operator text gives no values: the values of its node test "
	const dtypes = ": float32 past_cache (--data) and update (--updates), int64 write_indices (--indices)"
	rows4 := []float32{1, 2, 3, 4, 5, 5, 6, 7, 8, 9, 8, 7, 6, 5, 4, 4, 3, 2, 1, 0}
	rows3 := []float32{1, 2, 3, 4, 5, 6, 5, 6, 7, 8, 9, 10, 8, 7, 6, 5, 4, 3, 5, 4, 3, 2, 1, 0}
	return []Example{
		{
			Name: "TensorScatter-24/onnx-linear",
			Source: from + "test_tensorscatter (mode linear, axis -2 by default: one new position per sequence, " +
				"written at 1 and 2)" + dtypes,
			Request: ops.Request{
				Op:      "TensorScatter-24",
				Data:    f32([]int{2, 1, 4, 5}, repeat(2, rows4...)...),
				Indices: i64([]int{2}, 1, 2),
				Updates: f32([]int{2, 1, 1, 5}, join(repeat(5, 5), repeat(5, 1))...),
				Mode:    ops.ModeLinear,
			},
			Want: f32([]int{2, 1, 4, 5},
				1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 8, 7, 6, 5, 4, 4, 3, 2, 1, 0,
				1, 2, 3, 4, 5, 5, 6, 7, 8, 9, 1, 1, 1, 1, 1, 4, 3, 2, 1, 0),
		},
		{
			Name: "TensorScatter-24/onnx-circular",
			Source: from + "test_tensorscatter_circular (mode circular: two new positions per sequence, the second " +
				"sequence's written at 3 and wrapped to 0)" + dtypes,
			Request: ops.Request{
				Op:      "TensorScatter-24",
				Data:    f32([]int{2, 1, 4, 5}, repeat(2, rows4...)...),
				Indices: i64([]int{2}, 1, 3),
				Updates: f32([]int{2, 1, 2, 5}, join(repeat(5, 5), repeat(5, 6), repeat(5, 1), repeat(5, 2))...),
				Mode:    ops.ModeCircular,
			},
			Want: f32([]int{2, 1, 4, 5},
				1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 4, 3, 2, 1, 0,
				2, 2, 2, 2, 2, 5, 6, 7, 8, 9, 8, 7, 6, 5, 4, 1, 1, 1, 1, 1),
		},
		{
			Name: "TensorScatter-24/onnx-3d",
			Source: from + "test_tensorscatter_3d (no mode attribute, so linear; axis -2 of a 3-D cache is 1: two new " +
				"positions per sequence, written at 1, 2 and 0)" + dtypes,
			Request: ops.Request{
				Op:      "TensorScatter-24",
				Data:    f32([]int{3, 4, 6}, repeat(3, rows3...)...),
				Indices: i64([]int{3}, 1, 2, 0),
				Updates: f32([]int{3, 2, 6}, join(repeat(6, 4), repeat(6, 5), repeat(6, 6), repeat(6, 7), repeat(6, 2), repeat(6, 3))...),
			},
			Want: f32([]int{3, 4, 6}, join(
				rows3[:6], repeat(6, 4), repeat(6, 5), rows3[18:],
				rows3[:12], repeat(6, 6), repeat(6, 7),
				repeat(6, 2), repeat(6, 3), rows3[12:])...),
		},
	}
}
