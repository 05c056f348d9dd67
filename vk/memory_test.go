//go:build cgo

package vk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	vulkan "github.com/vulkan-go/vulkan"
)

// TestChooseMemoryType: unified memory and the memory type of each kind of
// buffer, for the memory types and heaps of typical devices.
func TestChooseMemoryType(t *testing.T) {
	const (
		dl   = memDeviceLocal
		hv   = memHostVisible
		hc   = memHostCoherent
		hcd  = memHostCached
		gib  = uint64(1) << 30
		mib  = uint64(1) << 20
		none = -1
	)
	local := vulkan.MemoryHeapFlags(vulkan.MemoryHeapDeviceLocalBit)
	type want struct {
		unified                  bool
		device, upload, readback int
	}
	for _, tc := range []struct {
		name  string
		types []memoryType
		heaps []memoryHeap
		want  want
	}{
		{
			// A discrete GPU with resizable BAR: all of VRAM is also
			// host-visible, but buffers belong in the plain device-local
			// type, and host copies in system memory.
			name: "discrete, resizable BAR",
			types: []memoryType{
				{flags: dl, heap: 0},
				{flags: hv | hc, heap: 1},
				{flags: hv | hc | hcd, heap: 1},
				{flags: dl | hv | hc, heap: 0},
			},
			heaps: []memoryHeap{{size: 16 * gib, flags: local}, {size: 32 * gib}},
			want:  want{unified: false, device: 0, upload: 1, readback: 2},
		},
		{
			name: "discrete, 256 MiB BAR",
			types: []memoryType{
				{flags: dl, heap: 0},
				{flags: hv | hc, heap: 1},
				{flags: hv | hc | hcd, heap: 1},
				{flags: dl | hv | hc, heap: 2},
			},
			heaps: []memoryHeap{{size: 8 * gib, flags: local}, {size: 32 * gib}, {size: 256 * mib, flags: local}},
			want:  want{unified: false, device: 0, upload: 1, readback: 2},
		},
		{
			// Host-visible types listed first, as a driver may.
			name: "discrete, device-local type listed last",
			types: []memoryType{
				{flags: hv | hc | hcd, heap: 1},
				{flags: dl | hv | hc, heap: 0},
				{flags: hv | hc, heap: 1},
				{flags: dl, heap: 0},
			},
			heaps: []memoryHeap{{size: 16 * gib, flags: local}, {size: 32 * gib}},
			want:  want{unified: false, device: 3, upload: 0, readback: 0},
		},
		{
			name: "integrated (UMA)",
			types: []memoryType{
				{flags: dl | hv | hc, heap: 0},
				{flags: dl | hv | hc | hcd, heap: 0},
			},
			heaps: []memoryHeap{{size: 16 * gib, flags: local}},
			want:  want{unified: true, device: 1, upload: 0, readback: 1},
		},
		{
			name:  "lavapipe",
			types: []memoryType{{flags: dl | hv | hc | hcd, heap: 0}},
			heaps: []memoryHeap{{size: 4 * gib, flags: local}},
			want:  want{unified: true, device: 0, upload: 0, readback: 0},
		},
		{
			// Readback takes coherent uncached memory where the only
			// cached type is not coherent.
			name: "discrete, cached type not coherent",
			types: []memoryType{
				{flags: dl, heap: 0},
				{flags: hv | hcd, heap: 1},
				{flags: hv | hc, heap: 1},
			},
			heaps: []memoryHeap{{size: 8 * gib, flags: local}, {size: 16 * gib}},
			want:  want{unified: false, device: 0, upload: 2, readback: 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := isUnified(tc.types, tc.heaps)
			assert.Equal(t, tc.want.unified, u, "unified")
			all := ^uint32(0)
			assert.Equal(t, tc.want.device, chooseMemoryType(tc.types, tc.heaps, all, kindDevice, u), "device")
			assert.Equal(t, tc.want.upload, chooseMemoryType(tc.types, tc.heaps, all, kindUpload, u), "upload")
			assert.Equal(t, tc.want.readback, chooseMemoryType(tc.types, tc.heaps, all, kindReadback, u), "readback")
			p := &physical{types: tc.types, heaps: tc.heaps}
			if tc.want.unified {
				assert.Equal(t, tc.want.device, p.unifiedType())
			} else {
				assert.Equal(t, none, p.unifiedType())
			}
			// With staging forced, device buffers take device-local memory
			// all the same.
			forced := chooseMemoryType(tc.types, tc.heaps, all, kindDevice, false)
			assert.NotEqual(t, none, forced)
			assert.NotZero(t, tc.types[forced].flags&dl, "forced staging: device-local")
		})
	}

	// The buffer's memory type bits restrict the choice.
	types := []memoryType{{flags: dl, heap: 0}, {flags: hv | hc, heap: 1}, {flags: hv | hc | hcd, heap: 1}}
	heaps := []memoryHeap{{size: 8 * gib, flags: local}, {size: 16 * gib}}
	assert.Equal(t, 1, chooseMemoryType(types, heaps, 0b011, kindReadback, false), "no cached type allowed")
	assert.Equal(t, 1, chooseMemoryType(types, heaps, 0b110, kindDevice, false), "no device-local type allowed: the first allowed")
	assert.Equal(t, none, chooseMemoryType(types, heaps, 0b001, kindUpload, false), "no host-visible type allowed")
	// Without a mappable device-local type there is no unified memory.
	assert.False(t, isUnified([]memoryType{{flags: dl | hv, heap: 0}}, []memoryHeap{{size: gib, flags: local}}))
}
