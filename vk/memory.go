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

// largestLocalHeap returns the index of the biggest device-local heap, or -1.
func (p *physical) largestLocalHeap() int {
	best := -1
	for i, h := range p.heaps {
		if h.flags&vulkan.MemoryHeapFlags(vulkan.MemoryHeapDeviceLocalBit) == 0 {
			continue
		}
		if best < 0 || h.size > p.heaps[best].size {
			best = i
		}
	}
	return best
}

// unifiedType returns a memory type that is device-local, host-visible and
// host-coherent and lives in the largest device-local heap (so a small BAR
// window on a discrete GPU does not count), preferring host-cached; -1 if
// there is none.
func (p *physical) unifiedType() int {
	heap := p.largestLocalHeap()
	if heap < 0 {
		return -1
	}
	best := -1
	for i, t := range p.types {
		if t.flags&memUnified != memUnified || int(t.heap) != heap {
			continue
		}
		if best < 0 || (p.types[best].flags&memHostCached == 0 && t.flags&memHostCached != 0) {
			best = i
		}
	}
	return best
}

// memoryTypeFor picks a memory type index allowed by bits. want are required
// flags; prefer are flags that make a type better; avoid are flags that make
// it worse. It returns -1 if no allowed type has want.
func (p *physical) memoryTypeFor(bits uint32, want, prefer, avoid vulkan.MemoryPropertyFlags) int {
	best, bestScore := -1, -1
	for i, t := range p.types {
		if bits&(1<<uint(i)) == 0 || t.flags&want != want {
			continue
		}
		score := 0
		if prefer != 0 && t.flags&prefer == prefer {
			score += 2
		}
		if avoid == 0 || t.flags&avoid == 0 {
			score++
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
	// Held is the device memory this Device holds in buffers, staging and
	// idle pooled buffers included.
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
		if d.phys.exts[extMemoryBudget] && h < C.GS_MAX_MEMORY_HEAPS {
			var out C.gsPhysicalDeviceMemoryBudgetPropertiesEXT
			if C.gs_memory_budget(unsafe.Pointer(d.inst.handle), unsafe.Pointer(d.phys.handle), &out) != 0 {
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
