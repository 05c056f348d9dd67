//go:build cgo

package vk

/*
#include <stdlib.h>
#include "gscall.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"
)

// Kept devices. Creating a compute pipeline is the dearest thing a device
// does for this package: lavapipe spends over four fifths of a conformance
// run in vkCreateComputePipelines, translating and optimising the same
// large modules again for every device a run opens, and its VkPipelineCache
// keeps nothing across devices. A program that opens and closes devices
// one after another (a test suite, a conformance run, a server that opens
// a backend per request) can ask Close to keep the device with the
// pipelines it compiled, so that the next Open of the same physical device
// under the same instance settings takes them over instead of compiling
// again. KeepDevices switches this on for the process. A kept device holds
// no buffer, no memory and no command pool: Close still destroys every
// other object, and LiveObjects counts none of the kept ones, which belong
// to the instance Close gave back until the next Open takes them or
// ReleaseInstances destroys them. A lost device is never kept.

// keepDevices is KeepDevices' setting.
var keepDevices atomic.Bool

// KeepDevices sets whether Close keeps each device it closes (not lost),
// with its compiled pipelines, for the next Open of the same physical
// device under the same validation setting and loader environment, which
// then skips device creation and pipeline compilation. It is off unless
// a program turns it on. While it is off, Open takes over nothing: it
// destroys a device kept on the instance it reuses, and ReleaseInstances
// destroys the rest. It suits programs that open
// and close devices in a loop; one that wants the driver's per-device
// resources back after Close leaves it off or calls ReleaseInstances.
func KeepDevices(on bool) { keepDevices.Store(on) }

// keptDevice is a VkDevice that Close kept, with its compute queue, its
// device-level entry points and its pipelines.
type keptDevice struct {
	phys        vulkan.PhysicalDevice
	handle      vulkan.Device
	queue       vulkan.Queue
	queueFamily uint32
	fns         *C.gsDeviceFns
	pipes       []pipelineObjects
}

// keep hands d's device and pipelines over to a keptDevice, in place of
// destroying them, when KeepDevices is on and d is whole and not lost.
// The Pipelines callers hold are closed (their handles move to the kept
// device), and d's live counts drop as if they were destroyed. pipes are
// the entries teardown took from d.pipelines; ok is false when nothing
// was kept and teardown destroys as usual.
func (d *Device) keep(pipes []*pipelineEntry) (k *keptDevice, ok bool) {
	if !keepDevices.Load() || d.lost.Load() || d.handle == nil || d.inst == nil || d.inst.handle == nil || d.phys == nil {
		return nil, false
	}
	k = &keptDevice{phys: d.phys.handle, handle: d.handle, queue: d.queue, queueFamily: d.queueFamily, fns: d.fns}
	for _, e := range pipes {
		<-e.ready
		p := e.p
		if p == nil {
			continue
		}
		d.mu.Lock()
		closed := p.closed
		p.closed = true
		d.mu.Unlock()
		if closed || p.pipeline == nil || p.layout == nil || p.dsl == nil {
			continue
		}
		k.pipes = append(k.pipes, p.pipelineObjects)
		p.pipeline, p.layout, p.dsl = nil, nil, nil
		d.track("VkPipeline", -1)
		d.track("VkPipelineLayout", -1)
		d.track("VkDescriptorSetLayout", -1)
	}
	d.handle, d.fns = nil, nil
	d.track("VkDevice", -1)
	return k, true
}

// adopt makes k's device and pipelines d's, as createDevice would have
// made the device.
func (d *Device) adopt(k *keptDevice) {
	d.handle, d.queue, d.queueFamily, d.fns = k.handle, k.queue, k.queueFamily, k.fns
	d.track("VkDevice", 1)
	for _, kp := range k.pipes {
		p := &Pipeline{d: d, pipelineObjects: kp}
		e := &pipelineEntry{ready: make(chan struct{}), p: p}
		close(e.ready)
		d.pipelines[kp.digest] = e
		d.track("VkPipeline", 1)
		d.track("VkPipelineLayout", 1)
		d.track("VkDescriptorSetLayout", 1)
	}
}

// destroy destroys k's pipelines and device.
func (k *keptDevice) destroy() {
	if k == nil || k.handle == nil {
		return
	}
	vulkan.DeviceWaitIdle(k.handle)
	for _, p := range k.pipes {
		vulkan.DestroyPipeline(k.handle, p.pipeline, nil)
		vulkan.DestroyPipelineLayout(k.handle, p.layout, nil)
		vulkan.DestroyDescriptorSetLayout(k.handle, p.dsl, nil)
	}
	k.pipes = nil
	vulkan.DestroyDevice(k.handle, nil)
	k.handle = nil
	if k.fns != nil {
		C.free(unsafe.Pointer(k.fns))
		k.fns = nil
	}
}
