//go:build cgo

package vk

/*
#include "gsaddr.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"
)

// owners maps the VkBuffer of every storage buffer a Device of this
// process created, and of every view WrapBuffer made, to that Device, so
// that a buffer of one device wrapped on another is refused.
var owners sync.Map // uint64 -> *Device

// bufferHandle is h as the 64-bit value the API passes.
func bufferHandle(h vulkan.Buffer) uint64 { return uint64(uintptr(unsafe.Pointer(h))) }

// Usage flags of VkBufferUsageFlagBits that WrapBuffer requires.
const (
	UsageTransferSrc   = uint32(vulkan.BufferUsageTransferSrcBit)
	UsageTransferDst   = uint32(vulkan.BufferUsageTransferDstBit)
	UsageStorageBuffer = uint32(vulkan.BufferUsageStorageBufferBit)
	// UsageShaderDeviceAddress is VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT.
	UsageShaderDeviceAddress = uint32(C.GS_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT)
)

// WrapUsage is the usage a buffer needs to be wrapped: storage buffer,
// transfer source and destination (fills, copies, host transfers) and,
// on a device with buffer device addresses, shader device address.
const WrapUsage = UsageStorageBuffer | UsageTransferSrc | UsageTransferDst | UsageShaderDeviceAddress

// WrapBuffer returns a Buffer that is bytes [offset, offset+size) of the
// caller's VkBuffer buffer, created on this Device's VkDevice with usage
// (its VkBufferCreateInfo.usage, which Vulkan offers no way to query) and
// bound to memory. The Device never frees it: Close, Release and the
// Device's Close only forget the view. Views of one VkBuffer are ordered
// as one buffer by a Sequence's hazard tracking.
//
// It refuses, naming what is wrong: a zero buffer or size; an offset or
// size that is not a multiple of 4; usage lacking a flag of WrapUsage
// (shader device address only where the device has device addresses); a
// range beyond the buffer's memory requirements (vkGetBufferMemoryRequirements
// gives at least the buffer's size); and a buffer that a Device of this
// process created, or wrapped, on another device. Vulkan cannot tell the
// parent device of a buffer the process never showed this package: such a
// buffer is the caller's to get right (the validation layer reports it).
func (d *Device) WrapBuffer(buffer, offset, size uint64, usage uint32) (b *Buffer, err error) {
	defer guard(&err)
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	switch {
	case buffer == 0:
		return nil, fmt.Errorf("vk: WrapBuffer: the buffer is VK_NULL_HANDLE")
	case size == 0:
		return nil, fmt.Errorf("vk: WrapBuffer: buffer %#x: size is 0", buffer)
	case offset%4 != 0 || size%4 != 0:
		return nil, fmt.Errorf("vk: WrapBuffer: buffer %#x: offset %d and size %d must be multiples of 4", buffer, offset, size)
	}
	need := UsageStorageBuffer | UsageTransferSrc | UsageTransferDst
	if d.DeviceAddresses() {
		need |= UsageShaderDeviceAddress
	}
	if missing := need &^ usage; missing != 0 {
		return nil, fmt.Errorf("%w: vk: WrapBuffer: buffer %#x lacks usage %s (its usage is %#x, wrapping needs %#x)",
			ErrUnsupported, buffer, usageNames(missing), usage, need)
	}
	if o, ok := owners.Load(buffer); ok && o.(*Device) != d {
		return nil, fmt.Errorf("vk: WrapBuffer: buffer %#x belongs to another device (%s), not to this one (%s)",
			buffer, o.(*Device).info.Name, d.info.Name)
	}
	h := *(*vulkan.Buffer)(unsafe.Pointer(&buffer))
	var req vulkan.MemoryRequirements
	vulkan.GetBufferMemoryRequirements(d.handle, h, &req)
	req.Deref()
	if offset > uint64(req.Size) || size > uint64(req.Size)-offset {
		return nil, fmt.Errorf("vk: WrapBuffer: buffer %#x: range [%d, %d+%d) is beyond the buffer, whose memory requirements are %d bytes",
			buffer, offset, offset, size, uint64(req.Size))
	}
	b = &Buffer{d: d, handle: h, size: size, alloc: size, external: true, base: offset}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("%w: device", ErrClosed)
	}
	key := d.wraps[buffer]
	if key == nil {
		// One of this Device's own buffers, or the first view.
		key = &Buffer{d: d, handle: h}
		for own := range d.buffers {
			if !own.external && own.handle == h {
				key = own
			}
		}
		if d.wraps == nil {
			d.wraps = map[uint64]*Buffer{}
		}
		d.wraps[buffer] = key
		owners.LoadOrStore(buffer, d)
	}
	key.refs++
	b.key = key
	d.buffers[b] = struct{}{}
	return b, nil
}

// unwrap forgets the view b.
func (d *Device) unwrap(b *Buffer) {
	if b.key == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	h := bufferHandle(b.handle)
	if key := d.wraps[h]; key == b.key {
		key.refs--
		if key.refs == 0 {
			delete(d.wraps, h)
			if !key.ownedHere() {
				owners.CompareAndDelete(h, d)
			}
		}
	}
	b.key = nil
	b.handle = nil
}

// ownedHere reports whether key is a buffer the Device created.
func (b *Buffer) ownedHere() bool { return b.memory != nil }

// hazardKey is what b's accesses are tracked by: the key shared by the
// views of a caller's buffer, b itself otherwise.
func (b *Buffer) hazardKey() *Buffer {
	if b.key != nil {
		return b.key
	}
	return b
}

// Handle returns the VkBuffer (as the 64-bit value of a non-dispatchable
// handle) and the offset at which b's bytes start in it: 0 for a buffer
// the Device created, the view's offset for a wrapped one. A closed
// buffer gives 0, 0.
func (b *Buffer) Handle() (buffer, offset uint64) {
	if b == nil {
		return 0, 0
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return 0, 0
	}
	return bufferHandle(b.handle), b.base
}

// External reports whether b is a view of a caller's buffer (WrapBuffer).
func (b *Buffer) External() bool { return b != nil && b.external }

func usageNames(u uint32) string {
	var out string
	for _, n := range []struct {
		bit  uint32
		name string
	}{{UsageTransferSrc, "TRANSFER_SRC"}, {UsageTransferDst, "TRANSFER_DST"}, {UsageStorageBuffer, "STORAGE_BUFFER"}, {UsageShaderDeviceAddress, "SHADER_DEVICE_ADDRESS"}} {
		if u&n.bit != 0 {
			if out != "" {
				out += "|"
			}
			out += "VK_BUFFER_USAGE_" + n.name + "_BIT"
		}
	}
	return out
}
