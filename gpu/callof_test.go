//go:build cgo

package gpu

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestCallOfCarriesEveryAttribute: every field of ops.Request but the
// three tensors a Call holds on the device reaches the Call, so that a
// request run on resident tensors keeps its attributes (a field added to
// Request and forgotten here fails the test).
func TestCallOfCarriesEveryAttribute(t *testing.T) {
	yes := false
	req := ops.Request{Op: "TensorScatter-24", Axis: tensor.Scalar(int64(-2)), Start: tensor.Ints(1), Stop: tensor.Ints(2),
		Step: tensor.Ints(3), Axes: tensor.Ints(0), Reduction: "sum", UseInitVal: &yes, Mode: "circular", SkipBadIndices: true,
		Data: &tensor.Tensor{}, Indices: &tensor.Tensor{}, Updates: &tensor.Tensor{}}
	c := CallOf(req)
	rv, cv := reflect.ValueOf(req), reflect.ValueOf(c)
	for i := 0; i < rv.NumField(); i++ {
		name := rv.Type().Field(i).Name
		f := cv.FieldByName(name)
		require.True(t, f.IsValid(), "Call has no field %s", name)
		switch name {
		case "Data", "Indices", "Updates":
			assert.True(t, f.IsNil(), "%s: the caller's resident tensor, not set by CallOf", name)
		default:
			assert.False(t, rv.Field(i).IsZero(), "%s: the test sets every attribute", name)
			assert.Equal(t, rv.Field(i).Interface(), f.Interface(), name)
		}
	}
}
