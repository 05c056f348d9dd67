//go:build cgo

package callerdev

/*
#cgo CFLAGS: -I${SRCDIR}/../../vk
#cgo linux LDFLAGS: -ldl
#include <stdlib.h>
#include "callerdev.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime/cgo"
	"strings"
	"sync"
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"

	"github.com/gpuscatter/gpuscatter/vk"
)

// APIVersion is the version the instance is created with: 1.2.
const APIVersion = 1<<22 | 2<<12

// Options chooses the device.
type Options struct {
	// Validation enables the Khronos validation layer with
	// synchronization validation; Messages returns what it reported.
	Validation bool
	// Features are those to enable, of what the device supports (through
	// vk.RequestFeatures). NoChain creates the device with no feature
	// chain at all (so without bufferDeviceAddress).
	Features vk.Features
	NoChain  bool
	// Selector is a substring of the device name; empty means
	// GPUSCATTER_DEVICE, then the first device with a compute queue.
	Selector string
}

// Device is the program's instance, device and queue.
type Device struct {
	Instance   vulkan.Instance
	Physical   vulkan.PhysicalDevice
	Device     vulkan.Device
	Queue      vulkan.Queue
	Family     uint32
	Name       string
	APIVersion uint32
	// Enabled are the features the device was created with.
	Enabled vk.Features
	// createInfo is the VkDeviceCreateInfo, kept in C memory until Close.
	createInfo unsafe.Pointer
	request    *vk.FeatureRequest

	pool      vulkan.CommandPool
	messenger C.uint64_t
	next      unsafe.Pointer
	handle    cgo.Handle

	// QueueMu is the program's queue lock, for External.Submit.
	QueueMu sync.Mutex

	mu   sync.Mutex
	msgs []string
}

var loadOnce struct {
	sync.Once
	err error
}

// load points vulkan-go at the loader library, as a program does.
func load() error {
	loadOnce.Do(func() {
		gipa := C.cd_load()
		if gipa == nil {
			loadOnce.err = errors.New("callerdev: libvulkan.so.1 cannot be loaded")
			return
		}
		vulkan.SetGetInstanceProcAddr(gipa)
		loadOnce.err = vulkan.Init()
	})
	return loadOnce.err
}

//export callerdevMessage
func callerdevMessage(user C.uintptr_t, severity C.uint32_t, id, msg *C.char) {
	d := cgo.Handle(user).Value().(*Device)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.msgs = append(d.msgs, fmt.Sprintf("[%s] %s", C.GoString(id), C.GoString(msg)))
}

// Messages returns the validation layer's warnings and errors so far.
func (d *Device) Messages() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.msgs...)
}

func check(call string, r vulkan.Result) error {
	if r != vulkan.Success {
		return fmt.Errorf("callerdev: %s: VkResult %d", call, r)
	}
	return nil
}

func cstr(s string) string { return s + "\x00" }

// Open creates the instance, picks the physical device, creates the device
// with opts.Features and a command pool on its compute queue family.
func Open(opts Options) (d *Device, err error) {
	if err := load(); err != nil {
		return nil, err
	}
	d = &Device{APIVersion: APIVersion}
	defer func() {
		if err != nil {
			d.Close()
			d = nil
		}
	}()
	d.handle = cgo.NewHandle(d)
	ci := vulkan.InstanceCreateInfo{
		SType: vulkan.StructureTypeInstanceCreateInfo,
		PApplicationInfo: &vulkan.ApplicationInfo{
			SType: vulkan.StructureTypeApplicationInfo, PApplicationName: cstr("callerdev"), ApiVersion: APIVersion,
		},
	}
	if opts.Validation {
		d.next = C.cd_validation_next(C.uintptr_t(d.handle))
		ci.PNext = d.next
		ci.PpEnabledLayerNames = []string{cstr("VK_LAYER_KHRONOS_validation")}
		ci.EnabledLayerCount = 1
		ci.PpEnabledExtensionNames = []string{cstr("VK_EXT_debug_utils"), cstr("VK_EXT_validation_features")}
		ci.EnabledExtensionCount = 2
	}
	var inst vulkan.Instance
	if err := check("vkCreateInstance", vulkan.CreateInstance(&ci, nil, &inst)); err != nil {
		return d, err
	}
	d.Instance = inst
	if err := vulkan.InitInstance(inst); err != nil {
		return d, err
	}
	if opts.Validation {
		var m C.uint64_t
		if err := check("vkCreateDebugUtilsMessengerEXT", vulkan.Result(C.cd_create_messenger(unsafe.Pointer(inst), d.next, &m))); err != nil {
			return d, err
		}
		d.messenger = m
	}
	var n uint32
	vulkan.EnumeratePhysicalDevices(inst, &n, nil)
	pds := make([]vulkan.PhysicalDevice, n)
	vulkan.EnumeratePhysicalDevices(inst, &n, pds)
	sel := opts.Selector
	if sel == "" {
		sel = os.Getenv(vk.EnvDevice)
	}
	for _, pd := range pds {
		var props vulkan.PhysicalDeviceProperties
		vulkan.GetPhysicalDeviceProperties(pd, &props)
		props.Deref()
		name := vulkan.ToString(props.DeviceName[:])
		if sel != "" && !strings.Contains(strings.ToLower(name), strings.ToLower(sel)) {
			continue
		}
		var qn uint32
		vulkan.GetPhysicalDeviceQueueFamilyProperties(pd, &qn, nil)
		qs := make([]vulkan.QueueFamilyProperties, qn)
		vulkan.GetPhysicalDeviceQueueFamilyProperties(pd, &qn, qs)
		for i := range qs {
			qs[i].Deref()
			if qs[i].QueueFlags&vulkan.QueueFlags(vulkan.QueueComputeBit) != 0 {
				d.Physical, d.Family, d.Name = pd, uint32(i), name
				break
			}
		}
		if d.Physical != nil {
			break
		}
	}
	if d.Physical == nil {
		return d, fmt.Errorf("callerdev: no device with a compute queue matches %q", sel)
	}
	var next unsafe.Pointer
	var exts []string
	if !opts.NoChain {
		req, err := vk.RequestFeatures(unsafe.Pointer(inst), unsafe.Pointer(d.Physical), APIVersion, opts.Features)
		if err != nil {
			return d, err
		}
		d.request = req
		d.Enabled = req.Features
		next, exts = req.Next(), req.Extensions
	}
	names := make([]*C.char, len(exts)+1)
	for i, e := range exts {
		names[i] = C.CString(e)
		defer C.free(unsafe.Pointer(names[i]))
	}
	// vkCreateDevice through the loader with a VkDeviceCreateInfo in C
	// memory, which CreateInfo hands to OpenExternal as it is.
	var dev unsafe.Pointer
	var r C.int32_t
	d.createInfo = C.cd_create_device(unsafe.Pointer(inst), unsafe.Pointer(d.Physical), C.uint32_t(d.Family), next,
		C.uint32_t(len(exts)), &names[0], &dev, &r)
	if err := check("vkCreateDevice", vulkan.Result(r)); err != nil {
		return d, err
	}
	d.Device = vulkan.Device(dev)
	var q vulkan.Queue
	vulkan.GetDeviceQueue(d.Device, d.Family, 0, &q)
	d.Queue = q
	pci := vulkan.CommandPoolCreateInfo{
		SType: vulkan.StructureTypeCommandPoolCreateInfo, QueueFamilyIndex: d.Family,
		Flags: vulkan.CommandPoolCreateFlags(vulkan.CommandPoolCreateResetCommandBufferBit),
	}
	var pool vulkan.CommandPool
	if err := check("vkCreateCommandPool", vulkan.CreateCommandPool(d.Device, &pci, nil, &pool)); err != nil {
		return d, err
	}
	d.pool = pool
	return d, nil
}

// CreateInfo returns the *VkDeviceCreateInfo the device was created with,
// valid until Close.
func (d *Device) CreateInfo() unsafe.Pointer { return C.cd_create_info_of(d.createInfo) }

// Close destroys the command pool, the device, the messenger and the
// instance.
func (d *Device) Close() {
	if d.Device != nil {
		vulkan.DeviceWaitIdle(d.Device)
		if d.pool != nil {
			vulkan.DestroyCommandPool(d.Device, d.pool, nil)
			d.pool = nil
		}
		vulkan.DestroyDevice(d.Device, nil)
		d.Device = nil
	}
	if d.createInfo != nil {
		C.cd_free_create_info(d.createInfo)
		d.createInfo = nil
	}
	d.request.Free()
	if d.Instance != nil {
		if d.messenger != 0 {
			C.cd_destroy_messenger(unsafe.Pointer(d.Instance), d.messenger)
			d.messenger = 0
		}
		vulkan.DestroyInstance(d.Instance, nil)
		d.Instance = nil
	}
	if d.next != nil {
		C.cd_free_validation_next(d.next)
		d.next = nil
	}
	if d.handle != 0 {
		d.handle.Delete()
		d.handle = 0
	}
}

// Buffer is a buffer of the program's, in host-visible coherent memory
// with a device address, mapped.
type Buffer struct {
	d      *Device
	Handle vulkan.Buffer
	Memory vulkan.DeviceMemory
	Size   uint64
	Usage  uint32
	Bytes  []byte
}

// Handle64 is the buffer's handle as the 64-bit value the API passes.
func (b *Buffer) Handle64() uint64 { return uint64(uintptr(unsafe.Pointer(b.Handle))) }

// Address is the buffer's device address.
func (b *Buffer) Address() uint64 {
	return uint64(C.cd_buffer_address(unsafe.Pointer(b.d.Instance), unsafe.Pointer(b.d.Device), C.uint64_t(b.Handle64())))
}

// NewBuffer creates a buffer of size bytes with usage, in host-visible
// coherent memory (allocated with a device address where usage has
// vk.UsageShaderDeviceAddress), mapped.
func (d *Device) NewBuffer(size uint64, usage uint32) (*Buffer, error) {
	ci := vulkan.BufferCreateInfo{SType: vulkan.StructureTypeBufferCreateInfo, Size: vulkan.DeviceSize(size),
		Usage: vulkan.BufferUsageFlags(usage), SharingMode: vulkan.SharingModeExclusive}
	var h vulkan.Buffer
	if err := check("vkCreateBuffer", vulkan.CreateBuffer(d.Device, &ci, nil, &h)); err != nil {
		return nil, err
	}
	b := &Buffer{d: d, Handle: h, Size: size, Usage: usage}
	var req vulkan.MemoryRequirements
	vulkan.GetBufferMemoryRequirements(d.Device, h, &req)
	req.Deref()
	var mp vulkan.PhysicalDeviceMemoryProperties
	vulkan.GetPhysicalDeviceMemoryProperties(d.Physical, &mp)
	mp.Deref()
	want := vulkan.MemoryPropertyFlags(vulkan.MemoryPropertyHostVisibleBit | vulkan.MemoryPropertyHostCoherentBit)
	idx := -1
	for i := uint32(0); i < mp.MemoryTypeCount; i++ {
		mp.MemoryTypes[i].Deref()
		if req.MemoryTypeBits&(1<<i) != 0 && mp.MemoryTypes[i].PropertyFlags&want == want {
			idx = int(i)
			break
		}
	}
	if idx < 0 {
		b.Close()
		return nil, errors.New("callerdev: no host-visible coherent memory type")
	}
	ai := vulkan.MemoryAllocateInfo{SType: vulkan.StructureTypeMemoryAllocateInfo, AllocationSize: req.Size, MemoryTypeIndex: uint32(idx)}
	if usage&vk.UsageShaderDeviceAddress != 0 {
		ai.PNext = C.cd_device_address_alloc()
	}
	var mem vulkan.DeviceMemory
	if err := check("vkAllocateMemory", vulkan.AllocateMemory(d.Device, &ai, nil, &mem)); err != nil {
		b.Close()
		return nil, err
	}
	b.Memory = mem
	if err := check("vkBindBufferMemory", vulkan.BindBufferMemory(d.Device, h, mem, 0)); err != nil {
		b.Close()
		return nil, err
	}
	var p unsafe.Pointer
	if err := check("vkMapMemory", vulkan.MapMemory(d.Device, mem, 0, vulkan.DeviceSize(size), 0, &p)); err != nil {
		b.Close()
		return nil, err
	}
	b.Bytes = unsafe.Slice((*byte)(p), size)
	return b, nil
}

// Close destroys the buffer and frees its memory.
func (b *Buffer) Close() {
	if b.Memory != nil {
		if b.Bytes != nil {
			vulkan.UnmapMemory(b.d.Device, b.Memory)
			b.Bytes = nil
		}
		vulkan.FreeMemory(b.d.Device, b.Memory, nil)
		b.Memory = nil
	}
	if b.Handle != nil {
		vulkan.DestroyBuffer(b.d.Device, b.Handle, nil)
		b.Handle = nil
	}
}

// Commands is a primary command buffer of the program's pool, with a
// fence.
type Commands struct {
	d     *Device
	Cmd   vulkan.CommandBuffer
	fence vulkan.Fence
}

// NewCommands allocates a command buffer and a fence.
func (d *Device) NewCommands() (*Commands, error) {
	ai := vulkan.CommandBufferAllocateInfo{SType: vulkan.StructureTypeCommandBufferAllocateInfo, CommandPool: d.pool,
		Level: vulkan.CommandBufferLevelPrimary, CommandBufferCount: 1}
	cmds := make([]vulkan.CommandBuffer, 1)
	if err := check("vkAllocateCommandBuffers", vulkan.AllocateCommandBuffers(d.Device, &ai, cmds)); err != nil {
		return nil, err
	}
	fi := vulkan.FenceCreateInfo{SType: vulkan.StructureTypeFenceCreateInfo}
	var f vulkan.Fence
	if err := check("vkCreateFence", vulkan.CreateFence(d.Device, &fi, nil, &f)); err != nil {
		vulkan.FreeCommandBuffers(d.Device, d.pool, 1, cmds)
		return nil, err
	}
	return &Commands{d: d, Cmd: cmds[0], fence: f}, nil
}

// Pointer is the command buffer as the API passes it.
func (c *Commands) Pointer() unsafe.Pointer { return unsafe.Pointer(c.Cmd) }

// Begin resets and begins the command buffer.
func (c *Commands) Begin() error {
	if err := check("vkResetCommandBuffer", vulkan.ResetCommandBuffer(c.Cmd, 0)); err != nil {
		return err
	}
	bi := vulkan.CommandBufferBeginInfo{SType: vulkan.StructureTypeCommandBufferBeginInfo,
		Flags: vulkan.CommandBufferUsageFlags(vulkan.CommandBufferUsageOneTimeSubmitBit)}
	return check("vkBeginCommandBuffer", vulkan.BeginCommandBuffer(c.Cmd, &bi))
}

const (
	computeTransfer = vulkan.PipelineStageFlags(vulkan.PipelineStageComputeShaderBit | vulkan.PipelineStageTransferBit)
	allShader       = vulkan.AccessFlags(vulkan.AccessShaderReadBit | vulkan.AccessShaderWriteBit | vulkan.AccessTransferReadBit | vulkan.AccessTransferWriteBit)
	writes          = vulkan.AccessFlags(vulkan.AccessShaderWriteBit | vulkan.AccessTransferWriteBit)
)

// BarrierBefore records the barrier Record's contract asks before: the
// host's writes (and earlier compute and transfer writes) made visible
// to compute and transfer reads and writes.
func (c *Commands) BarrierBefore() {
	mb := vulkan.MemoryBarrier{SType: vulkan.StructureTypeMemoryBarrier,
		SrcAccessMask: vulkan.AccessFlags(vulkan.AccessHostWriteBit) | writes, DstAccessMask: allShader}
	vulkan.CmdPipelineBarrier(c.Cmd, vulkan.PipelineStageFlags(vulkan.PipelineStageHostBit)|computeTransfer, computeTransfer, 0,
		1, []vulkan.MemoryBarrier{mb}, 0, nil, 0, nil)
}

// BarrierAfter records the barrier Record's contract asks after: compute
// and transfer writes made visible to the host and to later compute and
// transfer work.
func (c *Commands) BarrierAfter() {
	mb := vulkan.MemoryBarrier{SType: vulkan.StructureTypeMemoryBarrier, SrcAccessMask: writes,
		DstAccessMask: vulkan.AccessFlags(vulkan.AccessHostReadBit) | allShader}
	vulkan.CmdPipelineBarrier(c.Cmd, computeTransfer, vulkan.PipelineStageFlags(vulkan.PipelineStageHostBit)|computeTransfer, 0,
		1, []vulkan.MemoryBarrier{mb}, 0, nil, 0, nil)
}

// Fill records a fill of b with value (the program's own command).
func (c *Commands) Fill(b *Buffer, value uint32) {
	vulkan.CmdFillBuffer(c.Cmd, b.Handle, 0, vulkan.DeviceSize(vulkan.WholeSize), value)
}

// End ends the command buffer.
func (c *Commands) End() error { return check("vkEndCommandBuffer", vulkan.EndCommandBuffer(c.Cmd)) }

// SubmitWait submits the command buffer to the program's queue (under
// QueueMu) and waits for its fence.
func (c *Commands) SubmitWait() error {
	if err := c.Submit(0, 0, 0, 0); err != nil {
		return err
	}
	return c.Wait()
}

// Submit submits the command buffer, waiting for semaphore wait to reach
// waitValue and setting signal to signalValue (either 0 for none), with the
// fence.
func (c *Commands) Submit(wait, waitValue, signal, signalValue uint64) error {
	if err := check("vkResetFences", vulkan.ResetFences(c.d.Device, 1, []vulkan.Fence{c.fence})); err != nil {
		return err
	}
	c.d.QueueMu.Lock()
	defer c.d.QueueMu.Unlock()
	f := uint64(uintptr(unsafe.Pointer(c.fence)))
	return check("vkQueueSubmit", vulkan.Result(C.cd_submit_timeline(unsafe.Pointer(c.d.Instance), unsafe.Pointer(c.d.Queue), unsafe.Pointer(c.Cmd),
		C.uint64_t(wait), C.uint64_t(waitValue), C.uint64_t(signal), C.uint64_t(signalValue), C.uint64_t(f))))
}

// Wait waits for the fence of the last Submit.
func (c *Commands) Wait() error {
	return check("vkWaitForFences", vulkan.WaitForFences(c.d.Device, 1, []vulkan.Fence{c.fence}, vulkan.True, 60e9))
}

// Close frees the command buffer and the fence.
func (c *Commands) Close() {
	vulkan.DestroyFence(c.d.Device, c.fence, nil)
	vulkan.FreeCommandBuffers(c.d.Device, c.d.pool, 1, []vulkan.CommandBuffer{c.Cmd})
}

// NewTimeline creates a timeline semaphore starting at initial.
func (d *Device) NewTimeline(initial uint64) (uint64, error) {
	var s C.uint64_t
	err := check("vkCreateSemaphore", vulkan.Result(C.cd_create_timeline(unsafe.Pointer(d.Instance), unsafe.Pointer(d.Device), C.uint64_t(initial), &s)))
	return uint64(s), err
}

// DestroySemaphore destroys a semaphore of NewTimeline.
func (d *Device) DestroySemaphore(s uint64) {
	C.cd_destroy_semaphore(unsafe.Pointer(d.Instance), unsafe.Pointer(d.Device), C.uint64_t(s))
}

// Signal sets the timeline semaphore s to value from the host.
func (d *Device) Signal(s, value uint64) error {
	return check("vkSignalSemaphore", vulkan.Result(C.cd_signal(unsafe.Pointer(d.Instance), unsafe.Pointer(d.Device), C.uint64_t(s), C.uint64_t(value))))
}

// WaitValue waits up to a minute for s to reach value.
func (d *Device) WaitValue(s, value uint64) error {
	return check("vkWaitSemaphores", vulkan.Result(C.cd_wait(unsafe.Pointer(d.Instance), unsafe.Pointer(d.Device), C.uint64_t(s), C.uint64_t(value), 60e9)))
}

// Value returns s's current value.
func (d *Device) Value(s uint64) (uint64, error) {
	var v C.uint64_t
	err := check("vkGetSemaphoreCounterValue", vulkan.Result(C.cd_value(unsafe.Pointer(d.Instance), unsafe.Pointer(d.Device), C.uint64_t(s), &v)))
	return uint64(v), err
}

// Check proves the device, queue and b usable: it fills b with value on
// the queue, waits and reads it back.
func (d *Device) Check(b *Buffer, value uint32) error {
	c, err := d.NewCommands()
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Begin(); err != nil {
		return err
	}
	c.Fill(b, value)
	c.BarrierAfter()
	if err := c.End(); err != nil {
		return err
	}
	if err := c.SubmitWait(); err != nil {
		return err
	}
	for i := uint64(0); i+4 <= b.Size; i += 4 {
		if w := *(*uint32)(unsafe.Pointer(&b.Bytes[i])); w != value {
			return fmt.Errorf("callerdev: word %d of the buffer is %#x after a fill with %#x", i/4, w, value)
		}
	}
	return nil
}
