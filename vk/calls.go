//go:build cgo

package vk

/*
#include <stdlib.h>
#include "gscall.h"
*/
import "C"

import (
	"unsafe"

	"github.com/vulkan-go/vulkan"
)

// The Vulkan calls whose arguments hold arrays of structures go through
// gscall.c rather than vulkan-go, whose conversions of such arrays can be
// freed by a finalizer during the call (see gscall.h).

// cStrings returns ss as a C array of C strings, and the function that
// frees them.
func cStrings(ss []string) (**C.char, func()) {
	if len(ss) == 0 {
		return nil, func() {}
	}
	mem := C.calloc(C.size_t(len(ss)), C.size_t(unsafe.Sizeof((*C.char)(nil))))
	if mem == nil {
		panic("vk: out of C memory")
	}
	arr := unsafe.Slice((**C.char)(mem), len(ss))
	for i, s := range ss {
		arr[i] = C.CString(s)
	}
	return &arr[0], func() {
		for _, p := range arr {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(&arr[0]))
	}
}

// createInstance calls vkCreateInstance.
func createInstance(pNext unsafe.Pointer, flags, api uint32, layers, exts []string) (vulkan.Instance, vulkan.Result) {
	cl, freeL := cStrings(layers)
	defer freeL()
	ce, freeE := cStrings(exts)
	defer freeE()
	var h unsafe.Pointer
	r := C.gs_create_instance(pNext, C.uint32_t(flags), C.uint32_t(api), C.uint32_t(len(layers)), cl,
		C.uint32_t(len(exts)), ce, &h)
	return vulkan.Instance(h), vulkan.Result(r)
}

// createDevice calls vkCreateDevice with one queue of family queue and the
// core features that core turns on (GS_FEATURE_ indices of
// VkPhysicalDeviceFeatures).
func createDevice(inst vulkan.Instance, pd vulkan.PhysicalDevice, queue uint32, pNext unsafe.Pointer, exts []string,
	core map[C.int]bool) (vulkan.Device, vulkan.Result) {
	ce, freeE := cStrings(exts)
	defer freeE()
	feats := (*C.gsPhysicalDeviceFeatures)(C.calloc(1, C.sizeof_gsPhysicalDeviceFeatures))
	if feats == nil {
		return nil, vulkan.ErrorOutOfHostMemory
	}
	defer C.free(unsafe.Pointer(feats))
	for i, on := range core {
		if on {
			feats.f[i] = 1
		}
	}
	var h unsafe.Pointer
	r := C.gs_create_device(unsafe.Pointer(inst), unsafe.Pointer(pd), C.uint32_t(queue), pNext,
		C.uint32_t(len(exts)), ce, feats, &h)
	return vulkan.Device(h), vulkan.Result(r)
}

// loadFns resolves the device-level entry points of gscall.c into C
// memory, freed by freeFns.
func (d *Device) loadFns() error {
	f := (*C.gsDeviceFns)(C.calloc(1, C.sizeof_gsDeviceFns))
	if f == nil {
		return &ResultError{Call: "calloc", Result: vulkan.ErrorOutOfHostMemory}
	}
	if C.gs_load_device_fns(unsafe.Pointer(d.inst.handle), unsafe.Pointer(d.handle), f) == 0 {
		C.free(unsafe.Pointer(f))
		return &ResultError{Call: "vkGetDeviceProcAddr", Result: vulkan.ErrorInitializationFailed}
	}
	d.fns = f
	return nil
}

func (d *Device) freeFns() {
	if d.fns != nil {
		C.free(unsafe.Pointer(d.fns))
		d.fns = nil
	}
}

// memoryBarrier records a global memory barrier.
func (d *Device) memoryBarrier(cmd vulkan.CommandBuffer, src, dst vulkan.PipelineStageFlags, srcAccess, dstAccess vulkan.AccessFlags) {
	C.gs_cmd_memory_barrier(d.fns, unsafe.Pointer(cmd), C.uint32_t(src), C.uint32_t(dst), C.uint32_t(srcAccess), C.uint32_t(dstAccess))
}

// cmdCopyBuffer records one copy command of the given regions (at least
// one) from src to dst. CopyRegion has gsBufferCopy's (VkBufferCopy's)
// layout, so the slice goes to C as it is.
func (d *Device) cmdCopyBuffer(cmd vulkan.CommandBuffer, src, dst vulkan.Buffer, regions []CopyRegion) {
	C.gs_cmd_copy_buffer(d.fns, unsafe.Pointer(cmd), handle64(unsafe.Pointer(&src)), handle64(unsafe.Pointer(&dst)),
		C.uint32_t(len(regions)), (*C.gsBufferCopy)(unsafe.Pointer(unsafe.SliceData(regions))))
}

// copyBuffers records copying regions from src to dst, each offset taken
// from the start of its Buffer (a view's base added).
func (d *Device) copyBuffers(cmd vulkan.CommandBuffer, src, dst *Buffer, regions []CopyRegion) {
	if src.base != 0 || dst.base != 0 {
		moved := make([]CopyRegion, len(regions))
		for i, r := range regions {
			moved[i] = CopyRegion{SrcOffset: src.base + r.SrcOffset, DstOffset: dst.base + r.DstOffset, Size: r.Size}
		}
		regions = moved
	}
	d.cmdCopyBuffer(cmd, src.handle, dst.handle, regions)
}

// submitOne submits cmd to queue, signalling fence.
func (d *Device) submitOne(queue vulkan.Queue, cmd vulkan.CommandBuffer, fence vulkan.Fence) vulkan.Result {
	return vulkan.Result(C.gs_queue_submit(d.fns, unsafe.Pointer(queue), unsafe.Pointer(cmd), handle64(unsafe.Pointer(&fence))))
}

// createSetLayout creates a descriptor set layout of n storage buffers
// (bindings 0 ... n-1, compute stage).
func (d *Device) createSetLayout(n int) (vulkan.DescriptorSetLayout, vulkan.Result) {
	var h C.uint64_t
	r := C.gs_create_set_layout(d.fns, unsafe.Pointer(d.handle), C.uint32_t(n), &h)
	return *(*vulkan.DescriptorSetLayout)(unsafe.Pointer(&h)), vulkan.Result(r)
}

// createPipelineLayout creates a pipeline layout of one set layout and a
// push-constant range of pushSize bytes (none when 0).
func (d *Device) createPipelineLayout(dsl vulkan.DescriptorSetLayout, pushSize uint32) (vulkan.PipelineLayout, vulkan.Result) {
	var h C.uint64_t
	r := C.gs_create_pipeline_layout(d.fns, unsafe.Pointer(d.handle), handle64(unsafe.Pointer(&dsl)), C.uint32_t(pushSize), &h)
	return *(*vulkan.PipelineLayout)(unsafe.Pointer(&h)), vulkan.Result(r)
}

// createDescriptorPool creates a pool of maxSets sets and descriptors
// storage-buffer descriptors.
func (d *Device) createDescriptorPool(maxSets, descriptors uint32) (vulkan.DescriptorPool, vulkan.Result) {
	var h C.uint64_t
	r := C.gs_create_descriptor_pool(d.fns, unsafe.Pointer(d.handle), C.uint32_t(maxSets), C.uint32_t(descriptors), &h)
	return *(*vulkan.DescriptorPool)(unsafe.Pointer(&h)), vulkan.Result(r)
}

// allocateSet allocates one descriptor set of layout dsl from pool.
func (d *Device) allocateSet(pool vulkan.DescriptorPool, dsl vulkan.DescriptorSetLayout) (vulkan.DescriptorSet, vulkan.Result) {
	var h C.uint64_t
	r := C.gs_allocate_descriptor_set(d.fns, unsafe.Pointer(d.handle), handle64(unsafe.Pointer(&pool)), handle64(unsafe.Pointer(&dsl)), &h)
	return *(*vulkan.DescriptorSet)(unsafe.Pointer(&h)), vulkan.Result(r)
}

// bufferRange is one storage-buffer binding: a range of a buffer.
type bufferRange struct {
	buffer       vulkan.Buffer
	offset, size uint64
}

// writeStorageBuffers points bindings 0 ... len(rs)-1 of set at rs.
func (d *Device) writeStorageBuffers(set vulkan.DescriptorSet, rs []bufferRange) error {
	if len(rs) == 0 {
		return nil
	}
	mem := C.calloc(C.size_t(len(rs)), C.sizeof_gsDescriptorBufferInfo)
	if mem == nil {
		return &ResultError{Call: "calloc", Result: vulkan.ErrorOutOfHostMemory}
	}
	defer C.free(mem)
	infos := unsafe.Slice((*C.gsDescriptorBufferInfo)(mem), len(rs))
	for i, r := range rs {
		b := r.buffer
		infos[i] = C.gsDescriptorBufferInfo{buffer: handle64(unsafe.Pointer(&b)), offset: C.uint64_t(r.offset), _range: C.uint64_t(r.size)}
	}
	r := C.gs_write_storage_buffers(d.fns, unsafe.Pointer(d.handle), handle64(unsafe.Pointer(&set)), C.uint32_t(len(rs)), &infos[0])
	return check("vkUpdateDescriptorSets", vulkan.Result(r))
}

// enumerate runs a Vulkan enumeration into C memory: call(count, nil) for
// the count, then call(count, out) until it is not VK_INCOMPLETE; it
// returns the entries as a Go copy.
func enumerate[T any](name string, call func(count *C.uint32_t, out *T) C.int32_t) ([]T, error) {
	for {
		var n C.uint32_t
		if err := check(name, vulkan.Result(call(&n, nil))); err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, nil
		}
		var zero T
		mem := C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(zero)))
		if mem == nil {
			return nil, &ResultError{Call: "calloc", Result: vulkan.ErrorOutOfHostMemory}
		}
		got := n
		r := vulkan.Result(call(&got, (*T)(mem)))
		if r == vulkan.Incomplete { // the list grew between the calls
			C.free(mem)
			continue
		}
		if err := check(name, r); err != nil {
			C.free(mem)
			return nil, err
		}
		out := append([]T(nil), unsafe.Slice((*T)(mem), int(got))...)
		C.free(mem)
		return out, nil
	}
}

// extensionNames returns the names of props.
func extensionNames(props []C.gsExtensionProperties) map[string]bool {
	out := make(map[string]bool, len(props))
	for i := range props {
		out[C.GoString(&props[i].extensionName[0])] = true
	}
	return out
}
