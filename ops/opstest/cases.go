package opstest

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// ValidationCase is one row of the validation table: a request that checks
// one rule of one operator's spec (or of specs/README.md), named after it.
type ValidationCase struct {
	// Name is "<operator>/<rule>".
	Name    string
	Request ops.Request
	// Err is the sentinel the error wraps; nil when the rule accepts the
	// request.
	Err error
	// Input is the input or attribute the *ops.Error names ("indices",
	// "reduction", "use_init_val", "op"...). Its message names it too.
	Input string
	// AtExecute is set when Prepare accepts the request and the error comes
	// from an index value (Plan.IndexAt), found by the backend at execution.
	AtExecute bool
	// Msg, when not empty, is the whole text the error must have.
	Msg string
}

// ValidationCases returns the validation table: every rule of every
// operator, the accepting side where a version or dtype makes the
// difference, and the out-of-range index errors with their full text. Each
// call builds fresh tensors.
func ValidationCases() []ValidationCase {
	var cs []ValidationCase
	cs = append(cs, scatterUpdateCases()...)
	cs = append(cs, ndCases()...)
	cs = append(cs, elementsCases()...)
	cs = append(cs, sliceCases()...)
	cs = append(cs, onnxCases()...)
	cs = append(cs, cacheCases()...)
	cs = append(cs, commonCases()...)
	return cs
}

// tens returns a tensor of dtype dt holding vals (ints converted, bool
// non-zero); with no vals it holds 1, 2, 3, ... (bool: alternating).
func tens(dt tensor.DType, shape []int, vals ...float64) *tensor.Tensor {
	t, err := tensor.New(dt, shape)
	if err != nil {
		panic(err)
	}
	n := t.Len()
	if vals == nil {
		vals = make([]float64, n)
		for i := range vals {
			vals[i] = float64(i + 1)
		}
	}
	if len(vals) != n {
		panic("opstest: tens: wrong number of values")
	}
	for i, v := range vals {
		switch {
		case dt == tensor.String:
			t.Strings[i] = string(rune('a' + i%26))
		case dt == tensor.Complex64:
			tensor.View[complex64](t)[i] = complex(float32(v), 0)
		case dt == tensor.Complex128:
			tensor.View[complex128](t)[i] = complex(v, 0)
		case dt == tensor.Bool:
			setNum(t, i, num{b: int(v)%2 == 1})
		case dt.IsInteger():
			setNum(t, i, num{u: wrap(dt, uint64(int64(v)))})
		default:
			setNum(t, i, num{f: v})
		}
	}
	return t
}

// FloatBits returns a 1-D float tensor of dtype dt holding the given bit
// patterns, NaN payloads and signs as given.
func FloatBits(dt tensor.DType, bits ...uint64) *tensor.Tensor {
	t, err := tensor.New(dt, []int{len(bits)})
	if err != nil {
		panic(err)
	}
	sz := dt.Size()
	for i, b := range bits {
		for k := 0; k < sz; k++ {
			t.Data[i*sz+k] = byte(b >> (8 * k))
		}
	}
	return t
}

func ints(dt tensor.DType, shape []int, vals ...int64) *tensor.Tensor {
	return intTensor(dt, shape, vals)
}

func i64s(vals ...int64) *tensor.Tensor { return ints(tensor.Int64, []int{len(vals)}, vals...) }

func u64Huge(shape []int) *tensor.Tensor {
	t, _ := tensor.New(tensor.Uint64, shape)
	for i := 0; i < t.Len(); i++ {
		setNum(t, i, num{u: math.MaxUint64})
	}
	return t
}

func boolPtr(b bool) *bool { return &b }

// with returns a copy of base changed by f.
func with(base func() ops.Request, f func(r *ops.Request)) ops.Request {
	r := base()
	f(&r)
	return r
}

func accept(name string, req ops.Request) ValidationCase {
	return ValidationCase{Name: name, Request: req}
}

func reject(name string, req ops.Request, err error, input string) ValidationCase {
	return ValidationCase{Name: name, Request: req, Err: err, Input: input}
}

func badIndexCase(name string, req ops.Request, msg string) ValidationCase {
	return ValidationCase{Name: name, Request: req, Err: ops.ErrIndexRange, Input: "indices", AtExecute: true, Msg: msg}
}

// ScatterUpdate-3.
func scatterUpdateCases() []ValidationCase {
	const op = "ScatterUpdate-3/"
	base := func() ops.Request { // the shapes of example 2
		return ops.Request{Op: "ScatterUpdate-3", Data: tens(tensor.Float32, []int{3, 5}),
			Indices: ints(tensor.Int32, []int{2}, 0, 2), Updates: tens(tensor.Float32, []int{3, 2}, -1, -2, -3, -4, -5, -6),
			Axis: i64s(1)}
	}
	cs := []ValidationCase{
		accept(op+"example 2 shapes are accepted", base()),
		reject(op+"updates shape must be data.shape[:axis]+indices.shape+data.shape[axis+1:]",
			with(base, func(r *ops.Request) { r.Updates = tens(tensor.Float32, []int{2, 3}) }), ops.ErrShape, "updates"),
		reject(op+"updates rank must be rank(indices)+rank(data)-1",
			with(base, func(r *ops.Request) { r.Updates = tens(tensor.Float32, []int{3, 2, 1}) }), ops.ErrShape, "updates"),
		reject(op+"updates of the axis-0 shape are rejected for axis 1",
			with(base, func(r *ops.Request) { r.Updates = tens(tensor.Float32, []int{2, 5}) }), ops.ErrShape, "updates"),
		accept(op+"axis -r is accepted",
			with(base, func(r *ops.Request) { r.Axis = i64s(-2); r.Updates = tens(tensor.Float32, []int{2, 5}) })),
		accept(op+"axis r-1 as -1 is accepted", with(base, func(r *ops.Request) { r.Axis = i64s(-1) })),
		reject(op+"axis r is out of [-r, r-1]", with(base, func(r *ops.Request) { r.Axis = i64s(2) }), ops.ErrAxis, "axis"),
		reject(op+"axis -r-1 is out of [-r, r-1]", with(base, func(r *ops.Request) { r.Axis = i64s(-3) }), ops.ErrAxis, "axis"),
		reject(op+"axis uint64 above MaxInt64 is out of range", with(base, func(r *ops.Request) { r.Axis = u64Huge([]int{}) }), ops.ErrAxis, "axis"),
		accept(op+"axis as a scalar is accepted", with(base, func(r *ops.Request) { r.Axis = tensor.Scalar(1) })),
		accept(op+"axis as a 1-element uint8 tensor is accepted", with(base, func(r *ops.Request) { r.Axis = ints(tensor.Uint8, []int{1}, 1) })),
		reject(op+"axis with 2 elements is rejected", with(base, func(r *ops.Request) { r.Axis = i64s(1, 1) }), ops.ErrShape, "axis"),
		reject(op+"axis of shape [1,1] is rejected", with(base, func(r *ops.Request) { r.Axis = ints(tensor.Int64, []int{1, 1}, 1) }), ops.ErrShape, "axis"),
		reject(op+"axis with no element is rejected", with(base, func(r *ops.Request) { r.Axis = ints(tensor.Int64, []int{0}) }), ops.ErrShape, "axis"),
		reject(op+"axis of float type is rejected (T_AXIS)", with(base, func(r *ops.Request) { r.Axis = tens(tensor.Float32, []int{}, 1) }), ops.ErrDType, "axis"),
		reject(op+"axis is required", with(base, func(r *ops.Request) { r.Axis = nil }), ops.ErrMissingInput, "axis"),
		reject(op+"float indices are rejected (T_IND)", with(base, func(r *ops.Request) { r.Indices = tens(tensor.Float32, []int{2}, 0, 2) }), ops.ErrDType, "indices"),
		reject(op+"bool indices are rejected (T_IND)", with(base, func(r *ops.Request) { r.Indices = tens(tensor.Bool, []int{2}, 0, 1) }), ops.ErrDType, "indices"),
		reject(op+"updates must have data's type", with(base, func(r *ops.Request) { r.Updates = tens(tensor.Float64, []int{3, 2}) }), ops.ErrDType, "updates"),
		reject(op+"complex data is not T_NUMERIC", with(base, func(r *ops.Request) {
			r.Data, r.Updates = tens(tensor.Complex64, []int{3, 5}), tens(tensor.Complex64, []int{3, 2})
		}), ops.ErrDType, "data"),
		reject(op+"string data is not T_NUMERIC", with(base, func(r *ops.Request) {
			r.Data, r.Updates = tens(tensor.String, []int{3, 5}), tens(tensor.String, []int{3, 2})
		}), ops.ErrDType, "data"),
		accept(op+"bool data is accepted", with(base, func(r *ops.Request) {
			r.Data, r.Updates = tens(tensor.Bool, []int{3, 5}), tens(tensor.Bool, []int{3, 2})
		})),
		accept(op+"bfloat16 data is accepted", with(base, func(r *ops.Request) {
			r.Data, r.Updates = tens(tensor.BFloat16, []int{3, 5}), tens(tensor.BFloat16, []int{3, 2})
		})),
		reject(op+"reduction sum is rejected (no reduction attribute)", with(base, func(r *ops.Request) { r.Reduction = "sum" }), ops.ErrReduction, "reduction"),
		reject(op+"reduction NONE is rejected (names are matched exactly: none)", with(base, func(r *ops.Request) { r.Reduction = "NONE" }), ops.ErrReduction, "reduction"),
		reject(op+"use_init_val is not an attribute", with(base, func(r *ops.Request) { r.UseInitVal = boolPtr(true) }), ops.ErrUnexpectedInput, "use_init_val"),
		reject(op+"start is not an input", with(base, func(r *ops.Request) { r.Start = i64s(0) }), ops.ErrUnexpectedInput, "start"),
		reject(op+"axes is not an input", with(base, func(r *ops.Request) { r.Axes = i64s(0) }), ops.ErrUnexpectedInput, "axes"),
		accept(op+"rank-0 indices are accepted", with(base, func(r *ops.Request) {
			r.Indices, r.Updates = tensor.Scalar(4), tens(tensor.Float32, []int{3})
		})),
		accept(op+"rank-2 indices are accepted", with(base, func(r *ops.Request) {
			r.Indices, r.Updates = ints(tensor.Uint16, []int{2, 2}, 4, 0, 0, 4), tens(tensor.Float32, []int{3, 2, 2})
		})),
		accept(op+"empty indices give a copy of data", with(base, func(r *ops.Request) {
			r.Indices, r.Updates = ints(tensor.Int8, []int{0}), tens(tensor.Float32, []int{3, 0})
		})),
		badIndexCase(op+"a negative index is rejected", with(base, func(r *ops.Request) { r.Indices = ints(tensor.Int32, []int{2}, 0, -1) }),
			"ScatterUpdate-3: indices[1] = -1 is out of range [0, 4] for axis 1 of data"),
		badIndexCase(op+"index s is rejected", with(base, func(r *ops.Request) { r.Indices = ints(tensor.Int64, []int{2}, 5, 0) }),
			"ScatterUpdate-3: indices[0] = 5 is out of range [0, 4] for axis 1 of data"),
		badIndexCase(op+"uint64 index above MaxInt64 is rejected", with(base, func(r *ops.Request) {
			r.Indices = u64Huge([]int{2})
			setNum(r.Indices, 0, num{u: 3})
		}), "ScatterUpdate-3: indices[1] = 18446744073709551615 is out of range [0, 4] for axis 1 of data"),
		badIndexCase(op+"the first bad index in row-major order is named", with(base, func(r *ops.Request) {
			r.Indices, r.Updates = ints(tensor.Int16, []int{2, 2}, 1, 7, -3, 9), tens(tensor.Float32, []int{3, 2, 2})
		}), "ScatterUpdate-3: indices[0,1] = 7 is out of range [0, 4] for axis 1 of data"),
		badIndexCase(op+"no index is valid for a zero-size axis", ops.Request{Op: "ScatterUpdate-3",
			Data: tens(tensor.Int32, []int{3, 0}), Indices: ints(tensor.Int32, []int{1}, 0), Updates: tens(tensor.Int32, []int{3, 1}), Axis: i64s(1)},
			"ScatterUpdate-3: indices[0] = 0 is out of range: axis 1 of data has size 0"),
	}
	for _, idt := range indexDTypes {
		cs = append(cs, accept(op+"indices of type "+idt.String()+" are accepted (T_IND)",
			with(base, func(r *ops.Request) { r.Indices = ints(idt, []int{2}, 2, 4) })))
	}
	return cs
}

// ScatterNDUpdate-3 and -15.
func ndCases() []ValidationCase {
	base := func(op string) func() ops.Request {
		return func() ops.Request { // example 1 of ScatterNDUpdate-3
			return ops.Request{Op: op, Data: tens(tensor.Int32, []int{8}), Indices: ints(tensor.Int64, []int{4, 1}, 4, 3, 1, 7),
				Updates: tens(tensor.Int32, []int{4}, 9, 10, 11, 12)}
		}
	}
	var cs []ValidationCase
	for _, name := range []string{"ScatterNDUpdate-3", "ScatterNDUpdate-15"} {
		op, b := name+"/", base(name)
		cs = append(cs,
			accept(op+"example 1 shapes are accepted", b()),
			reject(op+"indices.shape[-1] must be at most rank(data)", with(b, func(r *ops.Request) {
				r.Indices = ints(tensor.Int64, []int{2, 2}, 0, 0, 1, 1)
			}), ops.ErrShape, "indices"),
			reject(op+"indices must have rank q >= 1", with(b, func(r *ops.Request) { r.Indices = tensor.Scalar(1) }), ops.ErrShape, "indices"),
			reject(op+"updates shape must be indices.shape[:-1]+data.shape[k:]", with(b, func(r *ops.Request) {
				r.Updates = tens(tensor.Int32, []int{3})
			}), ops.ErrShape, "updates"),
			accept(op+"slices of shape data.shape[k:] are accepted", ops.Request{Op: name, Data: tens(tensor.Float32, []int{4, 4, 4}),
				Indices: ints(tensor.Int32, []int{2, 1}, 0, 2), Updates: tens(tensor.Float32, []int{2, 4, 4})}),
			reject(op+"slices of the wrong shape are rejected", ops.Request{Op: name, Data: tens(tensor.Float32, []int{4, 4, 4}),
				Indices: ints(tensor.Int32, []int{2, 1}, 0, 2), Updates: tens(tensor.Float32, []int{2, 4})}, ops.ErrShape, "updates"),
			accept(op+"a rank-0 updates tensor is accepted where the expected rank is 0", ops.Request{Op: name,
				Data: tens(tensor.Float32, []int{2, 3}), Indices: ints(tensor.Int32, []int{2}, 1, 2), Updates: tens(tensor.Float32, []int{}, 7)}),
			accept(op+"a single-element updates tensor is accepted where the expected rank is 0", ops.Request{Op: name,
				Data: tens(tensor.Float32, []int{2, 3}), Indices: ints(tensor.Int32, []int{2}, 1, 2), Updates: tens(tensor.Float32, []int{1}, 7)}),
			reject(op+"a single-element updates tensor of rank 2 is rejected", ops.Request{Op: name,
				Data: tens(tensor.Float32, []int{2, 3}), Indices: ints(tensor.Int32, []int{2}, 1, 2), Updates: tens(tensor.Float32, []int{1, 1}, 7)},
				ops.ErrShape, "updates"),
			reject(op+"a 2-element updates tensor is rejected where the expected rank is 0", ops.Request{Op: name,
				Data: tens(tensor.Float32, []int{2, 3}), Indices: ints(tensor.Int32, []int{2}, 1, 2), Updates: tens(tensor.Float32, []int{2})},
				ops.ErrShape, "updates"),
			reject(op+"the single-element rule does not apply when the expected rank is 1", ops.Request{Op: name,
				Data: tens(tensor.Float32, []int{2, 3}), Indices: ints(tensor.Int32, []int{1, 2}, 1, 2), Updates: tens(tensor.Float32, []int{})},
				ops.ErrShape, "updates"),
			reject(op+"axis is not an input", with(b, func(r *ops.Request) { r.Axis = tensor.Scalar(0) }), ops.ErrUnexpectedInput, "axis"),
			reject(op+"use_init_val is not an attribute", with(b, func(r *ops.Request) { r.UseInitVal = boolPtr(false) }), ops.ErrUnexpectedInput, "use_init_val"),
			reject(op+"complex data is not a numeric type", with(b, func(r *ops.Request) {
				r.Data, r.Updates = tens(tensor.Complex128, []int{8}), tens(tensor.Complex128, []int{4})
			}), ops.ErrDType, "data"),
			reject(op+"string data is not a numeric type", with(b, func(r *ops.Request) {
				r.Data, r.Updates = tens(tensor.String, []int{8}), tens(tensor.String, []int{4})
			}), ops.ErrDType, "data"),
			reject(op+"reduction mean is rejected", with(b, func(r *ops.Request) { r.Reduction = "mean" }), ops.ErrReduction, "reduction"),
			reject(op+"reduction add (the ONNX name) is rejected", with(b, func(r *ops.Request) { r.Reduction = "add" }), ops.ErrReduction, "reduction"),
			badIndexCase(op+"index s is rejected", with(b, func(r *ops.Request) { r.Indices = ints(tensor.Int64, []int{4, 1}, 4, 3, 8, 7) }),
				name+ndRange(name, "indices[2,0] = 8", 8, 0)),
			badIndexCase(op+"the component of the tuple is named", ops.Request{Op: name, Data: tens(tensor.Float32, []int{2, 3, 5}),
				Indices: ints(tensor.Int64, []int{2, 3}, 0, 0, 0, 1, 2, 7), Updates: tens(tensor.Float32, []int{2})},
				name+ndRange(name, "indices[1,2] = 7", 5, 2)),
			badIndexCase(op+"no index is valid for a zero-size dimension", ops.Request{Op: name, Data: tens(tensor.Float32, []int{0}),
				Indices: ints(tensor.Uint8, []int{1, 1}, 0), Updates: tens(tensor.Float32, []int{1})},
				name+": indices[0,0] = 0 is out of range: axis 0 of data has size 0"),
		)
	}
	const v3, v15 = "ScatterNDUpdate-3/", "ScatterNDUpdate-15/"
	b3, b15 := base("ScatterNDUpdate-3"), base("ScatterNDUpdate-15")
	cs = append(cs,
		reject(v3+"reduction sum is rejected (no reduction attribute)", with(b3, func(r *ops.Request) { r.Reduction = "sum" }), ops.ErrReduction, "reduction"),
		badIndexCase(v3+"a negative index is rejected", with(b3, func(r *ops.Request) { r.Indices = ints(tensor.Int32, []int{4, 1}, 4, 3, -1, 7) }),
			"ScatterNDUpdate-3: indices[2,0] = -1 is out of range [0, 7] for axis 0 of data"),
		accept(v15+"index -s is accepted", with(b15, func(r *ops.Request) { r.Indices = ints(tensor.Int8, []int{4, 1}, -8, 3, -1, 7) })),
		badIndexCase(v15+"index -s-1 is rejected", with(b15, func(r *ops.Request) { r.Indices = ints(tensor.Int8, []int{4, 1}, -8, -9, -1, 7) }),
			"ScatterNDUpdate-15: indices[1,0] = -9 is out of range [-8, 7] for axis 0 of data"),
		reject(v15+"reduction SUM is rejected (names are matched exactly: sum)", with(b15, func(r *ops.Request) { r.Reduction = "SUM" }), ops.ErrReduction, "reduction"),
		reject(v15+"reduction \" sum\" is rejected (names are matched exactly: sum)", with(b15, func(r *ops.Request) { r.Reduction = " sum" }), ops.ErrReduction, "reduction"),
		accept(v15+"sum on bool is accepted (logical OR)", with(b15, func(r *ops.Request) {
			r.Data, r.Updates, r.Reduction = tens(tensor.Bool, []int{8}), tens(tensor.Bool, []int{4}), "sum"
		})),
		accept(v15+"sub on bool is accepted (logical XOR)", with(b15, func(r *ops.Request) {
			r.Data, r.Updates, r.Reduction = tens(tensor.Bool, []int{8}), tens(tensor.Bool, []int{4}), "sub"
		})),
	)
	for _, red := range []string{"none", "sum", "sub", "prod", "min", "max"} {
		cs = append(cs, accept(v15+"reduction "+red+" is accepted", with(b15, func(r *ops.Request) { r.Reduction = red })))
	}
	return cs
}

// ndRange words the range part of an ND index error for data dimension dim
// of size s.
func ndRange(op, lhs string, s int, dim int) string {
	lo := 0
	if op != "ScatterNDUpdate-3" {
		lo = -s
	}
	return ": " + lhs + " is out of range [" + itoa(lo) + ", " + itoa(s-1) + "] for axis " + itoa(dim) + " of data"
}

func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// ScatterElementsUpdate-3 and -12.
func elementsCases() []ValidationCase {
	base := func(op string) func() ops.Request {
		return func() ops.Request { // example 1 of Scatter, with the axis OpenVINO requires
			return ops.Request{Op: op, Data: tens(tensor.Float32, []int{3, 3}), Indices: ints(tensor.Int64, []int{2, 3}, 1, 0, 2, 0, 2, 1),
				Updates: tens(tensor.Float32, []int{2, 3}), Axis: tensor.Scalar(0)}
		}
	}
	var cs []ValidationCase
	for _, name := range []string{"ScatterElementsUpdate-3", "ScatterElementsUpdate-12"} {
		op, b := name+"/", base(name)
		cs = append(cs, elementsShapeCases(op, b)...)
		cs = append(cs,
			reject(op+"axis is required", with(b, func(r *ops.Request) { r.Axis = nil }), ops.ErrMissingInput, "axis"),
			reject(op+"complex data is not a numeric type", with(b, func(r *ops.Request) {
				r.Data, r.Updates = tens(tensor.Complex64, []int{3, 3}), tens(tensor.Complex64, []int{2, 3})
			}), ops.ErrDType, "data"),
			reject(op+"reduction sub is rejected", with(b, func(r *ops.Request) { r.Reduction = "sub" }), ops.ErrReduction, "reduction"),
			reject(op+"reduction add (the ONNX name) is rejected", with(b, func(r *ops.Request) { r.Reduction = "add" }), ops.ErrReduction, "reduction"),
		)
	}
	const v3, v12 = "ScatterElementsUpdate-3/", "ScatterElementsUpdate-12/"
	b3, b12 := base("ScatterElementsUpdate-3"), base("ScatterElementsUpdate-12")
	cs = append(cs,
		reject(v3+"reduction sum is rejected (no reduction attribute)", with(b3, func(r *ops.Request) { r.Reduction = "sum" }), ops.ErrReduction, "reduction"),
		reject(v3+"use_init_val is not an attribute", with(b3, func(r *ops.Request) { r.UseInitVal = boolPtr(true) }), ops.ErrUnexpectedInput, "use_init_val"),
		badIndexCase(v3+"a negative index is rejected", with(b3, func(r *ops.Request) { r.Indices = ints(tensor.Int64, []int{2, 3}, 1, 0, 2, 0, 2, -1) }),
			"ScatterElementsUpdate-3: indices[1,2] = -1 is out of range [0, 2] for axis 0 of data"),
		accept(v12+"index -s is accepted", with(b12, func(r *ops.Request) { r.Indices = ints(tensor.Int64, []int{2, 3}, 1, 0, 2, 0, 2, -3) })),
		badIndexCase(v12+"index -s-1 is rejected", with(b12, func(r *ops.Request) {
			r.Indices = ints(tensor.Int16, []int{2, 3}, 1, 0, 2, 0, -4, -3)
		}), "ScatterElementsUpdate-12: indices[1,1] = -4 is out of range [-3, 2] for axis 0 of data"),
		accept(v12+"use_init_val false is accepted", with(b12, func(r *ops.Request) { r.UseInitVal, r.Reduction = boolPtr(false), "sum" })),
		accept(v12+"use_init_val false with reduction none is accepted", with(b12, func(r *ops.Request) { r.UseInitVal = boolPtr(false) })),
		accept(v12+"mean on int32 is accepted", with(b12, func(r *ops.Request) {
			r.Data, r.Updates, r.Reduction = tens(tensor.Int32, []int{3, 3}), tens(tensor.Int32, []int{2, 3}), "mean"
		})),
		reject(v12+"mean on bool is rejected", with(b12, func(r *ops.Request) {
			r.Data, r.Updates, r.Reduction = tens(tensor.Bool, []int{3, 3}), tens(tensor.Bool, []int{2, 3}), "mean"
		}), ops.ErrReduction, "reduction"),
		accept(v12+"max on bool is accepted (logical OR)", with(b12, func(r *ops.Request) {
			r.Data, r.Updates, r.Reduction = tens(tensor.Bool, []int{3, 3}), tens(tensor.Bool, []int{2, 3}), "max"
		})),
	)
	for _, red := range []string{"none", "sum", "prod", "min", "max", "mean"} {
		cs = append(cs, accept(v12+"reduction "+red+" is accepted", with(b12, func(r *ops.Request) { r.Reduction = red })))
	}
	return cs
}

// elementsShapeCases: the shape and axis rules every ScatterElements-like
// operator shares. b has data [3,3], indices and updates [2,3], axis 0.
func elementsShapeCases(op string, b func() ops.Request) []ValidationCase {
	return []ValidationCase{
		accept(op+"example 1 shapes are accepted", b()),
		reject(op+"indices must have the rank of data", with(b, func(r *ops.Request) {
			r.Indices, r.Updates = ints(tensor.Int64, []int{6}, 0, 0, 0, 0, 0, 0), tens(r.Data.DType, []int{6})
		}), ops.ErrShape, "indices"),
		reject(op+"updates must have the shape of indices", with(b, func(r *ops.Request) { r.Updates = tens(r.Data.DType, []int{3, 2}) }), ops.ErrShape, "updates"),
		reject(op+"updates must have the rank of indices", with(b, func(r *ops.Request) { r.Updates = tens(r.Data.DType, []int{6}) }), ops.ErrShape, "updates"),
		reject(op+"indices may not be larger than data outside the axis", with(b, func(r *ops.Request) {
			r.Indices, r.Updates = ints(tensor.Int64, []int{2, 4}, 0, 0, 0, 0, 0, 0, 0, 0), tens(r.Data.DType, []int{2, 4})
		}), ops.ErrShape, "indices"),
		accept(op+"indices may be larger than data along the axis", with(b, func(r *ops.Request) {
			r.Indices, r.Updates = ints(tensor.Int64, []int{5, 1}, 0, 1, 2, 1, 0), tens(r.Data.DType, []int{5, 1})
		})),
		accept(op+"empty indices give a copy of data", with(b, func(r *ops.Request) {
			r.Indices, r.Updates = ints(tensor.Int64, []int{0, 3}), tens(r.Data.DType, []int{0, 3})
		})),
		accept(op+"axis -1 is accepted", with(b, func(r *ops.Request) { r.Axis = tensor.Scalar(-1) })),
		reject(op+"axis r is out of [-r, r-1]", with(b, func(r *ops.Request) { r.Axis = tensor.Scalar(2) }), ops.ErrAxis, "axis"),
		reject(op+"axis -r-1 is out of [-r, r-1]", with(b, func(r *ops.Request) { r.Axis = ints(tensor.Int8, []int{1}, -3) }), ops.ErrAxis, "axis"),
		reject(op+"axis with 2 elements is rejected", with(b, func(r *ops.Request) { r.Axis = i64s(0, 1) }), ops.ErrShape, "axis"),
		reject(op+"float indices are rejected", with(b, func(r *ops.Request) { r.Indices = tens(tensor.Float64, []int{2, 3}, 1, 0, 2, 0, 2, 1) }), ops.ErrDType, "indices"),
		reject(op+"bool indices are rejected", with(b, func(r *ops.Request) { r.Indices = tens(tensor.Bool, []int{2, 3}) }), ops.ErrDType, "indices"),
		reject(op+"updates must have data's type", with(b, func(r *ops.Request) { r.Updates = tens(tensor.Float16, []int{2, 3}) }), ops.ErrDType, "updates"),
		reject(op+"start is not an input", with(b, func(r *ops.Request) { r.Start = i64s(0) }), ops.ErrUnexpectedInput, "start"),
		badIndexCase(op+"index s is rejected", with(b, func(r *ops.Request) { r.Indices = ints(tensor.Uint32, []int{2, 3}, 1, 0, 2, 0, 3, 1) }),
			op[:len(op)-1]+": indices[1,1] = 3 is out of range ["+loOf(op, 3)+", 2] for axis 0 of data"),
		badIndexCase(op+"the axis of the index is named", with(b, func(r *ops.Request) {
			r.Axis, r.Indices = tensor.Scalar(-1), ints(tensor.Uint64, []int{2, 3}, 1, 0, 2, 0, 2, 9)
		}), op[:len(op)-1]+": indices[1,2] = 9 is out of range ["+loOf(op, 3)+", 2] for axis 1 of data"),
	}
}

// loOf is the lowest index op accepts in a dimension of size s.
func loOf(op string, s int) string {
	switch op {
	case "ScatterElementsUpdate-3/", "Scatter-9/":
		return "0"
	}
	return itoa(-s)
}

// SliceScatter-15.
func sliceCases() []ValidationCase {
	const op = "SliceScatter-15/"
	base := func() ops.Request { // example 2
		return ops.Request{Op: "SliceScatter-15", Data: tens(tensor.Float32, []int{2, 5}), Updates: tens(tensor.Float32, []int{2, 3}),
			Start: ints(tensor.Int32, []int{1}, -25), Stop: ints(tensor.Int32, []int{1}, 25), Step: ints(tensor.Int32, []int{1}, 2),
			Axes: ints(tensor.Int32, []int{1}, 1)}
	}
	two := func() ops.Request { // example 3
		return ops.Request{Op: "SliceScatter-15", Data: tens(tensor.Float32, []int{3, 5}), Updates: tens(tensor.Float32, []int{2, 2}),
			Start: i64s(0, 1), Stop: i64s(3, 5), Step: i64s(2, 2)}
	}
	return []ValidationCase{
		accept(op+"example 2 is accepted", base()),
		accept(op+"axes are optional (example 3)", two()),
		accept(op+"axes given in any order", with(two, func(r *ops.Request) { r.Axes = i64s(1, 0); r.Start, r.Stop = i64s(1, 0), i64s(5, 3) })),
		accept(op+"negative axes count from the end", with(two, func(r *ops.Request) { r.Axes = ints(tensor.Int8, []int{2}, -2, -1) })),
		reject(op+"stop must have as many elements as start", with(base, func(r *ops.Request) { r.Stop = i64s(25, 25) }), ops.ErrShape, "stop"),
		reject(op+"step must have as many elements as start", with(base, func(r *ops.Request) { r.Step = i64s(2, 2) }), ops.ErrShape, "step"),
		reject(op+"axes must have as many elements as start", with(base, func(r *ops.Request) { r.Axes = i64s(1, 0) }), ops.ErrShape, "axes"),
		reject(op+"step 0 is rejected", with(base, func(r *ops.Request) { r.Step = ints(tensor.Uint8, []int{1}, 0) }), ops.ErrSlice, "step"),
		reject(op+"step 0 in the second entry is rejected", with(two, func(r *ops.Request) { r.Step = i64s(2, 0) }), ops.ErrSlice, "step"),
		reject(op+"axes must be unique", with(two, func(r *ops.Request) { r.Axes = i64s(1, 1) }), ops.ErrAxis, "axes"),
		reject(op+"axes -1 and r-1 are the same axis", with(two, func(r *ops.Request) { r.Axes = i64s(-1, 1) }), ops.ErrAxis, "axes"),
		reject(op+"axes 0 and -r are the same axis", with(two, func(r *ops.Request) { r.Axes = ints(tensor.Int16, []int{2}, 0, -2) }), ops.ErrAxis, "axes"),
		reject(op+"axes r is out of [-r, r-1]", with(base, func(r *ops.Request) { r.Axes = i64s(2) }), ops.ErrAxis, "axes"),
		reject(op+"axes -r-1 is out of [-r, r-1]", with(base, func(r *ops.Request) { r.Axes = i64s(-3) }), ops.ErrAxis, "axes"),
		reject(op+"axes uint64 above MaxInt64 is out of range", with(base, func(r *ops.Request) { r.Axes = u64Huge([]int{1}) }), ops.ErrAxis, "axes"),
		reject(op+"more entries than rank(data) are rejected", with(two, func(r *ops.Request) {
			r.Start, r.Stop, r.Step = i64s(0, 0, 0), i64s(1, 1, 1), i64s(1, 1, 1)
		}), ops.ErrShape, "start"),
		reject(op+"updates must have the slice's shape", with(base, func(r *ops.Request) { r.Updates = tens(tensor.Float32, []int{2, 2}) }), ops.ErrShape, "updates"),
		reject(op+"updates must have the rank of data", with(base, func(r *ops.Request) { r.Updates = tens(tensor.Float32, []int{6}) }), ops.ErrShape, "updates"),
		reject(op+"start must be 1-D", with(base, func(r *ops.Request) { r.Start = tensor.Scalar(0) }), ops.ErrShape, "start"),
		reject(op+"stop must be 1-D", with(base, func(r *ops.Request) { r.Stop = ints(tensor.Int64, []int{1, 1}, 5) }), ops.ErrShape, "stop"),
		reject(op+"float start is rejected (T_IND)", with(base, func(r *ops.Request) { r.Start = tens(tensor.Float32, []int{1}, 0) }), ops.ErrDType, "start"),
		reject(op+"bool step is rejected (T_IND)", with(base, func(r *ops.Request) { r.Step = tens(tensor.Bool, []int{1}, 1) }), ops.ErrDType, "step"),
		reject(op+"float axes are rejected (T_AXIS)", with(base, func(r *ops.Request) { r.Axes = tens(tensor.Float64, []int{1}, 1) }), ops.ErrDType, "axes"),
		reject(op+"start is required", with(base, func(r *ops.Request) { r.Start = nil }), ops.ErrMissingInput, "start"),
		reject(op+"stop is required", with(base, func(r *ops.Request) { r.Stop = nil }), ops.ErrMissingInput, "stop"),
		reject(op+"step is required", with(base, func(r *ops.Request) { r.Step = nil }), ops.ErrMissingInput, "step"),
		reject(op+"indices is not an input", with(base, func(r *ops.Request) { r.Indices = i64s(0) }), ops.ErrUnexpectedInput, "indices"),
		reject(op+"axis is not an input", with(base, func(r *ops.Request) { r.Axis = tensor.Scalar(0) }), ops.ErrUnexpectedInput, "axis"),
		reject(op+"reduction sum is rejected", with(base, func(r *ops.Request) { r.Reduction = "sum" }), ops.ErrReduction, "reduction"),
		reject(op+"use_init_val is not an attribute", with(base, func(r *ops.Request) { r.UseInitVal = boolPtr(true) }), ops.ErrUnexpectedInput, "use_init_val"),
		reject(op+"updates must have data's type", with(base, func(r *ops.Request) { r.Updates = tens(tensor.Int32, []int{2, 3}) }), ops.ErrDType, "updates"),
		reject(op+"complex data is not a numeric type", with(base, func(r *ops.Request) {
			r.Data, r.Updates = tens(tensor.Complex64, []int{2, 5}), tens(tensor.Complex64, []int{2, 3})
		}), ops.ErrDType, "data"),
		accept(op+"an empty slice is accepted", with(base, func(r *ops.Request) {
			r.Start, r.Stop, r.Step, r.Updates = i64s(3), i64s(1), i64s(1), tens(tensor.Float32, []int{2, 0})
		})),
		accept(op+"a negative step walks backwards", with(base, func(r *ops.Request) {
			r.Start, r.Stop, r.Step = i64s(-1), i64s(math.MinInt64), i64s(-2)
		})),
		accept(op+"INT_MIN of int32 as stop with a negative step runs to the start", with(base, func(r *ops.Request) {
			r.Start, r.Stop, r.Step = ints(tensor.Int32, []int{1}, 4), ints(tensor.Int32, []int{1}, math.MinInt32), ints(tensor.Int8, []int{1}, -2)
		})),
		accept(op+"INT_MAX of int64 as stop runs to the end", with(base, func(r *ops.Request) {
			r.Start, r.Stop, r.Step = i64s(0), i64s(math.MaxInt64), i64s(2)
		})),
		accept(op+"uint64 above MaxInt64 as stop runs to the end", with(base, func(r *ops.Request) {
			r.Start, r.Stop, r.Step = i64s(0), u64Huge([]int{1}), ints(tensor.Uint8, []int{1}, 2)
		})),
		accept(op+"a step of INT_MIN takes one element", with(base, func(r *ops.Request) {
			r.Start, r.Stop, r.Step, r.Updates = i64s(2), i64s(-10), i64s(math.MinInt64), tens(tensor.Float32, []int{2, 1})
		})),
		accept(op+"no entries: updates has data's shape", with(base, func(r *ops.Request) {
			r.Start, r.Stop, r.Step, r.Axes, r.Updates = i64s(), i64s(), i64s(), i64s(), tens(tensor.Float32, []int{2, 5})
		})),
	}
}

// The ONNX operators: Scatter-9/11, ScatterElements-11..18, ScatterND-11..18.
func onnxCases() []ValidationCase {
	elems := func(op string) func() ops.Request {
		return func() ops.Request { // example 1, axis attribute left to default
			return ops.Request{Op: op, Data: tens(tensor.Float32, []int{3, 3}), Indices: ints(tensor.Int64, []int{2, 3}, 1, 0, 2, 0, 2, 1),
				Updates: tens(tensor.Float32, []int{2, 3}, 1, 1.1, 1.2, 2, 2.1, 2.2)}
		}
	}
	nd := func(op string) func() ops.Request {
		return func() ops.Request {
			return ops.Request{Op: op, Data: tens(tensor.Int32, []int{8}), Indices: ints(tensor.Int32, []int{4, 1}, 4, 3, 1, 7),
				Updates: tens(tensor.Int32, []int{4}, 9, 10, 11, 12)}
		}
	}
	strData := func(r *ops.Request) {
		r.Data, r.Updates = tens(tensor.String, r.Data.Shape), tens(tensor.String, r.Updates.Shape)
	}
	c128Data := func(r *ops.Request) {
		r.Data, r.Updates = tens(tensor.Complex128, r.Data.Shape), tens(tensor.Complex128, r.Updates.Shape)
	}
	var cs []ValidationCase
	type version struct {
		name     string
		accepted []string
		rejected []string
		negative bool
	}
	elemOps := []version{
		{"Scatter-9", []string{"none"}, []string{"add", "mul", "sum"}, false},
		{"Scatter-11", []string{"none"}, []string{"add", "mul"}, true},
		{"ScatterElements-11", []string{"none"}, []string{"add", "mul", "max"}, true},
		{"ScatterElements-13", []string{"none"}, []string{"add", "mul", "min"}, true},
		{"ScatterElements-16", []string{"none", "add", "mul"}, []string{"max", "min", "sum", "prod", "mean", "ADD", "Add", "Mul", "None", " add"}, true},
		{"ScatterElements-18", []string{"none", "add", "mul", "max", "min"}, []string{"sub", "mean", "sum"}, true},
	}
	for _, v := range elemOps {
		op, b := v.name+"/", elems(v.name)
		cs = append(cs, elementsShapeCases(op, func() ops.Request { r := b(); r.Axis = tensor.Scalar(0); return r })...)
		cs = append(cs,
			accept(op+"the axis attribute defaults to 0", b()),
			accept(op+"string data is accepted with reduction none", with(b, strData)),
			accept(op+"complex128 data is accepted with reduction none", with(b, c128Data)),
			accept(op+"bfloat16 data is accepted", with(b, func(r *ops.Request) {
				r.Data, r.Updates = tens(tensor.BFloat16, r.Data.Shape), tens(tensor.BFloat16, r.Updates.Shape)
			})),
			reject(op+"use_init_val is not an attribute", with(b, func(r *ops.Request) { r.UseInitVal = boolPtr(true) }), ops.ErrUnexpectedInput, "use_init_val"),
		)
		for _, red := range v.accepted {
			cs = append(cs, accept(op+"reduction "+red+" is accepted", with(b, func(r *ops.Request) { r.Reduction = red })))
		}
		for _, red := range v.rejected {
			cs = append(cs, reject(op+"reduction "+red+" is rejected", with(b, func(r *ops.Request) { r.Reduction = red }), ops.ErrReduction, "reduction"))
		}
		if len(v.accepted) > 1 {
			red := v.accepted[1]
			cs = append(cs,
				reject(op+"reduction "+red+" on string data is rejected", with(b, func(r *ops.Request) { strData(r); r.Reduction = red }), ops.ErrReduction, "reduction"),
				reject(op+"reduction "+red+" on complex data is rejected", with(b, func(r *ops.Request) { c128Data(r); r.Reduction = red }), ops.ErrReduction, "reduction"),
				accept(op+"reduction "+red+" on bool data is accepted", with(b, func(r *ops.Request) {
					r.Data, r.Updates, r.Reduction = tens(tensor.Bool, r.Data.Shape), tens(tensor.Bool, r.Updates.Shape), red
				})),
			)
		}
		neg := with(b, func(r *ops.Request) { r.Indices = ints(tensor.Int32, []int{2, 3}, 1, 0, 2, -3, 2, 1) })
		if v.negative {
			cs = append(cs, accept(op+"index -s is accepted", neg))
		} else {
			cs = append(cs, badIndexCase(op+"a negative index is rejected", neg,
				v.name+": indices[1,0] = -3 is out of range [0, 2] for axis 0 of data"))
		}
	}
	ndOps := []version{
		{"ScatterND-11", []string{"none"}, []string{"add", "mul"}, true},
		{"ScatterND-13", []string{"none"}, []string{"add", "max"}, true},
		{"ScatterND-16", []string{"none", "add", "mul"}, []string{"max", "min", "sub", "sum"}, true},
		{"ScatterND-18", []string{"none", "add", "mul", "max", "min"}, []string{"sub", "mean", "prod"}, true},
	}
	for _, v := range ndOps {
		op, b := v.name+"/", nd(v.name)
		cs = append(cs,
			accept(op+"example shapes are accepted", b()),
			accept(op+"string data is accepted with reduction none", with(b, strData)),
			accept(op+"index -s is accepted", with(b, func(r *ops.Request) { r.Indices = ints(tensor.Int32, []int{4, 1}, -8, 3, 1, 7) })),
			badIndexCase(op+"index -s-1 is rejected", with(b, func(r *ops.Request) { r.Indices = ints(tensor.Int32, []int{4, 1}, 4, 3, 1, -9) }),
				v.name+": indices[3,0] = -9 is out of range [-8, 7] for axis 0 of data"),
			reject(op+"indices.shape[-1] must be at most rank(data)", with(b, func(r *ops.Request) {
				r.Indices = ints(tensor.Int32, []int{1, 2}, 0, 0)
			}), ops.ErrShape, "indices"),
			reject(op+"updates shape must be indices.shape[:-1]+data.shape[k:]", with(b, func(r *ops.Request) {
				r.Updates = tens(tensor.Int32, []int{4, 1})
			}), ops.ErrShape, "updates"),
			reject(op+"axis is not an input", with(b, func(r *ops.Request) { r.Axis = tensor.Scalar(0) }), ops.ErrUnexpectedInput, "axis"),
		)
		for _, red := range v.accepted {
			cs = append(cs, accept(op+"reduction "+red+" is accepted", with(b, func(r *ops.Request) { r.Reduction = red })))
		}
		for _, red := range v.rejected {
			cs = append(cs, reject(op+"reduction "+red+" is rejected", with(b, func(r *ops.Request) { r.Reduction = red }), ops.ErrReduction, "reduction"))
		}
		if len(v.accepted) > 1 {
			cs = append(cs, reject(op+"reduction add on string data is rejected", with(b, func(r *ops.Request) { strData(r); r.Reduction = "add" }),
				ops.ErrReduction, "reduction"))
		}
	}
	return cs
}

// Rules every operator shares: presence and well-formedness of inputs, and
// the operator's name.
// TensorScatter-24 (ONNX opset 24): past_cache [batch, heads, max_seq,
// dim], update [batch, heads, seq, dim], write_indices [batch] int64.
func cacheCases() []ValidationCase {
	const op = "TensorScatter-24/"
	b := func() ops.Request { // batch 2, 2 heads, max_sequence_length 5, sequence_length 2
		return ops.Request{Op: "TensorScatter-24", Data: tens(tensor.Float32, []int{2, 2, 5, 3}),
			Indices: i64s(1, 3), Updates: tens(tensor.Float32, []int{2, 2, 2, 3})}
	}
	axis := func(v int64) func(r *ops.Request) { return func(r *ops.Request) { r.Axis = tensor.Scalar(v) } }
	const lin = "TensorScatter-24: write_indices[%d] = %s is out of range [0, 3]: in linear mode write_indices[%d] + sequence_length 2 must be at most max_sequence_length 5 (axis 2 of past_cache)"
	msg := func(pos int, val string) string { return fmt.Sprintf(lin, pos, val, pos) }
	withMsg := func(c ValidationCase, msg string) ValidationCase { c.Msg = msg; return c }
	mode := func(m string) func(r *ops.Request) { return func(r *ops.Request) { r.Mode = m } }
	rank1 := func(a *tensor.Tensor) func(r *ops.Request) {
		return func(r *ops.Request) {
			r.Data, r.Updates, r.Indices, r.Axis = tens(tensor.Float32, []int{4}), tens(tensor.Float32, []int{4}), nil, a
		}
	}
	const rank1Msg = "TensorScatter-24: past_cache has rank 1; TensorScatter-24 needs rank >= 2: the batch dimension 0, then the sequence axis (never 0)"
	const modeMsg = "TensorScatter-24: mode %q is not accepted by TensorScatter-24%s; it takes linear or circular, matched exactly (ONNX attribute strings are case-sensitive)"
	return []ValidationCase{
		accept(op+"the axis defaults to -2", b()),
		accept(op+"the axis given positive", with(b, axis(2))),
		accept(op+"the axis given negative", with(b, axis(-2))),
		accept(op+"an axis other than -2: the heads", with(b, func(r *ops.Request) {
			r.Axis, r.Indices, r.Updates = tensor.Scalar(1), i64s(1, 0), tens(tensor.Float32, []int{2, 1, 5, 3})
		})),
		accept(op+"write_indices absent are zeros", with(b, func(r *ops.Request) { r.Indices = nil })),
		accept(op+"mode linear is accepted", with(b, func(r *ops.Request) { r.Mode = "linear" })),
		accept(op+"mode circular is accepted", with(b, mode("circular"))),
		accept(op+"mode absent is linear", with(b, mode(""))),
		accept(op+"a write that ends exactly at the end", with(b, func(r *ops.Request) { r.Indices = i64s(3, 0) })),
		accept(op+"a sequence as long as the cache", with(b, func(r *ops.Request) {
			r.Indices, r.Updates = i64s(0, 0), tens(tensor.Float32, []int{2, 2, 5, 3})
		})),
		accept(op+"circular writes far past the end", with(b, func(r *ops.Request) {
			r.Mode, r.Indices = "circular", i64s(math.MaxInt64, -7)
		})),
		accept(op+"string data is accepted", with(b, func(r *ops.Request) {
			r.Data, r.Updates = tens(tensor.String, r.Data.Shape), tens(tensor.String, r.Updates.Shape)
		})),
		reject(op+"axis 0 is the batch dimension", with(b, axis(0)), ops.ErrAxis, "axis"),
		reject(op+"axis -4 is the batch dimension", with(b, axis(-4)), ops.ErrAxis, "axis"),
		reject(op+"axis out of range", with(b, axis(4)), ops.ErrAxis, "axis"),
		withMsg(reject(op+"past_cache of rank 1 has no axis but the batch", with(b, rank1(nil)), ops.ErrShape, "data"), rank1Msg),
		withMsg(reject(op+"past_cache of rank 1 with axis 0", with(b, rank1(tensor.Scalar(0))), ops.ErrShape, "data"), rank1Msg),
		withMsg(reject(op+"past_cache of rank 1 with axis -1", with(b, rank1(tensor.Scalar(-1))), ops.ErrShape, "data"), rank1Msg),
		withMsg(reject(op+"past_cache of rank 0", with(b, func(r *ops.Request) {
			r.Data, r.Updates, r.Indices = tens(tensor.Float32, []int{}), tens(tensor.Float32, []int{}), nil
		}), ops.ErrShape, "data"), strings.Replace(rank1Msg, "rank 1", "rank 0", 1)),
		withMsg(reject(op+"axis 0 of rank 2 is the batch dimension", with(b, func(r *ops.Request) {
			r.Data, r.Updates, r.Indices, r.Axis = tens(tensor.Float32, []int{2, 5}), tens(tensor.Float32, []int{2, 2}), nil, tensor.Scalar(-2)
		}), ops.ErrAxis, "axis"), "TensorScatter-24: axis = -2 is the batch dimension 0; TensorScatter-24 needs an axis in [1, 1] or [-1, -1]"),
		withMsg(reject(op+"update longer than the cache", with(b, func(r *ops.Request) { r.Updates = tens(tensor.Float32, []int{2, 2, 6, 3}) }), ops.ErrShape, "updates"),
			"TensorScatter-24: update has shape [2,2,6,3]: its sequence_length 6 (axis 2) is larger than past_cache's max_sequence_length 5"),
		reject(op+"update with a mismatched dimension", with(b, func(r *ops.Request) { r.Updates = tens(tensor.Float32, []int{2, 2, 2, 4}) }), ops.ErrShape, "updates"),
		reject(op+"update of another rank", with(b, func(r *ops.Request) { r.Updates = tens(tensor.Float32, []int{2, 2, 2}) }), ops.ErrShape, "updates"),
		reject(op+"update of another dtype", with(b, func(r *ops.Request) { r.Updates = tens(tensor.Float16, r.Updates.Shape) }), ops.ErrDType, "updates"),
		reject(op+"write_indices of the wrong length", with(b, func(r *ops.Request) { r.Indices = i64s(1, 2, 3) }), ops.ErrShape, "indices"),
		reject(op+"write_indices of rank 2", with(b, func(r *ops.Request) { r.Indices = ints(tensor.Int64, []int{2, 1}, 1, 2) }), ops.ErrShape, "indices"),
		reject(op+"write_indices of type int32", with(b, func(r *ops.Request) { r.Indices = ints(tensor.Int32, []int{2}, 1, 2) }), ops.ErrDType, "indices"),
		withMsg(reject(op+"write_indices of type float64", with(b, func(r *ops.Request) { r.Indices = tens(tensor.Float64, []int{2}) }), ops.ErrDType, "indices"),
			"TensorScatter-24: write_indices has dtype float64; it must be int64"),
		withMsg(reject(op+"update of another dtype is named update", with(b, func(r *ops.Request) { r.Updates = tens(tensor.Float64, r.Updates.Shape) }),
			ops.ErrDType, "updates"), "TensorScatter-24: update has dtype float64 but past_cache has float32; they must match"),
		withMsg(reject(op+"past_cache is required", with(b, func(r *ops.Request) { r.Data = nil }), ops.ErrMissingInput, "data"),
			"TensorScatter-24: past_cache is required"),
		withMsg(reject(op+"mode other than linear and circular", with(b, mode("ring")), ops.ErrMode, "mode"), fmt.Sprintf(modeMsg, "ring", "")),
		withMsg(reject(op+"mode strings match exactly: Circular", with(b, mode("Circular")), ops.ErrMode, "mode"),
			fmt.Sprintf(modeMsg, "Circular", " (did you mean circular?)")),
		reject(op+"mode strings match exactly: LINEAR", with(b, mode("LINEAR")), ops.ErrMode, "mode"),
		reject(op+"mode strings match exactly: linear with a space", with(b, mode(" linear")), ops.ErrMode, "mode"),
		reject(op+"no reduction", with(b, func(r *ops.Request) { r.Reduction = "add" }), ops.ErrReduction, "reduction"),
		reject("ScatterND-18/mode is not an attribute", ops.Request{Op: "ScatterND-18", Data: tens(tensor.Int32, []int{8}),
			Indices: ints(tensor.Int64, []int{1, 1}, 4), Updates: tens(tensor.Int32, []int{1}), Mode: "circular"}, ops.ErrUnexpectedInput, "mode"),
		badIndexCase(op+"linear write past the end", with(b, func(r *ops.Request) { r.Indices = i64s(3, 4) }), msg(1, "4")),
		badIndexCase(op+"negative linear write index", with(b, func(r *ops.Request) { r.Indices = i64s(-1, 0) }), msg(0, "-1")),
		badIndexCase(op+"linear write index far past the end", with(b, func(r *ops.Request) {
			r.Mode, r.Indices = "linear", i64s(0, math.MaxInt64)
		}), msg(1, "9223372036854775807")),
		badIndexCase(op+"linear write past the end with no update rows", with(b, func(r *ops.Request) {
			r.Indices, r.Updates = i64s(9, 0), tens(tensor.Float32, []int{2, 2, 0, 3})
		}), "TensorScatter-24: write_indices[0] = 9 is out of range [0, 5]: in linear mode write_indices[0] + sequence_length 0 must be at most max_sequence_length 5 (axis 2 of past_cache)"),
	}
}

// rankShape returns a shape of rank dimensions, the first of size first
// and the others of size 1.
func rankShape(rank, first int) []int {
	s := make([]int, rank)
	for i := range s {
		s[i] = 1
	}
	s[0] = first
	return s
}

func commonCases() []ValidationCase {
	base := func() ops.Request {
		return ops.Request{Op: "ScatterNDUpdate-15", Data: tens(tensor.Float32, []int{4}), Indices: ints(tensor.Int32, []int{2, 1}, 0, 2),
			Updates: tens(tensor.Float32, []int{2})}
	}
	const op = "ScatterNDUpdate-15/"
	return []ValidationCase{
		reject(op+"data is required", with(base, func(r *ops.Request) { r.Data = nil }), ops.ErrMissingInput, "data"),
		reject(op+"indices is required", with(base, func(r *ops.Request) { r.Indices = nil }), ops.ErrMissingInput, "indices"),
		reject(op+"updates is required", with(base, func(r *ops.Request) { r.Updates = nil }), ops.ErrMissingInput, "updates"),
		reject(op+"data rank r >= 1", with(base, func(r *ops.Request) { r.Data = tens(tensor.Float32, []int{}) }), ops.ErrShape, "data"),
		accept(op+"data of rank MaxRank is accepted", with(base, func(r *ops.Request) {
			r.Data = tens(tensor.Float32, rankShape(ops.MaxRank, 4))
			r.Updates = tens(tensor.Float32, append([]int{2}, rankShape(ops.MaxRank-1, 1)...))
		})),
		reject(op+"data of rank MaxRank+1 is rejected", with(base, func(r *ops.Request) { r.Data = tens(tensor.Float32, rankShape(ops.MaxRank+1, 4)) }),
			ops.ErrShape, "data"),
		reject(op+"indices of rank MaxRank+1 are rejected", with(base, func(r *ops.Request) {
			r.Indices = ints(tensor.Int32, append(rankShape(ops.MaxRank, 1), 1), 0)
			r.Updates = tens(tensor.Float32, rankShape(ops.MaxRank, 1))
		}), ops.ErrShape, "indices"),
		reject(op+"a data payload of the wrong length is rejected", with(base, func(r *ops.Request) { r.Data.Data = r.Data.Data[:12] }),
			ops.ErrInvalidTensor, "data"),
		reject(op+"an updates tensor of unknown dtype is rejected", with(base, func(r *ops.Request) { r.Updates.DType = tensor.Invalid }),
			ops.ErrInvalidTensor, "updates"),
		reject(op+"an indices tensor with a negative dimension is rejected", with(base, func(r *ops.Request) { r.Indices.Shape = []int{-2, -1} }),
			ops.ErrInvalidTensor, "indices"),
		reject(op+"a string tensor with the wrong number of strings is rejected", ops.Request{Op: "ScatterND-11",
			Data: &tensor.Tensor{DType: tensor.String, Shape: []int{4}, Strings: []string{"a"}}, Indices: ints(tensor.Int32, []int{2, 1}, 0, 2),
			Updates: tens(tensor.String, []int{2})}, ops.ErrInvalidTensor, "data"),
		accept(op+"the operator name is matched case-insensitively", with(base, func(r *ops.Request) { r.Op = "scatterndUPDATE-15" })),
		reject("Lookup/an unknown operator version is rejected", with(base, func(r *ops.Request) { r.Op = "ScatterNDUpdate-4" }), ops.ErrUnknownOp, "op"),
		reject("Lookup/an empty operator name is rejected", with(base, func(r *ops.Request) { r.Op = "" }), ops.ErrUnknownOp, "op"),
	}
}
