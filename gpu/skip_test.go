//go:build cgo

package gpu

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// skipCases are calls with bad indices, one per operator family, whose
// results with SkipBadIndices hold every other update.
func skipCases() []ops.Request {
	f32 := func(shape []int, v ...float32) *tensor.Tensor { return tensor.MustFromSlice(shape, v) }
	i32 := func(shape []int, v ...int32) *tensor.Tensor { return tensor.MustFromSlice(shape, v) }
	return []ops.Request{
		{Op: "ScatterUpdate-3", Data: f32([]int{3, 2}, 1, 2, 3, 4, 5, 6), Indices: tensor.Ints(2, 3, 0),
			Updates: f32([]int{3, 2}, 10, 20, 30, 40, 50, 60), Axis: tensor.Scalar(0)},
		{Op: "ScatterNDUpdate-15", Data: i32([]int{2, 2}, 0, 0, 0, 0), Reduction: "sum",
			Indices: tensor.MustFromSlice([]int{3, 2}, []int64{0, 1, 1, 5, 0, 1}), Updates: i32([]int{3}, 1, 2, 3)},
		{Op: "ScatterND-18", Data: f32([]int{4}, 1, 2, 3, 4), Reduction: "max",
			Indices: tensor.MustFromSlice([]int{3, 1}, []int64{1, -9, 1}), Updates: f32([]int{3}, 7, 8, 5)},
		{Op: "ScatterElementsUpdate-12", Data: f32([]int{2}, 10, 20), Reduction: "mean", Axis: tensor.Scalar(0),
			Indices: tensor.Ints(0, -7, 0), Updates: f32([]int{3}, 4, 100, 7)},
		{Op: "ScatterElements-18", Data: f32([]int{3}, 0, 0, 0), Indices: tensor.Ints(2, 1, 2, 9),
			Updates: f32([]int{4}, 1, 2, 3, 4)},
		{Op: "Scatter-9", Data: f32([]int{2, 2}, 0, 0, 0, 0), Indices: tensor.MustFromSlice([]int{1, 2}, []int64{1, 2}),
			Updates: f32([]int{1, 2}, 5, 6), Axis: tensor.Scalar(0)},
		{Op: "TensorScatter-24", Data: f32([]int{2, 4, 1}, 0, 0, 0, 0, 0, 0, 0, 0), Indices: tensor.Ints(3, 1),
			Updates: f32([]int{2, 2, 1}, 1, 2, 3, 4)},
	}
}

// TestSkipBadIndices runs skipCases with SkipBadIndices through Execute
// and on resident tensors (in place, into another output, and in a batch
// whose next call reads the result), against the CPU reference: the same
// result and the same error.
func TestSkipBadIndices(t *testing.T) {
	b := openTest(t, Options{})
	ctx := context.Background()
	for _, req := range skipCases() {
		t.Run(req.Op, func(t *testing.T) {
			req.SkipBadIndices = true
			want, werr := ops.Run(ctx, cpuref.New(), req)
			require.ErrorIs(t, werr, ops.ErrIndexRange)
			require.NotNil(t, want)
			naive, nerr := opstest.Naive(req)
			require.Equal(t, werr.Error(), nerr.Error())
			require.Empty(t, opstest.DiffExact(want, naive), "cpuref against Naive")

			got, err := ops.Run(ctx, b, req)
			require.ErrorIs(t, err, ops.ErrIndexRange)
			assert.Equal(t, werr.Error(), err.Error())
			assert.Empty(t, opstest.DiffExact(got, want), "Execute")

			for _, inPlace := range []bool{true, false} {
				rc := residentCall(t, b, req, inPlace)
				err := b.Run(ctx, rc)
				require.ErrorIs(t, err, ops.ErrIndexRange, "in place %v", inPlace)
				assert.Equal(t, werr.Error(), err.Error(), "in place %v", inPlace)
				assert.Empty(t, opstest.DiffExact(download(t, rc.Out), want), "resident, in place %v", inPlace)
				assert.Empty(t, opstest.DiffExact(download(t, rc.Data), map[bool]*tensor.Tensor{true: want, false: req.Data}[inPlace]))
			}

			// In a batch, the call after reads the skipping call's result.
			c1 := residentCall(t, b, req, true)
			c2 := c1
			c2.SkipBadIndices = false
			c2.Op, c2.Reduction, c2.Axis, c2.Mode = "SliceScatter-15", "", nil, ""
			c2.Indices = nil
			c2.Start, c2.Stop, c2.Step = tensor.Ints(0), tensor.Ints(1), tensor.Ints(1)
			c2.Updates = upload(t, b, firstRow(want))
			bt := b.NewBatch()
			require.NoError(t, bt.Add(c1))
			require.NoError(t, bt.Add(c2))
			err = bt.submitWait(ctx)
			require.ErrorIs(t, err, ops.ErrIndexRange)
			assert.Equal(t, "batch call 1 of 2: "+werr.Error(), err.Error())
			assert.Empty(t, opstest.DiffExact(download(t, c1.Out), want), "the batch")
		})
	}
}

// firstRow returns a copy of t's first slice along axis 0, with that
// axis kept (length 1).
func firstRow(t *tensor.Tensor) *tensor.Tensor {
	shape := append([]int{1}, t.Shape[1:]...)
	r, _ := tensor.New(t.DType, shape)
	copy(r.Data, t.Data)
	return r
}

// TestSkipBadIndicesPlans: in place with SkipBadIndices, no pass checks
// the indices before the scatter: an atomic reduction is its Execute plan,
// one dispatch, and a linear TensorScatter with many batch entries loses
// its check pass. The in-order fold refuses such calls, naming the option.
func TestSkipBadIndicesPlans(t *testing.T) {
	b := openTest(t, Options{})
	prep := func(req ops.Request) *ops.Plan {
		p, err := ops.Prepare(req)
		require.NoError(t, err)
		return p
	}
	sum := ops.Request{Op: "ScatterND-18", Reduction: "add", Data: tensor.MustFromSlice([]int{8}, make([]int32, 8)),
		Indices: tensor.MustFromSlice([]int{300, 1}, make([]int64, 300)), Updates: tensor.MustFromSlice([]int{300}, make([]int32, 300))}
	plain, err := b.NeedsInPlace(prep(sum))
	require.NoError(t, err)
	sum.SkipBadIndices = true
	skip, err := b.NeedsInPlace(prep(sum))
	require.NoError(t, err)
	ex, err := b.Needs(prep(sum))
	require.NoError(t, err)
	assert.Equal(t, 2, plain.Dispatches, "a check, then the scatter")
	assert.Equal(t, 1, skip.Dispatches, "the scatter alone")
	assert.Equal(t, ex.TrafficBytes, skip.TrafficBytes)

	batch := laterMax + 1 // more than the scatter checks itself
	cache := ops.Request{Op: "TensorScatter-24", Data: tensor.MustFromSlice([]int{batch, 4, 1}, make([]float32, batch*4)),
		Indices: tensor.MustFromSlice([]int{batch}, make([]int64, batch)), Updates: tensor.MustFromSlice([]int{batch, 1, 1}, make([]float32, batch))}
	plain, err = b.NeedsInPlace(prep(cache))
	require.NoError(t, err)
	cache.SkipBadIndices = true
	skip, err = b.NeedsInPlace(prep(cache))
	require.NoError(t, err)
	assert.Equal(t, plain.Dispatches-1, skip.Dispatches, "no check pass")

	det := openTest(t, Options{Deterministic: true})
	fsum := ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: tensor.MustFromSlice([]int{4}, make([]float32, 4)),
		Indices: tensor.Ints(0, 9, 1), Updates: tensor.MustFromSlice([]int{3}, []float32{1, 2, 3}), SkipBadIndices: true}
	_, err = det.NeedsInPlace(prep(fsum))
	require.ErrorIs(t, err, ops.ErrUnsupported)
	assert.Contains(t, err.Error(), "SkipBadIndices on a resident tensor with reduction add on float32 data in deterministic mode")
	err = det.Run(context.Background(), residentCall(t, det, fsum, true))
	require.ErrorIs(t, err, ops.ErrUnsupported)
	// Execute folds in order and skips by running again.
	want, werr := ops.Run(context.Background(), cpuref.New(), fsum)
	got, err := ops.Run(context.Background(), det, fsum)
	require.True(t, errors.Is(err, ops.ErrIndexRange) && err.Error() == werr.Error(), "%v", err)
	assert.Empty(t, opstest.DiffExact(got, want))
}
