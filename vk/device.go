//go:build cgo

package vk

/*
#include <stdlib.h>
#include "gsvk.h"
#include "gscall.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"

	"github.com/gpuscatter/gpuscatter/internal/vkfault"
)

// EnvDevice names the environment variable read for the device selector when
// Options.Selector is empty.
const EnvDevice = "GPUSCATTER_DEVICE"

// Options configures Open.
type Options struct {
	// Selector picks the physical device: a decimal index into Devices(),
	// or a case-insensitive substring of the device name. Empty means the
	// value of GPUSCATTER_DEVICE, and if that is empty too, the best device
	// by type: discrete > integrated > virtual > cpu > other.
	Selector string
	// Validation enables VK_LAYER_KHRONOS_validation, with its
	// synchronization validation, and a debug messenger whose warnings
	// and errors are returned by Device.ValidationMessages. Open fails if
	// the layer is not installed.
	Validation bool
	// GPUAssistedValidation adds the layer's GPU-assisted validation to
	// Validation, and implies it: the layer instruments every shader so
	// that out-of-bounds accesses through buffer device addresses (and
	// through descriptors) are reported as messages of
	// ValidationMessages. Shaders run several times slower and pipelines
	// take longer to create. Where the layer cannot instrument what it
	// needs, its setup message is one of ValidationMessages too (a device
	// without fragmentStoresAndAtomics or vertexPipelineStoresAndAtomics,
	// which the device then enables; a layer without
	// VK_EXT_validation_features). An instance kept by an earlier Close
	// is reused only under the same setting.
	GPUAssistedValidation bool
	// PipelineCacheDir holds the VkPipelineCache file, the index of the
	// pipelines compiled with it and the device's measured figures
	// (MeasuredFigures). Empty means os.UserCacheDir()/gpuscatter,
	// created when missing; where there is no user cache folder (neither
	// XDG_CACHE_HOME nor HOME is set) or it cannot be created, the
	// per-user temporary folder gpuscatter-UID in os.TempDir() (created
	// with mode 0700, used only when it is a folder, not a symbolic link,
	// of the process's user and writable by no one else) takes its place,
	// with a warning through Warn (ErrCacheFolder). "off" disables the
	// files. A file in the folder is read only when it is a regular file
	// (a symbolic link is followed only to one) no larger than such a
	// file holds (256 MiB for the pipeline cache, 65536 lines for the
	// index, 16 KiB for the figures); any other is ignored with a warning and
	// replaced when next written, a directory excepted.
	PipelineCacheDir string
	// Warn receives, at most once per Device, an error wrapping
	// ErrPipelineCache, ErrMeasuredFigures or ErrCacheFolder when a cache
	// file cannot be read or written or is refused (a read-only cache
	// folder, a FIFO in a file's place), or the default cache folder is
	// unusable. The files only save compile and measuring time, so such a
	// failure never fails Open or Close; nil drops it.
	Warn func(error)
	// MaxBindingBytes caps the range of one storage-buffer binding. Zero
	// means the device's maxStorageBufferRange; larger values are clamped
	// to it.
	MaxBindingBytes uint64
	// MaxAllocationBytes caps the size of one Buffer. Zero means the
	// device's maxMemoryAllocationSize; larger values are clamped to it.
	MaxAllocationBytes uint64
	// MaxAllocations lowers the device's bound on live memory allocations
	// (Limits.MaxAllocations), so that tests reach it. Zero means the
	// device's.
	MaxAllocations uint32
	// NoUnifiedMemory forces staging copies for Upload and Download even
	// on a device with unified memory (see Device.UnifiedMemory).
	NoUnifiedMemory bool
	// DeviceTimeout is how long the device may make no visible progress
	// on submitted work before it counts as stopped: a wait that sees
	// none for that long fails with a StallError (ErrDeviceLost: the
	// device stopped answering) and marks the device lost. Progress is a
	// Sequence's next Mark reached; work without marks is one step, and a
	// step that Sequence.Expect announced as longer gets that long. So it
	// bounds how long a stall goes unnoticed, not the work a caller asks
	// for: a Sequence of any length completes while each of its steps
	// does, and a context cancels the waiting. After a stall nothing the
	// work may still use is destroyed until the device is known to be
	// idle: Close waits for that at most this long again, and otherwise
	// leaves the device's objects alive until the process ends. Zero
	// means the value of GPUSCATTER_DEVICE_TIMEOUT (a Go duration such as
	// 90s or 5m), and if that is empty too, DefaultDeviceTimeout.
	DeviceTimeout time.Duration

	// faults makes chosen Vulkan calls of this device fail (package
	// internal/vkfault, which only the module's own tests can use; they
	// set it through vkfault.Install). A device with faults takes over no
	// kept device when its plan fails pipeline creation.
	faults *vkfault.Plan
}

func init() {
	vkfault.Install = func(opts any, p *vkfault.Plan) { opts.(*Options).faults = p }
}

// EnvDeviceTimeout names the environment variable read for
// Options.DeviceTimeout when it is zero.
const EnvDeviceTimeout = "GPUSCATTER_DEVICE_TIMEOUT"

// DefaultDeviceTimeout is how long the device may make no progress on
// submitted work before it counts as stopped: generous, since one step of
// a large call on a slow device takes seconds, and a driver that detects a
// hang itself (most do, within seconds) reports VK_ERROR_DEVICE_LOST
// first.
const DefaultDeviceTimeout = time.Minute

// deviceTimeout resolves Options.DeviceTimeout.
func deviceTimeout(opt time.Duration) (time.Duration, error) {
	if opt < 0 {
		return 0, fmt.Errorf("vk: Options.DeviceTimeout %v: want a positive duration", opt)
	}
	if opt > 0 {
		return opt, nil
	}
	return DeviceTimeoutFromEnv()
}

// DeviceTimeoutFromEnv returns the device timeout that
// GPUSCATTER_DEVICE_TIMEOUT sets, the one Open takes when
// Options.DeviceTimeout is zero: DefaultDeviceTimeout when the variable
// is unset or empty. A value that is not a positive Go duration ("0",
// "-1s", "abc") is an error naming the variable, its value and what it
// wants, the one Open returns; a program can call it first to fail before
// any work, whether or not it opens a device.
func DeviceTimeoutFromEnv() (time.Duration, error) {
	v := strings.TrimSpace(os.Getenv(EnvDeviceTimeout))
	if v == "" {
		return DefaultDeviceTimeout, nil
	}
	t, err := time.ParseDuration(v)
	if err != nil || t <= 0 {
		return 0, fmt.Errorf("vk: %s=%q: want a positive duration such as 90s or 5m", EnvDeviceTimeout, v)
	}
	return t, nil
}

// Limits are the effective limits of an open Device, after Options were
// applied.
type Limits struct {
	// MaxBindingBytes is the largest Range of one Binding.
	MaxBindingBytes uint64 `json:"maxBindingBytes"`
	// MaxAllocationBytes is the largest Buffer size.
	MaxAllocationBytes uint64 `json:"maxAllocationBytes"`
	// MinStorageBufferOffsetAlignment is the alignment of Binding.Offset.
	MinStorageBufferOffsetAlignment uint64 `json:"minStorageBufferOffsetAlignment"`
	// MaxWorkGroupCount bounds the group counts of one Dispatch.
	MaxWorkGroupCount [3]uint32 `json:"maxWorkGroupCount"`
	// MaxPushConstantsSize bounds PipelineSpec.PushConstantSize.
	MaxPushConstantsSize uint32 `json:"maxPushConstantsSize"`
	// MaxBindings bounds PipelineSpec.Bindings.
	MaxBindings uint32 `json:"maxBindings"`
	// MaxAllocations bounds the device memory allocations alive at once
	// (maxMemoryAllocationCount: 4096 on several drivers). Every Buffer is
	// one, the pooled and the internal staging ones included.
	MaxAllocations uint32 `json:"maxAllocations"`
}

// Device is an open logical device with one compute queue. It is safe for
// concurrent use by several goroutines; the objects it creates document
// their own rules.
type Device struct {
	inst        *instance
	phys        *physical
	handle      vulkan.Device
	queue       vulkan.Queue
	queueFamily uint32
	info        DeviceInfo
	limits      Limits
	floats      floatModes // declared in every module (NewPipeline)
	unified     bool

	// timeout bounds each wait for the device (Options.DeviceTimeout).
	timeout time.Duration
	// faults is Options.faults.
	faults *vkfault.Plan

	queueMu sync.Mutex // external synchronisation of queue
	xferMu  sync.Mutex // staging transfers
	xfer    *transfer

	liveMu sync.Mutex
	live   map[string]int
	// closedMsgs are the validation messages of the device, kept when
	// Close gives the instance back (guarded by liveMu with inst's
	// clearing).
	closedMsgs []string

	lost atomic.Bool
	// stalled: a wait gave up on the device (StallError) while its work
	// may still run, so nothing it may use is destroyed until it is known
	// to be idle: park keeps the releases in parked for Close.
	stalled atomic.Bool
	parkMu  sync.Mutex
	parked  []func()
	held    atomic.Uint64 // bytes of device memory allocated for buffers
	// allocs counts the live VkDeviceMemory allocations, against
	// limits.MaxAllocations (reserveAllocation).
	allocs atomic.Int64

	counts counters // host round trips, for Counters

	fns *C.gsDeviceFns // entry points of gscall.c (C memory)

	// opMu is held for reading by every operation on the device or its
	// objects and for writing by Close, so Close never runs under an
	// operation in progress and operations after it fail with ErrClosed.
	opMu    sync.RWMutex
	closing atomic.Bool

	mu        sync.Mutex
	closed    bool
	buffers   map[*Buffer]struct{}
	idle      map[uint64][]*Buffer
	pipelines map[[32]byte]*pipelineEntry
	sequences map[*Sequence]struct{}

	cache pipelineCache

	// external: the device, queue and instance are the caller's (Adopt):
	// Close destroys only what the Device created and waits only for its
	// own submissions. timeline: SubmitWith may use timeline semaphores.
	// submitVia is External.Submit.
	external  bool
	timeline  bool
	submitVia func(submit func() error) error
	// wraps holds, for each VkBuffer of the caller wrapped (WrapBuffer),
	// the key its views share in hazard tracking; guarded by mu.
	wraps map[uint64]*Buffer
}

// guard turns a panic raised inside the binding into an error so that none
// crosses the package boundary. The binding panics when a C allocation
// fails ("memory alloc error: ..."): that is ErrOutOfMemory.
func guard(err *error) {
	if r := recover(); r != nil {
		if msg := fmt.Sprint(r); strings.HasPrefix(msg, "memory alloc error") {
			*err = fmt.Errorf("%w: host memory for a Vulkan call: %s", ErrOutOfMemory, msg)
			return
		}
		*err = fmt.Errorf("vk: internal error: %v", r)
	}
}

func (d *Device) track(kind string, delta int) {
	d.liveMu.Lock()
	d.live[kind] += delta
	if d.live[kind] == 0 {
		delete(d.live, kind)
	}
	d.liveMu.Unlock()
}

// LiveObjects returns the number of Vulkan objects of each type (for example
// "VkBuffer") that the device currently holds, omitting zero counts. After
// Close it is empty.
func (d *Device) LiveObjects() map[string]int {
	d.liveMu.Lock()
	defer d.liveMu.Unlock()
	out := make(map[string]int, len(d.live))
	for k, v := range d.live {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// ValidationMessages returns the warnings and errors reported by the
// validation layer and the loader so far, including those raised by Close.
// It is nil when neither Options.Validation nor
// Options.GPUAssistedValidation was set.
func (d *Device) ValidationMessages() []string {
	d.liveMu.Lock()
	defer d.liveMu.Unlock()
	if d.inst == nil {
		return append([]string(nil), d.closedMsgs...)
	}
	return d.inst.messages()
}

// instanceHandle is the VkInstance the device was made on, nil once Close
// has given it back.
func (d *Device) instanceHandle() unsafe.Pointer {
	d.liveMu.Lock()
	defer d.liveMu.Unlock()
	if d.inst == nil {
		return nil
	}
	return unsafe.Pointer(d.inst.handle)
}

// Info describes the physical device. Its Capabilities are those enabled on
// this Device.
func (d *Device) Info() DeviceInfo {
	info := d.info
	info.Capabilities = d.Capabilities()
	return info
}

// Capabilities returns the capabilities enabled on this Device.
func (d *Device) Capabilities() Capabilities {
	c := d.info.Capabilities
	c.SubgroupOperations = append([]string(nil), c.SubgroupOperations...)
	return c
}

// Limits returns the effective limits.
func (d *Device) Limits() Limits { return d.limits }

// UnifiedMemory reports whether buffers are host-mapped device-local memory,
// so that Upload and Download are plain copies. That is so where all of the
// device's main device-local heap is host-visible (an integrated GPU, a CPU
// device such as lavapipe) and Options.NoUnifiedMemory is not set. A
// discrete GPU, resizable BAR or not, keeps buffers in device-local memory
// the host cannot map and stages host copies.
func (d *Device) UnifiedMemory() bool { return d.unified }

// enter starts an operation: it fails with ErrClosed or ErrDeviceLost for
// a device that cannot take new work, and otherwise holds off Close until
// the matching leave.
func (d *Device) enter() error {
	d.opMu.RLock()
	if d.closing.Load() {
		d.opMu.RUnlock()
		return fmt.Errorf("%w: device", ErrClosed)
	}
	if d.lost.Load() {
		d.opMu.RUnlock()
		return ErrDeviceLost
	}
	return nil
}

// enterClose starts an operation that releases objects. It reports false
// when the device is closed, in which case Close has released everything.
func (d *Device) enterClose() bool {
	d.opMu.RLock()
	if d.closing.Load() {
		d.opMu.RUnlock()
		return false
	}
	return true
}

// leave ends an operation started by enter or enterClose.
func (d *Device) leave() { d.opMu.RUnlock() }

// noteResult records device loss.
func (d *Device) noteResult(r vulkan.Result) {
	if r == vulkan.ErrorDeviceLost {
		d.lost.Store(true)
	}
}

// selectDevice applies a selector to the probed devices.
func selectDevice(phys []*physical, sel string) (*physical, error) {
	sel = strings.TrimSpace(sel)
	usable := func(p *physical) bool { return p.queue >= 0 }
	var candidates []*physical
	if sel == "" {
		candidates = phys
	} else if idx, err := strconv.Atoi(sel); err == nil {
		if idx < 0 || idx >= len(phys) {
			return nil, &SelectorError{Selector: sel, Reason: ": index out of range", Devices: deviceList(phys)}
		}
		candidates = []*physical{phys[idx]}
	} else {
		low := strings.ToLower(sel)
		for _, p := range phys {
			if strings.Contains(strings.ToLower(p.info.Name), low) {
				candidates = append(candidates, p)
			}
		}
		if len(candidates) == 0 {
			return nil, &SelectorError{Selector: sel, Reason: " matches no device name", Devices: deviceList(phys)}
		}
	}
	sorted := append([]*physical(nil), candidates...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return sorted[i].info.Type.rank() < sorted[j].info.Type.rank()
	})
	for _, p := range sorted {
		if usable(p) {
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w: no selected device has a compute queue (devices: %s)", ErrNoDevice, deviceList(phys))
}

func deviceList(phys []*physical) string {
	parts := make([]string, len(phys))
	for i, p := range phys {
		parts[i] = fmt.Sprintf("%d %q (%s)", p.index, p.info.Name, p.info.Type)
	}
	return strings.Join(parts, ", ")
}

// Open creates a Device on the selected physical device. Its VkInstance is
// one that an earlier Device's Close kept, made under the same validation
// setting and loader environment, or a new one (see ReleaseInstances).
func Open(opts Options) (d *Device, err error) {
	defer guard(&err)
	timeout, err := deviceTimeout(opts.DeviceTimeout)
	if err != nil {
		return nil, err
	}
	inst, err := acquireInstance(validationModeOf(opts))
	if err != nil {
		return nil, err
	}
	d = &Device{
		timeout:   timeout,
		faults:    opts.faults,
		inst:      inst,
		live:      map[string]int{"VkInstance": 1},
		buffers:   map[*Buffer]struct{}{},
		idle:      map[uint64][]*Buffer{},
		pipelines: map[[32]byte]*pipelineEntry{},
		sequences: map[*Sequence]struct{}{},
	}
	if inst.messenger != 0 {
		d.track("VkDebugUtilsMessengerEXT", 1)
	}
	defer func() {
		if err != nil {
			d.teardown()
			d = nil
		}
	}()
	phys, err := probeAll(inst)
	if err != nil {
		return d, err
	}
	sel := opts.Selector
	if sel == "" {
		sel = os.Getenv(EnvDevice)
	}
	p, err := selectDevice(phys, sel)
	if err != nil {
		return d, err
	}
	d.phys = p
	if k := inst.kept; k != nil {
		// The device an earlier Close kept on this instance (keep.go):
		// taken over when it is on the physical device chosen now and
		// KeepDevices is still on.
		inst.kept = nil
		if k.phys == p.handle && keepDevices.Load() && (opts.faults == nil || opts.faults.Call != vkfault.Pipeline) {
			d.adopt(k)
		} else {
			k.destroy()
		}
	}
	if d.handle == nil {
		if err := d.createDevice(); err != nil {
			return d, err
		}
	}

	return d, d.finish(opts)
}

// finish sets what Open and Adopt share once d has its physical device
// and device: the information, limits and pipeline cache.
func (d *Device) finish(opts Options) error {
	p := d.phys
	d.info = p.info
	d.floats = p.floats
	d.unified = isUnified(p.types, p.heaps) && !opts.NoUnifiedMemory
	d.info.Capabilities.UnifiedMemory = d.unified
	l := &p.limits
	d.limits = Limits{
		MaxBindingBytes:                 uint64(l.MaxStorageBufferRange),
		MaxAllocationBytes:              p.maxAlloc,
		MinStorageBufferOffsetAlignment: uint64(l.MinStorageBufferOffsetAlignment),
		MaxWorkGroupCount:               l.MaxComputeWorkGroupCount,
		MaxPushConstantsSize:            l.MaxPushConstantsSize,
		MaxBindings:                     l.MaxPerStageDescriptorStorageBuffers,
		MaxAllocations:                  l.MaxMemoryAllocationCount,
	}
	if d.limits.MaxAllocations == 0 {
		d.limits.MaxAllocations = 4096 // the least the specification allows
	}
	if d.limits.MinStorageBufferOffsetAlignment == 0 {
		d.limits.MinStorageBufferOffsetAlignment = 1
	}
	if opts.MaxBindingBytes > 0 && opts.MaxBindingBytes < d.limits.MaxBindingBytes {
		d.limits.MaxBindingBytes = opts.MaxBindingBytes
	}
	if opts.MaxAllocations > 0 && opts.MaxAllocations < d.limits.MaxAllocations {
		d.limits.MaxAllocations = opts.MaxAllocations
	}
	if opts.MaxAllocationBytes > 0 && opts.MaxAllocationBytes < d.limits.MaxAllocationBytes {
		d.limits.MaxAllocationBytes = opts.MaxAllocationBytes
	}
	d.cache.warn = opts.Warn
	if err := d.openPipelineCache(opts.PipelineCacheDir); err != nil {
		return err
	}
	return nil
}

// createDevice creates the logical device with every supported feature this
// package knows enabled, and fetches the compute queue.
func (d *Device) createDevice() error {
	p := d.phys
	chain := (*C.gsChain)(C.calloc(1, C.sizeof_gsChain))
	if chain == nil {
		return &ResultError{Call: "calloc", Result: vulkan.ErrorOutOfHostMemory}
	}
	defer C.free(unsafe.Pointer(chain))
	mask := p.feat.store(chain) & p.featMask
	head := C.gs_link_features(chain, C.uint32_t(mask))

	v12 := p.apiVersion >= makeVersion(1, 2, 0)
	v11 := p.apiVersion >= makeVersion(1, 1, 0)
	var exts []string
	add := func(name string) {
		for _, e := range exts {
			if e == name {
				return
			}
		}
		exts = append(exts, name)
	}
	if mask&C.GS_FEAT_ATOMIC_FLOAT != 0 {
		add(extAtomicFloat)
	}
	if mask&C.GS_FEAT_ATOMIC_FLOAT2 != 0 {
		add(extAtomicFloat)
		add(extAtomicFloat2)
	}
	if !v12 {
		if mask&C.GS_FEAT_ATOMIC_INT64 != 0 {
			add(extAtomicInt64)
		}
		if mask&C.GS_FEAT_STORAGE8 != 0 {
			if !v11 {
				add(extStorageBufClass)
			}
			add(extStorage8)
		}
		if mask&C.GS_FEAT_FLOAT16_INT8 != 0 {
			add(extFloat16Int8)
		}
		if mask&C.GS_FEAT_BDA != 0 {
			add(extBDA)
		}
	}
	if !v11 && mask&C.GS_FEAT_STORAGE16 != 0 {
		add(extStorageBufClass)
		add(extStorage16)
	}
	if p.exts["VK_KHR_portability_subset"] {
		add("VK_KHR_portability_subset")
	}
	if !v12 && p.exts[extFloatControls] && p.floats != (floatModes{}) {
		add(extFloatControls)
	}
	if p.exts[extMemoryBudget] {
		// Device.Memory reads the heap's budget and usage.
		add(extMemoryBudget)
	}

	core := map[C.int]bool{
		C.GS_FEATURE_SHADER_INT64:   p.base.ShaderInt64 == vulkan.True,
		C.GS_FEATURE_SHADER_FLOAT64: p.base.ShaderFloat64 == vulkan.True,
		C.GS_FEATURE_SHADER_INT16:   p.base.ShaderInt16 == vulkan.True,
	}
	if d.inst.gpuAssisted {
		// GPU-assisted validation writes what it finds from every
		// instrumented stage into a buffer of its own, which takes
		// these two in vertex and fragment stages. The layer turns
		// them on itself where the device has them (1.3.239 does), and
		// reports their absence as a setup problem; enabling them here
		// does not depend on it.
		core[C.GS_FEATURE_VERTEX_PIPELINE_STORES_AND_ATOMICS] = p.base.VertexPipelineStoresAndAtomics == vulkan.True
		core[C.GS_FEATURE_FRAGMENT_STORES_AND_ATOMICS] = p.base.FragmentStoresAndAtomics == vulkan.True
	}
	h, r := createDevice(d.inst.handle, p.handle, uint32(p.queue), head, exts, core)
	if err := check("vkCreateDevice", r); err != nil {
		return err
	}
	d.handle = h
	d.track("VkDevice", 1)
	if err := d.loadFns(); err != nil {
		return err
	}
	d.queueFamily = uint32(p.queue)
	var q vulkan.Queue
	vulkan.GetDeviceQueue(h, d.queueFamily, 0, &q)
	d.queue = q
	return nil
}

// Close waits for operations in progress on other goroutines (a Submit
// waits for its work or its context) and for the device to go idle, destroys
// every Sequence, Pipeline and Buffer still open (pooled ones included),
// saves the pipeline cache and destroys the device. The instance is kept for
// the next Open unless the device was lost (ReleaseInstances destroys the
// kept ones). Later calls
// on the device or its objects fail with ErrClosed, except Close and Release,
// which do nothing. It is idempotent; an error reports a failure to save the
// pipeline cache or a lost device, but everything is released regardless.
func (d *Device) Close() (err error) {
	defer guard(&err)
	d.opMu.Lock()
	defer d.opMu.Unlock()
	if d.closing.Load() {
		return nil
	}
	d.closing.Store(true)
	return d.teardown()
}

// destroyPipelines destroys the pipelines of entries, each once it is
// ready.
func destroyPipelines(entries []*pipelineEntry) {
	for _, e := range entries {
		<-e.ready
		if e.p != nil {
			e.p.destroy()
		}
	}
}

// waitIdle waits for the device to go idle. On a lost device, whose
// work may never finish (StallError), it gives up after the device's
// timeout and reports answered false.
func (d *Device) waitIdle() (r vulkan.Result, answered bool) {
	if !d.lost.Load() {
		return vulkan.DeviceWaitIdle(d.handle), true
	}
	done := make(chan vulkan.Result, 1)
	go func() { done <- vulkan.DeviceWaitIdle(d.handle) }()
	t := time.NewTimer(d.timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r, true
	case <-t.C:
		return 0, false
	}
}

// park runs release, which destroys Vulkan objects, now; or, on a device
// that stalled (a wait gave up on work that may still be running, whose
// memory, pipelines and command buffers it may still use), keeps it for
// Close, which runs it once the device is idle and otherwise leaves the
// objects to the end of the process. Destroying them under running work
// would fault inside the driver.
func (d *Device) park(release func()) {
	if d.stalled.Load() {
		d.parkMu.Lock()
		if d.stalled.Load() {
			d.parked = append(d.parked, release)
			d.parkMu.Unlock()
			return
		}
		d.parkMu.Unlock()
	}
	release()
}

// unpark runs the releases park kept, once the device is known to be
// idle: its work completed or the driver reported it lost.
func (d *Device) unpark() {
	d.parkMu.Lock()
	d.stalled.Store(false)
	parked := d.parked
	d.parked = nil
	d.parkMu.Unlock()
	for _, release := range parked {
		release()
	}
}

// teardown releases everything in reverse order of creation. It also undoes
// a partially opened device.
func (d *Device) teardown() error {
	var errs []error
	d.mu.Lock()
	d.closed = true
	seqs := make([]*Sequence, 0, len(d.sequences))
	for s := range d.sequences {
		seqs = append(seqs, s)
	}
	d.sequences = map[*Sequence]struct{}{}
	pipes := make([]*pipelineEntry, 0, len(d.pipelines))
	for _, e := range d.pipelines {
		pipes = append(pipes, e)
	}
	d.pipelines = map[[32]byte]*pipelineEntry{}
	bufs := make([]*Buffer, 0, len(d.buffers))
	for b := range d.buffers {
		bufs = append(bufs, b)
	}
	d.buffers = map[*Buffer]struct{}{}
	d.idle = map[uint64][]*Buffer{}
	d.mu.Unlock()

	keeping := false
	if d.handle != nil && d.external {
		// The caller may be submitting to its device: waiting for it to
		// go idle is not ours to do. Each sequence waits for its own
		// submission as it is destroyed (below), and only then is what
		// park kept released.
	} else if d.handle != nil {
		r, answered := d.waitIdle()
		if !answered {
			// Destroying objects that work still running on the device
			// uses would be worse than leaving them to the end of the
			// process.
			return fmt.Errorf("%w: the device stopped answering: it did not go idle within %v, so Close left its objects alive until the process ends (%s)",
				ErrDeviceLost, d.timeout, EnvDeviceTimeout)
		}
		// Idle, or lost to the driver too: nothing runs any more.
		d.unpark()
		if r != vulkan.Success && r != vulkan.ErrorDeviceLost {
			errs = append(errs, check("vkDeviceWaitIdle", r))
		}
		// An idle device that is whole and not lost may be kept, with its
		// pipelines, for the next Open (keep.go).
		keeping = r == vulkan.Success && keepDevices.Load() && !d.lost.Load()
	}
	for _, s := range seqs {
		s.destroy()
	}
	if d.external {
		d.unpark()
	}
	if !keeping {
		destroyPipelines(pipes)
	}
	for _, b := range bufs {
		b.destroy()
	}
	d.xferMu.Lock()
	d.destroyTransfer()
	d.xferMu.Unlock()
	if err := d.closePipelineCache(); err != nil {
		errs = append(errs, err)
	}
	var kept *keptDevice
	if keeping {
		kept, keeping = d.keep(pipes)
		if !keeping {
			destroyPipelines(pipes)
		}
	}
	if d.handle != nil && d.external {
		// The caller's device: only our entry points go.
		d.handle = nil
		d.freeFns()
	} else if d.handle != nil {
		vulkan.DestroyDevice(d.handle, nil)
		d.handle = nil
		d.freeFns()
		d.track("VkDevice", -1)
	}
	if d.inst != nil && d.inst.external {
		d.liveMu.Lock()
		d.inst = nil
		d.liveMu.Unlock()
	} else if d.inst != nil {
		d.inst.kept = kept
		if d.inst.messenger != 0 {
			d.track("VkDebugUtilsMessengerEXT", -1)
		}
		if d.inst.handle != nil {
			d.track("VkInstance", -1)
		}
		// The instance is kept for the next Open (instpool.go) unless the
		// device was lost or never made. The messages reported for this
		// device stay readable through ValidationMessages.
		inst := d.inst
		d.liveMu.Lock()
		d.closedMsgs = inst.messages()
		d.inst = nil
		d.liveMu.Unlock()
		releaseInstance(inst, !d.lost.Load())
	}
	if d.lost.Load() {
		errs = append(errs, ErrDeviceLost)
	}
	return errors.Join(errs...)
}
