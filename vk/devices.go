//go:build cgo

package vk

/*
#include <stdlib.h>
#include "gsvk.h"
#include "gscall.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"
)

// DeviceType classifies a physical device.
type DeviceType string

// Device types, in the order Open prefers them.
const (
	DeviceDiscrete   DeviceType = "discrete"
	DeviceIntegrated DeviceType = "integrated"
	DeviceVirtual    DeviceType = "virtual"
	DeviceCPU        DeviceType = "cpu"
	DeviceOther      DeviceType = "other"
)

func deviceTypeOf(t vulkan.PhysicalDeviceType) DeviceType {
	switch t {
	case vulkan.PhysicalDeviceTypeDiscreteGpu:
		return DeviceDiscrete
	case vulkan.PhysicalDeviceTypeIntegratedGpu:
		return DeviceIntegrated
	case vulkan.PhysicalDeviceTypeVirtualGpu:
		return DeviceVirtual
	case vulkan.PhysicalDeviceTypeCpu:
		return DeviceCPU
	}
	return DeviceOther
}

// rank orders device types for automatic selection; lower is better.
func (t DeviceType) rank() int {
	switch t {
	case DeviceDiscrete:
		return 0
	case DeviceIntegrated:
		return 1
	case DeviceVirtual:
		return 2
	case DeviceCPU:
		return 3
	}
	return 4
}

// Capabilities lists what a device offers to compute shaders. From Devices
// it is what the device supports; from Device.Capabilities it is what Open
// enabled (every supported item that needs enabling is enabled).
type Capabilities struct {
	// Float32Atomics: atomic load/store/exchange on float32 in storage buffers.
	Float32Atomics bool `json:"float32Atomics"`
	// Float32AtomicAdd: atomicAdd on float32 in storage buffers.
	Float32AtomicAdd bool `json:"float32AtomicAdd"`
	// Float32AtomicMinMax: atomicMin/atomicMax on float32 in storage buffers.
	Float32AtomicMinMax bool `json:"float32AtomicMinMax"`
	// SharedFloat32AtomicAdd: atomicAdd on float32 in workgroup memory.
	SharedFloat32AtomicAdd bool `json:"sharedFloat32AtomicAdd"`
	// Float16Atomics: atomic load/store/exchange on float16 in storage buffers.
	Float16Atomics bool `json:"float16Atomics"`
	// Float16AtomicAdd: atomicAdd on float16 in storage buffers.
	Float16AtomicAdd bool `json:"float16AtomicAdd"`
	// Float16AtomicMinMax: atomicMin/atomicMax on float16 in storage buffers.
	Float16AtomicMinMax bool `json:"float16AtomicMinMax"`
	// Float64Atomics: atomic load/store/exchange on float64 in storage buffers.
	Float64Atomics bool `json:"float64Atomics"`
	// Float64AtomicAdd: atomicAdd on float64 in storage buffers.
	Float64AtomicAdd bool `json:"float64AtomicAdd"`
	// Float64AtomicMinMax: atomicMin/atomicMax on float64 in storage buffers.
	Float64AtomicMinMax bool `json:"float64AtomicMinMax"`
	// Int64BufferAtomics: 64-bit integer atomics in storage buffers.
	Int64BufferAtomics bool `json:"int64BufferAtomics"`
	// Int64SharedAtomics: 64-bit integer atomics in workgroup memory.
	Int64SharedAtomics bool `json:"int64SharedAtomics"`

	ShaderInt64   bool `json:"shaderInt64"`
	ShaderFloat64 bool `json:"shaderFloat64"`
	ShaderInt16   bool `json:"shaderInt16"`
	ShaderFloat16 bool `json:"shaderFloat16"`
	ShaderInt8    bool `json:"shaderInt8"`

	// StorageBuffer8BitAccess: 8-bit types in storage buffers.
	StorageBuffer8BitAccess bool `json:"storageBuffer8BitAccess"`
	// StorageBuffer16BitAccess: 16-bit types in storage buffers.
	StorageBuffer16BitAccess bool `json:"storageBuffer16BitAccess"`
	// BufferDeviceAddress: physical storage buffer pointers.
	BufferDeviceAddress bool `json:"bufferDeviceAddress"`

	// DenormPreserveFloat32 and DenormPreserveFloat64: float arithmetic in
	// the pipelines of this package keeps float32 (float64) subnormals.
	// The device offers shaderDenormPreserveFloat32 (...Float64) where its
	// denormBehaviorIndependence lets a module declare it, and NewPipeline
	// declares the DenormPreserve execution mode in every module. Without
	// it a device may flush subnormal operands and results to zero
	// (SwiftShader does; Vulkan promises nothing either way).
	DenormPreserveFloat32 bool `json:"denormPreserveFloat32"`
	DenormPreserveFloat64 bool `json:"denormPreserveFloat64"`
	// SignedZeroInfNanPreserveFloat32 and ...Float64: float arithmetic in
	// the pipelines of this package respects signed zeros, infinities and
	// NaN (NewPipeline declares SignedZeroInfNanPreserve); without it the
	// compiler may assume there are none.
	SignedZeroInfNanPreserveFloat32 bool `json:"signedZeroInfNanPreserveFloat32"`
	SignedZeroInfNanPreserveFloat64 bool `json:"signedZeroInfNanPreserveFloat64"`

	// SubgroupSize is the default subgroup size (0 when unknown).
	SubgroupSize uint32 `json:"subgroupSize"`
	// SubgroupOperations names the supported subgroup operation classes
	// (basic, vote, arithmetic, ballot, shuffle, shuffleRelative, clustered,
	// quad).
	SubgroupOperations []string `json:"subgroupOperations"`

	// Timestamps reports whether the compute queue can write timestamps.
	Timestamps bool `json:"timestamps"`
	// TimestampPeriod is the number of nanoseconds per timestamp tick.
	TimestampPeriod float32 `json:"timestampPeriodNs"`
	// TimestampValidBits is the number of meaningful timestamp bits.
	TimestampValidBits uint32 `json:"timestampValidBits"`

	MaxStorageBufferRange uint64 `json:"maxStorageBufferRange"`
	// MaxMemoryAllocationSize comes from VkPhysicalDeviceMaintenance3Properties;
	// when that is unavailable it is the size of the largest device-local heap.
	MaxMemoryAllocationSize             uint64    `json:"maxMemoryAllocationSize"`
	MaxComputeWorkGroupCount            [3]uint32 `json:"maxComputeWorkGroupCount"`
	MaxComputeWorkGroupSize             [3]uint32 `json:"maxComputeWorkGroupSize"`
	MaxComputeWorkGroupInvocations      uint32    `json:"maxComputeWorkGroupInvocations"`
	MaxComputeSharedMemorySize          uint32    `json:"maxComputeSharedMemorySize"`
	MaxPushConstantsSize                uint32    `json:"maxPushConstantsSize"`
	MaxPerStageDescriptorStorageBuffers uint32    `json:"maxPerStageDescriptorStorageBuffers"`
	MinStorageBufferOffsetAlignment     uint64    `json:"minStorageBufferOffsetAlignment"`
	// UnifiedMemory reports that all memory types of the main device-local
	// heap are host-visible, one of them host-coherent (integrated GPUs,
	// CPU devices), so buffers are mapped instead of staged. A discrete GPU
	// has device-local memory the host cannot map, resizable BAR or not,
	// and stages its copies.
	UnifiedMemory bool `json:"unifiedMemory"`
}

// DeviceInfo describes one physical device.
type DeviceInfo struct {
	// Index is the position in Vulkan's enumeration; it is a valid selector.
	Index         int        `json:"index"`
	Name          string     `json:"name"`
	Type          DeviceType `json:"type"`
	VendorID      uint32     `json:"vendorID"`
	DeviceID      uint32     `json:"deviceID"`
	APIVersion    string     `json:"apiVersion"`
	DriverVersion uint32     `json:"driverVersion"`
	// DriverName and DriverInfo come from VK_KHR_driver_properties and are
	// empty when it is unavailable.
	DriverName string `json:"driverName"`
	DriverInfo string `json:"driverInfo"`
	// DeviceLocalMemory is the size in bytes of the largest device-local heap.
	DeviceLocalMemory uint64       `json:"deviceLocalMemory"`
	PipelineCacheUUID string       `json:"pipelineCacheUUID"`
	Capabilities      Capabilities `json:"capabilities"`
	// Measured are the device's transfer and latency figures, where they
	// were measured (Device.MeasuredFigures); nil otherwise.
	Measured *Measured `json:"measured,omitempty"`
}

// features mirrors the extension feature bits this package reads and enables.
type features struct {
	bufferFloat32Atomics, bufferFloat32AtomicAdd         bool
	bufferFloat64Atomics, bufferFloat64AtomicAdd         bool
	sharedFloat32Atomics, sharedFloat32AtomicAdd         bool
	sharedFloat64Atomics, sharedFloat64AtomicAdd         bool
	bufferFloat16Atomics, bufferFloat16AtomicAdd         bool
	bufferFloat16AtomicMinMax, bufferFloat32AtomicMinMax bool
	bufferFloat64AtomicMinMax                            bool
	sharedFloat16Atomics, sharedFloat16AtomicAdd         bool
	sharedFloat16AtomicMinMax, sharedFloat32AtomicMinMax bool
	sharedFloat64AtomicMinMax                            bool
	bufferInt64Atomics, sharedInt64Atomics               bool
	storageBuffer8Bit, uniformAndStorageBuffer8Bit       bool
	storagePushConstant8                                 bool
	storageBuffer16Bit, uniformAndStorageBuffer16Bit     bool
	storagePushConstant16                                bool
	shaderFloat16, shaderInt8                            bool
	bufferDeviceAddress                                  bool
}

func b32(b C.gsBool32) bool { return b != 0 }

func cb32(b bool) C.gsBool32 {
	if b {
		return 1
	}
	return 0
}

// load reads the structures of c selected by mask.
func (f *features) load(c *C.gsChain, mask uint32) {
	if mask&C.GS_FEAT_ATOMIC_FLOAT != 0 {
		a := &c.atomicFloat
		f.bufferFloat32Atomics = b32(a.shaderBufferFloat32Atomics)
		f.bufferFloat32AtomicAdd = b32(a.shaderBufferFloat32AtomicAdd)
		f.bufferFloat64Atomics = b32(a.shaderBufferFloat64Atomics)
		f.bufferFloat64AtomicAdd = b32(a.shaderBufferFloat64AtomicAdd)
		f.sharedFloat32Atomics = b32(a.shaderSharedFloat32Atomics)
		f.sharedFloat32AtomicAdd = b32(a.shaderSharedFloat32AtomicAdd)
		f.sharedFloat64Atomics = b32(a.shaderSharedFloat64Atomics)
		f.sharedFloat64AtomicAdd = b32(a.shaderSharedFloat64AtomicAdd)
	}
	if mask&C.GS_FEAT_ATOMIC_FLOAT2 != 0 {
		a := &c.atomicFloat2
		f.bufferFloat16Atomics = b32(a.shaderBufferFloat16Atomics)
		f.bufferFloat16AtomicAdd = b32(a.shaderBufferFloat16AtomicAdd)
		f.bufferFloat16AtomicMinMax = b32(a.shaderBufferFloat16AtomicMinMax)
		f.bufferFloat32AtomicMinMax = b32(a.shaderBufferFloat32AtomicMinMax)
		f.bufferFloat64AtomicMinMax = b32(a.shaderBufferFloat64AtomicMinMax)
		f.sharedFloat16Atomics = b32(a.shaderSharedFloat16Atomics)
		f.sharedFloat16AtomicAdd = b32(a.shaderSharedFloat16AtomicAdd)
		f.sharedFloat16AtomicMinMax = b32(a.shaderSharedFloat16AtomicMinMax)
		f.sharedFloat32AtomicMinMax = b32(a.shaderSharedFloat32AtomicMinMax)
		f.sharedFloat64AtomicMinMax = b32(a.shaderSharedFloat64AtomicMinMax)
	}
	if mask&C.GS_FEAT_ATOMIC_INT64 != 0 {
		f.bufferInt64Atomics = b32(c.atomicInt64.shaderBufferInt64Atomics)
		f.sharedInt64Atomics = b32(c.atomicInt64.shaderSharedInt64Atomics)
	}
	if mask&C.GS_FEAT_STORAGE8 != 0 {
		f.storageBuffer8Bit = b32(c.storage8.storageBuffer8BitAccess)
		f.uniformAndStorageBuffer8Bit = b32(c.storage8.uniformAndStorageBuffer8BitAccess)
		f.storagePushConstant8 = b32(c.storage8.storagePushConstant8)
	}
	if mask&C.GS_FEAT_STORAGE16 != 0 {
		f.storageBuffer16Bit = b32(c.storage16.storageBuffer16BitAccess)
		f.uniformAndStorageBuffer16Bit = b32(c.storage16.uniformAndStorageBuffer16BitAccess)
		f.storagePushConstant16 = b32(c.storage16.storagePushConstant16)
	}
	if mask&C.GS_FEAT_FLOAT16_INT8 != 0 {
		f.shaderFloat16 = b32(c.float16Int8.shaderFloat16)
		f.shaderInt8 = b32(c.float16Int8.shaderInt8)
	}
	if mask&C.GS_FEAT_BDA != 0 {
		f.bufferDeviceAddress = b32(c.bda.bufferDeviceAddress)
	}
}

// store writes f into c and returns the mask of structures that enable at
// least one feature, for chaining onto VkDeviceCreateInfo.
func (f *features) store(c *C.gsChain) uint32 {
	var mask uint32
	a := &c.atomicFloat
	a.shaderBufferFloat32Atomics = cb32(f.bufferFloat32Atomics)
	a.shaderBufferFloat32AtomicAdd = cb32(f.bufferFloat32AtomicAdd)
	a.shaderBufferFloat64Atomics = cb32(f.bufferFloat64Atomics)
	a.shaderBufferFloat64AtomicAdd = cb32(f.bufferFloat64AtomicAdd)
	a.shaderSharedFloat32Atomics = cb32(f.sharedFloat32Atomics)
	a.shaderSharedFloat32AtomicAdd = cb32(f.sharedFloat32AtomicAdd)
	a.shaderSharedFloat64Atomics = cb32(f.sharedFloat64Atomics)
	a.shaderSharedFloat64AtomicAdd = cb32(f.sharedFloat64AtomicAdd)
	if f.bufferFloat32Atomics || f.bufferFloat32AtomicAdd || f.bufferFloat64Atomics || f.bufferFloat64AtomicAdd ||
		f.sharedFloat32Atomics || f.sharedFloat32AtomicAdd || f.sharedFloat64Atomics || f.sharedFloat64AtomicAdd {
		mask |= C.GS_FEAT_ATOMIC_FLOAT
	}
	a2 := &c.atomicFloat2
	a2.shaderBufferFloat16Atomics = cb32(f.bufferFloat16Atomics)
	a2.shaderBufferFloat16AtomicAdd = cb32(f.bufferFloat16AtomicAdd)
	a2.shaderBufferFloat16AtomicMinMax = cb32(f.bufferFloat16AtomicMinMax)
	a2.shaderBufferFloat32AtomicMinMax = cb32(f.bufferFloat32AtomicMinMax)
	a2.shaderBufferFloat64AtomicMinMax = cb32(f.bufferFloat64AtomicMinMax)
	a2.shaderSharedFloat16Atomics = cb32(f.sharedFloat16Atomics)
	a2.shaderSharedFloat16AtomicAdd = cb32(f.sharedFloat16AtomicAdd)
	a2.shaderSharedFloat16AtomicMinMax = cb32(f.sharedFloat16AtomicMinMax)
	a2.shaderSharedFloat32AtomicMinMax = cb32(f.sharedFloat32AtomicMinMax)
	a2.shaderSharedFloat64AtomicMinMax = cb32(f.sharedFloat64AtomicMinMax)
	if f.bufferFloat16Atomics || f.bufferFloat16AtomicAdd || f.bufferFloat16AtomicMinMax ||
		f.bufferFloat32AtomicMinMax || f.bufferFloat64AtomicMinMax || f.sharedFloat16Atomics ||
		f.sharedFloat16AtomicAdd || f.sharedFloat16AtomicMinMax || f.sharedFloat32AtomicMinMax ||
		f.sharedFloat64AtomicMinMax {
		mask |= C.GS_FEAT_ATOMIC_FLOAT2
	}
	c.atomicInt64.shaderBufferInt64Atomics = cb32(f.bufferInt64Atomics)
	c.atomicInt64.shaderSharedInt64Atomics = cb32(f.sharedInt64Atomics)
	if f.bufferInt64Atomics || f.sharedInt64Atomics {
		mask |= C.GS_FEAT_ATOMIC_INT64
	}
	c.storage8.storageBuffer8BitAccess = cb32(f.storageBuffer8Bit)
	c.storage8.uniformAndStorageBuffer8BitAccess = cb32(f.uniformAndStorageBuffer8Bit)
	c.storage8.storagePushConstant8 = cb32(f.storagePushConstant8)
	if f.storageBuffer8Bit || f.uniformAndStorageBuffer8Bit || f.storagePushConstant8 {
		mask |= C.GS_FEAT_STORAGE8
	}
	c.storage16.storageBuffer16BitAccess = cb32(f.storageBuffer16Bit)
	c.storage16.uniformAndStorageBuffer16BitAccess = cb32(f.uniformAndStorageBuffer16Bit)
	c.storage16.storagePushConstant16 = cb32(f.storagePushConstant16)
	if f.storageBuffer16Bit || f.uniformAndStorageBuffer16Bit || f.storagePushConstant16 {
		mask |= C.GS_FEAT_STORAGE16
	}
	c.float16Int8.shaderFloat16 = cb32(f.shaderFloat16)
	c.float16Int8.shaderInt8 = cb32(f.shaderInt8)
	if f.shaderFloat16 || f.shaderInt8 {
		mask |= C.GS_FEAT_FLOAT16_INT8
	}
	c.bda.bufferDeviceAddress = cb32(f.bufferDeviceAddress)
	if f.bufferDeviceAddress {
		mask |= C.GS_FEAT_BDA
	}
	return mask
}

type memoryType struct {
	flags vulkan.MemoryPropertyFlags
	heap  uint32
}

type memoryHeap struct {
	size  uint64
	flags vulkan.MemoryHeapFlags
}

type queueFamily struct {
	flags         vulkan.QueueFlags
	count         uint32
	timestampBits uint32
}

// physical is everything probed about one physical device.
type physical struct {
	index      int
	handle     vulkan.PhysicalDevice
	props      vulkan.PhysicalDeviceProperties
	limits     vulkan.PhysicalDeviceLimits
	apiVersion uint32 // min(instance, device)
	exts       map[string]bool
	base       vulkan.PhysicalDeviceFeatures
	feat       features
	featMask   uint32 // feature structures the device knows
	types      []memoryType
	heaps      []memoryHeap
	families   []queueFamily
	queue      int // chosen compute queue family, -1 if none
	maxAlloc   uint64
	floats     floatModes
	info       DeviceInfo
}

const (
	extAtomicFloat     = "VK_EXT_shader_atomic_float"
	extAtomicFloat2    = "VK_EXT_shader_atomic_float2"
	extAtomicInt64     = "VK_KHR_shader_atomic_int64"
	extStorage8        = "VK_KHR_8bit_storage"
	extStorage16       = "VK_KHR_16bit_storage"
	extFloat16Int8     = "VK_KHR_shader_float16_int8"
	extBDA             = "VK_KHR_buffer_device_address"
	extDriverProps     = "VK_KHR_driver_properties"
	extMaintenance3    = "VK_KHR_maintenance3"
	extMemoryBudget    = "VK_EXT_memory_budget"
	extStorageBufClass = "VK_KHR_storage_buffer_storage_class"
	extFloatControls   = "VK_KHR_shader_float_controls"
)

func deviceExtensions(inst vulkan.Instance, pd vulkan.PhysicalDevice) (map[string]bool, error) {
	props, err := enumerate("vkEnumerateDeviceExtensionProperties", func(n *C.uint32_t, out *C.gsExtensionProperties) C.int32_t {
		return C.gs_device_extensions(unsafe.Pointer(inst), unsafe.Pointer(pd), n, out)
	})
	if err != nil {
		return nil, err
	}
	return extensionNames(props), nil
}

// featureMask returns the feature structures the device understands: core
// in its API version, or provided by an extension it advertises.
func (p *physical) featureMask() uint32 {
	var m uint32
	v12 := p.apiVersion >= makeVersion(1, 2, 0)
	v11 := p.apiVersion >= makeVersion(1, 1, 0)
	if p.exts[extAtomicFloat] {
		m |= C.GS_FEAT_ATOMIC_FLOAT
	}
	if p.exts[extAtomicFloat2] && p.exts[extAtomicFloat] {
		m |= C.GS_FEAT_ATOMIC_FLOAT2
	}
	if v12 || p.exts[extAtomicInt64] {
		m |= C.GS_FEAT_ATOMIC_INT64
	}
	if v12 || p.exts[extStorage8] {
		m |= C.GS_FEAT_STORAGE8
	}
	if v11 || p.exts[extStorage16] {
		m |= C.GS_FEAT_STORAGE16
	}
	if v12 || p.exts[extFloat16Int8] {
		m |= C.GS_FEAT_FLOAT16_INT8
	}
	if v12 || p.exts[extBDA] {
		m |= C.GS_FEAT_BDA
	}
	return m
}

func (p *physical) propertyMask() uint32 {
	var m uint32
	v12 := p.apiVersion >= makeVersion(1, 2, 0)
	v11 := p.apiVersion >= makeVersion(1, 1, 0)
	if v11 {
		m |= C.GS_PROP_SUBGROUP
	}
	if v12 || p.exts[extDriverProps] {
		m |= C.GS_PROP_DRIVER
	}
	if v11 || p.exts[extMaintenance3] {
		m |= C.GS_PROP_MAINT3
	}
	if v12 || p.exts[extFloatControls] {
		m |= C.GS_PROP_FLOAT_CONTROLS
	}
	return m
}

// probe reads properties, features, memory and queue families of pd.
func probe(inst *instance, pd vulkan.PhysicalDevice, index int) (*physical, error) {
	p := &physical{index: index, handle: pd, queue: -1}

	var props vulkan.PhysicalDeviceProperties
	vulkan.GetPhysicalDeviceProperties(pd, &props)
	props.Deref()
	props.Limits.Deref()
	p.props = props
	p.limits = props.Limits
	props.Free()

	p.apiVersion = p.props.ApiVersion
	if inst.apiVersion < p.apiVersion {
		p.apiVersion = inst.apiVersion
	}
	exts, err := deviceExtensions(inst.handle, pd)
	if err != nil {
		return nil, err
	}
	p.exts = exts

	var base vulkan.PhysicalDeviceFeatures
	vulkan.GetPhysicalDeviceFeatures(pd, &base)
	base.Deref()
	p.base = base
	base.Free()

	var mem vulkan.PhysicalDeviceMemoryProperties
	vulkan.GetPhysicalDeviceMemoryProperties(pd, &mem)
	mem.Deref()
	for i := uint32(0); i < mem.MemoryTypeCount && i < vulkan.MaxMemoryTypes; i++ {
		mem.MemoryTypes[i].Deref()
		p.types = append(p.types, memoryType{flags: mem.MemoryTypes[i].PropertyFlags, heap: mem.MemoryTypes[i].HeapIndex})
	}
	for i := uint32(0); i < mem.MemoryHeapCount && i < vulkan.MaxMemoryHeaps; i++ {
		mem.MemoryHeaps[i].Deref()
		p.heaps = append(p.heaps, memoryHeap{size: uint64(mem.MemoryHeaps[i].Size), flags: mem.MemoryHeaps[i].Flags})
	}
	mem.Free()

	qfs, err := enumerate("vkGetPhysicalDeviceQueueFamilyProperties", func(n *C.uint32_t, out *C.gsQueueFamilyProperties) C.int32_t {
		return C.gs_queue_families(unsafe.Pointer(inst.handle), unsafe.Pointer(pd), n, out)
	})
	if err != nil {
		return nil, err
	}
	for _, q := range qfs {
		p.families = append(p.families, queueFamily{flags: vulkan.QueueFlags(q.queueFlags), count: uint32(q.queueCount), timestampBits: uint32(q.timestampValidBits)})
	}
	p.queue = pickQueueFamily(p.families)

	chain := (*C.gsChain)(C.calloc(1, C.sizeof_gsChain))
	if chain == nil {
		return nil, &ResultError{Call: "calloc", Result: vulkan.ErrorOutOfHostMemory}
	}
	defer C.free(unsafe.Pointer(chain))
	var driverName, driverInfo string
	var subgroupSize, subgroupOps uint32
	var maxAlloc uint64
	if p.apiVersion >= makeVersion(1, 1, 0) || inst.properties2Ext {
		fm := p.featureMask()
		C.gs_link_features(chain, C.uint32_t(fm))
		if C.gs_get_features2(unsafe.Pointer(inst.handle), unsafe.Pointer(pd), chain) != 0 {
			p.featMask = fm
			p.feat.load(chain, fm)
		}
		pm := p.propertyMask()
		C.gs_link_properties(chain, C.uint32_t(pm))
		if C.gs_get_properties2(unsafe.Pointer(inst.handle), unsafe.Pointer(pd), chain) != 0 {
			if pm&C.GS_PROP_DRIVER != 0 {
				driverName = C.GoString(&chain.driver.driverName[0])
				driverInfo = C.GoString(&chain.driver.driverInfo[0])
			}
			if pm&C.GS_PROP_SUBGROUP != 0 {
				subgroupSize = uint32(chain.subgroup.subgroupSize)
				subgroupOps = uint32(chain.subgroup.supportedOperations)
			}
			if pm&C.GS_PROP_MAINT3 != 0 {
				maxAlloc = uint64(chain.maint3.maxMemoryAllocationSize)
			}
			if pm&C.GS_PROP_FLOAT_CONTROLS != 0 {
				fc := &chain.floatControls
				p.floats = chooseFloatModes(uint32(fc.denormBehaviorIndependence),
					[3]bool{b32(fc.shaderDenormPreserveFloat16), b32(fc.shaderDenormPreserveFloat32), b32(fc.shaderDenormPreserveFloat64)},
					[3]bool{b32(fc.shaderSignedZeroInfNanPreserveFloat16), b32(fc.shaderSignedZeroInfNanPreserveFloat32), b32(fc.shaderSignedZeroInfNanPreserveFloat64)})
			}
		}
	}

	var localHeap uint64
	for _, h := range p.heaps {
		if h.flags&vulkan.MemoryHeapFlags(vulkan.MemoryHeapDeviceLocalBit) != 0 && h.size > localHeap {
			localHeap = h.size
		}
	}
	if maxAlloc == 0 {
		maxAlloc = localHeap
	}
	p.maxAlloc = maxAlloc

	l := &p.limits
	caps := Capabilities{
		Float32Atomics:         p.feat.bufferFloat32Atomics,
		Float32AtomicAdd:       p.feat.bufferFloat32AtomicAdd,
		Float32AtomicMinMax:    p.feat.bufferFloat32AtomicMinMax,
		SharedFloat32AtomicAdd: p.feat.sharedFloat32AtomicAdd,
		Float16Atomics:         p.feat.bufferFloat16Atomics,
		Float16AtomicAdd:       p.feat.bufferFloat16AtomicAdd,
		Float16AtomicMinMax:    p.feat.bufferFloat16AtomicMinMax,
		Float64Atomics:         p.feat.bufferFloat64Atomics,
		Float64AtomicAdd:       p.feat.bufferFloat64AtomicAdd,
		Float64AtomicMinMax:    p.feat.bufferFloat64AtomicMinMax,
		Int64BufferAtomics:     p.feat.bufferInt64Atomics,
		Int64SharedAtomics:     p.feat.sharedInt64Atomics,

		ShaderInt64:   p.base.ShaderInt64 != 0,
		ShaderFloat64: p.base.ShaderFloat64 != 0,
		ShaderInt16:   p.base.ShaderInt16 != 0,
		ShaderFloat16: p.feat.shaderFloat16,
		ShaderInt8:    p.feat.shaderInt8,

		StorageBuffer8BitAccess:  p.feat.storageBuffer8Bit,
		StorageBuffer16BitAccess: p.feat.storageBuffer16Bit,
		BufferDeviceAddress:      p.feat.bufferDeviceAddress,

		DenormPreserveFloat32:           p.floats.denorm[1],
		DenormPreserveFloat64:           p.floats.denorm[2],
		SignedZeroInfNanPreserveFloat32: p.floats.signed[1],
		SignedZeroInfNanPreserveFloat64: p.floats.signed[2],

		SubgroupSize:       subgroupSize,
		SubgroupOperations: subgroupOperationNames(subgroupOps),

		TimestampPeriod: l.TimestampPeriod,

		MaxStorageBufferRange:               uint64(l.MaxStorageBufferRange),
		MaxMemoryAllocationSize:             maxAlloc,
		MaxComputeWorkGroupCount:            l.MaxComputeWorkGroupCount,
		MaxComputeWorkGroupSize:             l.MaxComputeWorkGroupSize,
		MaxComputeWorkGroupInvocations:      l.MaxComputeWorkGroupInvocations,
		MaxComputeSharedMemorySize:          l.MaxComputeSharedMemorySize,
		MaxPushConstantsSize:                l.MaxPushConstantsSize,
		MaxPerStageDescriptorStorageBuffers: l.MaxPerStageDescriptorStorageBuffers,
		MinStorageBufferOffsetAlignment:     uint64(l.MinStorageBufferOffsetAlignment),
		UnifiedMemory:                       p.unifiedType() >= 0,
	}
	if p.queue >= 0 && p.families[p.queue].timestampBits > 0 && l.TimestampPeriod > 0 {
		caps.Timestamps = true
		caps.TimestampValidBits = p.families[p.queue].timestampBits
	}
	p.info = DeviceInfo{
		Index:             index,
		Name:              vulkan.ToString(p.props.DeviceName[:]),
		Type:              deviceTypeOf(p.props.DeviceType),
		VendorID:          p.props.VendorID,
		DeviceID:          p.props.DeviceID,
		APIVersion:        versionString(p.props.ApiVersion),
		DriverVersion:     p.props.DriverVersion,
		DriverName:        driverName,
		DriverInfo:        driverInfo,
		DeviceLocalMemory: localHeap,
		PipelineCacheUUID: fmt.Sprintf("%x", p.props.PipelineCacheUUID[:]),
		Capabilities:      caps,
	}
	return p, nil
}

func subgroupOperationNames(bits uint32) []string {
	names := []string{"basic", "vote", "arithmetic", "ballot", "shuffle", "shuffleRelative", "clustered", "quad"}
	out := []string{}
	for i, n := range names {
		if bits&(1<<uint(i)) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// pickQueueFamily returns the first family with compute support, preferring
// one that can write timestamps; -1 if none.
func pickQueueFamily(fams []queueFamily) int {
	best := -1
	for i, f := range fams {
		if f.flags&vulkan.QueueFlags(vulkan.QueueComputeBit) == 0 || f.count == 0 {
			continue
		}
		if best < 0 || (fams[best].timestampBits == 0 && f.timestampBits > 0) {
			best = i
		}
	}
	return best
}

// Devices lists every physical device with its properties and capabilities.
// It returns an error matching ErrNoDevice when the loader or a driver is
// missing or no device exists.
func Devices() ([]DeviceInfo, error) {
	inst, err := acquireInstance(validationOff)
	if err != nil {
		return nil, err
	}
	defer releaseInstance(inst, true)
	phys, err := probeAll(inst)
	if err != nil {
		return nil, err
	}
	out := make([]DeviceInfo, len(phys))
	for i, p := range phys {
		out[i] = p.info
	}
	return out, nil
}

func probeAll(inst *instance) ([]*physical, error) {
	pds, err := inst.physicalDevices()
	if err != nil {
		return nil, err
	}
	if len(pds) == 0 {
		return nil, fmt.Errorf("%w: the Vulkan loader found no physical device", ErrNoDevice)
	}
	out := make([]*physical, 0, len(pds))
	for i, pd := range pds {
		p, err := probe(inst, pd, i)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
