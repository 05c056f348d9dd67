// Package vkfault makes chosen Vulkan calls of one device fail as a real
// device fails: lost in the middle of the work, out of memory at an
// allocation or a bind, or a queue whose work never completes. Package vk
// asks a Plan before each call of the kinds below; a nil Plan (every
// device a program opens) answers "call it" at the cost of one nil check.
//
// Design: a Plan reaches a device only through an unexported field of
// vk.Options, which Install sets, so that vk's public API names no type of
// this internal package and nothing outside the module can inject a
// fault: the module's fault tests (TestFaultMatrix in gpu and
// cmd/gpuscatter, through internal/knobs) are its only users.
package vkfault

import (
	"fmt"
	"sync/atomic"
)

// Install puts plan p into opts, a *vk.Options, for the device vk.Open
// then opens; a nil p leaves the device without faults. Package vk sets
// it when it is initialised (it is nil in a build without cgo, which has
// no vk.Options), so that this package need not import vk.
var Install func(opts any, p *Plan)

// Call is a kind of Vulkan call a Plan can make fail.
type Call int

// The calls, in the order a call of the backend meets them.
const (
	// Pipeline is vkCreateComputePipelines.
	Pipeline Call = iota
	// Allocate is vkAllocateMemory.
	Allocate
	// Bind is vkBindBufferMemory.
	Bind
	// Map is vkMapMemory.
	Map
	// Submit is vkQueueSubmit.
	Submit
	// Wait is vkWaitForFences.
	Wait
	numCalls
)

var callNames = [numCalls]string{"pipeline", "allocate", "bind", "map", "submit", "wait"}

// String returns the call's name: "submit", "wait", ...
func (c Call) String() string {
	if c < 0 || c >= numCalls {
		return fmt.Sprintf("Call(%d)", int(c))
	}
	return callNames[c]
}

// Calls lists every Call.
func Calls() []Call {
	cs := make([]Call, numCalls)
	for i := range cs {
		cs[i] = Call(i)
	}
	return cs
}

// VkResult values a Plan returns (vulkan.Result's, without the import).
const (
	// Timeout is VK_TIMEOUT. As the result of Wait it is a wait that never
	// ends: the fence never signals, however long the caller waits.
	Timeout int32 = 2
	// OutOfHostMemory is VK_ERROR_OUT_OF_HOST_MEMORY.
	OutOfHostMemory int32 = -1
	// OutOfDeviceMemory is VK_ERROR_OUT_OF_DEVICE_MEMORY.
	OutOfDeviceMemory int32 = -2
	// DeviceLost is VK_ERROR_DEVICE_LOST.
	DeviceLost int32 = -4
	// BindingAlloc is no VkResult: the Vulkan binding cannot allocate
	// the C copy of the call's create info and panics ("memory alloc
	// error"), as vulkan-go does when malloc fails, with whatever the
	// caller holds at that point. It applies to Pipeline and Allocate,
	// the calls whose binding converts a struct.
	BindingAlloc int32 = -1 << 31
)

// Plan makes one call of kind Call, once armed, return a chosen result
// instead of reaching the driver. Calls of other kinds, and the calls of
// its kind before and after that one, go to the driver: what a failure
// leaves behind (a lost device that stays lost, say) is the code's
// business, which is what the tests check. A Plan is safe for concurrent
// use; use one per device.
type Plan struct {
	// Call is the kind of call the plan fails. A device whose plan fails
	// Pipeline compiles its own pipelines rather than taking over a kept
	// device's.
	Call Call

	counts [numCalls]atomic.Uint64
	target atomic.Uint64 // the count of Call that fails; 0: none
	result atomic.Int32
	fired  atomic.Uint64
}

// Arm makes the nth call of kind p.Call from now on (n >= 1) return
// result.
func (p *Plan) Arm(n uint64, result int32) {
	p.result.Store(result)
	p.target.Store(p.counts[p.Call].Load() + n)
}

// Fail counts a call of kind c and reports whether it is the one to fail,
// with the result it returns instead. A nil Plan never fails a call.
func (p *Plan) Fail(c Call) (result int32, fail bool) {
	if p == nil || c < 0 || c >= numCalls {
		return 0, false
	}
	n := p.counts[c].Add(1)
	if c != p.Call || n != p.target.Load() {
		return 0, false
	}
	p.fired.Add(1)
	return p.result.Load(), true
}

// Count returns how many calls of kind c the Plan has seen.
func (p *Plan) Count(c Call) uint64 {
	if p == nil || c < 0 || c >= numCalls {
		return 0
	}
	return p.counts[c].Load()
}

// Fired reports whether the failing call happened.
func (p *Plan) Fired() bool { return p != nil && p.fired.Load() > 0 }

// String describes the plan: "the 3rd submit returns VK_ERROR_DEVICE_LOST".
func (p *Plan) String() string {
	if p == nil {
		return "no fault"
	}
	return fmt.Sprintf("call %d of %s returns %s", p.target.Load(), p.Call, ResultName(p.result.Load()))
}

// ResultName names the results above.
func ResultName(r int32) string {
	switch r {
	case Timeout:
		return "VK_TIMEOUT (never signals)"
	case OutOfHostMemory:
		return "VK_ERROR_OUT_OF_HOST_MEMORY"
	case OutOfDeviceMemory:
		return "VK_ERROR_OUT_OF_DEVICE_MEMORY"
	case DeviceLost:
		return "VK_ERROR_DEVICE_LOST"
	case BindingAlloc:
		return "a failed host allocation of the binding (panic)"
	}
	return fmt.Sprintf("VkResult(%d)", r)
}
