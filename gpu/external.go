//go:build cgo

package gpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// External is a Vulkan device that the program created and keeps, for
// OpenExternal: its VkInstance, VkPhysicalDevice and VkDevice (as
// unsafe.Pointer, whatever binding made them), the compute-capable queue
// the Backend submits to and whose family its recordings are for, the
// features the device was created with (CreateInfo or Features, read
// during OpenExternal only) and an optional Submit hook wrapping every
// queue submission of the Backend. The fields are those of vk.External.
type External = vk.External

// Features are the device features the Backend picks its kernels by; see
// Requirements for what each buys.
type Features = vk.Features

// FeatureRequest is a feature chain in C memory for the program's own
// vkCreateDevice (DeviceRequirements.Request): Next() goes into
// VkDeviceCreateInfo.pNext, Extensions into its enabled extensions; Free
// it once the device is created.
type FeatureRequest = vk.FeatureRequest

// SemaphoreValue is a timeline semaphore (VkSemaphore, as the 64-bit value
// of the handle) and a value (SubmitWith).
type SemaphoreValue = vk.SemaphoreValue

// Requirement is one device feature the Backend uses: its Vulkan name and
// what it buys.
type Requirement struct {
	Name string
	Buys string
}

// DeviceRequirements lists what a device needs for the Backend to open on
// it (Required) and what else it uses where enabled (Optional), for a
// program that creates the device itself and then calls OpenExternal.
type DeviceRequirements struct {
	// APIVersion is the least Vulkan version of instance and device.
	APIVersion uint32
	Required   []Requirement
	Optional   []Requirement
	// Features has every feature of Required and Optional on: the
	// argument of Request for a device that enables all it can.
	Features Features
}

// Requirements returns the device features the Backend needs and those it
// uses where they are enabled, with what each buys.
func Requirements() DeviceRequirements {
	return DeviceRequirements{
		APIVersion: 1<<22 | 2<<12,
		Required: []Requirement{
			{"Vulkan 1.2", "the instance's and device's API version"},
			{"bufferDeviceAddress", "kernels reach every tensor through buffer device addresses"},
			{"a compute queue", "every kernel is a compute shader; workgroups of 256 invocations"},
		},
		Optional: []Requirement{
			{"shaderInt64", "64-bit addresses and positions; without it the 32-bit baseline kernels run and counts above 2^31 are refused"},
			{"shaderFloat64", "float64 sum, sub, prod and mean (refused without it)"},
			{"shaderInt16", "declared by kernels of 16-bit element types where available"},
			{"shaderBufferInt64Atomics", "atomic scatter of 8-byte elements; without it they fold in order"},
			{"shaderBufferFloat32AtomicAdd (VK_EXT_shader_atomic_float)", "float32 add as one atomic instead of a compare-and-swap loop"},
			{"shaderBufferFloat64AtomicAdd (VK_EXT_shader_atomic_float)", "float64 add as one atomic instead of a compare-and-swap loop"},
			{"shaderBufferFloat32AtomicMinMax (VK_EXT_shader_atomic_float2)", "reported in Capabilities; min and max compare integer keys either way"},
			{"timelineSemaphore", "Batch.SubmitWith: submissions that wait for and signal the program's timeline semaphores"},
		},
		Features: Features{
			ShaderInt64: true, ShaderFloat64: true, ShaderInt16: true, ShaderFloat16: true, ShaderInt8: true,
			StorageBuffer8BitAccess: true, StorageBuffer16BitAccess: true, BufferDeviceAddress: true, TimelineSemaphore: true,
			Float32Atomics: true, Float32AtomicAdd: true, Float32AtomicMinMax: true, SharedFloat32AtomicAdd: true,
			Float16Atomics: true, Float16AtomicAdd: true, Float16AtomicMinMax: true,
			Float64Atomics: true, Float64AtomicAdd: true, Float64AtomicMinMax: true,
			Int64BufferAtomics: true, Int64SharedAtomics: true,
		},
	}
}

// Request returns the feature chain that enables, of want, what the
// physical device supports, for the program's VkDeviceCreateInfo (whose
// pEnabledFeatures stays NULL: the chain holds the core features):
// vulkan-go's structures predate Vulkan 1.2. instance was created with
// apiVersion. Free the request once the device is created.
func (r DeviceRequirements) Request(instance, physicalDevice unsafe.Pointer, apiVersion uint32, want Features) (*FeatureRequest, error) {
	req, err := vk.RequestFeatures(instance, physicalDevice, apiVersion, want)
	return req, wrapVK(err)
}

// OpenExternal returns a Backend on the program's own device (External):
// it adopts the device and never destroys it. The Backend reads which
// features the device was created with and picks its kernels from those,
// as Open does from a device of its own (the 32-bit baseline without
// shaderInt64, compare-and-swap without float atomics). Close destroys
// only what the Backend created (pipelines, the pipeline cache, buffers,
// command pools, fences, descriptor pools) after waiting for its own
// submissions, not for the device to go idle: the program's instance,
// device, queue and buffers stay usable, and the program keeps them alive
// until Close returned. The program calls Close once its own
// submissions that hold the Backend's recordings or use its tensors have
// completed: Close cannot see them. Options.Device, Validation and
// GPUAssistedValidation do not apply (the program's instance has its own
// layers; ValidationMessages is nil); the pipeline cache file and the
// kept figures work as for Open, keyed on the physical device.
//
// It fails with an error wrapping ops.ErrUnsupported, naming what is
// missing, for a device below Vulkan 1.2 or without bufferDeviceAddress,
// and with one naming the field for a missing handle, a physical device
// not of the instance, or a queue family without compute.
func OpenExternal(ext External, opts Options) (*Backend, error) {
	if ext.APIVersion != 0 && ext.APIVersion < 1<<22|2<<12 {
		return nil, fmt.Errorf("%w: vulkan: External.APIVersion %d.%d: the Backend needs Vulkan 1.2", ops.ErrUnsupported,
			ext.APIVersion>>22&0x7f, ext.APIVersion>>12&0x3ff)
	}
	vo := vk.Options{
		PipelineCacheDir: opts.PipelineCacheDir,
		Warn:             opts.Warn,
		NoUnifiedMemory:  opts.NoUnifiedMemory,
		DeviceTimeout:    opts.DeviceTimeout,
	}
	dev, err := vk.Adopt(ext, vo)
	if err != nil {
		return nil, wrapVK(err)
	}
	return newBackend(dev, opts, knobs.Knobs{})
}

// extRange is the caller's buffer range a wrapped tensor is.
type extRange struct{ buffer, offset, size uint64 }

// WrapUsage is the VkBufferUsageFlags a buffer needs for WrapBuffer:
// storage buffer, shader device address, transfer source and destination
// (the Backend fills and copies tensors, and Read and Write stage through
// copies).
const WrapUsage = vk.WrapUsage

// WrapBuffer returns a resident Tensor of dt and shape whose payload is
// bytes [offset, offset+size) of the program's VkBuffer buffer (the 64-bit
// value of the handle), made on the Backend's device with usage (its
// VkBufferCreateInfo.usage, which Vulkan cannot be asked for; it must hold
// WrapUsage) and bound to memory. Every resident call takes it as it
// takes the Backend's own tensors; Close forgets it and the Backend never
// frees the buffer. The program keeps the buffer alive while the tensor is
// open and orders its own accesses with the Backend's (Record states the
// barriers).
//
// It refuses with an error wrapping ops.ErrInvalidTensor, naming the
// buffer and what is wrong: a range smaller than the tensor (rounded up to
// a 4-byte word, since 1- and 2-byte elements are written through
// words), an offset that is not a multiple of 16, a range beyond the
// buffer's memory requirements, a buffer of another device that this
// process showed the Backend (its own tensors' buffers, those wrapped by
// another Backend); with ops.ErrUnsupported for usage lacking a flag of
// WrapUsage. A buffer of a device the process never showed the Backend
// cannot be told apart; the validation layer reports it.
func (b *Backend) WrapBuffer(buffer, offset, size uint64, dt tensor.DType, shape []int, usage uint32) (*Tensor, error) {
	if b == nil {
		return nil, ErrClosed
	}
	desc := &tensor.Tensor{DType: dt, Shape: shape}
	if err := desc.CheckShape(); err != nil {
		return nil, fmt.Errorf("%w: vulkan: WrapBuffer: %w", ops.ErrInvalidTensor, err)
	}
	if dt == tensor.String {
		return nil, fmt.Errorf("%w: vulkan: WrapBuffer: string tensors cannot be resident on the device", ops.ErrUnsupported)
	}
	n, _ := tensor.NumElements(shape)
	bytes := uint64(n) * uint64(dt.Size())
	need := (bytes + 3) &^ 3
	switch {
	case buffer == 0:
		return nil, fmt.Errorf("%w: vulkan: WrapBuffer: the buffer is VK_NULL_HANDLE", ops.ErrInvalidTensor)
	case size < need:
		return nil, fmt.Errorf("%w: vulkan: WrapBuffer: buffer %#x: the range of %d bytes is too small for a %v%s tensor, which needs %d",
			ops.ErrInvalidTensor, buffer, size, dt, tensor.FormatShape(shape), need)
	case offset%minChunk != 0:
		return nil, fmt.Errorf("%w: vulkan: WrapBuffer: buffer %#x: offset %d is not a multiple of %d", ops.ErrInvalidTensor, buffer, offset, minChunk)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	dev, err := b.wrapRange(buffer, offset, bytes, usage, b.shift)
	if err != nil {
		return nil, err
	}
	return b.keepResident(&Tensor{b: b, dtype: dt, shape: slices.Clone(shape), dev: dev, ext: &extRange{buffer, offset, size}}), nil
}

// wrapRange makes a device tensor of bytes bytes at offset in the caller's
// buffer, in chunks of 2^shift bytes (each a view); b.mu is held.
func (b *Backend) wrapRange(buffer, offset, bytes uint64, usage uint32, shift uint) (t *devTensor, err error) {
	t = &devTensor{size: bytes, sizes: chunkSizes(bytes, shift)}
	defer func() {
		if err != nil {
			b.releaseTensor(t)
			t = nil
		}
	}()
	for i, n := range t.sizes {
		at := offset + uint64(i)<<shift
		view, err := b.dev.WrapBuffer(buffer, at, (n+3)&^3, usage)
		if err != nil {
			if errors.Is(err, vk.ErrUnsupported) {
				return t, wrapVK(err)
			}
			return t, fmt.Errorf("%w: vulkan: %w", ops.ErrInvalidTensor, err)
		}
		t.bufs = append(t.bufs, view)
		addr, err := view.Address()
		if err != nil {
			return t, wrapVK(err)
		}
		if addr%minChunk != 0 {
			return t, fmt.Errorf("%w: vulkan: WrapBuffer: buffer %#x at offset %d has device address %#x, not %d-byte aligned",
				ops.ErrInvalidTensor, buffer, at, addr, minChunk)
		}
		t.addrs = append(t.addrs, addr)
	}
	return t, nil
}

// VkBuffer returns the VkBuffer (the 64-bit value of the handle), the
// offset and the size in bytes that hold t's payload, so that the
// program's shaders and commands read and write it: for a wrapped tensor
// the range WrapBuffer was given; for one of the Backend's own, its
// buffer (made with WrapUsage). A tensor larger than the device's largest
// buffer spans several and gives 0, 0, 0, as does a closed or empty one.
func (t *Tensor) VkBuffer() (buffer, offset, size uint64) {
	if t == nil || t.b == nil {
		return 0, 0, 0
	}
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	if t.closed || t.b.closed {
		return 0, 0, 0
	}
	if t.ext != nil {
		return t.ext.buffer, t.ext.offset, t.ext.size
	}
	if len(t.dev.bufs) != 1 {
		return 0, 0, 0
	}
	h, o := t.dev.bufs[0].Handle()
	return h, o, t.dev.size
}

// DeviceAddress returns the buffer device address of t's first byte (for
// GL_EXT_buffer_reference in the program's shaders): 0 for a closed or
// empty tensor, or one of the Backend's own that spans several buffers.
func (t *Tensor) DeviceAddress() uint64 {
	if t == nil || t.b == nil {
		return 0
	}
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	if t.closed || t.b.closed || len(t.dev.addrs) == 0 || (t.ext == nil && len(t.dev.addrs) != 1) {
		return 0
	}
	return t.dev.addrs[0]
}

// arena cuts a recording's own tensors (parameters, owner words, sort
// buffers) out of the caller's scratch buffer, or, when counting, only
// measures them.
type arena struct {
	counting bool
	buffer   uint64
	base     uint64
	limit    uint64
	usage    uint32
	at       uint64
}

// scratchAlign aligns each tensor cut out of scratch.
const scratchAlign = 256

// take returns a tensor of size bytes in chunks of 2^shift cut from the
// arena (placeholders with zero addresses when counting).
func (a *arena) take(b *Backend, size uint64, shift uint) (*devTensor, error) {
	t := &devTensor{size: size, sizes: chunkSizes(size, shift)}
	for _, n := range t.sizes {
		at := (a.at + scratchAlign - 1) &^ (scratchAlign - 1)
		span := allocSize(n, shift)
		a.at = at + span
		if a.counting {
			t.addrs = append(t.addrs, 0)
			continue
		}
		if a.at > a.limit {
			b.releaseTensor(t)
			return nil, fmt.Errorf("%w: vulkan: Record: the scratch buffer's %d bytes are too few (Batch.ScratchBytes gives what the batch needs)",
				ops.ErrInvalidTensor, a.limit)
		}
		part, err := b.wrapRange(a.buffer, a.base+at, n, a.usage, shift)
		if err != nil {
			b.releaseTensor(t)
			return nil, err
		}
		t.bufs = append(t.bufs, part.bufs...)
		t.addrs = append(t.addrs, part.addrs...)
	}
	return t, nil
}

// ScratchBytes returns the bytes of scratch memory Record needs for the
// batch's calls as added so far (RecordOptions.Scratch): parameters, error
// words and each call's own tensors (normalised indices, owner words, the
// sort's buffers). It follows the shapes, never the index values, and
// grows with them: adding a call or enlarging a shape never lowers it.
func (bt *Batch) ScratchBytes() (uint64, error) {
	if bt == nil || bt.b == nil {
		return 0, ErrClosed
	}
	b := bt.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, ErrClosed
	}
	if len(bt.calls) == 0 {
		return 0, nil
	}
	f := &flight{r: &execution{}, what: batchName(bt.calls), resident: true}
	b.carve = &arena{counting: true}
	defer func() { b.carve = nil }()
	if err := b.buildCalls(bt.calls, f, true); err != nil {
		b.releaseFlightTensors(f)
		return 0, err
	}
	for _, sz := range b.paramSizes(f) {
		at := (b.carve.at + scratchAlign - 1) &^ (scratchAlign - 1)
		b.carve.at = at + allocSize(sz, b.maxShift)
	}
	b.releaseFlightTensors(f)
	return b.carve.at, nil
}

// releaseFlightTensors gives f's own tensors back (views of scratch are
// forgotten), keeping none as clear owner words.
func (b *Backend) releaseFlightTensors(f *flight) {
	for _, t := range f.r.tensors {
		b.releaseTensor(t)
	}
	f.r.tensors = nil
}

// RecordOptions configures Batch.Record.
type RecordOptions struct {
	// Scratch is the caller's VkBuffer (the 64-bit value of the handle,
	// made with WrapUsage) that the recording's own tensors are cut out
	// of, from ScratchOffset (a multiple of 256) for ScratchSize bytes (at
	// least Batch.ScratchBytes). Zero means the Backend allocates them
	// from its pool and keeps them until Recording.Release.
	Scratch       uint64
	ScratchOffset uint64
	ScratchSize   uint64
	// ScratchUsage is Scratch's VkBufferUsageFlags.
	ScratchUsage uint32
}

// Recording is a Batch recorded into the program's command buffer
// (Batch.Record). Result reads its outcome once the program's submission
// of that command buffer completed; Release gives back what it holds.
type Recording struct {
	b        *Backend
	f        *flight
	done     bool
	err      error
	released bool
}

// Record records the batch's calls into commandBuffer, a VkCommandBuffer
// (as unsafe.Pointer) of the Backend's device that the program has begun
// and is recording, for a queue of the family the Backend was opened on
// (External.QueueFamily; for a Backend of Open, its own queue's family).
// The Backend neither submits nor waits: there are no submissions of its
// own, and every pass a call may need is recorded (an in-order fold
// records each further pass its shapes allow, which Submit would run only
// if the first found long lists). The parameters are written when Record
// runs; submit the command buffer once per Recording. The batch is then
// empty, whatever the outcome.
//
// The program owes, before the recorded commands, a barrier that makes
// its writes of the calls' tensors (wrapped or the Backend's) available
// and visible to compute-shader reads and writes and to transfer reads
// and writes (srcStageMask its writing stages, dstStageMask
// VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT|VK_PIPELINE_STAGE_TRANSFER_BIT,
// dstAccessMask VK_ACCESS_SHADER_READ_BIT|VK_ACCESS_SHADER_WRITE_BIT|
// VK_ACCESS_TRANSFER_READ_BIT|VK_ACCESS_TRANSFER_WRITE_BIT); and after
// them, before its own commands read the outputs, one from
// VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT|VK_PIPELINE_STAGE_TRANSFER_BIT with
// VK_ACCESS_SHADER_WRITE_BIT|VK_ACCESS_TRANSFER_WRITE_BIT to its readers.
// The recording ends with a barrier to VK_PIPELINE_STAGE_HOST_BIT (its
// error words, read by Result). The recorded commands overwrite the
// command buffer's compute pipeline, descriptor set bindings and push
// constants: rebind yours after them. Barriers between the calls are the
// Backend's.
//
// The Backend's submissions still in flight (Submit, SubmitWith) come
// before the recorded commands where the program submits the command
// buffer to the Backend's queue (External.QueueIndex), in submission
// order; for another queue, Wait for them first.
//
// Record returns an error for what it finds while recording (as Submit
// does); then the command buffer may hold part of the batch, and the
// program should discard it. An empty batch gives a nil Recording.
func (bt *Batch) Record(ctx context.Context, commandBuffer unsafe.Pointer, opt RecordOptions) (*Recording, error) {
	calls, b, err := bt.take()
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if commandBuffer == nil {
		return nil, errors.New("vulkan: Record: the command buffer is nil")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if run, err := b.ready(ctx, calls); !run {
		return nil, err
	}
	// A submission whose last call may need further fold passes runs them
	// when its completion is observed: before the recorded commands can.
	if err := b.completeContinuing(ctx); err != nil {
		return nil, err
	}
	if opt.Scratch != 0 {
		if opt.ScratchOffset%scratchAlign != 0 {
			return nil, fmt.Errorf("%w: vulkan: Record: ScratchOffset %d is not a multiple of %d", ops.ErrInvalidTensor, opt.ScratchOffset, scratchAlign)
		}
		b.carve = &arena{buffer: opt.Scratch, base: opt.ScratchOffset, limit: opt.ScratchSize, usage: opt.ScratchUsage}
		defer func() { b.carve = nil }()
	}
	f := &flight{r: &execution{}, start: time.Now(), what: batchName(calls), resident: true}
	before := b.dev.Counters()
	err = b.buildCalls(calls, f, true)
	if err == nil {
		f.seq, err = b.dev.RecordInto(commandBuffer)
		err = wrapVK(err)
	}
	if err == nil {
		err = b.recordFlight(f)
	}
	if err == nil {
		err = wrapVK(f.seq.Finish())
	}
	b.countSince(&f.st, before)
	if err != nil {
		b.releaseFlightTensors(f)
		if f.seq != nil {
			_ = f.seq.Close()
		}
		return nil, f.named(err)
	}
	return &Recording{b: b, f: f}, nil
}

// Result returns the recording's outcome once the program's submission of
// its command buffer completed (the program waited for its fence or
// semaphore; Result cannot tell): nil, or the error Run would give for
// the first call that found a bad index, with the same outputs (with
// SkipBadIndices, every valid update applied and the first bad index
// reported). It may be called again and returns the same. Naming a bad
// index reads the indices back, which for a tensor the host cannot map is
// one submission of the Backend's.
func (r *Recording) Result(ctx context.Context) error {
	if r == nil {
		return nil
	}
	b := r.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if r.done {
		return r.err
	}
	if r.released || b.closed {
		return ErrClosed
	}
	before := b.dev.Counters()
	r.f.seq.Completed()
	r.err = r.f.named(b.outcome(r.f))
	r.done = true
	b.countSince(&r.f.st, before)
	r.f.st.Total = time.Since(r.f.start)
	if r.err == nil {
		b.stats = r.f.st
	}
	return r.err
}

// Stats returns the figures of the recorded batch (its passes, dispatches,
// kernel variants and the Backend's own submissions and waits, which are
// none unless Result named a bad index), once Result returned.
func (r *Recording) Stats() Stats {
	if r == nil {
		return Stats{}
	}
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if !r.done {
		return Stats{}
	}
	return r.f.st.clone()
}

// Release gives back what the recording holds (its parameter buffer, its
// own tensors or its views of the scratch buffer, the host memory its
// error words are read through), once the program's submission completed.
// It is idempotent; Backend.Close releases recordings left unreleased.
func (r *Recording) Release() error {
	if r == nil {
		return nil
	}
	b := r.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if r.released {
		return nil
	}
	r.released = true
	if b.closed {
		return nil
	}
	b.releaseFlightTensors(r.f)
	err := wrapVK(r.f.seq.Close())
	r.f.seq = nil
	b.trimPool()
	return err
}

// SubmitSync lists the timeline semaphores a SubmitWith waits for before
// its calls and signals after them.
type SubmitSync struct {
	Wait, Signal []SemaphoreValue
}

// SubmitWith is Submit for a program that submits its own work to the
// same device separately: the submission waits (at every stage) until each
// semaphore of s.Wait reaches its value, and sets each of s.Signal to its
// value once every call completed, so the program's work and the batch are
// ordered on the device without a host wait. Every pass a call may need is
// in the one submission (as for Record). The semaphores are the program's,
// of type VK_SEMAPHORE_TYPE_TIMELINE; the Backend must have been opened by
// OpenExternal on a device created with timelineSemaphore, else it fails
// with an error wrapping ops.ErrUnsupported. The Submission's Wait gives
// the outcome as for Submit.
func (bt *Batch) SubmitWith(ctx context.Context, s SubmitSync) (*Submission, error) {
	if bt == nil || bt.b == nil {
		return nil, ErrClosed
	}
	if (len(s.Wait) > 0 || len(s.Signal) > 0) && !bt.b.dev.Timelines() {
		bt.calls = nil
		return nil, fmt.Errorf("%w: vulkan: SubmitWith: timeline semaphores need a Backend of OpenExternal on a device created with timelineSemaphore", ops.ErrUnsupported)
	}
	return bt.submit(ctx, s.Wait, s.Signal)
}
