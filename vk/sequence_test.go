//go:build cgo

package vk

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDispatchCopyMultipleGroups(t *testing.T) {
	d := openTest(t, Options{})
	const n, local = 1000, 32
	in := make([]uint32, n)
	for i := range in {
		in[i] = uint32(i*7 + 1)
	}
	src := upload(t, d, u32bytes(in))
	dst, err := d.NewBuffer(4 * n)
	require.NoError(t, err)
	p := copyPipeline(t, d, local)
	s, err := d.NewSequence()
	require.NoError(t, err)
	groups := uint32((n + local - 1) / local) // 32 workgroups
	require.NoError(t, s.Dispatch(p, []Binding{{Buffer: src}, {Buffer: dst}}, push(n, 5), [3]uint32{groups, 1, 1}))
	assert.Equal(t, 1, s.Len())
	require.NoError(t, s.Submit(testContext(t)))
	out := bytesU32(download(t, dst, 0, 4*n))
	for i := range out {
		require.Equal(t, in[i]+5, out[i], "element %d", i)
	}
}

func cpuHistogram(values []uint32, scale, bins uint32) []uint32 {
	h := make([]uint32, bins)
	for _, v := range values {
		h[(v/scale)%bins]++
	}
	return h
}

func TestHistogramSpecAndPushConstants(t *testing.T) {
	d := openTest(t, Options{})
	const n, bins, scale = 10_000, 10, 3
	values := make([]uint32, n)
	for i := range values {
		values[i] = uint32((i * 2654435761) >> 7)
	}
	in := upload(t, d, u32bytes(values))
	hist, err := d.NewBuffer(4 * bins)
	require.NoError(t, err)
	p, err := d.NewPipeline(PipelineSpec{
		SPIRV:            histogramSPV,
		Bindings:         2,
		PushConstantSize: 8,
		SpecConstants:    []uint32{bins},
		LocalSize:        [3]uint32{64, 1, 1},
	})
	require.NoError(t, err)
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Fill(hist, 0, 0, 0))
	// 7 workgroups of 64 invocations cover 10000 values with a grid-stride loop.
	require.NoError(t, s.Dispatch(p, []Binding{{Buffer: in}, {Buffer: hist}}, push(n, scale), [3]uint32{7, 1, 1}))
	require.NoError(t, s.Submit(testContext(t)))
	want := cpuHistogram(values, scale, bins)
	assert.Equal(t, want, bytesU32(download(t, hist, 0, 4*bins)))

	// Submitting again repeats the recorded commands (the Fill resets the bins).
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, want, bytesU32(download(t, hist, 0, 4*bins)))

	// A different specialization constant is a different pipeline.
	p5, err := d.NewPipeline(PipelineSpec{SPIRV: histogramSPV, Bindings: 2, PushConstantSize: 8, SpecConstants: []uint32{5}})
	require.NoError(t, err)
	assert.NotSame(t, p, p5)
	require.NoError(t, s.Reset())
	require.NoError(t, s.Fill(hist, 0, 0, 0))
	require.NoError(t, s.Dispatch(p5, []Binding{{Buffer: in}, {Buffer: hist, Range: 20}}, push(n, scale), [3]uint32{3, 1, 1}))
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, cpuHistogram(values, scale, 5), bytesU32(download(t, hist, 0, 20)))
}

// TestScatterAddFloat32Atomics runs a float atomic add on the default
// device, or on lavapipe where the default device has no float32 atomic
// add.
func TestScatterAddFloat32Atomics(t *testing.T) {
	d := openTest(t, Options{})
	if !d.Capabilities().Float32AtomicAdd {
		d = openTest(t, Options{Selector: strconv.Itoa(lavapipe(t).Index)})
	}
	require.True(t, d.Capabilities().Float32AtomicAdd)
	const n, m = 5000, 37
	idx := make([]uint32, n)
	upd := make([]float32, n)
	want := make([]float32, m)
	for i := range idx {
		idx[i] = uint32(i*31) % m
		upd[i] = float32(i%8) * 0.5 // exact in float32, so the order of additions does not matter
		want[idx[i]] += upd[i]
	}
	bi := upload(t, d, u32bytes(idx))
	bu := upload(t, d, f32bytes(upd))
	data := upload(t, d, f32bytes(make([]float32, m)))
	p, err := d.NewPipeline(PipelineSpec{SPIRV: scatterAddSPV, Bindings: 3, PushConstantSize: 4})
	require.NoError(t, err)
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Dispatch(p, []Binding{{Buffer: bi}, {Buffer: bu}, {Buffer: data}}, push(n), [3]uint32{(n + 63) / 64, 1, 1}))
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, want, bytesF32(download(t, data, 0, 4*m)))
}

func TestBindingAtOffset(t *testing.T) {
	d := openTest(t, Options{})
	align := d.Limits().MinStorageBufferOffsetAlignment
	require.NotZero(t, align)
	srcOff := 4 * align // bytes
	dstOff := 2 * align
	const n = 100
	in := make([]uint32, n)
	for i := range in {
		in[i] = uint32(1000 + i)
	}
	src, err := d.NewBuffer(srcOff + 4*n)
	require.NoError(t, err)
	require.NoError(t, src.Upload(srcOff, u32bytes(in)))
	dst, err := d.NewBuffer(dstOff + 4*n + 64)
	require.NoError(t, err)
	p := copyPipeline(t, d, 64)
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Fill(dst, 0, 0, 0xdeadbeef))
	require.NoError(t, s.Dispatch(p, []Binding{{Buffer: src, Offset: srcOff}, {Buffer: dst, Offset: dstOff, Range: 4 * n}},
		push(n, 0), [3]uint32{2, 1, 1}))
	require.NoError(t, s.Submit(testContext(t)))
	out := bytesU32(download(t, dst, 0, dstOff+4*n+64))
	for i := uint64(0); i < dstOff/4; i++ {
		require.Equal(t, uint32(0xdeadbeef), out[i], "untouched prefix %d", i)
	}
	assert.Equal(t, in, out[dstOff/4:dstOff/4+n])
	for _, v := range out[dstOff/4+n:] {
		require.Equal(t, uint32(0xdeadbeef), v, "untouched suffix")
	}

	require.NoError(t, s.Reset())
	if align > 1 {
		err := s.Dispatch(p, []Binding{{Buffer: src, Offset: align / 2}, {Buffer: dst}}, push(n, 0), [3]uint32{1, 1, 1})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "minStorageBufferOffsetAlignment")
	}
	err = s.Dispatch(p, []Binding{{Buffer: src, Offset: src.Size()}, {Buffer: dst}}, push(n, 0), [3]uint32{1, 1, 1})
	assert.Error(t, err, "offset at the end")
	err = s.Dispatch(p, []Binding{{Buffer: src, Offset: align, Range: src.Size()}, {Buffer: dst}}, push(n, 0), [3]uint32{1, 1, 1})
	assert.Error(t, err, "range past the end")
	assert.Equal(t, 0, s.Len())
}

func TestDispatchArgumentErrors(t *testing.T) {
	d := openTest(t, Options{})
	p := copyPipeline(t, d, 64)
	a, err := d.NewBuffer(256)
	require.NoError(t, err)
	b, err := d.NewBuffer(256)
	require.NoError(t, err)
	s, err := d.NewSequence()
	require.NoError(t, err)
	ok := []Binding{{Buffer: a}, {Buffer: b}}

	assert.Error(t, s.Dispatch(p, ok[:1], push(1, 1), [3]uint32{1, 1, 1}), "too few bindings")
	assert.Error(t, s.Dispatch(p, ok, push(1), [3]uint32{1, 1, 1}), "short push constants")
	assert.Error(t, s.Dispatch(p, []Binding{{Buffer: a}, {}}, push(1, 1), [3]uint32{1, 1, 1}), "nil buffer")
	assert.Error(t, s.Dispatch(nil, ok, push(1, 1), [3]uint32{1, 1, 1}), "nil pipeline")
	max := d.Limits().MaxWorkGroupCount
	err = s.Dispatch(p, ok, push(1, 1), [3]uint32{max[0] + 1, 1, 1})
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), "maxComputeWorkGroupCount")
	assert.ErrorIs(t, s.Dispatch(p, ok, push(1, 1), [3]uint32{1, 1, max[2] + 1}), ErrUnsupported)
	assert.Error(t, s.Fill(a, 2, 4, 0), "unaligned fill")
	assert.Error(t, s.Fill(a, 0, 260, 0), "fill past the end")
	assert.Error(t, s.Copy(a, 0, a, 8, 16), "overlapping copy")
	assert.Error(t, s.Copy(a, 250, b, 0, 16), "copy past the end")
	assert.Equal(t, 0, s.Len())

	// After Submit, recording needs Reset.
	require.NoError(t, s.Dispatch(p, ok, push(64, 1), [3]uint32{1, 1, 1}))
	require.NoError(t, s.Submit(testContext(t)))
	assert.Error(t, s.Dispatch(p, ok, push(64, 1), [3]uint32{1, 1, 1}))
	require.NoError(t, s.Reset())
	require.NoError(t, s.Dispatch(p, ok, push(64, 1), [3]uint32{1, 1, 1}))
	require.NoError(t, s.Submit(testContext(t)))

	// Bad pipeline specs.
	_, err = d.NewPipeline(PipelineSpec{SPIRV: copySPV[:17], Bindings: 2})
	assert.Error(t, err)
	_, err = d.NewPipeline(PipelineSpec{SPIRV: make([]byte, 64), Bindings: 2})
	assert.Error(t, err)
	_, err = d.NewPipeline(PipelineSpec{SPIRV: copySPV, Bindings: 2, PushConstantSize: 6})
	assert.Error(t, err)
	_, err = d.NewPipeline(PipelineSpec{SPIRV: copySPV, Bindings: 2, PushConstantSize: d.Limits().MaxPushConstantsSize + 4})
	assert.ErrorIs(t, err, ErrUnsupported)

	// Submitting an empty sequence is a no-op.
	empty, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, empty.Submit(testContext(t)))
	assert.Empty(t, empty.Timings())
}

func TestFillAndCopy(t *testing.T) {
	d := openTest(t, Options{})
	a, err := d.NewBuffer(64)
	require.NoError(t, err)
	b, err := d.NewBuffer(67) // not a multiple of 4
	require.NoError(t, err)
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Fill(a, 0, 0, 0x01010101))
	require.NoError(t, s.Fill(a, 8, 8, 0x02020202))
	require.NoError(t, s.Fill(b, 0, 0, 0))
	require.NoError(t, s.Copy(a, 3, b, 10, 20)) // unaligned copy sees the fills before it
	require.NoError(t, s.Barrier())
	require.NoError(t, s.Copy(b, 10, b, 40, 20))
	require.NoError(t, s.Submit(testContext(t)))

	wantA := make([]byte, 64)
	for i := range wantA {
		wantA[i] = 1
	}
	for i := 8; i < 16; i++ {
		wantA[i] = 2
	}
	assert.Equal(t, wantA, download(t, a, 0, 64))
	wantB := make([]byte, 67)
	copy(wantB[10:30], wantA[3:23])
	copy(wantB[40:60], wantA[3:23])
	assert.Equal(t, wantB, download(t, b, 0, 67))
}

// TestCopyRegions copies several regions in one command, between two
// buffers and within one, and rejects empty, out-of-range and overlapping
// regions.
func TestCopyRegions(t *testing.T) {
	d := openTest(t, Options{})
	src := make([]byte, 256)
	for i := range src {
		src[i] = byte(i)
	}
	a := upload(t, d, src)
	b, err := d.NewBuffer(256)
	require.NoError(t, err)
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Fill(b, 0, 0, 0))
	require.NoError(t, s.CopyRegions(a, b, []CopyRegion{{0, 100, 10}, {50, 3, 7}, {200, 200, 56}}))
	require.NoError(t, s.CopyRegions(b, b, []CopyRegion{{100, 20, 10}, {3, 40, 7}})) // within b, after the first
	assert.Equal(t, 3, s.Len(), "a fill and two copy commands")
	require.NoError(t, s.Submit(testContext(t)))
	want := make([]byte, 256)
	copy(want[100:110], src[0:10])
	copy(want[3:10], src[50:57])
	copy(want[200:256], src[200:256])
	copy(want[20:30], src[0:10])
	copy(want[40:47], src[50:57])
	assert.Equal(t, want, download(t, b, 0, 256))

	require.NoError(t, s.Reset())
	for _, c := range []struct {
		name    string
		dst     *Buffer
		regions []CopyRegion
		msg     string
	}{
		{"none", b, nil, "0 regions"},
		{"empty region", b, []CopyRegion{{0, 0, 4}, {8, 8, 0}}, "region 1: size is zero"},
		{"past the source", b, []CopyRegion{{250, 0, 8}}, "region 0"},
		{"past the destination", b, []CopyRegion{{0, 0, 4}, {0, 252, 8}}, "region 1"},
		{"overlap within a buffer", a, []CopyRegion{{0, 64, 8}, {60, 128, 8}}, "overlap"},
		{"overlap touching", a, []CopyRegion{{10, 20, 10}, {100, 5, 6}}, "overlap"},
	} {
		err := s.CopyRegions(a, c.dst, c.regions)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.msg, c.name)
	}
	assert.False(t, regionsOverlap([]CopyRegion{{0, 8, 8}, {16, 24, 8}}), "adjacent regions do not overlap")
	assert.Zero(t, s.Len(), "rejected copies record nothing")
}

func TestTimestamps(t *testing.T) {
	d := openTest(t, Options{})
	require.True(t, d.Capabilities().Timestamps)
	const n = 4096
	out, err := d.NewBuffer(4 * n)
	require.NoError(t, err)
	p, err := d.NewPipeline(PipelineSpec{SPIRV: spinSPV, Bindings: 1, PushConstantSize: 8})
	require.NoError(t, err)
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Fill(out, 0, 0, 0))
	require.NoError(t, s.Timestamp("fill"))
	require.NoError(t, s.Dispatch(p, []Binding{{Buffer: out}}, push(n, 20_000), [3]uint32{n / 64, 1, 1}))
	require.NoError(t, s.Timestamp("spin"))
	require.NoError(t, s.Submit(testContext(t)))
	tm := s.Timings()
	require.Len(t, tm, 2)
	assert.Equal(t, "fill", tm[0].Label)
	assert.Equal(t, "spin", tm[1].Label)
	assert.Greater(t, tm[1].Duration, time.Duration(0))
	t.Logf("timings: %v", tm)

	// More timestamps than one query pool holds.
	require.NoError(t, s.Reset())
	assert.Empty(t, s.Timings())
	for i := 0; i < queriesPerPool+10; i++ {
		require.NoError(t, s.Fill(out, 0, 16, uint32(i)))
		require.NoError(t, s.Timestamp(fmt.Sprint(i)))
	}
	require.NoError(t, s.Submit(testContext(t)))
	assert.Len(t, s.Timings(), queriesPerPool+10)
	assert.Equal(t, 2, d.LiveObjects()["VkQueryPool"])
}

func TestSubmitContextCancel(t *testing.T) {
	d := openTest(t, Options{})
	// llvmpipe stops every loop after 65535 iterations, so the dispatch is
	// made slow by its number of workgroups rather than by iterations.
	const iters, maxGroups = 60_000, 1 << 14
	out, err := d.NewBuffer(4 * 64 * maxGroups)
	require.NoError(t, err)
	p, err := d.NewPipeline(PipelineSpec{SPIRV: spinSPV, Bindings: 1, PushConstantSize: 8})
	require.NoError(t, err)
	s, err := d.NewSequence()
	require.NoError(t, err)
	spin := func(groups uint32) {
		require.NoError(t, s.Reset())
		require.NoError(t, s.Dispatch(p, []Binding{{Buffer: out}}, push(64*groups, iters), [3]uint32{groups, 1, 1}))
	}

	// An already-cancelled context submits nothing.
	sentinel := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	require.NoError(t, out.Upload(0, sentinel))
	spin(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Submit(ctx), context.Canceled)
	assert.Equal(t, sentinel, download(t, out, 0, 16), "nothing ran")

	// Warm up (the first dispatch compiles the shader), calibrate a slow
	// dispatch, then cancel while waiting for a longer one.
	require.NoError(t, s.Submit(testContext(t)))
	groups := uint32(4)
	var took time.Duration
	for {
		spin(groups)
		start := time.Now()
		require.NoError(t, s.Submit(testContext(t)))
		took = time.Since(start)
		t.Logf("%d workgroups take %v", groups, took)
		if took > 150*time.Millisecond || groups >= maxGroups/4 {
			break
		}
		groups *= 4
	}
	spin(4 * groups) // about four times as long as the calibrated run
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.Submit(ctx)
	returned := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded, "Submit returned after %v", returned)
	assert.Less(t, returned, took, "Submit returned before the work could have finished")
	t.Logf("cancelled Submit returned after %v", returned)

	// The sequence waits for the abandoned work before it is reused.
	start = time.Now()
	require.NoError(t, s.Reset())
	t.Logf("Reset waited %v for the abandoned work", time.Since(start))
	require.NoError(t, s.Fill(out, 0, 16, 7))
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, []uint32{7, 7, 7, 7}, bytesU32(download(t, out, 0, 16)))
}

func TestConcurrentSubmissions(t *testing.T) {
	d := openTest(t, Options{})
	p := copyPipeline(t, d, 64)
	const workers, rounds, n = 6, 5, 2000
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs <- func() error {
				s, err := d.NewSequence()
				if err != nil {
					return err
				}
				defer s.Close()
				in := make([]uint32, n)
				for i := range in {
					in[i] = uint32(w*1_000_000 + i)
				}
				src, err := d.Acquire(4 * n)
				if err != nil {
					return err
				}
				defer src.Release()
				dst, err := d.Acquire(4 * n)
				if err != nil {
					return err
				}
				defer dst.Release()
				if err := src.Upload(0, u32bytes(in)); err != nil {
					return err
				}
				for r := 0; r < rounds; r++ {
					if err := s.Reset(); err != nil {
						return err
					}
					if err := s.Dispatch(p, []Binding{{Buffer: src}, {Buffer: dst}}, push(n, uint32(r)), [3]uint32{(n + 63) / 64, 1, 1}); err != nil {
						return err
					}
					if err := s.Timestamp("copy"); err != nil {
						return err
					}
					if err := s.Submit(context.Background()); err != nil {
						return err
					}
					got := make([]byte, 4*n)
					if err := dst.Download(0, got); err != nil {
						return err
					}
					for i, v := range bytesU32(got) {
						if v != in[i]+uint32(r) {
							return fmt.Errorf("worker %d round %d: element %d = %d, want %d", w, r, i, v, in[i]+uint32(r))
						}
					}
				}
				return nil
			}()
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}

func TestCloseIdempotentAndLeakFree(t *testing.T) {
	d, err := Open(Options{Validation: true, PipelineCacheDir: "off"})
	require.NoError(t, err)
	live := d.LiveObjects()
	assert.Equal(t, 1, live["VkInstance"])
	assert.Equal(t, 1, live["VkDevice"])
	assert.Equal(t, 1, live["VkDebugUtilsMessengerEXT"])

	p := copyPipeline(t, d, 64)
	p2, err := d.NewPipeline(PipelineSpec{SPIRV: copySPV, Bindings: 2, PushConstantSize: 8, SpecConstants: []uint32{64}, LocalSize: [3]uint32{64, 1, 1}})
	require.NoError(t, err)
	assert.Same(t, p, p2, "the device caches pipelines")
	assert.Equal(t, 1, d.LiveObjects()["VkPipeline"])
	assert.Zero(t, d.LiveObjects()["VkShaderModule"], "shader modules are destroyed after pipeline creation")

	a, err := d.NewBuffer(1024)
	require.NoError(t, err)
	b, err := d.Acquire(1024)
	require.NoError(t, err)
	pooled, err := d.Acquire(64)
	require.NoError(t, err)
	require.NoError(t, pooled.Release())
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Dispatch(p, []Binding{{Buffer: a}, {Buffer: b}}, push(256, 1), [3]uint32{4, 1, 1}))
	require.NoError(t, s.Timestamp("x"))
	require.NoError(t, s.Submit(testContext(t)))
	closedSeq, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, closedSeq.Close())
	require.NoError(t, closedSeq.Close())

	// A second, unsubmitted sequence and a closed pipeline.
	s2, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s2.Fill(a, 0, 0, 1))
	hp, err := d.NewPipeline(PipelineSpec{SPIRV: histogramSPV, Bindings: 2, PushConstantSize: 8})
	require.NoError(t, err)
	require.NoError(t, hp.Close())
	require.NoError(t, hp.Close())
	assert.ErrorIs(t, s2.Dispatch(hp, []Binding{{Buffer: a}, {Buffer: b}}, push(1, 1), [3]uint32{1, 1, 1}), ErrClosed)
	assert.NotEmpty(t, d.LiveObjects())

	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "Close is idempotent")
	assert.Empty(t, d.LiveObjects())
	assert.Empty(t, d.ValidationMessages())

	// Everything the device owned is closed with it.
	assert.ErrorIs(t, a.Upload(0, []byte{1}), ErrClosed)
	assert.ErrorIs(t, s.Submit(context.Background()), ErrClosed)
	assert.ErrorIs(t, s.Dispatch(p, []Binding{{Buffer: a}, {Buffer: b}}, push(1, 1), [3]uint32{1, 1, 1}), ErrClosed)
	_, err = d.NewBuffer(4)
	assert.ErrorIs(t, err, ErrClosed)
	_, err = d.Acquire(4)
	assert.ErrorIs(t, err, ErrClosed)
	_, err = d.NewSequence()
	assert.ErrorIs(t, err, ErrClosed)
	_, err = d.NewPipeline(PipelineSpec{SPIRV: copySPV, Bindings: 2, PushConstantSize: 8})
	assert.ErrorIs(t, err, ErrClosed)
	for _, c := range []interface{ Close() error }{a, b, s, s2, p, pooled} {
		assert.NoError(t, c.Close())
	}
	assert.NoError(t, b.Release())
	assert.Empty(t, d.LiveObjects())
	assert.ErrorIs(t, d.enter(), ErrClosed)
}

func TestCloseWhileBusy(t *testing.T) {
	d, err := Open(Options{Validation: true, PipelineCacheDir: "off"})
	require.NoError(t, err)
	p := copyPipeline(t, d, 64)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Every call either works or reports ErrClosed once the
				// device is closed; none may crash.
				a, err := d.Acquire(4096)
				if err != nil {
					assert.ErrorIs(t, err, ErrClosed)
					return
				}
				b, err := d.Acquire(4096)
				if err != nil {
					assert.ErrorIs(t, err, ErrClosed)
					return
				}
				s, err := d.NewSequence()
				if err != nil {
					assert.ErrorIs(t, err, ErrClosed)
					return
				}
				if err := s.Dispatch(p, []Binding{{Buffer: a}, {Buffer: b}}, push(1024, 1), [3]uint32{16, 1, 1}); err == nil {
					err = s.Submit(context.Background())
					if err != nil {
						assert.ErrorIs(t, err, ErrClosed)
					}
				} else {
					assert.ErrorIs(t, err, ErrClosed)
				}
				assert.NoError(t, s.Close())
				assert.NoError(t, a.Release())
				assert.NoError(t, b.Release())
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, d.Close())
	close(stop)
	wg.Wait()
	assert.Empty(t, d.LiveObjects())
	assert.Empty(t, d.ValidationMessages())
}

func TestLongChainOfDispatches(t *testing.T) {
	// 100 dependent dispatches in one sequence: each reads what the previous
	// one wrote (automatic barriers) and the descriptor pool has to grow.
	d := openTest(t, Options{})
	const n, steps = 512, 100
	a := upload(t, d, u32bytes(make([]uint32, n)))
	b, err := d.NewBuffer(4 * n)
	require.NoError(t, err)
	p := copyPipeline(t, d, 64)
	s, err := d.NewSequence()
	require.NoError(t, err)
	src, dst := a, b
	for i := 0; i < steps; i++ {
		require.NoError(t, s.Dispatch(p, []Binding{{Buffer: src}, {Buffer: dst}}, push(n, 1), [3]uint32{n / 64, 1, 1}))
		src, dst = dst, src
	}
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, 2, d.LiveObjects()["VkDescriptorPool"])
	for i, v := range bytesU32(download(t, src, 0, 4*n)) {
		require.Equal(t, uint32(steps), v, "element %d", i)
	}
	// After Reset the pools are reused, not multiplied.
	require.NoError(t, s.Reset())
	for i := 0; i < steps; i++ {
		require.NoError(t, s.Dispatch(p, []Binding{{Buffer: a}, {Buffer: b}}, push(n, 1), [3]uint32{n / 64, 1, 1}))
	}
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, 2, d.LiveObjects()["VkDescriptorPool"])
}

// gcStorm runs garbage collections back to back until the test ends.
func gcStorm(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
	})
}

// TestCallsSurviveGC opens devices (instance and device creation, the
// enumerations) and records and submits sequences with descriptor sets,
// copies, fills and barriers, staged transfers included, while garbage
// collections run back to back: no structure a call reads or writes may
// be freed during it (see gscall.h), and every result must be right.
func TestCallsSurviveGC(t *testing.T) {
	gcStorm(t)
	for round := 0; round < 3; round++ {
		_, err := Devices()
		require.NoError(t, err)
		d := openTest(t, Options{NoUnifiedMemory: round == 1})
		const n, local = 256, 32
		in := make([]uint32, n)
		for i := range in {
			in[i] = uint32(i*3 + round)
		}
		src := upload(t, d, u32bytes(in))
		mid, err := d.NewBuffer(4 * n)
		require.NoError(t, err)
		dst, err := d.NewBuffer(4 * n)
		require.NoError(t, err)
		p := copyPipeline(t, d, local)
		for i := 0; i < 100; i++ {
			s, err := d.NewSequence()
			require.NoError(t, err)
			require.NoError(t, s.Fill(dst, 0, 0, 0))
			require.NoError(t, s.Dispatch(p, []Binding{{Buffer: src}, {Buffer: mid}}, push(n, uint32(i)), [3]uint32{n / local, 1, 1}))
			require.NoError(t, s.Copy(mid, 0, dst, 0, 4*n))
			require.NoError(t, s.Submit(testContext(t)))
			out := bytesU32(download(t, dst, 0, 4*n))
			for k := range out {
				require.Equal(t, in[k]+uint32(i), out[k], "round %d, iteration %d, element %d", round, i, k)
			}
			require.NoError(t, s.Close())
		}
	}
}

// FuzzRegionsOverlap checks the sweep of regionsOverlap against a check of
// every pair of a source and a destination region. Each region is three
// bytes of the input: source offset, destination offset and size (sizes
// from 1), so that small buffers see every kind of overlap.
func FuzzRegionsOverlap(f *testing.F) {
	f.Add([]byte{0, 8, 8, 16, 24, 8})
	f.Add([]byte{0, 64, 8, 60, 128, 8})
	f.Add([]byte{10, 20, 10, 100, 5, 6})
	f.Fuzz(func(t *testing.T, in []byte) {
		var regions []CopyRegion
		for i := 0; i+2 < len(in) && len(regions) < 64; i += 3 {
			regions = append(regions, CopyRegion{SrcOffset: uint64(in[i]), DstOffset: uint64(in[i+1]), Size: uint64(in[i+2]%32) + 1})
		}
		want := false
		for _, a := range regions {
			for _, b := range regions {
				if a.SrcOffset < b.DstOffset+b.Size && b.DstOffset < a.SrcOffset+a.Size {
					want = true
				}
			}
		}
		if got := regionsOverlap(regions); got != want {
			t.Fatalf("regionsOverlap(%v) = %v, want %v", regions, got, want)
		}
	})
}
