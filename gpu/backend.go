//go:build cgo

package gpu

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/internal/vkfault"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/vk"
)

// Options configures Open.
type Options struct {
	// Device selects the Vulkan device: a decimal index into vk.Devices()
	// or a case-insensitive substring of its name. Empty means the
	// GPUSCATTER_DEVICE environment variable, then the best device by type.
	Device string
	// Validation enables the Khronos validation layer; its messages are
	// returned by ValidationMessages. Open fails when the layer is missing.
	Validation bool
	// GPUAssistedValidation adds the layer's GPU-assisted validation to
	// Validation, and implies it: every kernel is instrumented, so that
	// an access through a buffer device address outside the buffers is a
	// message of ValidationMessages (see
	// vk.Options.GPUAssistedValidation). Kernels run several times
	// slower; it is for tests and `gpuscatter check --validate`.
	GPUAssistedValidation bool
	// PipelineCacheDir holds the Vulkan pipeline cache file, its index
	// and the device's figures (Figures). Empty means
	// os.UserCacheDir()/gpuscatter, or where there is none or it cannot
	// be created, a per-user temporary folder, with a warning (see
	// vk.Options.PipelineCacheDir); "off" keeps the cache in memory only.
	PipelineCacheDir string
	// Warn receives a failure to read or write a cache file, or a file
	// there refused, which never fails a call (see vk.Options.Warn); nil
	// drops it.
	Warn func(error)
	// MaxPoolBytes bounds the device memory kept in idle pooled buffers
	// between Execute calls; when more is pooled, the pool is emptied.
	// Zero means 4 GiB; negative disables pooling, for a caller that runs
	// one call: then, where device memory is host memory, an output of
	// 256 MiB or more is read back piece by piece, each piece's device
	// memory freed once read, so the call's peak is the data, the result
	// and a piece rather than the output three times over.
	MaxPoolBytes int64
	// NoUnifiedMemory makes uploads and downloads go through staging
	// buffers even where device memory is host-visible.
	NoUnifiedMemory bool
	// Deterministic makes float sum, sub, prod and mean reductions fold
	// their updates in index order, bit-identical to the CPU reference
	// (package cpuref), through a stable sort of the updates by target on
	// the device. Without it they use atomics, whose order is the
	// device's: the results differ from cpuref's by rounding only (see
	// DESIGN.md beside this package for the bound). Integer and bool
	// reductions, min and max (NaN bits included) are exact either way.
	Deterministic bool
	// CountAtomics makes Execute count the global atomics its reduction
	// issues, in a word per output element on the device, and report
	// them in Stats (AtomicsIssued, AtomicsMaxAddress): what bench
	// --count-atomics reports. It costs a fill, an atomic per atomic and a
	// read-back of 4 bytes per output element, so it is for measuring;
	// without it the kernels have no counter at all (the flag is a
	// specialization constant).
	CountAtomics bool
	// DeviceTimeout is how long the device may make no progress before
	// the call fails with ops.ErrDeviceLost (the device stopped
	// answering), and the Backend is lost from then on. Progress is each
	// call of a batch completing, so a batch of any length runs as long
	// as each call does; a call whose work is large gets longer, from its
	// bytes at 200 MB/s or its positions at a microsecond each, whichever
	// is longer: about fifty times lavapipe's time for a copy or an atomic
	// scatter, four times its in-order fold's. Zero means
	// GPUSCATTER_DEVICE_TIMEOUT, then vk.DefaultDeviceTimeout (a minute).
	// See vk.Options.DeviceTimeout.
	DeviceTimeout time.Duration
}

// cpuRun is the number of consecutive positions an invocation handles on a
// CPU device (lavapipe). Such a device runs a workgroup on one thread in
// SIMD batches, so per-invocation work (finding the position, splitting it
// into coordinates, reading the owner word) is a large share of the cost;
// a run pays it once and then steps through neighbouring positions. On
// lavapipe 16 was fastest of 1, 4, 8, 16, 32 and 64 (for the gather pass
// of the ScatterUpdate-3 spec shape, about twice as fast as 1). GPUs want
// neighbouring invocations on neighbouring memory, so they run 1.
const cpuRun = 16

// The least number of columns for which an Element plan walks its columns
// (facts.walks): on a CPU device, four workgroups is enough to keep a
// few threads busy (lavapipe runs a workgroup per thread); a GPU wants
// every lane busy, which takes tens of thousands of invocations. The GPU
// figure is an estimate, not a measurement.
const (
	cpuWalkMin = 1 << 10
	gpuWalkMin = 1 << 16
)

// On CPU devices Slice plans move their contiguous runs with copy
// commands when each run holds at least copyMinRun bytes and there are at
// most copyMaxRuns of them: shorter runs cost more per byte as copy
// regions than as shader work, and the regions are listed on the host.
// GPUs keep the shader, which runs at memory speed there (the copy path is
// unmeasured on them).
const (
	copyMinRun  = 256
	copyMaxRuns = 1 << 16
)

// Backend runs ops plans on a Vulkan device (ops.Backend). Execute calls are
// serialised; a Backend may be shared by several goroutines.
type Backend struct {
	mu sync.Mutex
	// figures are the figures Figures last gave, nil before; figuresMore
	// says whether a more function added to them.
	figuresMu   sync.Mutex
	figures     *cost.Device
	figuresMore bool
	dev         *vk.Device
	name        string
	shift       uint // log2 of the chunk size of tensors
	maxShift    uint // log2 of the largest buffer
	maxGroups   [3]uint32
	// run is the number of consecutive positions one invocation handles:
	// cpuRun on CPU devices, 1 on GPUs.
	run   uint32
	pipes map[pipeKey]*vk.Pipeline
	// undispatched holds the creation times of the pipelines this
	// Backend compiled (none the driver had) that no call has dispatched
	// yet; firstUses the first calls of such pipelines, by plan
	// (compiletimes.go).
	undispatched map[pipeKey]time.Duration
	firstUses    map[string]*firstUse
	// inflight are the submissions not yet seen complete, oldest first;
	// idleSeqs the sequences kept for later ones; failed the completed
	// submissions that failed, until their error is reported.
	inflight []*flight
	idleSeqs []*vk.Sequence
	failed   []*flight
	closed   bool
	stats    Stats

	// deterministic is Options.Deterministic.
	deterministic bool
	// countAtomics is Options.CountAtomics.
	countAtomics bool
	// tuning holds the thresholds and switches that pick execution
	// paths, which package internal/knobs overrides, and the counters
	// tests read.
	tuning

	poolLimit int64
	pooled    map[*vk.Buffer]uint64 // buffers acquired since the last trim: their addresses
	poolBytes int64

	resident map[*Tensor]struct{} // open resident tensors

	// clear holds owner-word tensors that every word of is 0, as the
	// calls that used them left them (callPlan.keepsOwners): a call takes
	// one instead of clearing words sized to its output.
	clear []clearOwners

	// carve, while a batch is recorded on the caller's scratch buffer or
	// its scratch is measured, makes acquireChunks cut the call's own
	// tensors out of it (external.go).
	carve *arena
}

var _ ops.Backend = (*Backend)(nil)

// wrapVK maps vk's sentinels onto ops' so that callers of ops.Backend can
// test errors with errors.Is against either package.
func wrapVK(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, vk.ErrDeviceLost):
		return fmt.Errorf("%w: %w", ops.ErrDeviceLost, err)
	case errors.Is(err, vk.ErrNoDevice):
		return fmt.Errorf("%w: %w", ops.ErrNoDevice, err)
	case errors.Is(err, vk.ErrOutOfMemory):
		return fmt.Errorf("%w: %w", ops.ErrOutOfMemory, err)
	case errors.Is(err, vk.ErrUnsupported):
		return fmt.Errorf("%w: %w", ops.ErrUnsupported, err)
	}
	return err
}

// named makes a failure of the device during a call of what (an
// operator, or a batch's operators) an *ops.Error naming it, unless the
// error names its operator already; the chain keeps the sentinels of ops
// and vk. Other errors are returned as they are.
func named(what string, err error) error {
	if err == nil || (!errors.Is(err, ops.ErrDeviceLost) && !errors.Is(err, ops.ErrOutOfMemory)) {
		return err
	}
	var oe *ops.Error
	if errors.As(err, &oe) && oe.Op != "" {
		return err
	}
	return &ops.Error{Op: what, Err: err, Msg: err.Error()}
}

// Open opens the selected Vulkan device and returns a Backend that runs
// the operators there; Close it when done. It fails with an error wrapping
// ops.ErrNoDevice when there is none, and ops.ErrUnsupported when the
// device lacks buffer device addresses or workgroups of 256 invocations,
// which every kernel needs.
func Open(opts Options) (*Backend, error) { return open(opts, knobs.Knobs{}) }

// open is Open with the knobs k applied (package internal/knobs).
func open(opts Options, k knobs.Knobs) (*Backend, error) {
	vo := vk.Options{
		Selector:              opts.Device,
		Validation:            opts.Validation,
		GPUAssistedValidation: opts.GPUAssistedValidation,
		PipelineCacheDir:      opts.PipelineCacheDir,
		Warn:                  opts.Warn,
		MaxAllocationBytes:    k.MaxAllocationBytes,
		NoUnifiedMemory:       opts.NoUnifiedMemory,
		DeviceTimeout:         opts.DeviceTimeout,
	}
	if k.Faults != nil {
		vkfault.Install(&vo, k.Faults)
	}
	dev, err := vk.Open(vo)
	if err != nil {
		return nil, wrapVK(err)
	}
	return newBackend(dev, opts, k)
}

// newBackend makes a Backend of dev, which it closes when dev lacks what
// every kernel needs.
func newBackend(dev *vk.Device, opts Options, k knobs.Knobs) (*Backend, error) {
	if missing := lacking(dev.DeviceAddresses(), dev.Capabilities()); len(missing) > 0 {
		name := dev.Info().Name
		err := dev.Close()
		return nil, errors.Join(fmt.Errorf("%w: vulkan: device %q lacks %v", ops.ErrUnsupported, name, missing), err)
	}
	b := &Backend{
		dev:       dev,
		name:      "vulkan: " + dev.Info().Name,
		shift:     chunkShift(dev.Limits().MaxAllocationBytes),
		maxShift:  chunkShift(dev.Limits().MaxAllocationBytes),
		maxGroups: dev.Limits().MaxWorkGroupCount,
		pipes:     map[pipeKey]*vk.Pipeline{},
		pooled:    map[*vk.Buffer]uint64{},
		poolLimit: opts.MaxPoolBytes,

		deterministic: opts.Deterministic,
		countAtomics:  opts.CountAtomics,
	}
	b.run, b.tuning = typeDefaults(dev.Info().Type)
	if b.poolLimit == 0 {
		b.poolLimit = 4 << 30
	}
	b.force(k)
	return b, nil
}

// Name identifies the device the backend runs on, for logs and reports:
// "vulkan: " and the device name ("vulkan: closed" for a nil Backend).
func (b *Backend) Name() string {
	if b == nil {
		return "vulkan: closed"
	}
	return b.name
}

// device returns the underlying device, for its properties, capabilities,
// validation messages and live-object counts (nil for a nil Backend). It
// must not be closed. Package internal/gpubench reaches it as
// gpubench.Backend.Device.
func (b *Backend) device() *vk.Device {
	if b == nil {
		return nil
	}
	return b.dev
}

// ValidationMessages returns the validation layer's warnings and errors so
// far, for debugging a program run with Options.Validation or
// Options.GPUAssistedValidation (nil without them, and for a nil Backend).
func (b *Backend) ValidationMessages() []string {
	if b == nil {
		return nil
	}
	return b.dev.ValidationMessages()
}

// ReleaseInstances destroys the Vulkan instances that Close kept for the
// next Open. A program need not call it; it is for leak checkers and for
// giving back the memory a driver keeps per instance. Backends still open
// keep theirs.
func ReleaseInstances() error { return vk.ReleaseInstances() }

// KeepDevices sets whether Close keeps the Vulkan device, with the
// pipelines it compiled, for the next Open of the same device in this
// process, which then starts without compiling them again (compilation
// is most of the cost of a first call). Close still releases every
// buffer, resident tensor and command pool; ReleaseInstances destroys what
// is kept. It is off unless a program turns it on: it suits programs that
// open a Backend after another (test suites, gpuscatter check, a server
// that opens one per request), not one that wants the driver's
// per-device resources back when it closes its Backend.
func KeepDevices(on bool) { vk.KeepDevices(on) }

// Close releases the device when the program is done with it: it waits
// for work in flight and releases every Vulkan object, the resident
// tensors included, except the VkInstance, which the next Open reuses
// (some drivers fail after a few dozen instance cycles in one process;
// ReleaseInstances destroys it). It is idempotent; on a nil Backend (the result of a
// failed Open) it returns ErrClosed.
func (b *Backend) Close() error {
	if b == nil {
		return ErrClosed
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	var errs []error
	// Work in flight completes first; a failure no Wait reported is
	// returned here.
	errs = append(errs, b.settle(context.Background(), true))
	b.closed = true
	for t := range b.resident {
		b.closeResident(t)
	}
	for _, seq := range b.idleSeqs {
		errs = append(errs, seq.Close())
	}
	b.idleSeqs = nil
	b.dropClearOwners()
	// The device's Close destroys the pipelines, or keeps them with the
	// device for the next Open (KeepDevices).
	clear(b.pipes)
	errs = append(errs, b.dev.Close())
	b.pooled = nil
	return wrapVK(errors.Join(errs...))
}

// pipeKey names a pipeline: a kernel variant specialised for a call's
// flags, and for the workgroup memory of its output's copy where words is
// not 0 (pass.words).
type pipeKey struct {
	key   shaders.Key
	flags uint32
	words uint32
}

// pipeKey returns the pipeline of ps in a call with the given flags.
func (ps *pass) pipeKey(flags uint32) pipeKey {
	return pipeKey{key: ps.key, flags: flags, words: ps.words}
}

// variant returns the kernel of pk, specialised for its words; a key with
// no kernel is ops.ErrUnsupported.
func (pk pipeKey) variant() (shaders.Variant, error) {
	v, err := shaders.Lookup(pk.key)
	if err != nil {
		return shaders.Variant{}, fmt.Errorf("%w: %w", ops.ErrUnsupported, err)
	}
	if pk.words != 0 {
		return v.WithPrivateWords(pk.words)
	}
	return v, nil
}

// pipeline returns the pipeline pk names, creating it on first use.
func (b *Backend) pipeline(pk pipeKey) (*vk.Pipeline, error) {
	if p, ok := b.pipes[pk]; ok {
		return p, nil
	}
	spec, name, err := pipelineSpec(pk)
	if err != nil {
		return nil, err
	}
	known := b.dev.PipelineKnown(spec)
	p, err := b.dev.NewPipeline(spec)
	if err != nil {
		return nil, wrapVK(fmt.Errorf("pipeline %s: %w", name, err))
	}
	b.pipes[pk] = p
	if !known {
		b.noteCreated(pk, p.CreateDuration())
	}
	return p, nil
}

// pipelineSpec returns the pipeline of pk as the device takes it, and the
// kernel's name.
func pipelineSpec(pk pipeKey) (vk.PipelineSpec, string, error) {
	v, err := pk.variant()
	if err != nil {
		return vk.PipelineSpec{}, "", err
	}
	if v.PushConstantSize != pushSize {
		return vk.PipelineSpec{}, "", fmt.Errorf("vulkan: kernel %s takes %d bytes of push constants, this package packs %d", v.Name, v.PushConstantSize, pushSize)
	}
	code, err := v.SPIRV()
	if err != nil {
		return vk.PipelineSpec{}, "", err
	}
	return vk.PipelineSpec{SPIRV: code, PushConstantSize: v.PushConstantSize, LocalSize: v.LocalSize, SpecConstants: v.Specialize(pk.flags)}, v.Name, nil
}

// address returns the device address of a buffer from the pool, asking
// the device only the first time the buffer is seen, and counts the bytes
// the pool may hold.
func (b *Backend) address(buf *vk.Buffer) (uint64, error) {
	if a, ok := b.pooled[buf]; ok {
		return a, nil
	}
	a, err := buf.Address()
	if err != nil {
		return 0, err
	}
	b.pooled[buf] = a
	b.poolBytes += int64(buf.Size())
	return a, nil
}

// trimPool empties the device's buffer pool when it holds more than the
// limit (or always, when pooling is off). Only idle buffers are pooled, so
// it runs between calls.
func (b *Backend) trimPool() {
	if b.poolLimit > 0 && b.poolBytes <= b.poolLimit {
		return
	}
	b.dev.TrimPool()
	clear(b.pooled)
	b.poolBytes = 0
}
