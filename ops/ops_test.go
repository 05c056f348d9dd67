package ops_test

import (
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestValidationTable runs every row of opstest.ValidationCases through
// Prepare and, for the rules about index values, through Plan.IndexAt in
// row-major order (the first bad index is the one reported).
func TestValidationTable(t *testing.T) {
	cases := opstest.ValidationCases()
	names := map[string]bool{}
	for _, c := range cases {
		require.False(t, names[c.Name], "two rows are named %q", c.Name)
		names[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			p, err := ops.Prepare(c.Request)
			if c.Err != nil && !c.AtExecute {
				opstest.RequireCaseError(t, c, err)
				assert.Nil(t, p)
				return
			}
			require.NoError(t, err)
			var first error // every index is checked, with or without updates
			for pos := 0; pos < p.NumIndices() && first == nil; pos++ {
				_, first = p.IndexAt(pos)
			}
			if c.Err == nil {
				require.NoError(t, first, "every index is in range")
				return
			}
			opstest.RequireCaseError(t, c, first)
		})
	}
}

// TestEveryOperatorHasValidationRows keeps the table complete as operators
// are added: each needs accepted and rejected rows, and each operator with
// indices a row for an out-of-range index.
func TestEveryOperatorHasValidationRows(t *testing.T) {
	accepted, rejected, index := map[string]int{}, map[string]int{}, map[string]int{}
	for _, c := range opstest.ValidationCases() {
		op := c.Name[:strings.IndexByte(c.Name, '/')]
		switch {
		case c.Err == nil:
			accepted[op]++
		case c.AtExecute:
			index[op]++
		default:
			rejected[op]++
		}
	}
	for _, op := range ops.All() {
		assert.Positive(t, accepted[op.Name], "%s has no accepting row", op.Name)
		assert.Positive(t, rejected[op.Name], "%s has no rejecting row", op.Name)
		if op.TakesIndices() {
			assert.Positive(t, index[op.Name], "%s has no out-of-range index row", op.Name)
		}
	}
}

// TestRegistryMatchesREADME checks ops.All against the table "Every operator
// and version we accept" of specs/README.md.
func TestRegistryMatchesREADME(t *testing.T) {
	type row struct {
		kind         ops.Kind
		reductions   string
		negative     bool
		axisRequired bool
		anyDType     bool
	}
	const none, nd15, el12, onnx16, onnx18 = "none", "max min none prod sub sum", "max mean min none prod sum", "add mul none", "add max min mul none"
	want := map[string]row{
		"ScatterUpdate-3":          {ops.KindAxis, none, false, true, false},
		"ScatterNDUpdate-3":        {ops.KindND, none, false, false, false},
		"ScatterNDUpdate-15":       {ops.KindND, nd15, true, false, false},
		"ScatterElementsUpdate-3":  {ops.KindElements, none, false, true, false},
		"ScatterElementsUpdate-12": {ops.KindElements, el12, true, true, false},
		"SliceScatter-15":          {ops.KindSlice, none, false, false, false},
		"Scatter-9":                {ops.KindElements, none, false, false, true},
		"Scatter-11":               {ops.KindElements, none, true, false, true},
		"ScatterElements-11":       {ops.KindElements, none, true, false, true},
		"ScatterElements-13":       {ops.KindElements, none, true, false, true},
		"ScatterElements-16":       {ops.KindElements, onnx16, true, false, true},
		"ScatterElements-18":       {ops.KindElements, onnx18, true, false, true},
		"ScatterND-11":             {ops.KindND, none, true, false, true},
		"ScatterND-13":             {ops.KindND, none, true, false, true},
		"ScatterND-16":             {ops.KindND, onnx16, true, false, true},
		"ScatterND-18":             {ops.KindND, onnx18, true, false, true},
		"TensorScatter-24":         {ops.KindCache, none, false, false, true},
	}
	all := ops.All()
	require.Len(t, all, len(want))
	for _, op := range all {
		w, ok := want[op.Name]
		require.True(t, ok, "%s is not in the README", op.Name)
		names := op.ReductionNames()
		sort.Strings(names)
		assert.Equal(t, w.reductions, strings.Join(names, " "), op.Name)
		assert.Equal(t, w.kind, op.Kind, op.Name)
		assert.Equal(t, w.negative, op.NegativeIndices, op.Name)
		assert.Equal(t, w.axisRequired, op.AxisRequired, op.Name)
		assert.Equal(t, w.anyDType, op.AnyDType, op.Name)
		assert.Equal(t, op.Kind != ops.KindSlice, op.TakesIndices(), op.Name)
		assert.Equal(t, op.Kind == ops.KindSlice, op.TakesSlice(), op.Name)
		assert.Equal(t, op.Kind == ops.KindAxis || op.Kind == ops.KindElements || op.Kind == ops.KindCache, op.TakesAxis(), op.Name)
		assert.Equal(t, op.Kind == ops.KindCache, op.TakesMode(), op.Name)
		assert.Equal(t, op.Kind == ops.KindCache, op.IndicesOptional, op.Name)
		wantIdx := tensor.Invalid // any integer type
		if op.Kind == ops.KindCache {
			wantIdx = tensor.Int64
		}
		assert.Equal(t, wantIdx, op.IndicesDType, op.Name)
		wantNames := []string{"data", "indices", "updates", "axis"}
		if op.Kind == ops.KindCache {
			wantNames = []string{"past_cache", "write_indices", "update", "axis"}
		}
		for i, in := range []string{"data", "indices", "updates", "axis"} {
			assert.Equal(t, wantNames[i], op.InputName(in), op.Name)
		}
		assert.Equal(t, op.Name == "ScatterElementsUpdate-12", op.TakesUseInitVal(), op.Name)
		assert.Equal(t, op.Name, op.Family+"-"+itoa(op.Version))
		if op.AnyDType {
			assert.Equal(t, "ONNX", op.Source)
		} else {
			assert.Equal(t, "OpenVINO", op.Source)
		}
	}
	// The reductions keep the meaning of their names across sources.
	nd15op, _ := ops.Lookup("ScatterNDUpdate-15")
	onnx, _ := ops.Lookup("ScatterND-18")
	assert.Equal(t, ops.Sum, nd15op.Reductions["sum"])
	assert.Equal(t, ops.Sum, onnx.Reductions["add"])
	assert.Equal(t, ops.Prod, onnx.Reductions["mul"])
	assert.Equal(t, ops.Sub, nd15op.Reductions["sub"])
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestLookupIsCaseInsensitive(t *testing.T) {
	for name, want := range map[string]string{
		"scatterndupdate-15":      "ScatterNDUpdate-15",
		"SCATTERELEMENTS-18":      "ScatterElements-18",
		"sliceScatter-15":         "SliceScatter-15",
		" ScatterND-11 ":          "ScatterND-11",
		"scatter-9":               "Scatter-9",
		"ScatterElementsUpdate-3": "ScatterElementsUpdate-3",
	} {
		op, err := ops.Lookup(name)
		require.NoError(t, err, name)
		assert.Equal(t, want, op.Name)
	}
}

func TestLookupRejectsUnknownOperators(t *testing.T) {
	for _, name := range []string{"ScatterUpdate-4", "ScatterND", "Scatter-10", "ScatterElements-12", "Gather-1", "", "ScatterNDUpdate-15x"} {
		op, err := ops.Lookup(name)
		require.ErrorIs(t, err, ops.ErrUnknownOp, name)
		assert.Nil(t, op)
		var e *ops.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, "op", e.Input)
		assert.Empty(t, e.Op, "no operator to name")
		assert.Contains(t, err.Error(), `op "`+name+`" is not an operator gpuscatter runs`)
		for _, o := range ops.All() {
			assert.Contains(t, err.Error(), o.Name, "the message lists the operators")
		}
	}
}

func TestErrorTextNamesOperatorAndInput(t *testing.T) {
	_, err := ops.Prepare(ops.Request{Op: "ScatterUpdate-3", Data: tensor.Ints(1, 2), Indices: tensor.Ints(0),
		Updates: tensor.Ints(5), Axis: tensor.Scalar(3)})
	require.ErrorIs(t, err, ops.ErrAxis)
	assert.Equal(t, "ScatterUpdate-3: axis = 3 is out of range [-1, 0] for data of rank 1", err.Error())
	var e *ops.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, ops.ErrAxis, errors.Unwrap(e))
	assert.Equal(t, "ScatterUpdate-3", e.Op)
	assert.Equal(t, "axis", e.Input)
	assert.Equal(t, "unknown operator", ops.ErrUnknownOp.Error())
}

func TestIndexAtNormalisesNegativeIndices(t *testing.T) {
	p, err := ops.Prepare(ops.Request{Op: "ScatterNDUpdate-15", Data: tensor.MustFromSlice([]int{4}, []float32{1, 2, 3, 4}),
		Indices: tensor.MustFromSlice([]int{5, 1}, []int32{0, 2, -3, -3, -4}), Updates: tensor.MustFromSlice([]int{5}, []float32{1, 2, 3, 4, 5})})
	require.NoError(t, err)
	var got []int
	for pos := 0; pos < p.NumIndices(); pos++ {
		v, err := p.IndexAt(pos)
		require.NoError(t, err)
		got = append(got, v)
	}
	assert.Equal(t, []int{0, 2, 1, 1, 0}, got)
	assert.Equal(t, 1, p.TupleLen)
	lo, hi := p.IndexRange(0)
	assert.Equal(t, [2]int64{-4, 3}, [2]int64{lo, hi})
}

func TestCheckOutput(t *testing.T) {
	p, err := ops.Prepare(ops.Request{Op: "ScatterND-11", Data: tensor.Ints(1, 2, 3), Indices: tensor.MustFromSlice([]int{1, 1}, []int64{0}),
		Updates: tensor.Ints(9)})
	require.NoError(t, err)
	good, _ := tensor.New(tensor.Int64, []int{3})
	require.NoError(t, p.CheckOutput(good))
	for name, out := range map[string]*tensor.Tensor{
		"nil":         nil,
		"wrong dtype": tensor.MustFromSlice([]int{3}, []int32{0, 0, 0}),
		"wrong shape": tensor.Ints(0, 0),
		"malformed":   {DType: tensor.Int64, Shape: []int{3}, Data: make([]byte, 5)},
	} {
		err := p.CheckOutput(out)
		require.ErrorIs(t, err, ops.ErrOutput, name)
		var e *ops.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, "out", e.Input)
		assert.Contains(t, e.Msg, "out")
	}
}

// shapeOnly returns a payload-less copy of x (nil stays nil).
func shapeOnly(x *tensor.Tensor) *tensor.Tensor {
	if x == nil {
		return nil
	}
	return &tensor.Tensor{DType: x.DType, Shape: x.Shape}
}

// TestPrepareShapesAgreesWithPrepare: on every row of the validation
// table whose data, indices and updates are well formed, PrepareShapes on
// payload-less copies gives Prepare's plan or Prepare's error.
func TestPrepareShapesAgreesWithPrepare(t *testing.T) {
	ran := 0
	for _, c := range opstest.ValidationCases() {
		req := c.Request
		wellFormed := true
		for _, x := range []*tensor.Tensor{req.Data, req.Indices, req.Updates} {
			wellFormed = wellFormed && (x == nil || x.Check() == nil)
		}
		if !wellFormed {
			continue
		}
		ran++
		want, wantErr := ops.Prepare(req)
		desc := req
		desc.Data, desc.Indices, desc.Updates = shapeOnly(req.Data), shapeOnly(req.Indices), shapeOnly(req.Updates)
		got, err := ops.PrepareShapes(desc)
		if wantErr != nil {
			require.Error(t, err, c.Name)
			assert.Equal(t, wantErr.Error(), err.Error(), c.Name)
			continue
		}
		require.NoError(t, err, c.Name)
		got.Data, got.Indices, got.Updates = want.Data, want.Indices, want.Updates
		assert.Equal(t, want, got, c.Name)
	}
	require.Greater(t, ran, 300)

	// Payloads are not read, but shapes and dtypes still are.
	_, err := ops.PrepareShapes(ops.Request{Op: "ScatterElements-18",
		Data:    &tensor.Tensor{DType: tensor.Float32, Shape: []int{-1}},
		Indices: &tensor.Tensor{DType: tensor.Int64, Shape: []int{1}},
		Updates: &tensor.Tensor{DType: tensor.Float32, Shape: []int{1}}})
	require.ErrorIs(t, err, ops.ErrInvalidTensor)
	_, err = ops.PrepareShapes(ops.Request{Op: "ScatterElements-18",
		Data:    &tensor.Tensor{DType: tensor.Float32, Shape: []int{4}},
		Indices: &tensor.Tensor{DType: tensor.Float32, Shape: []int{1}},
		Updates: &tensor.Tensor{DType: tensor.Float32, Shape: []int{1}}})
	require.ErrorIs(t, err, ops.ErrDType)
}

// TestCheckMode: TensorScatter-24's mode is linear or circular, matched
// exactly as ONNX attribute strings are; a mode given to another operator
// is an unexpected attribute.
func TestCheckMode(t *testing.T) {
	ts, err := ops.Lookup("TensorScatter-24")
	require.NoError(t, err)
	for _, m := range []string{ops.ModeLinear, ops.ModeCircular} {
		assert.NoError(t, ts.CheckMode(m), m)
	}
	for _, m := range []string{"", "Circular", "LINEAR", " linear", "circular ", "ring"} {
		err := ts.CheckMode(m)
		require.ErrorIs(t, err, ops.ErrMode, "%q", m)
		assert.Contains(t, err.Error(), "it takes linear or circular, matched exactly", "%q", m)
	}
	assert.Equal(t, `TensorScatter-24: mode "Circular" is not accepted by TensorScatter-24 (did you mean circular?); `+
		`it takes linear or circular, matched exactly (ONNX attribute strings are case-sensitive)`, ts.CheckMode("Circular").Error())
	nd, err := ops.Lookup("ScatterND-18")
	require.NoError(t, err)
	for _, m := range []string{"", "linear"} {
		require.ErrorIs(t, nd.CheckMode(m), ops.ErrUnexpectedInput, "%q", m)
	}
}

// TestSpecInputs: each operator names its inputs and attributes as its
// spec does, each carried by a field of Request; TensorScatter-24's
// past_cache, update and write_indices are data, updates and indices.
func TestSpecInputs(t *testing.T) {
	fields := map[string]bool{}
	rt := reflect.TypeOf(ops.Request{})
	for i := 0; i < rt.NumField(); i++ {
		fields[rt.Field(i).Name] = true
	}
	for _, op := range ops.All() {
		for _, in := range op.SpecInputs() {
			assert.True(t, fields[in.Field], "%s's %s: Request has no field %s", op.Name, in.Name, in.Field)
		}
	}
	for name, want := range map[string][]ops.SpecInput{
		"TensorScatter-24": {{"past_cache", "Data"}, {"update", "Updates"}, {"write_indices", "Indices"}, {"axis", "Axis"}, {"mode", "Mode"}},
		"ScatterElementsUpdate-12": {{"data", "Data"}, {"indices", "Indices"}, {"updates", "Updates"}, {"axis", "Axis"},
			{"reduction", "Reduction"}, {"use_init_val", "UseInitVal"}},
		"SliceScatter-15": {{"data", "Data"}, {"updates", "Updates"}, {"start", "Start"}, {"stop", "Stop"}, {"step", "Step"}, {"axes", "Axes"}},
		"ScatterND-11":    {{"data", "Data"}, {"indices", "Indices"}, {"updates", "Updates"}},
	} {
		op, err := ops.Lookup(name)
		require.NoError(t, err)
		assert.Equal(t, want, op.SpecInputs(), name)
	}
}
