package ops_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

func index(shape []int, v ...int64) *tensor.Tensor {
	t, err := tensor.FromSlice(shape, v)
	if err != nil {
		panic(err)
	}
	return t
}

var allReductions = []ops.Reduction{ops.None, ops.Sum, ops.Sub, ops.Prod, ops.Min, ops.Max, ops.Mean}

func TestReductionAccepts(t *testing.T) {
	numeric := []tensor.DType{tensor.Bool, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Uint16, tensor.Int32, tensor.Uint32,
		tensor.Int64, tensor.Uint64, tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64}
	other := []tensor.DType{tensor.Complex64, tensor.Complex128, tensor.String}
	for _, c := range []struct {
		r       ops.Reduction
		numeric bool // every numeric dtype but bool
		bool    bool
		other   bool // complex and string
	}{
		{ops.None, true, true, true},
		{ops.Sum, true, true, false},
		{ops.Sub, true, true, false},
		{ops.Prod, true, true, false},
		{ops.Min, true, true, false},
		{ops.Max, true, true, false},
		{ops.Mean, true, false, false},
	} {
		for _, dt := range numeric {
			want := c.numeric
			if dt == tensor.Bool {
				want = c.bool
			}
			assert.Equal(t, want, c.r.Accepts(dt), "%v on %v", c.r, dt)
		}
		for _, dt := range other {
			assert.Equal(t, c.other, c.r.Accepts(dt), "%v on %v", c.r, dt)
		}
		assert.False(t, c.r.Accepts(tensor.Invalid), "%v on an invalid dtype", c.r)
		assert.False(t, c.r.Accepts(tensor.DType(200)), "%v on dtype 200", c.r)
	}
	for _, dt := range append(numeric, other...) {
		assert.False(t, ops.Reduction(7).Accepts(dt), "an unknown reduction on %v", dt)
	}
}

// TestPrepareAsksAccepts: for every operator, reduction name and dtype,
// Prepare rejects the reduction with ErrReduction exactly when Accepts
// says no (data the operator does not move at all fails on its dtype).
func TestPrepareAsksAccepts(t *testing.T) {
	for _, op := range ops.All() {
		if len(op.Reductions) < 2 {
			continue
		}
		for _, name := range op.ReductionNames() {
			r := op.Reductions[name]
			for _, dt := range tensor.DTypes() {
				data, err := tensor.New(dt, []int{3})
				require.NoError(t, err)
				upd, _ := tensor.New(dt, []int{1})
				req := ops.Request{Op: op.Name, Reduction: name, Data: data, Updates: upd, Indices: index([]int{1}, 1)}
				if op.Kind == ops.KindND {
					req.Indices = index([]int{1, 1}, 1)
				}
				if op.TakesAxis() {
					req.Axis = tensor.Scalar(0)
				}
				_, err = ops.Prepare(req)
				switch {
				case !op.AnyDType && !dt.IsNumeric():
					assert.ErrorIs(t, err, ops.ErrDType, "%s %s on %v", op.Name, name, dt)
				case r.Accepts(dt):
					assert.NoError(t, err, "%s %s on %v", op.Name, name, dt)
				default:
					assert.ErrorIs(t, err, ops.ErrReduction, "%s %s on %v", op.Name, name, dt)
				}
			}
		}
	}
}

// The messages of a reduction the data does not take.
func TestReductionDTypeErrors(t *testing.T) {
	f := func(op, red string, dt tensor.DType) error {
		data, _ := tensor.New(dt, []int{2})
		upd, _ := tensor.New(dt, []int{1})
		_, err := ops.Prepare(ops.Request{Op: op, Reduction: red, Data: data, Updates: upd,
			Indices: index([]int{1}, 0), Axis: tensor.Scalar(0)})
		return err
	}
	err := f("ScatterElementsUpdate-12", "mean", tensor.Bool)
	require.True(t, errors.Is(err, ops.ErrReduction), "%v", err)
	assert.Equal(t, `ScatterElementsUpdate-12: reduction "mean" does not apply to bool data`, err.Error())
	err = f("ScatterElements-18", "add", tensor.String)
	require.True(t, errors.Is(err, ops.ErrReduction), "%v", err)
	assert.Equal(t, `ScatterElements-18: reduction "add" does not apply to string data; only none does`, err.Error())
}

// TestReductionNameSuggestions: a misspelt reduction name gets a "did you
// mean" naming the reductions a few typing mistakes away, as operators and
// flags do in the command-line tool; a name another operator spells its
// way gets this operator's name for it (ONNX add and mul, OpenVINO sum and
// prod), and a reduction this version lacks names the versions, else the
// operators, that have it; a name near none gets only the list.
func TestReductionNameSuggestions(t *testing.T) {
	for _, c := range []struct{ op, red, want string }{
		{"ScatterElements-18", "ad", `ScatterElements-18: reduction "ad" is not accepted by ScatterElements-18 (did you mean add?); it takes none, add, mul, min, max`},
		{"ScatterElements-18", "maxx", `ScatterElements-18: reduction "maxx" is not accepted by ScatterElements-18 (did you mean max?); it takes none, add, mul, min, max`},
		{"ScatterElementsUpdate-12", " Prd ", `ScatterElementsUpdate-12: reduction " Prd " is not accepted by ScatterElementsUpdate-12 (did you mean prod?); it takes none, sum, prod, min, max, mean`},
		{"ScatterElementsUpdate-12", "man", `ScatterElementsUpdate-12: reduction "man" is not accepted by ScatterElementsUpdate-12 (did you mean min, max or mean?); it takes none, sum, prod, min, max, mean`},
		{"ScatterElements-16", "max", `ScatterElements-16: reduction "max" is not accepted by ScatterElements-16 (ScatterElements-18 takes max); it takes none, add, mul`},
		{"ScatterND-16", " MIN", `ScatterND-16: reduction " MIN" is not accepted by ScatterND-16 (ScatterND-18 takes min); it takes none, add, mul`},
		{"ScatterElements-18", "sum", `ScatterElements-18: reduction "sum" is not accepted by ScatterElements-18 (did you mean add? ONNX spells sum add); it takes none, add, mul, min, max`},
		{"ScatterND-16", "prod", `ScatterND-16: reduction "prod" is not accepted by ScatterND-16 (did you mean mul? ONNX spells prod mul); it takes none, add, mul`},
		{"ScatterNDUpdate-15", "mul", `ScatterNDUpdate-15: reduction "mul" is not accepted by ScatterNDUpdate-15 (did you mean prod? OpenVINO spells mul prod); it takes none, sum, sub, prod, min, max`},
		{"ScatterElementsUpdate-12", "Add", `ScatterElementsUpdate-12: reduction "Add" is not accepted by ScatterElementsUpdate-12 (did you mean sum? OpenVINO spells add sum); it takes none, sum, prod, min, max, mean`},
		// Names are matched exactly, as the spec spells them: another case,
		// or spaces around, get the spelling meant.
		{"ScatterElements-18", "Add", `ScatterElements-18: reduction "Add" is not accepted by ScatterElements-18 (did you mean add? reduction names are matched exactly, as ONNX's spec spells them); it takes none, add, mul, min, max`},
		{"ScatterElements-18", "ADD", `ScatterElements-18: reduction "ADD" is not accepted by ScatterElements-18 (did you mean add? reduction names are matched exactly, as ONNX's spec spells them); it takes none, add, mul, min, max`},
		{"ScatterND-18", " max ", `ScatterND-18: reduction " max " is not accepted by ScatterND-18 (did you mean max? reduction names are matched exactly, as ONNX's spec spells them); it takes none, add, mul, min, max`},
		{"ScatterNDUpdate-15", "Sum", `ScatterNDUpdate-15: reduction "Sum" is not accepted by ScatterNDUpdate-15 (did you mean sum? reduction names are matched exactly, as OpenVINO's spec spells them); it takes none, sum, sub, prod, min, max`},
		{"ScatterElementsUpdate-12", "MEAN", `ScatterElementsUpdate-12: reduction "MEAN" is not accepted by ScatterElementsUpdate-12 (did you mean mean? reduction names are matched exactly, as OpenVINO's spec spells them); it takes none, sum, prod, min, max, mean`},
		{"ScatterND-16", "None", `ScatterND-16: reduction "None" is not accepted by ScatterND-16 (did you mean none? reduction names are matched exactly, as ONNX's spec spells them); it takes none, add, mul`},
		{"ScatterElements-18", "mean", `ScatterElements-18: reduction "mean" is not accepted by ScatterElements-18 (ScatterElementsUpdate-12 takes mean); it takes none, add, mul, min, max`},
		{"ScatterND-18", "mean", `ScatterND-18: reduction "mean" is not accepted by ScatterND-18 (ScatterElementsUpdate-12 takes mean); it takes none, add, mul, min, max`},
		{"ScatterElements-18", "sub", `ScatterElements-18: reduction "sub" is not accepted by ScatterElements-18 (ScatterNDUpdate-15 takes sub); it takes none, add, mul, min, max`},
		{"ScatterNDUpdate-3", "add", `ScatterNDUpdate-3: reduction "add" is not accepted by ScatterNDUpdate-3 (ScatterNDUpdate-15 takes it as sum); it takes none`},
		{"Scatter-11", "max", `Scatter-11: reduction "max" is not accepted by Scatter-11 (ScatterElementsUpdate-12 and ScatterElements-18 take max); it takes none`},
		{"ScatterElements-16", "average", `ScatterElements-16: reduction "average" is not accepted by ScatterElements-16; it takes none, add, mul`},
		{"ScatterUpdate-3", "sum", `ScatterUpdate-3: reduction "sum" is not accepted by ScatterUpdate-3; it takes none`},
	} {
		data, _ := tensor.New(tensor.Float32, []int{2})
		upd, _ := tensor.New(tensor.Float32, []int{1})
		req := ops.Request{Op: c.op, Reduction: c.red, Data: data, Updates: upd, Indices: index([]int{1}, 0), Axis: tensor.Scalar(0)}
		if op, err := ops.Lookup(c.op); err == nil && op.Kind == ops.KindND {
			req.Indices, req.Axis = index([]int{1, 1}, 0), nil
		}
		_, err := ops.Prepare(req)
		require.ErrorIs(t, err, ops.ErrReduction, "%s %q", c.op, c.red)
		assert.Equal(t, c.want, err.Error(), "%s %q", c.op, c.red)
	}
}

// TestPlanReductionName: a plan's reduction is printed as its operator
// spells it, the name the call was made with.
func TestPlanReductionName(t *testing.T) {
	for _, c := range []struct{ op, red, want string }{
		{"ScatterElements-18", "add", "add"}, {"ScatterElements-18", "mul", "mul"}, {"ScatterNDUpdate-15", "sum", "sum"},
		{"ScatterNDUpdate-15", "prod", "prod"}, {"ScatterElementsUpdate-12", "mean", "mean"}, {"ScatterND-18", "", "none"},
	} {
		data, _ := tensor.New(tensor.Float32, []int{2})
		upd, _ := tensor.New(tensor.Float32, []int{1})
		p, err := ops.Prepare(ops.Request{Op: c.op, Reduction: c.red, Data: data, Updates: upd, Indices: index([]int{1, 1}, 0)})
		if err != nil {
			p, err = ops.Prepare(ops.Request{Op: c.op, Reduction: c.red, Data: data, Updates: upd, Indices: index([]int{1}, 0), Axis: tensor.Scalar(0)})
		}
		require.NoError(t, err, "%s %s", c.op, c.red)
		assert.Equal(t, c.want, p.ReductionName(), "%s %s", c.op, c.red)
	}
}

func TestReductionOrderSensitive(t *testing.T) {
	for _, r := range append(allReductions, ops.Reduction(7)) {
		for _, dt := range append(tensor.DTypes(), tensor.Invalid) {
			want := (r == ops.Sum || r == ops.Sub || r == ops.Prod || r == ops.Mean) &&
				(dt == tensor.Float16 || dt == tensor.BFloat16 || dt == tensor.Float32 || dt == tensor.Float64)
			assert.Equal(t, want, r.OrderSensitive(dt), "%v on %v", r, dt)
		}
	}
}

// TestReductionNeutralBits pins every neutral value of every reduction on
// every dtype it applies to.
func TestReductionNeutralBits(t *testing.T) {
	type row struct{ prod, min, max uint64 }
	want := map[tensor.DType]row{
		tensor.Bool:     {1, 1, 0},
		tensor.Int8:     {1, 0x7f, 0x80},
		tensor.Uint8:    {1, 0xff, 0},
		tensor.Int16:    {1, 0x7fff, 0x8000},
		tensor.Uint16:   {1, 0xffff, 0},
		tensor.Int32:    {1, 0x7fffffff, 0x80000000},
		tensor.Uint32:   {1, 0xffffffff, 0},
		tensor.Int64:    {1, 0x7fffffffffffffff, 0x8000000000000000},
		tensor.Uint64:   {1, 0xffffffffffffffff, 0},
		tensor.Float16:  {0x3c00, 0x7c00, 0xfc00},
		tensor.BFloat16: {0x3f80, 0x7f80, 0xff80},
		tensor.Float32:  {0x3f800000, 0x7f800000, 0xff800000},
		tensor.Float64:  {0x3ff0000000000000, 0x7ff0000000000000, 0xfff0000000000000},
	}
	for _, dt := range tensor.DTypes() {
		w, ok := want[dt]
		if !ok {
			continue
		}
		for _, r := range []ops.Reduction{ops.None, ops.Sum, ops.Sub, ops.Mean} {
			assert.Zero(t, r.NeutralBits(dt), "%v on %v", r, dt)
		}
		assert.Equal(t, w.prod, ops.Prod.NeutralBits(dt), "prod on %v", dt)
		assert.Equal(t, w.min, ops.Min.NeutralBits(dt), "min on %v", dt)
		assert.Equal(t, w.max, ops.Max.NeutralBits(dt), "max on %v", dt)
	}
	// The float values are 1, +inf and -inf.
	assert.Equal(t, uint64(math.Float64bits(1)), ops.Prod.NeutralBits(tensor.Float64))
	assert.Equal(t, uint64(math.Float32bits(float32(math.Inf(1)))), ops.Min.NeutralBits(tensor.Float32))
	assert.Equal(t, tensor.F16From(float32(math.Inf(-1))).Bits(), uint16(ops.Max.NeutralBits(tensor.Float16)))
	assert.Equal(t, tensor.BF16From(1), tensor.BF16(ops.Prod.NeutralBits(tensor.BFloat16)))
	// Dtypes the reductions do not apply to get the formulas' values, and
	// never a panic.
	for _, dt := range []tensor.DType{tensor.Complex64, tensor.Complex128, tensor.String, tensor.Invalid, tensor.DType(200)} {
		for _, r := range append(allReductions, ops.Reduction(7)) {
			assert.NotPanics(t, func() { r.NeutralBits(dt) }, "%v on %v", r, dt)
		}
		assert.Zero(t, ops.None.NeutralBits(dt))
		assert.Equal(t, uint64(1), ops.Prod.NeutralBits(dt))
	}
	assert.Equal(t, uint64(1<<31), ops.Max.NeutralBits(tensor.String))
	assert.Zero(t, ops.Min.NeutralBits(tensor.String))
}

func TestReductionNames(t *testing.T) {
	spelled := map[string]map[ops.Reduction]string{
		"OpenVINO": {ops.None: "none", ops.Sum: "sum", ops.Sub: "sub", ops.Prod: "prod", ops.Min: "min", ops.Max: "max", ops.Mean: "mean"},
		"ONNX":     {ops.None: "none", ops.Sum: "add", ops.Prod: "mul", ops.Min: "min", ops.Max: "max"},
	}
	for _, op := range ops.All() {
		for _, r := range append(allReductions, ops.Reduction(7)) {
			name, ok := op.ReductionName(r)
			_, takes := op.Reductions[name]
			assert.Equal(t, takes, ok, "%s %v", op.Name, r)
			if !ok {
				assert.Empty(t, name)
				continue
			}
			assert.Equal(t, spelled[op.Source][r], name, "%s %v", op.Name, r)
			got, ok := op.ParseReduction(name)
			assert.True(t, ok)
			assert.Equal(t, r, got, "%s %q", op.Name, name)
		}
		assert.Equal(t, len(op.Reductions), len(op.ReductionNames()))
		r, ok := op.ParseReduction("")
		assert.True(t, ok)
		assert.Equal(t, ops.None, r)
	}
	op, err := ops.Lookup("ScatterND-18")
	require.NoError(t, err)
	r, ok := op.ParseReduction("mul")
	assert.True(t, ok)
	assert.Equal(t, ops.Prod, r)
	// The spec's attribute strings are case-sensitive: names are matched
	// exactly, as modes are.
	for _, name := range []string{"Mul", "MUL", " mul", "mul ", "None", " "} {
		_, ok = op.ParseReduction(name)
		assert.False(t, ok, "%q", name)
	}
	_, ok = op.ParseReduction("prod")
	assert.False(t, ok, "ONNX spells it mul")
	_, ok = op.ParseReduction("sub")
	assert.False(t, ok)
	_, ok = op.ReductionName(ops.Mean)
	assert.False(t, ok)
}

// TestOnePassBytes: indices and updates read once, each output element
// the call may change (one per update, at most the whole output) read and
// written once.
func TestOnePassBytes(t *testing.T) {
	f32 := func(shape ...int) *tensor.Tensor { x, _ := tensor.New(tensor.Float32, shape); return x }
	i64 := func(shape ...int) *tensor.Tensor { x, _ := tensor.New(tensor.Int64, shape); return x }
	for _, c := range []struct {
		name string
		req  ops.Request
		want uint64
	}{
		// 16 updates into 4 elements: at most 4 change.
		{"more updates than elements", ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: f32(4), Indices: i64(16), Updates: f32(16)}, 16*8 + 16*4 + 2*4*4},
		// 3 rows of 5 into 10 rows: 15 elements may change.
		{"rows", ops.Request{Op: "ScatterND-18", Data: f32(10, 5), Indices: i64(3, 1), Updates: f32(3, 5)}, 3*8 + 15*4 + 2*15*4},
		{"slices, no indices", ops.Request{Op: "SliceScatter-15", Data: f32(8, 8), Updates: f32(4, 8),
			Start: tensor.MustFromSlice([]int{1}, []int64{0}), Stop: tensor.MustFromSlice([]int{1}, []int64{8}), Step: tensor.MustFromSlice([]int{1}, []int64{2})}, 32*4 + 2*32*4},
		{"no updates", ops.Request{Op: "ScatterND-18", Data: f32(10, 5), Indices: i64(0, 1), Updates: f32(0, 5)}, 0},
	} {
		p, err := ops.PrepareShapes(c.req)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, p.OnePassBytes(), c.name)
	}
}
