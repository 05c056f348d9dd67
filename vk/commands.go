//go:build cgo

package vk

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	vulkan "github.com/vulkan-go/vulkan"

	"github.com/gpuscatter/gpuscatter/internal/vkfault"
)

const (
	allCompute = vulkan.PipelineStageFlags(vulkan.PipelineStageComputeShaderBit | vulkan.PipelineStageTransferBit)
	hostStage  = vulkan.PipelineStageFlags(vulkan.PipelineStageHostBit)
	allAccess  = vulkan.AccessFlags(vulkan.AccessShaderReadBit | vulkan.AccessShaderWriteBit |
		vulkan.AccessTransferReadBit | vulkan.AccessTransferWriteBit)
	writeAccess = vulkan.AccessFlags(vulkan.AccessShaderWriteBit | vulkan.AccessTransferWriteBit)
	hostAccess  = vulkan.AccessFlags(vulkan.AccessHostReadBit | vulkan.AccessHostWriteBit)

	// fenceSlice is how long one vkWaitForFences call may block before the
	// context is polled again.
	fenceSlice = 2 * time.Millisecond
)

// Counters are running totals of a Device's host round trips since it was
// created; the difference of two readings counts the work between them.
type Counters struct {
	// Submits is the number of queue submissions (vkQueueSubmit) that
	// succeeded: those of Sequence.Submit and one per staged transfer
	// piece.
	Submits uint64
	// Waits is the number of completed host waits for a submission, each
	// counted once however many vkWaitForFences slices it took.
	Waits uint64
	// TransferPieces is the number of host copies into or out of device
	// buffers: one per staging piece (each also a submission and a wait)
	// and one per copy through a buffer's own mapping.
	TransferPieces uint64
}

// Sub returns c less earlier, the counts between two readings.
func (c Counters) Sub(earlier Counters) Counters {
	return Counters{
		Submits:        c.Submits - earlier.Submits,
		Waits:          c.Waits - earlier.Waits,
		TransferPieces: c.TransferPieces - earlier.TransferPieces,
	}
}

// counters holds a Device's Counters.
type counters struct {
	submits, waits, pieces atomic.Uint64
}

// Counters returns the device's running totals of submissions, waits and
// transfer pieces. It is safe to call at any time, also after Close.
func (d *Device) Counters() Counters {
	if d == nil {
		return Counters{}
	}
	return Counters{
		Submits:        d.counts.submits.Load(),
		Waits:          d.counts.waits.Load(),
		TransferPieces: d.counts.pieces.Load(),
	}
}

func (d *Device) newCommandPool() (vulkan.CommandPool, error) {
	ci := vulkan.CommandPoolCreateInfo{
		SType:            vulkan.StructureTypeCommandPoolCreateInfo,
		QueueFamilyIndex: d.queueFamily,
	}
	var pool vulkan.CommandPool
	r := vulkan.CreateCommandPool(d.handle, &ci, nil, &pool)
	ci.Free()
	if err := check("vkCreateCommandPool", r); err != nil {
		return nil, err
	}
	d.track("VkCommandPool", 1)
	return pool, nil
}

// newCommandBuffer allocates a primary command buffer; it is freed with its
// pool.
func (d *Device) newCommandBuffer(pool vulkan.CommandPool) (vulkan.CommandBuffer, error) {
	ai := vulkan.CommandBufferAllocateInfo{
		SType:              vulkan.StructureTypeCommandBufferAllocateInfo,
		CommandPool:        pool,
		Level:              vulkan.CommandBufferLevelPrimary,
		CommandBufferCount: 1,
	}
	cmds := make([]vulkan.CommandBuffer, 1)
	r := vulkan.AllocateCommandBuffers(d.handle, &ai, cmds)
	ai.Free()
	if err := check("vkAllocateCommandBuffers", r); err != nil {
		return nil, err
	}
	return cmds[0], nil
}

func (d *Device) newFence() (vulkan.Fence, error) {
	ci := vulkan.FenceCreateInfo{SType: vulkan.StructureTypeFenceCreateInfo}
	var f vulkan.Fence
	r := vulkan.CreateFence(d.handle, &ci, nil, &f)
	ci.Free()
	if err := check("vkCreateFence", r); err != nil {
		return nil, err
	}
	d.track("VkFence", 1)
	return f, nil
}

// faulty makes the call of kind c that Options.faults chooses return its
// result instead of calling the driver (call); the others call it. A
// result of VK_ERROR_DEVICE_LOST marks the device lost.
func (d *Device) faulty(c vkfault.Call, call func() vulkan.Result) vulkan.Result {
	r := vulkan.Result(0)
	if f, injected := d.faults.Fail(c); injected {
		r = injectedResult(f)
	} else {
		r = call()
	}
	d.noteResult(r)
	return r
}

// injectedResult is the result of a call a fault plan fails: f itself,
// or, for vkfault.BindingAlloc, the panic the binding raises when it
// cannot allocate the call's arguments (guard turns it into
// ErrOutOfMemory at the package boundary).
func injectedResult(f int32) vulkan.Result {
	if f == vkfault.BindingAlloc {
		panic("memory alloc error: (injected) the binding could not allocate the call's arguments")
	}
	return vulkan.Result(f)
}

// queueSubmit resets fence and submits cmd to the compute queue.
func (d *Device) queueSubmit(cmd vulkan.CommandBuffer, fence vulkan.Fence) error {
	return d.resetAndSubmit(fence, func() (int32, error) { return d.submitLocked(cmd, fence) })
}

// resetAndSubmit resets fence and makes a queue submission signalling it
// through submit, which returns the VkResult; a successful one is counted.
func (d *Device) resetAndSubmit(fence vulkan.Fence, submit func() (int32, error)) error {
	if d.lost.Load() {
		return ErrDeviceLost
	}
	if err := check("vkResetFences", vulkan.ResetFences(d.handle, 1, []vulkan.Fence{fence})); err != nil {
		return err
	}
	r, err := submit()
	if err != nil {
		return err
	}
	d.noteResult(vulkan.Result(r))
	if r == int32(vulkan.Success) {
		d.counts.submits.Add(1)
	}
	return check("vkQueueSubmit", vulkan.Result(r))
}

// submitLocked submits cmd under the queue's lock, which it releases
// whatever the call does, a panic of the binding included.
func (d *Device) submitLocked(cmd vulkan.CommandBuffer, fence vulkan.Fence) (int32, error) {
	d.queueMu.Lock()
	defer d.queueMu.Unlock()
	if f, injected := d.faults.Fail(vkfault.Submit); injected {
		return int32(injectedResult(f)), nil
	}
	return d.viaCaller(func() int32 { return int32(d.submitOne(d.queue, cmd, fence)) })
}

// viaCaller runs submit, a queue submission returning its VkResult,
// through External.Submit where the caller gave one; queueMu is held. An
// External.Submit that returns without calling submit is an error (with
// its own error, if any), the submission not made.
func (d *Device) viaCaller(submit func() int32) (int32, error) {
	if d.submitVia == nil {
		return submit(), nil
	}
	var r int32
	called := false
	err := d.submitVia(func() error {
		if called {
			return errors.New("vk: External.Submit called the submission twice")
		}
		called = true
		r = submit()
		return check("vkQueueSubmit", vulkan.Result(r))
	})
	if !called {
		return 0, fmt.Errorf("vk: External.Submit returned without submitting (%v)", err)
	}
	return r, nil
}

// watch is what a wait knows of the progress of the work it waits for:
// progress, when not nil, reads a number that changes each time the
// device completes a step of it (Sequence.Mark), and step is how long one
// step may take (Sequence.Expect). The device counts as stopped only when
// nothing changes for the longer of step and the device's timeout.
type watch struct {
	progress func() uint32
	step     time.Duration
}

// progressPoll is how often a wait reads its watch's progress.
const progressPoll = 10 * time.Millisecond

// window is how long the work w watches may go without visible progress
// before the device counts as stopped.
func (d *Device) window(w *watch) time.Duration {
	if w != nil && w.step > d.timeout {
		return w.step
	}
	return d.timeout
}

// waitFence waits for fence in slices of fenceSlice, returning ctx.Err()
// as soon as ctx is done; the work itself is not cancelled. A fence that
// has not signalled after the device's timeout without progress (the
// watch's, when w is not nil) fails the wait with a StallError and marks
// the device stalled: lost to its callers, with its objects kept until it
// is known to be idle (see park). After a stall a wait looks at its fence
// once and does not wait again.
func (d *Device) waitFence(ctx context.Context, fence vulkan.Fence, w *watch) error {
	fences := []vulkan.Fence{fence}
	if d.stalled.Load() {
		r := vulkan.WaitForFences(d.handle, 1, fences, vulkan.True, 0)
		switch r {
		case vulkan.Success:
			return nil
		case vulkan.Timeout:
			return &StallError{Timeout: d.window(w)}
		}
		d.noteResult(r)
		return check("vkWaitForFences", r)
	}
	window := d.window(w)
	deadline := time.Now().Add(window)
	r, injected := d.faults.Fail(vkfault.Wait)
	if injected {
		// The work runs as usual; the device then reports r instead
		// (after a device loss the work counts as complete), or never
		// answers: the fence seems not to signal until the timeout.
		if w := vulkan.WaitForFences(d.handle, 1, fences, vulkan.True, uint64(window)); w != vulkan.Success {
			r = int32(w)
		}
		if r == vkfault.Timeout {
			return d.neverSignals(ctx, deadline, window)
		}
		d.noteResult(vulkan.Result(r))
		return check("vkWaitForFences", vulkan.Result(r))
	}
	var seen uint32
	var polled time.Time
	if w != nil && w.progress != nil {
		seen, polled = w.progress(), time.Now()
	}
	for {
		r := vulkan.WaitForFences(d.handle, 1, fences, vulkan.True, uint64(fenceSlice))
		switch r {
		case vulkan.Success:
			d.counts.waits.Add(1)
			return nil
		case vulkan.Timeout:
			if err := ctx.Err(); err != nil {
				return err
			}
			now := time.Now()
			if w != nil && w.progress != nil && now.Sub(polled) >= progressPoll {
				polled = now
				if p := w.progress(); p != seen {
					seen, deadline = p, now.Add(window)
				}
			}
			if !now.Before(deadline) {
				d.stall()
				return &StallError{Timeout: window}
			}
		default:
			d.noteResult(r)
			return check("vkWaitForFences", r)
		}
	}
}

// stall marks the device stopped: lost to every later call, and stalled,
// so that what its work may still use is kept (park).
func (d *Device) stall() {
	d.stalled.Store(true)
	d.lost.Store(true)
}

// neverSignals is waitFence on a fence that never signals: it returns ctx.Err()
// when ctx is done first, and otherwise a StallError at deadline.
func (d *Device) neverSignals(ctx context.Context, deadline time.Time, window time.Duration) error {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		d.stall()
		return &StallError{Timeout: window}
	}
}

// submit submits cmd and waits for it.
func (d *Device) submit(ctx context.Context, cmd vulkan.CommandBuffer, fence vulkan.Fence) error {
	if err := d.queueSubmit(cmd, fence); err != nil {
		return err
	}
	return d.waitFence(ctx, fence, nil)
}
