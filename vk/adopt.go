//go:build cgo

package vk

/*
#include <stdlib.h>
#include "gsvk.h"
#include "gsadopt.h"
#include "gscall.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"
)

// External is a device that another part of the program created and
// keeps: its VkInstance, VkPhysicalDevice and VkDevice (dispatchable
// handles, as unsafe.Pointer, so that any binding can hand them over) and
// the compute-capable queue the Device submits to. Adopt takes it.
type External struct {
	// Instance, PhysicalDevice and Device are the caller's handles. The
	// physical device must be one of the instance's and the device made
	// on it.
	Instance, PhysicalDevice, Device unsafe.Pointer
	// QueueFamily and QueueIndex name the queue (vkGetDeviceQueue); its
	// family must support compute.
	QueueFamily, QueueIndex uint32
	// APIVersion is the apiVersion the instance was created with
	// (VkApplicationInfo.apiVersion, as VK_MAKE_API_VERSION packs it).
	APIVersion uint32
	// CreateInfo is the *VkDeviceCreateInfo the device was created with:
	// its extensions, pEnabledFeatures and the feature structures of its
	// pNext chain (VkPhysicalDeviceFeatures2, Vulkan11Features,
	// Vulkan12Features and the per-feature structures) are read during
	// Adopt only. Either CreateInfo or Features must be set; with both,
	// Features wins.
	CreateInfo unsafe.Pointer
	// Features are the features the device was created with, given
	// explicitly.
	Features *Features
	// Submit, when set, wraps every queue submission of the Device: it
	// must call submit exactly once (for instance under the lock the
	// program holds around its own submissions to the queue, which Vulkan
	// requires to be externally synchronised) and return its error. Nil
	// means the Device serialises only its own submissions.
	Submit func(submit func() error) error
}

// Features are the device features that decide which kernels a device
// runs. For an adopted device they are those its creator enabled; Adopt
// keeps only those the physical device also supports.
type Features struct {
	ShaderInt64, ShaderFloat64, ShaderInt16, ShaderFloat16, ShaderInt8 bool
	StorageBuffer8BitAccess, StorageBuffer16BitAccess                  bool
	// BufferDeviceAddress (Vulkan 1.2 bufferDeviceAddress).
	BufferDeviceAddress bool
	// TimelineSemaphore (Vulkan 1.2 timelineSemaphore): submissions that
	// wait for and signal timeline semaphores (Device.SubmitWith).
	TimelineSemaphore bool
	// Float and 64-bit integer atomics of VK_EXT_shader_atomic_float,
	// VK_EXT_shader_atomic_float2 and Vulkan 1.2; the float ones count
	// only where their extension is enabled too.
	Float32Atomics, Float32AtomicAdd, Float32AtomicMinMax, SharedFloat32AtomicAdd bool
	Float16Atomics, Float16AtomicAdd, Float16AtomicMinMax                         bool
	Float64Atomics, Float64AtomicAdd, Float64AtomicMinMax                         bool
	Int64BufferAtomics, Int64SharedAtomics                                        bool
	// NoSubgroups makes the Device report no subgroup operations, for a
	// program that wants kernels to use none; otherwise those the physical
	// device supports are reported (subgroup operations need no enabling).
	NoSubgroups bool
}

// enabledFeatures converts what gs_read_create_info read.
func enabledFeatures(e *C.gsEnabled, exts map[string]bool) Features {
	on := func(i C.int) bool { return e.f[i] != 0 }
	f := Features{
		ShaderInt64:              on(C.GS_EN_SHADER_INT64),
		ShaderFloat64:            on(C.GS_EN_SHADER_FLOAT64),
		ShaderInt16:              on(C.GS_EN_SHADER_INT16),
		ShaderFloat16:            on(C.GS_EN_SHADER_FLOAT16),
		ShaderInt8:               on(C.GS_EN_SHADER_INT8),
		StorageBuffer8BitAccess:  on(C.GS_EN_STORAGE8),
		StorageBuffer16BitAccess: on(C.GS_EN_STORAGE16),
		BufferDeviceAddress:      on(C.GS_EN_BDA),
		TimelineSemaphore:        on(C.GS_EN_TIMELINE),
		Int64BufferAtomics:       on(C.GS_EN_BUF_I64_ATOMICS),
		Int64SharedAtomics:       on(C.GS_EN_SHARED_I64_ATOMICS),
	}
	if exts[extAtomicFloat] {
		f.Float32Atomics = on(C.GS_EN_BUF_F32_ATOMICS)
		f.Float32AtomicAdd = on(C.GS_EN_BUF_F32_ADD)
		f.SharedFloat32AtomicAdd = on(C.GS_EN_SHARED_F32_ADD)
		f.Float64Atomics = on(C.GS_EN_BUF_F64_ATOMICS)
		f.Float64AtomicAdd = on(C.GS_EN_BUF_F64_ADD)
	}
	if exts[extAtomicFloat] && exts[extAtomicFloat2] {
		f.Float16Atomics = on(C.GS_EN_BUF_F16_ATOMICS)
		f.Float16AtomicAdd = on(C.GS_EN_BUF_F16_ADD)
		f.Float16AtomicMinMax = on(C.GS_EN_BUF_F16_MINMAX)
		f.Float32AtomicMinMax = on(C.GS_EN_BUF_F32_MINMAX)
		f.Float64AtomicMinMax = on(C.GS_EN_BUF_F64_MINMAX)
	}
	return f
}

// restrict turns off in c every capability that f does not enable.
func (f Features) restrict(c *Capabilities) {
	and := func(dst *bool, on bool) { *dst = *dst && on }
	and(&c.ShaderInt64, f.ShaderInt64)
	and(&c.ShaderFloat64, f.ShaderFloat64)
	and(&c.ShaderInt16, f.ShaderInt16)
	and(&c.ShaderFloat16, f.ShaderFloat16)
	and(&c.ShaderInt8, f.ShaderInt8)
	and(&c.StorageBuffer8BitAccess, f.StorageBuffer8BitAccess)
	and(&c.StorageBuffer16BitAccess, f.StorageBuffer16BitAccess)
	and(&c.BufferDeviceAddress, f.BufferDeviceAddress)
	and(&c.Float32Atomics, f.Float32Atomics)
	and(&c.Float32AtomicAdd, f.Float32AtomicAdd)
	and(&c.Float32AtomicMinMax, f.Float32AtomicMinMax)
	and(&c.SharedFloat32AtomicAdd, f.SharedFloat32AtomicAdd)
	and(&c.Float16Atomics, f.Float16Atomics)
	and(&c.Float16AtomicAdd, f.Float16AtomicAdd)
	and(&c.Float16AtomicMinMax, f.Float16AtomicMinMax)
	and(&c.Float64Atomics, f.Float64Atomics)
	and(&c.Float64AtomicAdd, f.Float64AtomicAdd)
	and(&c.Float64AtomicMinMax, f.Float64AtomicMinMax)
	and(&c.Int64BufferAtomics, f.Int64BufferAtomics)
	and(&c.Int64SharedAtomics, f.Int64SharedAtomics)
	if f.NoSubgroups {
		c.SubgroupOperations = []string{}
	}
}

// Adopt returns a Device on a device that the program created and keeps
// (External). The Device learns the features the device was created with
// (External.CreateInfo or External.Features) and reports in Capabilities
// only those, so that what is built on it chooses exactly as for a
// device Open made. Close destroys only what the Device created (buffers,
// pipelines, the pipeline cache, command pools, fences, descriptor pools)
// and waits for its own submissions only; the instance, device and queue
// stay the caller's and usable, and the caller keeps them alive until
// Close returns. ValidationMessages is nil: the caller's instance reports
// to the caller's messenger. Options.Selector, Validation and
// GPUAssistedValidation do not apply; the pipeline cache and the measured
// figures work as for Open, keyed on the physical device.
//
// Adopt fails with an error wrapping ErrUnsupported for an instance or
// device below Vulkan 1.1, and one naming the field for a missing handle,
// a physical device that is not the instance's, or a queue family
// without compute or a queue index it does not have.
func Adopt(ext External, opts Options) (d *Device, err error) {
	defer guard(&err)
	switch {
	case ext.Instance == nil:
		return nil, errors.New("vk: External.Instance is nil")
	case ext.PhysicalDevice == nil:
		return nil, errors.New("vk: External.PhysicalDevice is nil")
	case ext.Device == nil:
		return nil, errors.New("vk: External.Device is nil")
	case ext.CreateInfo == nil && ext.Features == nil:
		return nil, errors.New("vk: External: set CreateInfo or Features: the features the device was created with decide which kernels it can run")
	}
	if ext.APIVersion < makeVersion(1, 1, 0) {
		return nil, fmt.Errorf("%w: External.APIVersion %s: the instance must be Vulkan 1.1 or newer (%#x packs 1.2.0)",
			ErrUnsupported, versionString(ext.APIVersion), makeVersion(1, 2, 0))
	}
	timeout, err := deviceTimeout(opts.DeviceTimeout)
	if err != nil {
		return nil, err
	}
	inst, err := callerInstance(ext.Instance, ext.APIVersion)
	if err != nil {
		return nil, err
	}
	pds, err := inst.physicalDevices()
	if err != nil {
		return nil, err
	}
	index := -1
	for i, pd := range pds {
		if unsafe.Pointer(pd) == ext.PhysicalDevice {
			index = i
		}
	}
	if index < 0 {
		return nil, fmt.Errorf("vk: External.PhysicalDevice %p is not one of the instance's %d physical devices", ext.PhysicalDevice, len(pds))
	}
	p, err := probe(inst, vulkan.PhysicalDevice(ext.PhysicalDevice), index)
	if err != nil {
		return nil, err
	}
	if p.apiVersion < makeVersion(1, 1, 0) {
		return nil, fmt.Errorf("%w: device %q is Vulkan %s; adopting needs 1.1 or newer", ErrUnsupported, p.info.Name, versionString(p.apiVersion))
	}
	if int(ext.QueueFamily) >= len(p.families) {
		return nil, fmt.Errorf("vk: External.QueueFamily %d: device %q has %d queue families", ext.QueueFamily, p.info.Name, len(p.families))
	}
	fam := p.families[ext.QueueFamily]
	if fam.flags&vulkan.QueueFlags(vulkan.QueueComputeBit) == 0 {
		return nil, fmt.Errorf("%w: External.QueueFamily %d of device %q does not support compute", ErrUnsupported, ext.QueueFamily, p.info.Name)
	}
	if ext.QueueIndex >= fam.count {
		return nil, fmt.Errorf("vk: External.QueueIndex %d: queue family %d of device %q has %d queues", ext.QueueIndex, ext.QueueFamily, p.info.Name, fam.count)
	}
	var enabled Features
	if ext.Features != nil {
		enabled = *ext.Features
	} else {
		var e C.gsEnabled
		var n C.uint32_t
		var names **C.char
		C.gs_read_create_info(ext.CreateInfo, &e, &n, &names)
		exts := map[string]bool{}
		if n > 0 && names != nil {
			for _, s := range unsafe.Slice(names, int(n)) {
				exts[C.GoString(s)] = true
			}
		}
		enabled = enabledFeatures(&e, exts)
	}
	// Only what was enabled and the device supports counts.
	p.queue = int(ext.QueueFamily)
	caps := &p.info.Capabilities
	enabled.restrict(caps)
	p.feat.bufferDeviceAddress = caps.BufferDeviceAddress
	p.base.ShaderInt64 = vkBool(caps.ShaderInt64)
	p.base.ShaderFloat64 = vkBool(caps.ShaderFloat64)
	p.base.ShaderInt16 = vkBool(caps.ShaderInt16)
	if fam.timestampBits > 0 && p.limits.TimestampPeriod > 0 {
		caps.Timestamps, caps.TimestampValidBits = true, fam.timestampBits
	} else {
		caps.Timestamps, caps.TimestampValidBits = false, 0
	}
	timeline := enabled.TimelineSemaphore && C.gs_timeline_supported(ext.Instance, ext.PhysicalDevice) != 0

	d = &Device{
		timeout:   timeout,
		faults:    opts.faults,
		inst:      inst,
		external:  true,
		timeline:  timeline,
		submitVia: ext.Submit,
		live:      map[string]int{},
		buffers:   map[*Buffer]struct{}{},
		idle:      map[uint64][]*Buffer{},
		pipelines: map[[32]byte]*pipelineEntry{},
		sequences: map[*Sequence]struct{}{},
		phys:      p,
		handle:    vulkan.Device(ext.Device),
		wraps:     map[uint64]*Buffer{},
	}
	defer func() {
		if err != nil {
			d.teardown()
			d = nil
		}
	}()
	if err := d.loadFns(); err != nil {
		return d, err
	}
	d.queueFamily = ext.QueueFamily
	var q vulkan.Queue
	vulkan.GetDeviceQueue(d.handle, ext.QueueFamily, ext.QueueIndex, &q)
	if q == nil {
		return d, fmt.Errorf("vk: vkGetDeviceQueue(%d, %d) gave no queue", ext.QueueFamily, ext.QueueIndex)
	}
	d.queue = q
	return d, d.finish(opts)
}

// callerInstance loads the loader, binds vulkan-go to the caller's
// instance h (created with apiVersion) and returns it as an instance this
// package never destroys.
func callerInstance(h unsafe.Pointer, apiVersion uint32) (*instance, error) {
	if err := load(); err != nil {
		return nil, err
	}
	if err := bindInstance(vulkan.Instance(h)); err != nil {
		return nil, err
	}
	return &instance{handle: vulkan.Instance(h), apiVersion: apiVersion &^ 0xfff, external: true}, nil
}

func vkBool(b bool) vulkan.Bool32 {
	if b {
		return vulkan.True
	}
	return vulkan.False
}

// External reports whether the Device was adopted (Adopt) rather than
// created by Open.
func (d *Device) External() bool { return d.external }

// Timelines reports whether the Device can submit with timeline
// semaphores (SubmitWith): an adopted device created with
// timelineSemaphore.
func (d *Device) Timelines() bool { return d.timeline }

// FeatureRequest is a feature chain for a program's own vkCreateDevice, in
// C memory: Next is a *VkPhysicalDeviceFeatures2, with the core features,
// that goes into VkDeviceCreateInfo.pNext (pEnabledFeatures stays NULL),
// and Extensions the device extensions to enable with it. Free releases
// the memory; the chain is read by vkCreateDevice only, so it may be freed
// once the device is created.
type FeatureRequest struct {
	chain *C.gsRequestChain
	// Extensions are the device extensions the chain's features need
	// (the float atomics' extensions; the rest is core in Vulkan 1.2).
	Extensions []string
	// Features are the features the chain enables.
	Features Features
}

// Next returns the chain's head, a *VkPhysicalDeviceFeatures2; nil once
// freed.
func (r *FeatureRequest) Next() unsafe.Pointer {
	if r == nil || r.chain == nil {
		return nil
	}
	return unsafe.Pointer(&r.chain.c.features2)
}

// Free releases the chain's C memory. It is idempotent.
func (r *FeatureRequest) Free() {
	if r != nil && r.chain != nil {
		C.free(unsafe.Pointer(r.chain))
		r.chain = nil
	}
}

// RequestFeatures returns the feature chain that enables, of want, those
// the physical device physicalDevice of instance inst (created with
// apiVersion) supports: what a program chains onto its vkCreateDevice so
// that an adopted Device can use them. It fails with ErrUnsupported for an
// instance or device below Vulkan 1.2.
func RequestFeatures(inst, physicalDevice unsafe.Pointer, apiVersion uint32, want Features) (req *FeatureRequest, err error) {
	defer guard(&err)
	if inst == nil || physicalDevice == nil {
		return nil, errors.New("vk: RequestFeatures: instance or physical device is nil")
	}
	if apiVersion < makeVersion(1, 2, 0) {
		return nil, fmt.Errorf("%w: RequestFeatures: apiVersion %s: the instance must be Vulkan 1.2 or newer", ErrUnsupported, versionString(apiVersion))
	}
	in, err := callerInstance(inst, apiVersion)
	if err != nil {
		return nil, err
	}
	p, err := probe(in, vulkan.PhysicalDevice(physicalDevice), 0)
	if err != nil {
		return nil, err
	}
	if p.apiVersion < makeVersion(1, 2, 0) {
		return nil, fmt.Errorf("%w: device %q is Vulkan %s; it must be 1.2 or newer", ErrUnsupported, p.info.Name, versionString(p.apiVersion))
	}
	caps := p.info.Capabilities
	want.restrict(&caps)
	f := p.feat
	// Turn off in f what is not wanted; the rest is the device's.
	keep := func(dst *bool, on bool) { *dst = *dst && on }
	keep(&f.bufferFloat32Atomics, caps.Float32Atomics)
	keep(&f.bufferFloat32AtomicAdd, caps.Float32AtomicAdd)
	keep(&f.bufferFloat32AtomicMinMax, caps.Float32AtomicMinMax)
	keep(&f.sharedFloat32AtomicAdd, caps.SharedFloat32AtomicAdd)
	keep(&f.bufferFloat16Atomics, caps.Float16Atomics)
	keep(&f.bufferFloat16AtomicAdd, caps.Float16AtomicAdd)
	keep(&f.bufferFloat16AtomicMinMax, caps.Float16AtomicMinMax)
	keep(&f.bufferFloat64Atomics, caps.Float64Atomics)
	keep(&f.bufferFloat64AtomicAdd, caps.Float64AtomicAdd)
	keep(&f.bufferFloat64AtomicMinMax, caps.Float64AtomicMinMax)
	keep(&f.bufferInt64Atomics, caps.Int64BufferAtomics)
	keep(&f.sharedInt64Atomics, caps.Int64SharedAtomics)
	keep(&f.storageBuffer8Bit, caps.StorageBuffer8BitAccess)
	keep(&f.storageBuffer16Bit, caps.StorageBuffer16BitAccess)
	keep(&f.shaderFloat16, caps.ShaderFloat16)
	keep(&f.shaderInt8, caps.ShaderInt8)
	keep(&f.bufferDeviceAddress, caps.BufferDeviceAddress)
	// Members this package never uses stay off.
	f.sharedFloat32Atomics, f.sharedFloat64Atomics, f.sharedFloat64AtomicAdd = false, false, false
	f.sharedFloat16Atomics, f.sharedFloat16AtomicAdd, f.sharedFloat16AtomicMinMax = false, false, false
	f.sharedFloat32AtomicMinMax, f.sharedFloat64AtomicMinMax = false, false
	f.uniformAndStorageBuffer8Bit, f.storagePushConstant8 = false, false
	f.uniformAndStorageBuffer16Bit, f.storagePushConstant16 = false, false
	timeline := want.TimelineSemaphore && C.gs_timeline_supported(inst, physicalDevice) != 0

	chain := (*C.gsRequestChain)(C.calloc(1, C.sizeof_gsRequestChain))
	if chain == nil {
		return nil, &ResultError{Call: "calloc", Result: vulkan.ErrorOutOfHostMemory}
	}
	mask := f.store(&chain.c) & p.featMask
	C.gs_link_request(chain, C.uint32_t(mask), cBool(timeline))
	core := &chain.c.features2.features
	core[C.GS_FEATURE_SHADER_INT64] = cb32(caps.ShaderInt64)
	core[C.GS_FEATURE_SHADER_FLOAT64] = cb32(caps.ShaderFloat64)
	core[C.GS_FEATURE_SHADER_INT16] = cb32(caps.ShaderInt16)
	req = &FeatureRequest{chain: chain}
	if mask&C.GS_FEAT_ATOMIC_FLOAT != 0 {
		req.Extensions = append(req.Extensions, extAtomicFloat)
	}
	if mask&C.GS_FEAT_ATOMIC_FLOAT2 != 0 {
		req.Extensions = append(req.Extensions, extAtomicFloat2)
	}
	req.Features = Features{
		ShaderInt64: caps.ShaderInt64, ShaderFloat64: caps.ShaderFloat64, ShaderInt16: caps.ShaderInt16,
		ShaderFloat16: f.shaderFloat16, ShaderInt8: f.shaderInt8,
		StorageBuffer8BitAccess: f.storageBuffer8Bit, StorageBuffer16BitAccess: f.storageBuffer16Bit,
		BufferDeviceAddress: f.bufferDeviceAddress, TimelineSemaphore: timeline,
		Float32Atomics: f.bufferFloat32Atomics, Float32AtomicAdd: f.bufferFloat32AtomicAdd,
		Float32AtomicMinMax: f.bufferFloat32AtomicMinMax, SharedFloat32AtomicAdd: f.sharedFloat32AtomicAdd,
		Float16Atomics: f.bufferFloat16Atomics, Float16AtomicAdd: f.bufferFloat16AtomicAdd,
		Float16AtomicMinMax: f.bufferFloat16AtomicMinMax,
		Float64Atomics:      f.bufferFloat64Atomics, Float64AtomicAdd: f.bufferFloat64AtomicAdd,
		Float64AtomicMinMax: f.bufferFloat64AtomicMinMax,
		Int64BufferAtomics:  f.bufferInt64Atomics, Int64SharedAtomics: f.sharedInt64Atomics,
		NoSubgroups: want.NoSubgroups,
	}
	return req, nil
}
