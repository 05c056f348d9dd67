//go:build cgo

package vk

// #include "gsvk.h"
import "C"

import (
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"
)

const (
	memDeviceLocal  = vulkan.MemoryPropertyFlags(vulkan.MemoryPropertyDeviceLocalBit)
	memHostVisible  = vulkan.MemoryPropertyFlags(vulkan.MemoryPropertyHostVisibleBit)
	memHostCoherent = vulkan.MemoryPropertyFlags(vulkan.MemoryPropertyHostCoherentBit)
	memHostCached   = vulkan.MemoryPropertyFlags(vulkan.MemoryPropertyHostCachedBit)
	memUnified      = memDeviceLocal | memHostVisible | memHostCoherent
	memStaging      = memHostVisible | memHostCoherent
)

// memKind is what a buffer's memory is for; it decides the memory type.
type memKind int

const (
	// kindDevice is a storage buffer: device-local memory that is not
	// host-visible where the device has such memory, else (unified memory)
	// device-local, host-visible memory that is mapped.
	kindDevice memKind = iota
	// kindUpload is a host-to-device staging area: host-visible and
	// host-coherent, mapped; write-combined memory is fine.
	kindUpload
	// kindReadback is a device-to-host staging area: host-visible and
	// host-coherent, mapped, host-cached where the device has such a type.
	kindReadback
)

// largestLocalHeap returns the index of the biggest device-local heap, or -1.
func (p *physical) largestLocalHeap() int { return largestLocalHeap(p.heaps) }

func largestLocalHeap(heaps []memoryHeap) int {
	best := -1
	for i, h := range heaps {
		if h.flags&vulkan.MemoryHeapFlags(vulkan.MemoryHeapDeviceLocalBit) == 0 {
			continue
		}
		if best < 0 || h.size > heaps[best].size {
			best = i
		}
	}
	return best
}

// isUnified reports whether a device with these memory types and heaps has
// unified memory: its largest device-local heap has a device-local,
// host-visible, host-coherent type and no device-local type that is not
// host-visible. That is an integrated GPU or a CPU device, where all memory
// is one kind. A discrete GPU has device-local memory that the host cannot
// map besides any BAR window, resizable (covering the whole heap) or not;
// its buffers stay in the former and host copies are staged, since host
// reads of device memory across the bus are uncached and slow.
func isUnified(types []memoryType, heaps []memoryHeap) bool {
	heap := largestLocalHeap(heaps)
	if heap < 0 {
		return false
	}
	mappable := false
	for _, t := range types {
		if int(t.heap) != heap || t.flags&memDeviceLocal == 0 {
			continue
		}
		if t.flags&memHostVisible == 0 {
			return false
		}
		if t.flags&memUnified == memUnified {
			mappable = true
		}
	}
	return mappable
}

// unifiedType returns the memory type of buffers on a device with unified
// memory (isUnified), or -1 on a device without.
func (p *physical) unifiedType() int {
	if !isUnified(p.types, p.heaps) {
		return -1
	}
	return chooseMemoryType(p.types, p.heaps, ^uint32(0), kindDevice, true)
}

// chooseMemoryType picks the memory type for a buffer of kind among the
// types allowed by bits; unified is isUnified's answer for the device
// (false also where staging is forced). It is a function of the lists
// alone, and returns -1 where no allowed type will do.
func chooseMemoryType(types []memoryType, heaps []memoryHeap, bits uint32, kind memKind, unified bool) int {
	heap := largestLocalHeap(heaps)
	inHeap := func(t memoryType) bool { return int(t.heap) == heap }
	has := func(f vulkan.MemoryPropertyFlags) func(memoryType) bool {
		return func(t memoryType) bool { return t.flags&f == f }
	}
	lacks := func(f vulkan.MemoryPropertyFlags) func(memoryType) bool {
		return func(t memoryType) bool { return t.flags&f == 0 }
	}
	switch kind {
	case kindDevice:
		if unified {
			return pickMemoryType(types, bits, memUnified, inHeap, has(memHostCached))
		}
		return pickMemoryType(types, bits, 0, has(memDeviceLocal), lacks(memHostVisible), inHeap)
	case kindUpload:
		// Host memory rather than a BAR window, which is better left to
		// others (a small one is scarce); cached or not matters little
		// for writes.
		return pickMemoryType(types, bits, memStaging, lacks(memDeviceLocal))
	case kindReadback:
		// The host reads it: cached memory first, by far.
		return pickMemoryType(types, bits, memStaging, has(memHostCached), lacks(memDeviceLocal))
	}
	return -1
}

// pickMemoryType returns the allowed type that has the flags want and
// meets the most important preferences: prefs are in decreasing order of
// weight, each outweighing all that follow it together. Ties go to the
// lower index, which the driver ranks as better. It returns -1 if no
// allowed type has want.
func pickMemoryType(types []memoryType, bits uint32, want vulkan.MemoryPropertyFlags, prefs ...func(memoryType) bool) int {
	best, bestScore := -1, -1
	for i, t := range types {
		if i >= 32 || bits&(1<<uint(i)) == 0 || t.flags&want != want {
			continue
		}
		score := 0
		for _, pref := range prefs {
			score <<= 1
			if pref(t) {
				score |= 1
			}
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// Memory describes the device memory that buffers come from.
type Memory struct {
	// Heap is the size in bytes of the heap buffers are allocated from
	// (the largest device-local heap).
	Heap uint64
	// Budget and Usage are VK_EXT_memory_budget's figures for the heap:
	// what this process may allocate in all, and what it holds (this
	// Device's buffers and any other allocations); both 0 on a device
	// without the extension.
	Budget, Usage uint64
	// Held is the device memory this Device holds in its buffers (those
	// of NewBuffer and Acquire), idle pooled ones included. The
	// host-visible memory that transfers go through (the staging buffers
	// of Upload and Download without unified memory, a Sequence's
	// recorded uploads and readbacks) is not counted: on a discrete GPU
	// it is host memory, not Heap, and it comes and goes with transfers
	// and sequences rather than with the buffers a caller allocates.
	Held uint64
	// Idle is the part of Held in idle pooled buffers, which the device
	// frees before an allocation would fail.
	Idle uint64
}

// Free returns the bytes a new allocation may still take: with
// VK_EXT_memory_budget the heap's budget less its usage, else the heap
// less what the Device holds; idle pooled buffers count as free either
// way, since the device frees them before an allocation would fail.
func (m Memory) Free() uint64 {
	used := m.Held - min(m.Idle, m.Held)
	if m.Budget != 0 {
		// The budget accounts for the whole process and, roughly, for
		// other processes' use of the heap.
		used = m.Usage - min(m.Idle, m.Usage)
		if used >= m.Budget {
			return 0
		}
		return m.Budget - used
	}
	if used >= m.Heap {
		return 0
	}
	return m.Heap - used
}

// Memory returns the device memory the Device's buffers come from and
// what it holds of it.
func (d *Device) Memory() Memory {
	m := Memory{Held: d.held.Load()}
	if h := d.phys.largestLocalHeap(); h >= 0 {
		m.Heap = d.phys.heaps[h].size
		if inst := d.instanceHandle(); inst != nil && d.phys.exts[extMemoryBudget] && h < C.GS_MAX_MEMORY_HEAPS {
			var out C.gsPhysicalDeviceMemoryBudgetPropertiesEXT
			if C.gs_memory_budget(inst, unsafe.Pointer(d.phys.handle), &out) != 0 {
				m.Budget, m.Usage = uint64(out.heapBudget[h]), uint64(out.heapUsage[h])
			}
		}
	}
	d.mu.Lock()
	for _, list := range d.idle {
		for _, b := range list {
			m.Idle += b.bytes
		}
	}
	d.mu.Unlock()
	return m
}
