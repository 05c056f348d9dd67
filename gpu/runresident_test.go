//go:build cgo

package gpu

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestRunResident: the resident call gives cpuref's result after repeats
// timed runs, each on data restored, closes every tensor it made, and
// refuses a request without data.
func TestRunResident(t *testing.T) {
	ctx := context.Background()
	b := openTest(t, Options{})
	req := ops.Request{Op: "ScatterElements-18", Reduction: "add",
		Data:    tensor.MustFromSlice([]int{4}, []float32{1, 2, 3, 4}),
		Indices: tensor.MustFromSlice([]int{5}, []int64{0, 3, 0, 1, 3}),
		Updates: tensor.MustFromSlice([]int{5}, []float32{10, 20, 30, 40, 50}),
		Axis:    tensor.Scalar(int64(0))}
	want, err := ops.Run(ctx, cpuref.New(), req)
	require.NoError(t, err)
	out, err := tensor.New(tensor.Float32, []int{4})
	require.NoError(t, err)
	times, err := b.RunResident(ctx, req, 3, out)
	require.NoError(t, err)
	assert.Len(t, times, 3)
	assert.True(t, tensor.Equal(want, out), "got %v, want %v (data is restored before each run)", out, want)
	assert.Empty(t, b.resident, "every tensor is closed")

	req.Data = nil
	_, err = b.RunResident(ctx, req, 1, out)
	assert.ErrorIs(t, err, ops.ErrMissingInput)
}
