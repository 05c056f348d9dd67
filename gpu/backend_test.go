//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/internal/testdevice"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// testChunk is the chunk size of the chunked configurations: 4 KiB buffers,
// so that tensors of more than 4 KiB span several chunks.
const testChunk = 4 << 10

// config is the options and knobs a test opens a backend with.
type config struct {
	Options
	knobs.Knobs
}

// openTest opens a backend with validation, and with the knobs k (at most
// one) as package internal/knobs would, and registers its Close, after
// which no validation message may have been reported and no Vulkan object
// may be alive. A missing device fails the test: CI must not pass without
// one. GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1 opens it with NoUnifiedMemory,
// as a discrete GPU (package testdevice).
func openTest(t testing.TB, opts Options, k ...knobs.Knobs) *Backend {
	t.Helper()
	if len(k) > 1 {
		t.Fatalf("openTest takes at most one Knobs, got %d", len(k))
	}
	opts.Validation = true
	opts.NoUnifiedMemory = testdevice.Staged(t, opts.NoUnifiedMemory)
	if opts.PipelineCacheDir == "" {
		opts.PipelineCacheDir = "off"
	}
	b, err := open(opts, append(k, knobs.Knobs{})[0])
	if err != nil {
		t.Fatalf("no usable Vulkan device (install mesa-vulkan-drivers and vulkan-validationlayers for lavapipe): %v", err)
	}
	t.Cleanup(func() { closeAndCheck(t, b) })
	return b
}

// wantUnified reports whether a backend that openTest opened with opts
// should have unified memory: when its device has it (as vk.Devices
// reports it) and neither opts.NoUnifiedMemory nor
// GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1 asks for staging.
func wantUnified(t testing.TB, b *Backend, opts Options) bool {
	t.Helper()
	if testdevice.Staged(t, opts.NoUnifiedMemory) {
		return false
	}
	devs, err := vk.Devices()
	require.NoError(t, err)
	info := b.device().Info()
	require.Less(t, info.Index, len(devs))
	require.Equal(t, info.Name, devs[info.Index].Name)
	return devs[info.Index].Capabilities.UnifiedMemory
}

// closeAndCheck closes b and asserts a clean teardown.
func closeAndCheck(t testing.TB, b *Backend) {
	t.Helper()
	assert.NoError(t, b.Close())
	assert.NoError(t, b.Close(), "Close is idempotent")
	assert.Empty(t, b.ValidationMessages(), "validation messages")
	assert.Empty(t, b.device().LiveObjects(), "Vulkan objects alive after Close")
}

// jobOf returns the job b makes of req.
func jobOf(t *testing.T, b *Backend, req ops.Request) *job {
	t.Helper()
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	b.mu.Lock()
	defer b.mu.Unlock()
	j, err := b.jobFor(p)
	require.NoError(t, err)
	return j
}

// TestPlanWalk checks which Element plans walk their columns: those with
// at least walkMin columns, with reduction none when updates can collide,
// and with every reduction unless 8-byte elements meet a device without
// 64-bit atomics.
func TestPlanWalk(t *testing.T) {
	b := openTest(t, Options{})
	plan := func(dt tensor.DType, red string, data, idx []int, axis int) *job {
		t.Helper()
		d, _ := tensor.New(dt, data)
		i, _ := tensor.New(tensor.Int64, idx)
		u, _ := tensor.New(dt, idx)
		return jobOf(t, b, ops.Request{Op: "ScatterElements-18", Data: d, Indices: i, Updates: u, Axis: tensor.Scalar(int64(axis)), Reduction: red})
	}
	f32 := tensor.Float32
	b.walkMin = 64
	j := plan(f32, "", []int{16, 64}, []int{8, 64}, 0)
	assert.True(t, j.walk, "64 columns of 8 updates")
	assert.Zero(t, j.owners, "a walk needs no owner words")
	assert.Equal(t, uint64(64), j.scatterInvocations())
	assert.Zero(t, j.flags&flagOwner)
	assert.NotZero(t, j.flags&flagWalk)

	j = plan(f32, "", []int{16, 64}, []int{8, 63}, 0)
	assert.False(t, j.walk, "63 columns: fewer than walkMin")
	assert.Zero(t, j.owners, "8 updates per column look at the later ones")
	assert.NotZero(t, j.flags&flagLater)

	j = plan(f32, "", []int{16, 64}, []int{1, 64}, 0)
	assert.False(t, j.walk, "one update per column never collides")

	j = plan(f32, "", []int{64, 16}, []int{64, 8}, 1)
	assert.True(t, j.walk, "axis 1: columns are the rows")

	for _, red := range []string{"add", "mul", "max", "min"} {
		j = plan(f32, red, []int{16, 64}, []int{8, 64}, 0)
		require.NotNil(t, j.red)
		assert.True(t, j.walk, red)
		assert.Equal(t, "walk", j.red.describe(j), red)
		assert.False(t, j.red.ordered || j.red.private, red)
		assert.NotZero(t, j.flags&flagWalk, red)
		assert.Equal(t, uint64(64), j.scatterInvocations(), red)
	}
	j = plan(f32, "add", []int{16, 64}, []int{8, 63}, 0)
	assert.False(t, j.walk, "63 columns")
	assert.Equal(t, "ordered", j.red.describe(j), "a small float sum folds in order")

	b.noInt64Atomics = true
	j = plan(tensor.Int64, "add", []int{16, 64}, []int{8, 64}, 0)
	assert.False(t, j.walk, "8-byte kernels declare 64-bit atomics")
	assert.Equal(t, "ordered", j.red.describe(j))
}

// TestIndexErrorsMatchReference checks, for every kind and index dtype,
// that the first bad index in row-major order is reported with the CPU
// reference's text and that out is left untouched, with many bad indices
// and the bad one at the end of a large index tensor.
func TestIndexErrorsMatchReference(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range []struct{ wide, walk bool }{{false, false}, {true, false}, {false, true}} {
		wide := cfg.wide
		b := openTest(t, Options{}, knobs.Knobs{MaxAllocationBytes: testChunk})
		if wide && !b.dev.Capabilities().ShaderInt64 {
			continue // 64-bit positions need shaderInt64
		}
		b.forceWide = wide
		if cfg.walk {
			b.walkMin = 1
		}
		ref := cpuref.New()
		for _, idt := range []tensor.DType{tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Uint16, tensor.Int32, tensor.Uint32, tensor.Int64, tensor.Uint64} {
			for _, op := range []string{"ScatterUpdate-3", "ScatterNDUpdate-15", "ScatterElementsUpdate-12", "ScatterND-11"} {
				for _, where := range []int{0, 1, 2999} {
					n := 3000
					vals := make([]int64, n)
					for i := range vals {
						vals[i] = int64(i % 5)
					}
					idx, _ := tensor.New(idt, []int{n, 1})
					upd, _ := tensor.New(tensor.Int8, []int{n, 1})
					data, _ := tensor.New(tensor.Int8, []int{5, 1})
					axis := tensor.Scalar(0)
					switch op {
					case "ScatterUpdate-3":
						upd, _ = tensor.New(tensor.Int8, []int{n, 1, 1})
					case "ScatterNDUpdate-15", "ScatterND-11":
						axis = nil
					}
					for i, v := range vals {
						setRaw(idx, i, uint64(v))
					}
					// Bad values from position where on, the first one
					// differing from the others.
					for i := where; i < n; i += 7 {
						setRaw(idx, i, 77)
					}
					setRaw(idx, where, 1<<(8*idt.Size())-1) // max of unsigned, -1 of signed
					if idt.IsSigned() {
						setRaw(idx, where, uint64(1)<<(8*idt.Size()-1)) // minimum
					}
					req := ops.Request{Op: op, Data: data, Indices: idx, Updates: upd, Axis: axis}
					p, err := ops.Prepare(req)
					require.NoError(t, err, "%s %v", op, idt)
					want, _ := tensor.New(p.DType, p.Shape)
					werr := ref.Execute(ctx, p, want)
					require.Error(t, werr)
					out := opstest.SentinelOutput(p)
					before := out.Clone()
					gerr := b.Execute(ctx, p, out)
					require.ErrorIs(t, gerr, ops.ErrIndexRange)
					assert.Equal(t, werr.Error(), gerr.Error(), "%s %v at %d %+v", op, idt, where, cfg)
					assert.True(t, tensor.Equal(out, before), "out untouched")
				}
			}
		}
	}
}

func TestExecuteHonoursContext(t *testing.T) {
	b := openTest(t, Options{})
	req := ops.Request{Op: "ScatterElements-11", Data: tensor.MustFromSlice([]int{3}, []float32{1, 2, 3}),
		Indices: tensor.MustFromSlice([]int{2}, []int64{2, 0}), Updates: tensor.MustFromSlice([]int{2}, []float32{7, 8})}
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := opstest.SentinelOutput(p)
	before := out.Clone()
	require.ErrorIs(t, b.Execute(ctx, p, out), context.Canceled)
	assert.True(t, tensor.Equal(out, before))

	// A deadline that expires during a large call: the call either
	// finishes or fails with the context's error and leaves out alone;
	// the next call works either way.
	bigReq := reversedRequest(8 << 20)
	big, err := ops.Prepare(bigReq)
	require.NoError(t, err)
	for _, d := range []time.Duration{time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		out := opstest.SentinelOutput(big)
		before := out.Clone()
		err := b.Execute(ctx, big, out)
		cancel()
		if err != nil {
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.True(t, tensor.Equal(out, before), "out untouched after %v", d)
		}
		got, err := ops.Run(context.Background(), b, req)
		require.NoError(t, err)
		assert.Equal(t, []float32{8, 2, 7}, tensor.View[float32](got))
	}
}

func TestExecuteAfterClose(t *testing.T) {
	b := openTest(t, Options{})
	require.NoError(t, b.Close())
	req := ops.Request{Op: "ScatterElements-11", Data: tensor.MustFromSlice([]int{3}, []float32{1, 2, 3}),
		Indices: tensor.MustFromSlice([]int{1}, []int64{2}), Updates: tensor.MustFromSlice([]int{1}, []float32{7})}
	_, err := ops.Run(context.Background(), b, req)
	require.ErrorIs(t, err, ops.ErrNoDevice)
}

func TestOpenRejectsUnknownDevice(t *testing.T) {
	_, err := Open(Options{Device: "no such device name"})
	require.ErrorIs(t, err, ops.ErrNoDevice)
}

// TestConcurrentExecute runs calls from several goroutines on one backend
// (they are serialised) and checks every result.
func TestConcurrentExecute(t *testing.T) {
	b := openTest(t, Options{})
	ref := cpuref.New()
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func(g int) {
			rng := rand.New(rand.NewSource(int64(1000 + g)))
			for i := 0; i < 150; i++ {
				req := opstest.RandomRequest(rng, opstest.Config{})
				req.Reduction, req.UseInitVal = "", nil
				got, gerr := ops.Run(context.Background(), b, req)
				want, werr := ops.Run(context.Background(), ref, req)
				if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
					errs <- fmt.Errorf("goroutine %d case %d: %v vs %v", g, i, gerr, werr)
					return
				}
				if gerr == nil && !opstest.Same(got, want) {
					errs <- fmt.Errorf("goroutine %d case %d: %s", g, i, opstest.Diff(got, want))
					return
				}
			}
			errs <- nil
		}(g)
	}
	for g := 0; g < 4; g++ {
		require.NoError(t, <-errs)
	}
}

// TestBuffersArePooled checks that repeated calls reuse device buffers.
func TestBuffersArePooled(t *testing.T) {
	b := openTest(t, Options{})
	req := ops.Request{Op: "ScatterElements-11", Data: tensor.MustFromSlice([]int{3}, []float32{1, 2, 3}),
		Indices: tensor.MustFromSlice([]int{2}, []int64{2, 2}), Updates: tensor.MustFromSlice([]int{2}, []float32{7, 8})}
	for i := 0; i < 3; i++ {
		got, err := ops.Run(context.Background(), b, req)
		require.NoError(t, err)
		assert.Equal(t, []float32{1, 2, 8}, tensor.View[float32](got), "the last duplicate wins")
	}
	pooled := b.device().PooledBuffers()
	assert.Positive(t, pooled)
	live := b.device().LiveObjects()["VkBuffer"]
	_, err := ops.Run(context.Background(), b, req)
	require.NoError(t, err)
	assert.Equal(t, live, b.device().LiveObjects()["VkBuffer"], "a repeated call allocates no buffer")
}

// TestSliceCopies checks the copy-command path of SliceScatter: which plans
// take it, the regions it lists, and results equal to the CPU reference's
// with runs that start and end anywhere in the chunks of either tensor,
// negative steps included.
func TestSliceCopies(t *testing.T) {
	seq := func(dt tensor.DType, shape []int) *tensor.Tensor {
		x, _ := tensor.New(dt, shape)
		for i := range x.Data {
			x.Data[i] = byte(i*7 + 1)
		}
		return x
	}
	req := func(dt tensor.DType, data, upd []int, start, stop, step, axes []int64) ops.Request {
		return ops.Request{Op: "SliceScatter-15", Data: seq(dt, data), Updates: seq(dt, upd),
			Start: tensor.Ints(start...), Stop: tensor.Ints(stop...), Step: tensor.Ints(step...), Axes: tensor.Ints(axes...)}
	}
	cases := []ops.Request{
		// Rows 1, 3, 5 of 7, columns 2..10: runs of 9 float32 at odd offsets.
		req(tensor.Float32, []int{7, 13}, []int{3, 9}, []int64{1, 2}, []int64{7, 11}, []int64{2, 1}, []int64{0, 1}),
		// Backwards along the rows.
		req(tensor.Float32, []int{7, 13}, []int{3, 9}, []int64{5, 2}, []int64{0, 11}, []int64{-2, 1}, []int64{0, 1}),
		// 3-D, bytes: runs of 5 int8 in a [4, 3, 11] tensor.
		req(tensor.Int8, []int{4, 3, 11}, []int{2, 2, 5}, []int64{3, 0, 6}, []int64{-5, 3, 11}, []int64{-2, 2, 1}, []int64{0, 1, 2}),
		// Whole rows: one run per slice row, merged with the next dimension.
		req(tensor.Float64, []int{6, 5, 3}, []int{3, 5, 3}, []int64{0}, []int64{6}, []int64{2}, []int64{0}),
	}
	for _, shift := range []uint{chunkShift(minChunk), 6, 0} {
		b := openTest(t, Options{})
		b.copyMin = 1
		if shift > 0 {
			b.shift = shift
		}
		for i, r := range cases {
			p, err := ops.Prepare(r)
			require.NoError(t, err)
			got, want := runBoth(t, b, p)
			assert.Empty(t, opstest.DiffExact(got, want), "case %d, chunks of 2^%d bytes", i, b.shift)
		}
	}

	// Which plans copy, and the regions of case 0: rows 1, 3, 5 from
	// column 2, 36 bytes each.
	b := openTest(t, Options{})
	b.copyMin = 36
	job := func(r ops.Request) *job { return jobOf(t, b, r) }
	j := job(cases[0])
	require.True(t, j.copies)
	assert.Equal(t, []vk.CopyRegion{{SrcOffset: 0, DstOffset: 4 * 15, Size: 36}, {SrcOffset: 36, DstOffset: 4 * 41, Size: 36},
		{SrcOffset: 72, DstOffset: 4 * 67, Size: 36}}, j.copyRegions())
	j = job(cases[1])
	require.True(t, j.copies)
	assert.Equal(t, uint64(4*67), j.copyRegions()[0].DstOffset, "row 5 first when walking backwards")
	assert.False(t, job(cases[2]).copies, "runs of 5 bytes are below copyMin")
	assert.False(t, job(req(tensor.Float32, []int{7, 13}, []int{3, 5}, []int64{1, 2}, []int64{7, 11}, []int64{2, 2}, []int64{0, 1})).copies,
		"a step on the last axis leaves no contiguous run")
}
