//go:build cgo

package vk

import (
	"context"
	"sync/atomic"
	"time"

	vulkan "github.com/vulkan-go/vulkan"
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

// queueSubmit resets fence and submits cmd to the compute queue.
func (d *Device) queueSubmit(cmd vulkan.CommandBuffer, fence vulkan.Fence) error {
	if d.lost.Load() {
		return ErrDeviceLost
	}
	if err := check("vkResetFences", vulkan.ResetFences(d.handle, 1, []vulkan.Fence{fence})); err != nil {
		return err
	}
	d.queueMu.Lock()
	r := d.submitOne(d.queue, cmd, fence)
	d.queueMu.Unlock()
	d.noteResult(r)
	if r == vulkan.Success {
		d.counts.submits.Add(1)
	}
	return check("vkQueueSubmit", r)
}

// waitFence waits for fence in slices of fenceSlice, returning ctx.Err()
// as soon as ctx is done. The work itself is not cancelled.
func (d *Device) waitFence(ctx context.Context, fence vulkan.Fence) error {
	fences := []vulkan.Fence{fence}
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
		default:
			d.noteResult(r)
			return check("vkWaitForFences", r)
		}
	}
}

// submit submits cmd and waits for it.
func (d *Device) submit(ctx context.Context, cmd vulkan.CommandBuffer, fence vulkan.Fence) error {
	if err := d.queueSubmit(cmd, fence); err != nil {
		return err
	}
	return d.waitFence(ctx, fence)
}
