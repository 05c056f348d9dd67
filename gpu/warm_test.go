//go:build cgo

package gpu

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/examples"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// TestWarm: after Warm of calls' plans (made from their shapes alone),
// their Execute and their resident calls in place need no pipeline Warm
// did not make, in default and deterministic mode, and give the CPU
// reference's results; Warm reports what it did and saves the cache file.
func TestWarm(t *testing.T) {
	reqs := []ops.Request{
		dupRequest("ScatterElements-18", "add", tensor.Float32, 3000),
		dupRequest("ScatterElements-18", "max", tensor.Int32, 3000),
		dupRequest("ScatterElements-11", "", tensor.Float32, 3000),
		{Op: "ScatterND-18", Reduction: "mul", Data: tensor.MustFromSlice([]int{4, 2}, []int32{1, 2, 3, 4, 5, 6, 7, 8}),
			Indices: tensor.MustFromSlice([]int{3, 1}, []int64{1, -1, 1}), Updates: tensor.MustFromSlice([]int{3, 2}, []int32{2, 3, 4, 5, 6, 7})},
	}
	for _, det := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "deterministic"}[det], func(t *testing.T) {
			dir := t.TempDir()
			b := openTest(t, Options{Deterministic: det, PipelineCacheDir: dir})
			var plans []*ops.Plan
			for _, req := range reqs {
				p, err := ops.PrepareShapes(shapesOnly(req))
				require.NoError(t, err)
				plans = append(plans, p)
			}
			st, err := b.Warm(context.Background(), plans...)
			require.NoError(t, err)
			assert.Positive(t, st.Pipelines)
			assert.LessOrEqual(t, st.Compiled, st.Pipelines)
			assert.Positive(t, st.Took)
			if b.dev.Info().Type == vk.DeviceCPU {
				assert.Equal(t, len(plans), st.Ran, "a CPU device runs each plan once")
			} else {
				assert.Zero(t, st.Ran)
			}
			assert.Equal(t, dir, filepath.Dir(st.CacheFile))
			assert.Equal(t, st.CacheBytes <= 32, st.DriverCache)
			warmed := len(b.pipes)
			assert.Equal(t, st.Pipelines, warmed, "Warm's pipelines are the backend's")

			again, err := b.Warm(context.Background(), plans...)
			require.NoError(t, err)
			assert.Zero(t, again.Compiled, "a second Warm compiles nothing")

			ctx := context.Background()
			for _, req := range reqs {
				want, err := ops.Run(ctx, cpuref.New(), req)
				require.NoError(t, err)
				got, err := ops.Run(ctx, b, req)
				require.NoError(t, err)
				if det || req.Updates.DType != tensor.Float32 || req.Reduction == "" {
					assert.Empty(t, opstest.DiffExact(got, want), req.Op)
				}
				c := residentCall(t, b, req, true)
				require.NoError(t, b.Run(ctx, c))
				if det || req.Updates.DType != tensor.Float32 || req.Reduction == "" {
					assert.Empty(t, opstest.DiffExact(download(t, c.Out), want), req.Op)
				}
			}
			assert.Equal(t, warmed, len(b.pipes), "the calls needed pipelines Warm did not make")
		})
	}
}

// TestWarmErrors: a done context, a plan the device cannot run and a
// closed backend.
func TestWarmErrors(t *testing.T) {
	b := openTest(t, Options{})
	p, err := ops.PrepareShapes(shapesOnly(dupRequest("ScatterElements-18", "add", tensor.Int32, 100)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = b.Warm(ctx, p)
	assert.ErrorIs(t, err, context.Canceled)

	b.noShaderFloat64 = true
	f64, err := ops.PrepareShapes(shapesOnly(dupRequest("ScatterElements-18", "add", tensor.Float64, 100)))
	require.NoError(t, err)
	_, err = b.Warm(context.Background(), f64)
	assert.ErrorIs(t, err, ops.ErrUnsupported)
	b.noShaderFloat64 = false

	c := openTest(t, Options{})
	require.NoError(t, c.Close())
	_, err = c.Warm(context.Background(), p)
	assert.ErrorIs(t, err, ErrClosed)
	var nilB *Backend
	_, err = nilB.Warm(context.Background(), p)
	assert.ErrorIs(t, err, ErrClosed)
}

// shapesOnly returns req with data, indices and updates as tensors of
// their dtypes and shapes without payloads, as `gpuscatter plan` and
// `warm` read them from headers.
func shapesOnly(req ops.Request) ops.Request {
	for _, x := range []**tensor.Tensor{&req.Data, &req.Indices, &req.Updates} {
		if *x != nil {
			*x = &tensor.Tensor{DType: (*x).DType, Shape: (*x).Shape}
		}
	}
	return req
}

// TestZeroedInputsAreValid: the inputs Warm runs a plan on are valid for
// every spec example's call: the CPU reference runs them without error,
// and their indices spread over the data.
func TestZeroedInputsAreValid(t *testing.T) {
	for _, ex := range examples.All() {
		p, err := ops.PrepareShapes(shapesOnly(ex.Request))
		if err != nil {
			continue // an example of an error
		}
		q, out, err := zeroed(p)
		require.NoError(t, err, ex.Name)
		assert.NoError(t, cpuref.New().Execute(context.Background(), q, out), ex.Name)
	}
	p, err := ops.PrepareShapes(shapesOnly(dupRequest("ScatterElements-18", "add", tensor.Float32, 100)))
	require.NoError(t, err)
	q, _, err := zeroed(p)
	require.NoError(t, err)
	assert.Equal(t, int64(99), tensor.View[int64](q.Indices)[399], "index k is k modulo the dimension")
}
