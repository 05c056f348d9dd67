//go:build cgo

package gpubench

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/testdevice"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// openTest opens the default device with validation; the cleanup closes
// it and checks that the layer said nothing and no Vulkan object is left.
// GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1 opens it with NoUnifiedMemory, as a
// discrete GPU (package testdevice).
func openTest(t *testing.T, opts gpu.Options) Backend {
	t.Helper()
	opts.Validation, opts.PipelineCacheDir = true, "off"
	opts.NoUnifiedMemory = testdevice.Staged(t, opts.NoUnifiedMemory)
	g, err := gpu.Open(opts)
	if err != nil {
		t.Fatalf("no usable Vulkan device (install mesa-vulkan-drivers and vulkan-validationlayers for lavapipe): %v", err)
	}
	b := Of(g)
	t.Cleanup(func() {
		dev := b.Device()
		assert.NoError(t, b.Close())
		assert.Empty(t, b.ValidationMessages(), "validation messages")
		assert.Empty(t, dev.LiveObjects(), "Vulkan objects alive after Close")
	})
	return b
}

// addRequest is a ScatterElements-18 add of 5 updates into 4 floats, two
// targets meeting two updates each.
func addRequest() ops.Request {
	return ops.Request{Op: "ScatterElements-18", Reduction: "add",
		Data:    tensor.MustFromSlice([]int{4}, []float32{1, 2, 3, 4}),
		Indices: tensor.MustFromSlice([]int{5}, []int64{0, 3, 0, 1, 3}),
		Updates: tensor.MustFromSlice([]int{5}, []float32{10, 20, 30, 40, 50}),
		Axis:    tensor.Scalar(int64(0))}
}

// TestRunResident: the resident call gives cpuref's result after repeats
// timed runs, each on data restored, releases every tensor it made, and
// refuses a request without data.
func TestRunResident(t *testing.T) {
	ctx := context.Background()
	b := openTest(t, gpu.Options{MaxPoolBytes: -1})
	req := addRequest()
	want, err := ops.Run(ctx, cpuref.New(), req)
	require.NoError(t, err)
	out, err := tensor.New(tensor.Float32, []int{4})
	require.NoError(t, err)
	held := b.Device().Memory().Held
	times, err := b.RunResident(ctx, req, 3, out)
	require.NoError(t, err)
	assert.Len(t, times, 3)
	assert.True(t, tensor.Equal(want, out), "got %v, want %v (data is restored before each run)", out, want)
	assert.Equal(t, held, b.Device().Memory().Held, "every tensor is released")

	req.Data = nil
	_, err = b.RunResident(ctx, req, 1, out)
	assert.ErrorIs(t, err, ops.ErrMissingInput)
	_, err = b.RunResidentBatch(ctx, addRequest(), 0, 1, out)
	assert.Error(t, err, "a batch of no call")
}

// TestRunResidentBatch1000 runs the bench's resident batch of 1000 small
// ScatterND calls and pins its round trips: 1 submit, 1 wait and 2
// transfer pieces (the parameters, the error words), with unified memory
// and with staging; it logs the time per call. The result is cpuref's
// (each call writes the same rows, in place).
func TestRunResidentBatch1000(t *testing.T) {
	const n = 1000
	ctx := context.Background()
	data, err := tensor.New(tensor.Float32, []int{64, 4})
	require.NoError(t, err)
	req := ops.Request{Op: "ScatterND-18", Data: data,
		Indices: tensor.MustFromSlice([]int{4, 1}, []int64{3, 17, 40, 63}),
		Updates: tensor.MustFromSlice([]int{4, 4}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})}
	want, err := ops.Run(ctx, cpuref.New(), req)
	require.NoError(t, err)
	for _, staged := range []bool{false, true} {
		t.Run(fmt.Sprintf("staged=%v", staged), func(t *testing.T) {
			b := openTest(t, gpu.Options{NoUnifiedMemory: staged})
			out, err := tensor.New(req.Data.DType, req.Data.Shape)
			require.NoError(t, err)
			times, err := b.RunResidentBatch(ctx, req, n, 2, out)
			require.NoError(t, err)
			require.Len(t, times, 2)
			s, w, p := b.LastRoundTrips()
			t.Logf("batch of %d: %d submits, %d waits, %d pieces, %v per call", n, s, w, p, times[1]/n)
			assert.Equal(t, []int{1, 1, 2}, []int{s, w, p})
			assert.Empty(t, opstest.DiffExact(out, want))
		})
	}
}

// TestPlanTraffic: the figures are Needs' for the same plan.
func TestPlanTraffic(t *testing.T) {
	b := openTest(t, gpu.Options{})
	p, err := ops.Prepare(addRequest())
	require.NoError(t, err)
	need, err := b.Needs(p)
	require.NoError(t, err)
	passes, dispatches, traffic, memory, plan, err := b.PlanTraffic(p)
	require.NoError(t, err)
	assert.Equal(t, len(need.Passes), passes)
	assert.Equal(t, need.Dispatches, dispatches)
	assert.Positive(t, passes)
	assert.Equal(t, need.TrafficBytes, traffic)
	assert.Equal(t, need.DeviceBytes, memory)
	assert.Equal(t, need.Plan, plan)
}

// TestCopyTime: a copy on a device with timestamps takes some time; the
// copy of nothing none.
func TestCopyTime(t *testing.T) {
	b := openTest(t, gpu.Options{})
	if !b.Device().Capabilities().Timestamps {
		_, err := b.CopyTime(context.Background(), 1<<20, 1)
		require.ErrorIs(t, err, ops.ErrUnsupported)
		return
	}
	d, err := b.CopyTime(context.Background(), 1<<20, 3)
	require.NoError(t, err)
	assert.Positive(t, d)
	d, err = b.CopyTime(context.Background(), 0, 3)
	require.NoError(t, err)
	assert.Zero(t, d)
}

// TestClosed: on a nil or closed Backend every method fails with
// gpu.ErrClosed, or returns nothing, without a panic.
func TestClosed(t *testing.T) {
	ctx := context.Background()
	opened, err := gpu.Open(gpu.Options{PipelineCacheDir: "off"})
	require.NoError(t, err)
	require.NoError(t, opened.Close())
	p, err := ops.Prepare(addRequest())
	require.NoError(t, err)
	out, err := tensor.New(tensor.Float32, []int{4})
	require.NoError(t, err)
	for name, b := range map[string]Backend{"nil": Of(nil), "zero": {}, "closed": Of(opened)} {
		t.Run(name, func(t *testing.T) {
			if name != "closed" {
				assert.Nil(t, b.Device())
			}
			_, err := b.CopyTime(ctx, 1024, 1)
			assert.ErrorIs(t, err, gpu.ErrClosed)
			_, _, _, _, _, err = b.PlanTraffic(p)
			assert.ErrorIs(t, err, gpu.ErrClosed)
			_, err = b.RunResident(ctx, addRequest(), 1, out)
			assert.ErrorIs(t, err, gpu.ErrClosed)
			_, err = b.RunResidentBatch(ctx, addRequest(), 2, 1, out)
			assert.ErrorIs(t, err, gpu.ErrClosed)
			assert.NotPanics(t, func() { b.LastRoundTrips() })
		})
	}
}

// TestPhaseEstimates: each pass label's estimate is its passes' times
// from the figures (cost.Device.PassMs), passes of one label summed, in
// the order the labels first appear, times the calls.
func TestPhaseEstimates(t *testing.T) {
	m := &cost.Device{CopyGBps: 100, ElementNs: 2, AtomicNs: 8, LaunchUs: 10}
	n := gpu.PlanNeeds{Passes: []gpu.PassNeed{
		{Name: "resolve", Dispatches: 1, Positions: 1e5},               // 0.2 ms + 0.01
		{Name: "scatter", Dispatches: 1, Positions: 1e5, Atomics: 1e5}, // 1.0 ms + 0.01
		{Name: "resolve", Dispatches: 2, Read: 1e8, Written: 1e8},      // 2 ms of bytes + 0.02
	}}
	got := PhaseEstimates(m, n, 3)
	require.Len(t, got, 2)
	assert.Equal(t, "resolve", got[0].Name)
	assert.InDelta(t, 3*(0.21+2.02), float64(got[0].Duration)/1e6, 1e-6)
	assert.Equal(t, "scatter", got[1].Name)
	assert.InDelta(t, 3*1.01, float64(got[1].Duration)/1e6, 1e-6)
}
