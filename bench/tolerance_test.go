package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

func TestBoundsOnlyForReorderableFloatReductions(t *testing.T) {
	req := ops.Request{
		Op:        "ScatterND-16",
		Reduction: "add",
		Data:      tensor.MustFromSlice([]int{3}, []float32{1, -2, 3}),
		Indices:   tensor.MustFromSlice([]int{2, 1}, []int64{1, 1}),
		Updates:   tensor.MustFromSlice([]int{2}, []float32{4, -8}),
	}
	b, err := Bounds(context.Background(), req, 0)
	require.NoError(t, err)
	// Element 1 folds -2, 4 and -8: |-2| + |4| + |-8| = 14.
	assert.InDeltaSlice(t, []float64{1 * DefaultTolerance, 14 * DefaultTolerance, 3 * DefaultTolerance}, b, 1e-12)

	none := req
	none.Reduction = ""
	b, err = Bounds(context.Background(), none, 0)
	require.NoError(t, err)
	assert.Nil(t, b, "reduction none is exact")

	ints := req
	ints.Data = tensor.MustFromSlice([]int{3}, []int32{1, 2, 3})
	ints.Updates = tensor.MustFromSlice([]int{2}, []int32{4, 8})
	b, err = Bounds(context.Background(), ints, 0)
	require.NoError(t, err)
	assert.Nil(t, b, "integer sums are exact")
}
