//go:build cgo

package gpu

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/internal/callerdev"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/internal/testdevice"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// openCaller creates a program's own device with features (of what the
// device supports) and the validation layer; at the end of the test its
// layer must have reported nothing, then it is destroyed.
func openCaller(t testing.TB, features vk.Features, noChain bool) *callerdev.Device {
	t.Helper()
	d, err := callerdev.Open(callerdev.Options{Validation: true, Features: features, NoChain: noChain})
	if err != nil {
		t.Fatalf("no usable Vulkan device for the program's own device (install mesa-vulkan-drivers and vulkan-validationlayers for lavapipe): %v", err)
	}
	t.Cleanup(func() {
		// Destroying the device reports any object of the Backend's
		// still alive on it.
		d.Close()
		assert.Empty(t, d.Messages(), "the program's validation messages, its device's destruction included")
	})
	return d
}

// externalOf is d as OpenExternal takes it, its features read from its
// VkDeviceCreateInfo.
func externalOf(d *callerdev.Device) External {
	return External{Instance: unsafe.Pointer(d.Instance), PhysicalDevice: unsafe.Pointer(d.Physical), Device: unsafe.Pointer(d.Device),
		QueueFamily: d.Family, APIVersion: d.APIVersion, CreateInfo: d.CreateInfo(),
		Submit: func(submit func() error) error {
			d.QueueMu.Lock()
			defer d.QueueMu.Unlock()
			return submit()
		}}
}

// adoptTest opens a Backend on d; at the end of the test it is closed,
// leaving no object of its own alive, and d's device, queue and a buffer
// of its own are used to prove them intact.
func adoptTest(t testing.TB, d *callerdev.Device, opts Options) *Backend {
	t.Helper()
	if opts.PipelineCacheDir == "" {
		opts.PipelineCacheDir = "off"
	}
	opts.NoUnifiedMemory = testdevice.Staged(t, opts.NoUnifiedMemory)
	b, err := OpenExternal(externalOf(d), opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		assert.NoError(t, b.Close(), "Close is idempotent")
		assert.Empty(t, b.device().LiveObjects(), "Vulkan objects of the Backend alive after Close")
		buf, err := d.NewBuffer(4096, WrapUsage)
		require.NoError(t, err)
		defer buf.Close()
		assert.NoError(t, d.Check(buf, 0x5eed), "the program's device, queue and buffer after Close")
	})
	return b
}

// guardByte fills the bytes around a wrapped range; they must come back
// unchanged.
const guardByte = 0xa5

// wrapped is a program's buffer holding one tensor at an offset, guarded
// on both sides.
type wrapped struct {
	buf    *callerdev.Buffer
	offset uint64
	bytes  uint64
	t      *Tensor
}

const wrapOffset = 256

// wrapHost copies x into a new buffer of d's at wrapOffset and wraps it
// on b (nil stays nil).
func wrapHost(t testing.TB, b *Backend, d *callerdev.Device, x *tensor.Tensor) *wrapped {
	t.Helper()
	if x == nil {
		return nil
	}
	n := uint64(len(x.Data))
	size := (n + 3) &^ 3
	buf, err := d.NewBuffer(wrapOffset+size+256, WrapUsage)
	require.NoError(t, err)
	t.Cleanup(buf.Close)
	for i := range buf.Bytes {
		buf.Bytes[i] = guardByte
	}
	copy(buf.Bytes[wrapOffset:], x.Data)
	wt, err := b.WrapBuffer(buf.Handle64(), wrapOffset, size, x.DType, x.Shape, WrapUsage)
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := wt.Close(); !errors.Is(err, ErrClosed) {
			assert.NoError(t, err)
		}
	})
	return &wrapped{buf: buf, offset: wrapOffset, bytes: n, t: wt}
}

// host returns w's payload as a host tensor, and checks its guards.
func (w *wrapped) host(t testing.TB) *tensor.Tensor {
	t.Helper()
	h, err := tensor.New(w.t.DType(), w.t.Shape())
	require.NoError(t, err)
	copy(h.Data, w.buf.Bytes[w.offset:w.offset+w.bytes])
	for i, c := range w.buf.Bytes {
		if (uint64(i) < w.offset || uint64(i) >= w.offset+((w.bytes+3)&^3)) && c != guardByte {
			t.Errorf("guard byte %d of the program's buffer is %#x", i, c)
			break
		}
	}
	return h
}

// recordWait records bt into a command buffer of d's between the barriers
// Record's contract asks for, submits it, waits for its fence and returns
// the recording's Result, with the Backend's submissions meanwhile.
func recordWait(t testing.TB, b *Backend, d *callerdev.Device, bt *Batch, opt RecordOptions) (error, uint64) {
	t.Helper()
	c, err := d.NewCommands()
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Begin())
	c.BarrierBefore()
	before := b.device().Counters()
	r, err := bt.Record(context.Background(), c.Pointer(), opt)
	require.NoError(t, err)
	c.BarrierAfter()
	require.NoError(t, c.End())
	require.NoError(t, c.SubmitWait())
	res := r.Result(context.Background())
	assert.Equal(t, res, r.Result(context.Background()), "Result again")
	submits := b.device().Counters().Sub(before).Submits
	require.NoError(t, r.Release())
	return res, submits
}

// wrappedCall wraps req's tensors; out is a fresh zeroed wrapped tensor,
// or data itself in place.
func wrappedCall(t testing.TB, b *Backend, d *callerdev.Device, req ops.Request, inPlace bool) (Call, *wrapped) {
	t.Helper()
	c := CallOf(req)
	data, idx, upd := wrapHost(t, b, d, req.Data), wrapHost(t, b, d, req.Indices), wrapHost(t, b, d, req.Updates)
	c.Data, c.Updates = data.t, upd.t
	if idx != nil {
		c.Indices = idx.t
	}
	out := data
	if !inPlace {
		zero, err := tensor.New(req.Data.DType, req.Data.Shape)
		require.NoError(t, err)
		out = wrapHost(t, b, d, zero)
	}
	c.Out = out.t
	return c, out
}

// TestExternalOperators runs every accepted row of the validation table on
// the program's own device, on tensors in the program's buffers: by Run
// into another output, and recorded into the program's command buffer in
// place; each bit-identical to cpuref (deterministic mode), with no
// submission of the Backend's when recorded.
func TestExternalOperators(t *testing.T) {
	d := openCaller(t, Requirements().Features, false)
	b := adoptTest(t, d, Options{Deterministic: true})
	ran := 0
	for _, vc := range opstest.ValidationCases() {
		req := vc.Request
		ok := vc.Err == nil && req.Data != nil && !req.SkipBadIndices
		for _, x := range []*tensor.Tensor{req.Data, req.Indices, req.Updates} {
			ok = ok && (x == nil || (x.Check() == nil && x.DType != tensor.String))
		}
		if !ok {
			continue
		}
		want, err := ops.Run(context.Background(), cpuref.New(), req)
		require.NoError(t, err, vc.Name)
		ran++
		t.Run(vc.Name, func(t *testing.T) {
			c, out := wrappedCall(t, b, d, req, false)
			require.NoError(t, b.Run(context.Background(), c))
			assert.Empty(t, opstest.DiffExact(out.host(t), want), "by Run")

			c, out = wrappedCall(t, b, d, req, true)
			bt := b.NewBatch()
			require.NoError(t, bt.Add(c))
			err, submits := recordWait(t, b, d, bt, RecordOptions{})
			require.NoError(t, err)
			assert.Zero(t, submits, "submissions of the Backend's while recorded")
			assert.Empty(t, opstest.DiffExact(out.host(t), want), "recorded, in place")
		})
	}
	require.Greater(t, ran, 150, "rows run on wrapped tensors")
}

// TestExternalBaseline adopts a device created without shaderInt64, float
// atomics and subgroup operations: the Backend runs the 32-bit baseline
// and compare-and-swap variants, as on a device of its own without them,
// and the results are cpuref's.
func TestExternalBaseline(t *testing.T) {
	f := Requirements().Features
	f.ShaderInt64, f.Int64BufferAtomics, f.Int64SharedAtomics = false, false, false
	f.Float32Atomics, f.Float32AtomicAdd, f.Float32AtomicMinMax, f.SharedFloat32AtomicAdd = false, false, false, false
	f.Float64Atomics, f.Float64AtomicAdd, f.Float64AtomicMinMax = false, false, false
	f.Float16Atomics, f.Float16AtomicAdd, f.Float16AtomicMinMax = false, false, false
	f.NoSubgroups = true
	d := openCaller(t, f, false)
	ext := externalOf(d)
	ext.CreateInfo, ext.Features = nil, &f
	b, err := OpenExternal(ext, Options{PipelineCacheDir: "off"})
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	caps := b.device().Capabilities()
	assert.False(t, caps.ShaderInt64)
	assert.False(t, caps.Float32AtomicAdd)
	assert.False(t, caps.Int64BufferAtomics)
	assert.Empty(t, caps.SubgroupOperations)

	rng := rand.New(rand.NewSource(51))
	req := opstest.ContentionRequest(rng, "ScatterElements-18", tensor.Float32, "add", 7, 300, nil)
	want, err := ops.Run(context.Background(), cpuref.New(), req)
	require.NoError(t, err)
	c, out := wrappedCall(t, b, d, req, false)
	bt := b.NewBatch()
	require.NoError(t, bt.Add(c))
	err, _ = recordWait(t, b, d, bt, RecordOptions{})
	require.NoError(t, err)
	st := b.LastStats()
	assert.Empty(t, opstest.DiffFor(opstest.ReductionOf(req), out.host(t), want))
	joined := strings.Join(st.Variants, " ")
	assert.Contains(t, joined, "noi64", "the 32-bit baseline: %v", st.Variants)

	// The same device from its VkDeviceCreateInfo gives the same choice.
	b2, err := OpenExternal(externalOf(d), Options{PipelineCacheDir: "off"})
	require.NoError(t, err)
	assert.False(t, b2.device().Capabilities().ShaderInt64, "from the create info")
	assert.False(t, b2.device().Capabilities().Float32AtomicAdd, "from the create info")
	require.NoError(t, b2.Close())

	// A device of the Backend's own with the same features off picks the
	// same variants.
	own := openTest(t, Options{}, knobsNoInt64NoFloatAtomics())
	c2 := residentCall(t, own, req, false)
	require.NoError(t, own.Run(context.Background(), c2))
	assert.Equal(t, own.LastStats().Variants, st.Variants, "the variants of a device of our own without the features")
}

// TestExternalRefusals checks what OpenExternal and WrapBuffer refuse,
// each with an error naming it.
func TestExternalRefusals(t *testing.T) {
	t.Run("no bufferDeviceAddress", func(t *testing.T) {
		d := openCaller(t, vk.Features{}, true)
		_, err := OpenExternal(externalOf(d), Options{PipelineCacheDir: "off"})
		require.ErrorIs(t, err, ops.ErrUnsupported)
		assert.Contains(t, err.Error(), "bufferDeviceAddress")
		buf, err := d.NewBuffer(256, WrapUsage&^vk.UsageShaderDeviceAddress)
		require.NoError(t, err)
		defer buf.Close()
		assert.NoError(t, d.Check(buf, 7), "the program's device after the refusal")
	})
	t.Run("bad handles and queues", func(t *testing.T) {
		d := openCaller(t, Requirements().Features, false)
		for _, tc := range []struct {
			name string
			edit func(*External)
			want string
		}{
			{"no device", func(e *External) { e.Device = nil }, "External.Device is nil"},
			{"no instance", func(e *External) { e.Instance = nil }, "External.Instance is nil"},
			{"queue family", func(e *External) { e.QueueFamily = 99 }, "External.QueueFamily 99"},
			{"queue index", func(e *External) { e.QueueIndex = 7 }, "External.QueueIndex 7"},
			{"Vulkan 1.0", func(e *External) { e.APIVersion = 1 << 22 }, "needs Vulkan 1.2"},
		} {
			ext := externalOf(d)
			tc.edit(&ext)
			_, err := OpenExternal(ext, Options{PipelineCacheDir: "off"})
			require.Error(t, err, tc.name)
			assert.Contains(t, err.Error(), tc.want, tc.name)
		}
	})
	t.Run("no features given", func(t *testing.T) {
		d := openCaller(t, Requirements().Features, false)
		ext := externalOf(d)
		ext.CreateInfo = nil
		_, err := OpenExternal(ext, Options{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "CreateInfo or Features")
	})
	d := openCaller(t, Requirements().Features, false)
	b := adoptTest(t, d, Options{})
	buf, err := d.NewBuffer(1024, WrapUsage)
	require.NoError(t, err)
	defer buf.Close()
	t.Run("no device-address usage", func(t *testing.T) {
		_, err := b.WrapBuffer(buf.Handle64(), 0, 1024, tensor.Float32, []int{256}, WrapUsage&^vk.UsageShaderDeviceAddress)
		require.ErrorIs(t, err, ops.ErrUnsupported)
		assert.Contains(t, err.Error(), "VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT")
	})
	t.Run("too small", func(t *testing.T) {
		_, err := b.WrapBuffer(buf.Handle64(), 0, 1000, tensor.Float32, []int{256}, WrapUsage)
		require.ErrorIs(t, err, ops.ErrInvalidTensor)
		assert.Contains(t, err.Error(), "too small")
		_, err = b.WrapBuffer(buf.Handle64(), 0, 1022, tensor.Int8, []int{1021}, WrapUsage)
		require.ErrorIs(t, err, ops.ErrInvalidTensor, "1021 bytes are written as 256 words")
	})
	t.Run("beyond the buffer", func(t *testing.T) {
		_, err := b.WrapBuffer(buf.Handle64(), 512, 1<<20, tensor.Float32, []int{1 << 18}, WrapUsage)
		require.ErrorIs(t, err, ops.ErrInvalidTensor)
		assert.Contains(t, err.Error(), "beyond the buffer")
	})
	t.Run("misaligned", func(t *testing.T) {
		_, err := b.WrapBuffer(buf.Handle64(), 8, 1000, tensor.Float32, []int{250}, WrapUsage)
		require.ErrorIs(t, err, ops.ErrInvalidTensor)
		assert.Contains(t, err.Error(), "multiple of 16")
	})
	t.Run("another device", func(t *testing.T) {
		own := openTest(t, Options{})
		x, err := own.NewTensor(context.Background(), tensor.Float32, []int{64})
		require.NoError(t, err)
		h, off, size := x.VkBuffer()
		require.NotZero(t, h)
		_, err = b.WrapBuffer(h, off, size, tensor.Float32, []int{64}, WrapUsage)
		require.ErrorIs(t, err, ops.ErrInvalidTensor)
		assert.Contains(t, err.Error(), "belongs to another device")

		d2 := openCaller(t, Requirements().Features, false)
		b2 := adoptTest(t, d2, Options{})
		buf2, err := d2.NewBuffer(256, WrapUsage)
		require.NoError(t, err)
		defer buf2.Close()
		w2, err := b2.WrapBuffer(buf2.Handle64(), 0, 256, tensor.Float32, []int{64}, WrapUsage)
		require.NoError(t, err)
		_, err = b.WrapBuffer(buf2.Handle64(), 0, 256, tensor.Float32, []int{64}, WrapUsage)
		require.ErrorIs(t, err, ops.ErrInvalidTensor)
		assert.Contains(t, err.Error(), "belongs to another device")
		require.NoError(t, w2.Close())
	})
}

// TestExternalExports checks the buffer, offset, size and device address
// a wrapped tensor and one of the Backend's give.
func TestExternalExports(t *testing.T) {
	d := openCaller(t, Requirements().Features, false)
	b := adoptTest(t, d, Options{})
	buf, err := d.NewBuffer(4096, WrapUsage)
	require.NoError(t, err)
	defer buf.Close()
	w, err := b.WrapBuffer(buf.Handle64(), 1024, 2048, tensor.Int32, []int{16, 32}, WrapUsage)
	require.NoError(t, err)
	h, off, size := w.VkBuffer()
	assert.Equal(t, [3]uint64{buf.Handle64(), 1024, 2048}, [3]uint64{h, off, size})
	assert.Equal(t, buf.Address()+1024, w.DeviceAddress())
	own, err := b.NewTensor(context.Background(), tensor.Int32, []int{8})
	require.NoError(t, err)
	h, off, size = own.VkBuffer()
	assert.NotZero(t, h)
	assert.Equal(t, uint64(0), off)
	assert.Equal(t, uint64(32), size)
	assert.NotZero(t, own.DeviceAddress())
	require.NoError(t, w.Close())
	h, _, _ = w.VkBuffer()
	assert.Zero(t, h, "a closed tensor")
	assert.NoError(t, d.Check(buf, 3), "the buffer after its tensor's Close")
	w2, err := b.WrapBuffer(buf.Handle64(), 0, 4096, tensor.Int32, []int{1024}, WrapUsage)
	require.NoError(t, err)
	require.NoError(t, b.Run(context.Background(), Call{Op: "ScatterElements-18", Data: w2, Out: w2,
		Indices: upload(t, b, tensor.MustFromSlice([]int{1}, []int64{5})), Updates: upload(t, b, tensor.MustFromSlice([]int{1}, []int32{9}))}))
	require.NoError(t, b.Close())
	assert.NoError(t, d.Check(buf, 4), "a buffer wrapped while the Backend was open, after its Close")
}

// TestExternalBadIndices records calls with a bad index, failing and
// skipping it: Result gives Run's error after the program's fence, and the
// output is Run's.
func TestExternalBadIndices(t *testing.T) {
	d := openCaller(t, Requirements().Features, false)
	b := adoptTest(t, d, Options{})
	for _, skip := range []bool{false, true} {
		for i, req := range skipCases() {
			req.SkipBadIndices = skip
			// Run on the Backend's own tensors of the same device.
			rc := residentCall(t, b, req, false)
			runErr := b.Run(context.Background(), rc)
			require.Error(t, runErr, "case %d", i)
			want := download(t, rc.Out)

			c, out := wrappedCall(t, b, d, req, false)
			bt := b.NewBatch()
			require.NoError(t, bt.Add(c))
			err, _ := recordWait(t, b, d, bt, RecordOptions{})
			require.Error(t, err, "case %d skip %v", i, skip)
			assert.Equal(t, runErr.Error(), err.Error(), "case %d skip %v", i, skip)
			assert.Empty(t, opstest.DiffExact(out.host(t), want), "case %d skip %v: Run's output", i, skip)
		}
	}
}

// TestExternalFoldFurther records a deterministic fold whose longest list
// is longer than a segment, which Submit finishes with a second
// submission: the recording holds every pass, and the result is cpuref's.
func TestExternalFoldFurther(t *testing.T) {
	d := openCaller(t, Requirements().Features, false)
	b := adoptTest(t, d, Options{Deterministic: true})
	rng := rand.New(rand.NewSource(52))
	req := opstest.ContentionRequest(rng, "ScatterElements-18", tensor.Float32, "add", 2, 2*segment+300, nil)
	want, err := ops.Run(context.Background(), cpuref.New(), req)
	require.NoError(t, err)
	// By Run, the list needs passes after the first: a second submission.
	rc, rout := wrappedCall(t, b, d, req, false)
	require.NoError(t, b.Run(context.Background(), rc))
	assert.Equal(t, 2, b.LastStats().Submits, "Run folds the long list in a second submission")
	assert.Empty(t, opstest.DiffExact(rout.host(t), want), "by Run")

	c, out := wrappedCall(t, b, d, req, true)
	bt := b.NewBatch()
	require.NoError(t, bt.Add(c))
	err, submits := recordWait(t, b, d, bt, RecordOptions{})
	require.NoError(t, err)
	assert.Zero(t, submits)
	assert.Empty(t, opstest.DiffExact(out.host(t), want), "recorded")
}

// TestExternalScratch records on the program's scratch buffer: as many
// bytes as ScratchBytes says suffice, fewer are refused, and the figure
// never shrinks as the sizes grow.
func TestExternalScratch(t *testing.T) {
	d := openCaller(t, Requirements().Features, false)
	b := adoptTest(t, d, Options{Deterministic: true})
	rng := rand.New(rand.NewSource(53))
	var last uint64
	for _, per := range []int{10, 1000, segment + 10} {
		req := opstest.ContentionRequest(rng, "ScatterElements-18", tensor.Float32, "add", 5, per, nil)
		want, err := ops.Run(context.Background(), cpuref.New(), req)
		require.NoError(t, err)
		c, out := wrappedCall(t, b, d, req, true)
		bt := b.NewBatch()
		require.NoError(t, bt.Add(c))
		need, err := bt.ScratchBytes()
		require.NoError(t, err)
		assert.GreaterOrEqual(t, need, last, "ScratchBytes grows with the sizes")
		last = need
		scratch, err := d.NewBuffer(256+need, WrapUsage)
		require.NoError(t, err)
		defer scratch.Close()

		small := b.NewBatch()
		require.NoError(t, small.Add(c))
		cmd, err := d.NewCommands()
		require.NoError(t, err)
		require.NoError(t, cmd.Begin())
		_, err = small.Record(context.Background(), cmd.Pointer(), RecordOptions{Scratch: scratch.Handle64(), ScratchOffset: 256, ScratchSize: need - 1, ScratchUsage: WrapUsage})
		require.ErrorIs(t, err, ops.ErrInvalidTensor, "one byte fewer")
		require.NoError(t, cmd.End())
		cmd.Close()

		err, submits := recordWait(t, b, d, bt, RecordOptions{Scratch: scratch.Handle64(), ScratchOffset: 256, ScratchSize: need, ScratchUsage: WrapUsage})
		require.NoError(t, err)
		assert.Zero(t, submits)
		assert.Empty(t, opstest.DiffExact(out.host(t), want), "%d per target", per)
	}
}

// TestExternalSubmitWith orders a batch after the program's timeline
// semaphore and the program's wait after the batch's signal.
func TestExternalSubmitWith(t *testing.T) {
	d := openCaller(t, Requirements().Features, false)
	require.True(t, d.Enabled.TimelineSemaphore, "lavapipe offers timeline semaphores")
	b := adoptTest(t, d, Options{})
	sem, err := d.NewTimeline(0)
	require.NoError(t, err)
	defer d.DestroySemaphore(sem)
	rng := rand.New(rand.NewSource(54))
	req := opstest.ContentionRequest(rng, "ScatterElements-18", tensor.Int32, "add", 3, 100, nil)
	want, err := ops.Run(context.Background(), cpuref.New(), req)
	require.NoError(t, err)
	c, out := wrappedCall(t, b, d, req, true)
	bt := b.NewBatch()
	require.NoError(t, bt.Add(c))
	s, err := bt.SubmitWith(context.Background(), SubmitSync{Wait: []SemaphoreValue{{Semaphore: sem, Value: 1}}, Signal: []SemaphoreValue{{Semaphore: sem, Value: 2}}})
	require.NoError(t, err)
	v, err := d.Value(sem)
	require.NoError(t, err)
	assert.Equal(t, uint64(0), v, "the batch waits for the program")
	assert.False(t, s.Done())
	require.NoError(t, d.Signal(sem, 1))
	require.NoError(t, d.WaitValue(sem, 2), "the batch signals")
	require.NoError(t, s.Wait(context.Background()))
	assert.Empty(t, opstest.DiffExact(out.host(t), want))

	own := openTest(t, Options{})
	obt := own.NewBatch()
	rc := residentCall(t, own, req, true)
	require.NoError(t, obt.Add(rc))
	_, err = obt.SubmitWith(context.Background(), SubmitSync{Signal: []SemaphoreValue{{Semaphore: sem, Value: 3}}})
	require.ErrorIs(t, err, ops.ErrUnsupported, "a device of the Backend's own")
}

// TestExternalBesideOwnInstances opens, closes and releases Backends of
// their own devices before and after adopting the program's, and between
// two adoptions: vulkan-go's one table of instance functions serves both.
func TestExternalBesideOwnInstances(t *testing.T) {
	req := opstest.ContentionRequest(rand.New(rand.NewSource(55)), "ScatterElements-18", tensor.Int32, "add", 4, 50, nil)
	want, err := ops.Run(context.Background(), cpuref.New(), req)
	require.NoError(t, err)
	ownRun := func() {
		own := openTest(t, Options{})
		rc := residentCall(t, own, req, false)
		require.NoError(t, own.Run(context.Background(), rc))
		assert.Empty(t, opstest.DiffExact(download(t, rc.Out), want))
	}
	ownRun()
	d := openCaller(t, Requirements().Features, false)
	b, err := OpenExternal(externalOf(d), Options{PipelineCacheDir: "off"})
	require.NoError(t, err)
	ownRun()
	require.NoError(t, ReleaseInstances())
	c, out := wrappedCall(t, b, d, req, false)
	require.NoError(t, b.Run(context.Background(), c))
	assert.Empty(t, opstest.DiffExact(out.host(t), want))
	require.NoError(t, c.Out.Close())
	require.NoError(t, b.Close())
	ownRun()
}

// knobsNoInt64NoFloatAtomics makes a device of the Backend's own plan as
// one without shaderInt64, 64-bit and float atomics.
func knobsNoInt64NoFloatAtomics() knobs.Knobs {
	return knobs.Knobs{NoShaderInt64: true, NoInt64Atomics: true, NoFloatAtomics: true}
}

// TestExternalSubmitHook checks that every queue submission of the
// Backend goes through External.Submit, none when recorded, and that a
// hook that does not submit fails the call with its error.
func TestExternalSubmitHook(t *testing.T) {
	d := openCaller(t, Requirements().Features, false)
	var calls int
	refuse := false
	ext := externalOf(d)
	ext.Submit = func(submit func() error) error {
		calls++
		if refuse {
			return errors.New("the queue is the program's now")
		}
		d.QueueMu.Lock()
		defer d.QueueMu.Unlock()
		return submit()
	}
	b, err := OpenExternal(ext, Options{PipelineCacheDir: "off"})
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	req := opstest.ContentionRequest(rand.New(rand.NewSource(56)), "ScatterElements-18", tensor.Int32, "add", 4, 50, nil)
	c, _ := wrappedCall(t, b, d, req, false)
	before := b.device().Counters()
	require.NoError(t, b.Run(context.Background(), c))
	assert.Equal(t, int(b.device().Counters().Sub(before).Submits), calls, "every submission through the hook")
	assert.NotZero(t, calls)

	n := calls
	bt := b.NewBatch()
	require.NoError(t, bt.Add(c))
	err, _ = recordWait(t, b, d, bt, RecordOptions{})
	require.NoError(t, err)
	assert.Equal(t, n, calls, "none when recorded")

	refuse = true
	err = b.Run(context.Background(), c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the queue is the program's now")
}

// TestExternalRandom records random requests of every operator, dtype
// and reduction on the program's buffers, eight calls a recording, each
// bit-identical to cpuref (deterministic mode); and a chain of in-place
// calls on one table, each seeing the one before.
func TestExternalRandom(t *testing.T) {
	d := openCaller(t, Requirements().Features, false)
	b := adoptTest(t, d, Options{Deterministic: true})
	seed := int64(57)
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	n := 160
	if testing.Short() {
		n = 48
	}
	type pending struct {
		out  *wrapped
		want *tensor.Tensor
		req  ops.Request
	}
	var batch []pending
	ran := 0
	bt := b.NewBatch()
	flush := func() {
		if len(batch) == 0 {
			return
		}
		err, submits := recordWait(t, b, d, bt, RecordOptions{})
		require.NoError(t, err, "seed %d", seed)
		assert.Zero(t, submits)
		for _, p := range batch {
			assert.Empty(t, opstest.DiffExact(p.out.host(t), p.want), "seed %d: %s %v", seed, p.req.Op, p.req.Reduction)
		}
		batch, bt = nil, b.NewBatch()
	}
	for i := 0; i < n; i++ {
		var req ops.Request
		if i%2 == 0 {
			req = opstest.RandomRequest(rng, opstest.Config{})
		} else {
			req = opstest.RandomReductionRequest(rng, opstest.Config{})
		}
		if req.Data == nil || req.Data.DType == tensor.String {
			continue
		}
		want, err := ops.Run(context.Background(), cpuref.New(), req)
		if err != nil {
			continue // what cpuref refuses, the table tests cover
		}
		c, out := wrappedCall(t, b, d, req, false)
		// What the device refuses (float64 arithmetic without
		// shaderFloat64) is refused when planned, as ScratchBytes plans.
		probe := b.NewBatch()
		require.NoError(t, probe.Add(c), "seed %d: %s", seed, req.Op)
		if _, err := probe.ScratchBytes(); errors.Is(err, ops.ErrUnsupported) {
			continue
		} else {
			require.NoError(t, err, "seed %d: %s", seed, req.Op)
		}
		require.NoError(t, bt.Add(c))
		batch = append(batch, pending{out, want, req})
		ran++
		if len(batch) == 8 {
			flush()
		}
	}
	flush()
	t.Logf("%d random calls recorded", ran)
	require.Greater(t, ran, n/2, "the random calls recorded")

	req := opstest.ContentionRequest(rng, "ScatterND-18", tensor.Float32, "add", 6, 40, nil)
	want := referenceRepeated(t, req, 3)
	c, out := wrappedCall(t, b, d, req, true)
	for k := 0; k < 3; k++ {
		require.NoError(t, bt.Add(c))
	}
	err, _ := recordWait(t, b, d, bt, RecordOptions{})
	require.NoError(t, err)
	assert.Empty(t, opstest.DiffExact(out.host(t), want[3]), "three calls in place, chained")
}

// TestExternalCacheWarmFigures: on the program's device the pipeline
// cache file, Warm, the measured figures and the pipeline index work as
// on a device of the Backend's own, keyed on the physical device: a
// second Backend on a second device of the program's, same cache folder,
// finds the figures kept and the warmed pipelines known.
func TestExternalCacheWarmFigures(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	req := dupRequest("ScatterElements-18", "add", tensor.Float32, 3000)
	p, err := ops.PrepareShapes(shapesOnly(req))
	require.NoError(t, err)

	d := openCaller(t, Requirements().Features, false)
	b, err := OpenExternal(externalOf(d), Options{PipelineCacheDir: dir})
	require.NoError(t, err)
	b.quickFigures = true // small probes: the figures' keeping is the subject
	st, err := b.Warm(ctx, p)
	require.NoError(t, err)
	assert.Positive(t, st.Compiled)
	assert.Equal(t, dir, filepath.Dir(st.CacheFile))
	m, err := b.Figures(ctx, false, func(m *cost.Device) error {
		m.CPU = &cost.CPU{Threads: 1, CopyGBps: 1, MoveGBps: 2, ElementNs: 3, ReduceNs: 4}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, m.Check())
	require.True(t, m.Complete())
	var specs []vk.PipelineSpec
	for pk := range b.pipes {
		spec, _, err := pipelineSpec(pk)
		require.NoError(t, err)
		specs = append(specs, spec)
	}
	require.NoError(t, b.Close())
	assert.Empty(t, b.device().LiveObjects())

	d2 := openCaller(t, Requirements().Features, false)
	b2, err := OpenExternal(externalOf(d2), Options{PipelineCacheDir: dir})
	require.NoError(t, err)
	defer func() { require.NoError(t, b2.Close()) }()
	for _, spec := range specs {
		assert.True(t, b2.device().PipelineKnown(spec), "a pipeline warmed on the first device")
	}
	again, err := b2.Figures(ctx, false, func(*cost.Device) error {
		t.Error("kept figures are not measured again")
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, m, again, "the figures kept for the physical device")
	// An estimate of the host call, as auto makes one: the kept
	// figures applied to the work the adopted device plans.
	full, err := ops.Prepare(req)
	require.NoError(t, err)
	n, err := b2.Needs(full)
	require.NoError(t, err)
	assert.Zero(t, b2.Uncompiled(n), "the warmed pipelines count as compiled")
	est := again.Estimate(n.Work())
	require.True(t, est.Known())
	assert.Positive(t, est.Ms)
	want, err := ops.Run(ctx, cpuref.New(), req)
	require.NoError(t, err)
	c, out := wrappedCall(t, b2, d2, req, true)
	require.NoError(t, b2.Run(ctx, c))
	assert.Empty(t, opstest.DiffFor(opstest.ReductionOf(req), out.host(t), want))
}

// TestExternalHostTransfers moves a wrapped tensor's payload between the
// host and the program's buffer (Write, Read, Download, CopyFrom, CopyTo:
// staged copies at the tensor's offset), leaving the bytes around it as
// they were.
func TestExternalHostTransfers(t *testing.T) {
	d := openCaller(t, Requirements().Features, false)
	b := adoptTest(t, d, Options{})
	ctx := context.Background()
	x := tensor.MustFromSlice([]int{3, 5}, []int16{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	zero, err := tensor.New(tensor.Int16, []int{3, 5})
	require.NoError(t, err)
	w := wrapHost(t, b, d, zero)
	require.NoError(t, w.t.Write(ctx, x))
	assert.Empty(t, opstest.DiffExact(w.host(t), x), "Write lands at the offset")

	y := tensor.MustFromSlice([]int{3, 5}, []int16{-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15})
	copy(w.buf.Bytes[w.offset:], y.Data)
	got, err := w.t.Download(ctx)
	require.NoError(t, err)
	assert.Empty(t, opstest.DiffExact(got, y), "Download reads at the offset")
	h, err := tensor.New(tensor.Int16, []int{3, 5})
	require.NoError(t, err)
	require.NoError(t, w.t.Read(ctx, h))
	assert.Empty(t, opstest.DiffExact(h, y))

	var sink bytes.Buffer
	n, err := w.t.CopyTo(ctx, &sink)
	require.NoError(t, err)
	assert.Equal(t, int64(30), n)
	assert.Equal(t, y.Data, sink.Bytes())
	n, err = w.t.CopyFrom(ctx, bytes.NewReader(x.Data))
	require.NoError(t, err)
	assert.Equal(t, int64(30), n)
	assert.Empty(t, opstest.DiffExact(w.host(t), x), "CopyFrom")
}

// TestExternalAliasesOrdered: two tensors wrapping one range of the
// program's buffer are one buffer to the barriers between calls, so a
// call reading one waits for the call writing the other; tensors of
// distinct buffers need no barrier between their calls.
func TestExternalAliasesOrdered(t *testing.T) {
	d := openCaller(t, Requirements().Features, false)
	b := adoptTest(t, d, Options{})
	ctx := context.Background()
	req := opstest.ContentionRequest(rand.New(rand.NewSource(58)), "ScatterElements-18", tensor.Int32, "add", 8, 16, nil)
	want := referenceRepeated(t, req, 2)
	barriers := func(alias bool) int {
		c, data := wrappedCall(t, b, d, req, true)
		// Its own indices, updates and data: only an alias ties it to c.
		second, _ := wrappedCall(t, b, d, req, true)
		if alias {
			again, err := b.WrapBuffer(data.buf.Handle64(), data.offset, (data.bytes+3)&^3, req.Data.DType, req.Data.Shape, WrapUsage)
			require.NoError(t, err)
			defer again.Close()
			second.Data, second.Out = again, again
		}
		bt := b.NewBatch()
		require.NoError(t, bt.Add(c))
		require.NoError(t, bt.Add(second))
		cmd, err := d.NewCommands()
		require.NoError(t, err)
		defer cmd.Close()
		require.NoError(t, cmd.Begin())
		cmd.BarrierBefore()
		r, err := bt.Record(ctx, cmd.Pointer(), RecordOptions{})
		require.NoError(t, err)
		n := r.f.seq.Barriers()
		cmd.BarrierAfter()
		require.NoError(t, cmd.End())
		require.NoError(t, cmd.SubmitWait())
		require.NoError(t, r.Result(ctx))
		require.NoError(t, r.Release())
		if alias {
			assert.Empty(t, opstest.DiffExact(data.host(t), want[2]), "both calls on the one range")
		}
		return n
	}
	distinct, aliased := barriers(false), barriers(true)
	assert.Greater(t, aliased, distinct, "the second call on an alias waits for the first")
}
