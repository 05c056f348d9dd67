//go:build cgo

package vk

/*
#include "gsaddr.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"
)

// usageDeviceAddress is VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT.
const usageDeviceAddress = vulkan.BufferUsageFlags(C.GS_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT)

// DeviceAddresses reports whether the storage buffers of this Device have
// device addresses: Open enabled the bufferDeviceAddress feature (Vulkan
// 1.2 or VK_KHR_buffer_device_address), so shaders can reach any buffer
// through GL_EXT_buffer_reference pointers (Buffer.Address), without
// descriptor bindings and their range limit.
func (d *Device) DeviceAddresses() bool {
	return d.info.Capabilities.BufferDeviceAddress
}

// addressUsage returns the extra usage flags and the vkAllocateMemory pNext
// chain for a storage buffer: device-address usage and allocation when the
// device has the feature, nothing otherwise.
func (d *Device) addressUsage() (vulkan.BufferUsageFlags, unsafe.Pointer) {
	if !d.DeviceAddresses() {
		return 0, nil
	}
	return usageDeviceAddress, C.gs_device_address_alloc_info()
}

// Address returns the device address of the buffer's first byte, for
// shaders that use GL_EXT_buffer_reference. It fails with ErrUnsupported
// when the device has no buffer device addresses (DeviceAddresses).
func (b *Buffer) Address() (addr uint64, err error) {
	defer guard(&err)
	if err := b.d.enter(); err != nil {
		return 0, err
	}
	defer b.d.leave()
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return 0, fmt.Errorf("%w: buffer", ErrClosed)
	}
	d := b.d
	if b.staging || !d.DeviceAddresses() {
		return 0, fmt.Errorf("%w: the device has no buffer device addresses", ErrUnsupported)
	}
	a := uint64(C.gs_buffer_address(unsafe.Pointer(d.inst.handle), unsafe.Pointer(d.handle),
		C.uint64_t(uintptr(unsafe.Pointer(b.handle)))))
	if a == 0 {
		return 0, fmt.Errorf("%w: vkGetBufferDeviceAddress is not available", ErrUnsupported)
	}
	return a + b.base, nil
}
