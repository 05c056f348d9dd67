//go:build cgo

// Package vkapp is the Vulkan plumbing that the example applications
// share, written on github.com/vulkan-go/vulkan as any Go application on
// Vulkan would be: loading the loader, an instance with the validation
// layer on request, a device with every feature it has, buffers, compute
// pipelines with storage-buffer bindings and push constants, and barriers.
// Nothing here is gpuscatter's: the applications hand what they make here
// to package gpu (Device.External describes the device as gpu takes it).
package vkapp

/*
#cgo linux LDFLAGS: -ldl
#include <stdlib.h>
#include "vkapp.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"

	"github.com/gpuscatter/gpuscatter/gpu"
)

// Vulkan 1.2 names that vulkan-go, made from Vulkan 1.1 headers, lacks.
const (
	APIVersion12 = 1<<22 | 2<<12
	// BufferUsageShaderDeviceAddress is VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT.
	BufferUsageShaderDeviceAddress vk.BufferUsageFlagBits = 0x00020000
)

// Check turns a Vulkan result into an error naming the call.
func Check(call string, r vk.Result) error {
	if r == vk.Success {
		return nil
	}
	return fmt.Errorf("%s: %w", call, vk.Error(r))
}

var loaded struct {
	sync.Once
	err error
}

// Load hands vulkan-go the loader's vkGetInstanceProcAddr: gipa where the
// application has one (GLFW's, which a window needs), or the one of
// libvulkan.so.1, which it opens. Package gpu's loader opens the same
// library (or, built with the glfw tag, takes GLFW's), so the process has
// one loader and vulkan-go's one table of entry points. Only the first
// call does anything.
func Load(gipa unsafe.Pointer) error {
	loaded.Do(func() {
		if gipa == nil {
			name := C.CString("libvulkan.so.1")
			defer C.free(unsafe.Pointer(name))
			var msg [256]C.char
			gipa = C.vkapp_dlopen(name, &msg[0], C.int(len(msg)))
			if gipa == nil {
				loaded.err = fmt.Errorf("no Vulkan loader: %s", C.GoString(&msg[0]))
				return
			}
		}
		C.vkapp_set_gipa(gipa)
		vk.SetGetInstanceProcAddr(gipa)
		loaded.err = vk.Init()
	})
	return loaded.err
}

var messages struct {
	sync.Mutex
	list []string
}

//export vkappMessage
func vkappMessage(severity C.int, msg *C.char) {
	messages.Lock()
	defer messages.Unlock()
	messages.list = append(messages.list, C.GoString(msg))
}

// Messages returns the validation layer's warnings and errors so far.
func Messages() []string {
	messages.Lock()
	defer messages.Unlock()
	return append([]string(nil), messages.list...)
}

// CheckMessages prints the validation layer's warnings and errors so far
// and fails if there are any.
func CheckMessages() error {
	msgs := Messages()
	for _, m := range msgs {
		fmt.Println("validation:", m)
	}
	if len(msgs) > 0 {
		return fmt.Errorf("%d validation messages", len(msgs))
	}
	fmt.Println("validation: no messages (synchronization validation on)")
	return nil
}

// Instance is a VkInstance, with the validation layer's messenger when
// validation is on.
type Instance struct {
	Handle     vk.Instance
	APIVersion uint32
	messenger  C.uint64_t
}

func cstrings(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + "\x00"
	}
	return out
}

// NewInstance creates a Vulkan 1.2 instance with the given extensions.
// With validate it enables VK_LAYER_KHRONOS_validation with its
// synchronization validation, and a messenger that collects every
// warning and error (Messages).
func NewInstance(name string, extensions []string, validate bool) (*Instance, error) {
	var layers []string
	var next unsafe.Pointer
	if validate {
		layers = append(layers, "VK_LAYER_KHRONOS_validation")
		extensions = append(extensions, "VK_EXT_debug_utils", "VK_EXT_validation_features")
		next = C.vkapp_validation_features()
	}
	app := vk.ApplicationInfo{
		SType:            vk.StructureTypeApplicationInfo,
		PApplicationName: name + "\x00",
		PEngineName:      name + "\x00",
		ApiVersion:       APIVersion12,
	}
	ci := vk.InstanceCreateInfo{
		SType:                   vk.StructureTypeInstanceCreateInfo,
		PNext:                   next,
		PApplicationInfo:        &app,
		EnabledLayerCount:       uint32(len(layers)),
		PpEnabledLayerNames:     cstrings(layers),
		EnabledExtensionCount:   uint32(len(extensions)),
		PpEnabledExtensionNames: cstrings(extensions),
	}
	var h vk.Instance
	if err := Check("vkCreateInstance", vk.CreateInstance(&ci, nil, &h)); err != nil {
		if validate {
			return nil, fmt.Errorf("%w (validation needs VK_LAYER_KHRONOS_validation: Debian package vulkan-validationlayers)", err)
		}
		return nil, err
	}
	if err := vk.InitInstance(h); err != nil {
		vk.DestroyInstance(h, nil)
		return nil, err
	}
	in := &Instance{Handle: h, APIVersion: APIVersion12}
	if validate {
		r := C.vkapp_create_messenger(C.VkInstance(unsafe.Pointer(h)), &in.messenger)
		if err := Check("vkCreateDebugUtilsMessengerEXT", vk.Result(r)); err != nil {
			vk.DestroyInstance(h, nil)
			return nil, err
		}
	}
	return in, nil
}

// Destroy destroys the messenger and the instance.
func (in *Instance) Destroy() {
	if in.messenger != 0 {
		C.vkapp_destroy_messenger(C.VkInstance(unsafe.Pointer(in.Handle)), in.messenger)
	}
	vk.DestroyInstance(in.Handle, nil)
}

// Device is a VkDevice with one queue of a family that computes.
type Device struct {
	Instance   *Instance
	Physical   vk.PhysicalDevice
	Handle     vk.Device
	Queue      vk.Queue
	Family     uint32
	Name       string
	APIVersion uint32
	// Features is the VkPhysicalDeviceFeatures2 chain the device was
	// created with.
	Features unsafe.Pointer
	// CreateInfo is the *VkDeviceCreateInfo the device was created with
	// (its pNext is Features), kept until Destroy.
	CreateInfo unsafe.Pointer
	memory     vk.PhysicalDeviceMemoryProperties
}

// ErrNoDevice: no device has Vulkan 1.2, buffer device addresses and a
// queue family that computes (and presents, where asked).
var ErrNoDevice = errors.New("no Vulkan device")

// FeatureChain returns the VkPhysicalDeviceFeatures2 chain to create a
// device on pd with (a VkDeviceCreateInfo's pNext) and the device
// extensions its features need. The chain must live as long as the
// Device.
type FeatureChain func(pd vk.PhysicalDevice) (next unsafe.Pointer, extensions []string, err error)

// OpenDevice creates a device on the first physical device with Vulkan
// 1.2, bufferDeviceAddress and a queue family that computes, and for
// which present, when not nil, says the family presents, with the given
// device extensions. It enables the features of chain, or where chain is
// nil every Vulkan 1.0, 1.1 and 1.2 feature the device has (but robust
// buffer access and address capture).
func (in *Instance) OpenDevice(extensions []string, present func(vk.PhysicalDevice, uint32) bool, chain FeatureChain) (*Device, error) {
	var n uint32
	if err := Check("vkEnumeratePhysicalDevices", vk.EnumeratePhysicalDevices(in.Handle, &n, nil)); err != nil {
		return nil, err
	}
	pds := make([]vk.PhysicalDevice, n)
	if err := Check("vkEnumeratePhysicalDevices", vk.EnumeratePhysicalDevices(in.Handle, &n, pds)); err != nil {
		return nil, err
	}
	var refused []string
	for _, pd := range pds[:n] {
		var props vk.PhysicalDeviceProperties
		vk.GetPhysicalDeviceProperties(pd, &props)
		props.Deref()
		name := vk.ToString(props.DeviceName[:])
		var bda, api12 C.int
		features := C.vkapp_device_features(C.VkInstance(unsafe.Pointer(in.Handle)), C.VkPhysicalDevice(unsafe.Pointer(pd)), &bda, &api12)
		if api12 == 0 || bda == 0 {
			refused = append(refused, name+": no Vulkan 1.2 with bufferDeviceAddress")
			continue
		}
		family, ok := computeFamily(pd, present)
		if !ok {
			refused = append(refused, name+": no queue family that computes and presents")
			continue
		}
		d := &Device{Instance: in, Physical: pd, Family: family, Name: name, APIVersion: props.ApiVersion, Features: features}
		exts := extensions
		if chain != nil {
			next, more, err := chain(pd)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			d.Features, exts = next, append(append([]string(nil), extensions...), more...)
		}
		if err := d.create(exts); err != nil {
			C.vkapp_free_create_info(d.CreateInfo)
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return d, nil
	}
	return nil, fmt.Errorf("%w: %d devices: %s", ErrNoDevice, n, strings.Join(refused, "; "))
}

func computeFamily(pd vk.PhysicalDevice, present func(vk.PhysicalDevice, uint32) bool) (uint32, bool) {
	var n uint32
	vk.GetPhysicalDeviceQueueFamilyProperties(pd, &n, nil)
	fams := make([]vk.QueueFamilyProperties, n)
	vk.GetPhysicalDeviceQueueFamilyProperties(pd, &n, fams)
	for i := range fams[:n] {
		fams[i].Deref()
		if vk.QueueFlagBits(fams[i].QueueFlags)&vk.QueueComputeBit == 0 {
			continue
		}
		if present != nil && !present(pd, uint32(i)) {
			continue
		}
		return uint32(i), true
	}
	return 0, false
}

func (d *Device) create(extensions []string) error {
	names := make([]*C.char, len(extensions)+1)
	for i, e := range extensions {
		names[i] = C.CString(e)
		defer C.free(unsafe.Pointer(names[i]))
	}
	cnames := (**C.char)(C.malloc(C.size_t(len(names)) * C.size_t(unsafe.Sizeof(names[0]))))
	defer C.free(unsafe.Pointer(cnames))
	copy(unsafe.Slice(cnames, len(names)), names)
	var h C.VkDevice
	var info unsafe.Pointer
	r := C.vkapp_create_device(C.VkInstance(unsafe.Pointer(d.Instance.Handle)), C.VkPhysicalDevice(unsafe.Pointer(d.Physical)),
		C.uint32_t(d.Family), d.Features, cnames, C.uint32_t(len(extensions)), &h, &info)
	d.CreateInfo = info
	if err := Check("vkCreateDevice", vk.Result(r)); err != nil {
		return err
	}
	d.Handle = vk.Device(unsafe.Pointer(h))
	var q vk.Queue
	vk.GetDeviceQueue(d.Handle, d.Family, 0, &q)
	d.Queue = q
	var mem vk.PhysicalDeviceMemoryProperties
	vk.GetPhysicalDeviceMemoryProperties(d.Physical, &mem)
	mem.Deref()
	d.memory = mem
	for i := range d.memory.MemoryTypes[:d.memory.MemoryTypeCount] {
		d.memory.MemoryTypes[i].Deref()
	}
	return nil
}

// External is the device as package gpu adopts it, with the create info
// it was made with; the application adds its submit hook.
func (d *Device) External() gpu.External {
	return gpu.External{
		Instance:       unsafe.Pointer(d.Instance.Handle),
		PhysicalDevice: unsafe.Pointer(d.Physical),
		Device:         unsafe.Pointer(d.Handle),
		QueueFamily:    d.Family,
		APIVersion:     d.Instance.APIVersion,
		CreateInfo:     d.CreateInfo,
	}
}

// Destroy waits for the device to be idle and destroys it.
func (d *Device) Destroy() {
	vk.DeviceWaitIdle(d.Handle)
	vk.DestroyDevice(d.Handle, nil)
	C.vkapp_free_create_info(d.CreateInfo)
}

// Buffer is a VkBuffer with memory of its own, mapped when host-visible.
type Buffer struct {
	Handle vk.Buffer
	Memory vk.DeviceMemory
	Size   uint64
	// Usage is the VkBufferUsageFlags it was created with.
	Usage vk.BufferUsageFlagBits
	// Mapped is the host's view of host-visible memory, else nil.
	Mapped unsafe.Pointer
}

// NewBuffer creates a buffer of size bytes with the given usage, in
// device-local memory, or with host, in host-visible and coherent memory,
// mapped. Memory for a buffer with device-address usage is allocated with
// VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT.
func (d *Device) NewBuffer(size uint64, usage vk.BufferUsageFlagBits, host bool) (*Buffer, error) {
	b := &Buffer{Size: size, Usage: usage}
	ci := vk.BufferCreateInfo{
		SType:       vk.StructureTypeBufferCreateInfo,
		Size:        vk.DeviceSize(size),
		Usage:       vk.BufferUsageFlags(usage),
		SharingMode: vk.SharingModeExclusive,
	}
	var h vk.Buffer
	if err := Check("vkCreateBuffer", vk.CreateBuffer(d.Handle, &ci, nil, &h)); err != nil {
		return nil, err
	}
	b.Handle = h
	var req vk.MemoryRequirements
	vk.GetBufferMemoryRequirements(d.Handle, b.Handle, &req)
	req.Deref()
	want := vk.MemoryPropertyDeviceLocalBit
	if host {
		want = vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit
	}
	index, ok := d.memoryType(req.MemoryTypeBits, want)
	if !ok && !host {
		index, ok = d.memoryType(req.MemoryTypeBits, 0)
	}
	if !ok {
		vk.DestroyBuffer(d.Handle, b.Handle, nil)
		return nil, fmt.Errorf("no memory type for a buffer of %d bytes", size)
	}
	ai := vk.MemoryAllocateInfo{
		SType:           vk.StructureTypeMemoryAllocateInfo,
		AllocationSize:  req.Size,
		MemoryTypeIndex: index,
	}
	if usage&BufferUsageShaderDeviceAddress != 0 {
		ai.PNext = C.vkapp_allocate_flags()
	}
	var mem vk.DeviceMemory
	if err := Check("vkAllocateMemory", vk.AllocateMemory(d.Handle, &ai, nil, &mem)); err != nil {
		vk.DestroyBuffer(d.Handle, b.Handle, nil)
		return nil, err
	}
	b.Memory = mem
	err := Check("vkBindBufferMemory", vk.BindBufferMemory(d.Handle, b.Handle, b.Memory, 0))
	if err == nil && host {
		var p unsafe.Pointer
		err = Check("vkMapMemory", vk.MapMemory(d.Handle, b.Memory, 0, vk.DeviceSize(size), 0, &p))
		b.Mapped = p
	}
	if err != nil {
		d.DestroyBuffer(b)
		return nil, err
	}
	return b, nil
}

func (d *Device) memoryType(bits uint32, want vk.MemoryPropertyFlagBits) (uint32, bool) {
	for i := uint32(0); i < d.memory.MemoryTypeCount; i++ {
		flags := vk.MemoryPropertyFlagBits(d.memory.MemoryTypes[i].PropertyFlags)
		if bits&(1<<i) != 0 && flags&want == want {
			return i, true
		}
	}
	return 0, false
}

// DestroyBuffer destroys b and frees its memory.
func (d *Device) DestroyBuffer(b *Buffer) {
	if b == nil {
		return
	}
	vk.DestroyBuffer(d.Handle, b.Handle, nil)
	vk.FreeMemory(d.Handle, b.Memory, nil)
}

// Uint64 is the buffer's handle as the 64-bit value that APIs taking
// non-dispatchable handles from any binding accept.
func (b *Buffer) Uint64() uint64 { return uint64(uintptr(unsafe.Pointer(b.Handle))) }

// Uint32s is the mapped memory of a host-visible buffer as 32-bit words.
func (b *Buffer) Uint32s() []uint32 {
	return unsafe.Slice((*uint32)(b.Mapped), b.Size/4)
}
