//go:build cgo

package vkapp

import (
	vk "github.com/vulkan-go/vulkan"
)

// Commands is a command pool of the device's queue family with its
// command buffers, each with a fence.
type Commands struct {
	d       *Device
	pool    vk.CommandPool
	Buffers []vk.CommandBuffer
	Fences  []vk.Fence
}

// NewCommands creates a pool with n command buffers, each resettable,
// and n fences, signalled when signalled is true.
func (d *Device) NewCommands(n int, signalled bool) (*Commands, error) {
	c := &Commands{d: d}
	pci := vk.CommandPoolCreateInfo{
		SType:            vk.StructureTypeCommandPoolCreateInfo,
		Flags:            vk.CommandPoolCreateFlags(vk.CommandPoolCreateResetCommandBufferBit),
		QueueFamilyIndex: d.Family,
	}
	var pool vk.CommandPool
	if err := Check("vkCreateCommandPool", vk.CreateCommandPool(d.Handle, &pci, nil, &pool)); err != nil {
		return nil, err
	}
	c.pool = pool
	c.Buffers = make([]vk.CommandBuffer, n)
	ai := vk.CommandBufferAllocateInfo{
		SType:              vk.StructureTypeCommandBufferAllocateInfo,
		CommandPool:        c.pool,
		Level:              vk.CommandBufferLevelPrimary,
		CommandBufferCount: uint32(n),
	}
	if err := Check("vkAllocateCommandBuffers", vk.AllocateCommandBuffers(d.Handle, &ai, c.Buffers)); err != nil {
		c.Destroy()
		return nil, err
	}
	var flags vk.FenceCreateFlags
	if signalled {
		flags = vk.FenceCreateFlags(vk.FenceCreateSignaledBit)
	}
	for range n {
		var f vk.Fence
		fci := vk.FenceCreateInfo{SType: vk.StructureTypeFenceCreateInfo, Flags: flags}
		if err := Check("vkCreateFence", vk.CreateFence(d.Handle, &fci, nil, &f)); err != nil {
			c.Destroy()
			return nil, err
		}
		c.Fences = append(c.Fences, f)
	}
	return c, nil
}

// Begin resets command buffer i and begins recording it for one
// submission.
func (c *Commands) Begin(i int) (vk.CommandBuffer, error) {
	cmd := c.Buffers[i]
	if err := Check("vkResetCommandBuffer", vk.ResetCommandBuffer(cmd, 0)); err != nil {
		return nil, err
	}
	bi := vk.CommandBufferBeginInfo{
		SType: vk.StructureTypeCommandBufferBeginInfo,
		Flags: vk.CommandBufferUsageFlags(vk.CommandBufferUsageOneTimeSubmitBit),
	}
	return cmd, Check("vkBeginCommandBuffer", vk.BeginCommandBuffer(cmd, &bi))
}

// Submit ends command buffer i and submits it alone, signalling fence i,
// with the given semaphores to wait on (at the stages of waitStages) and
// to signal.
func (c *Commands) Submit(i int, wait []vk.Semaphore, waitStages []vk.PipelineStageFlags, signal []vk.Semaphore) error {
	cmd := c.Buffers[i]
	if err := Check("vkEndCommandBuffer", vk.EndCommandBuffer(cmd)); err != nil {
		return err
	}
	if err := Check("vkResetFences", vk.ResetFences(c.d.Handle, 1, c.Fences[i:i+1])); err != nil {
		return err
	}
	si := []vk.SubmitInfo{{
		SType:                vk.StructureTypeSubmitInfo,
		WaitSemaphoreCount:   uint32(len(wait)),
		PWaitSemaphores:      wait,
		PWaitDstStageMask:    waitStages,
		CommandBufferCount:   1,
		PCommandBuffers:      []vk.CommandBuffer{cmd},
		SignalSemaphoreCount: uint32(len(signal)),
		PSignalSemaphores:    signal,
	}}
	return Check("vkQueueSubmit", vk.QueueSubmit(c.d.Queue, 1, si, c.Fences[i]))
}

// Wait waits for fence i.
func (c *Commands) Wait(i int) error {
	return Check("vkWaitForFences", vk.WaitForFences(c.d.Handle, 1, c.Fences[i:i+1], vk.True, ^uint64(0)))
}

// Destroy destroys the fences, the command buffers and the pool.
func (c *Commands) Destroy() {
	for _, f := range c.Fences {
		vk.DestroyFence(c.d.Handle, f, nil)
	}
	vk.DestroyCommandPool(c.d.Handle, c.pool, nil)
}

// Barrier records a global memory barrier: the writes of the src stages
// (srcAccess) made available and visible to the dst stages' accesses.
func Barrier(cmd vk.CommandBuffer, srcStage vk.PipelineStageFlagBits, srcAccess vk.AccessFlagBits, dstStage vk.PipelineStageFlagBits, dstAccess vk.AccessFlagBits) {
	vk.CmdPipelineBarrier(cmd, vk.PipelineStageFlags(srcStage), vk.PipelineStageFlags(dstStage), 0, 1, []vk.MemoryBarrier{{
		SType:         vk.StructureTypeMemoryBarrier,
		SrcAccessMask: vk.AccessFlags(srcAccess),
		DstAccessMask: vk.AccessFlags(dstAccess),
	}}, 0, nil, 0, nil)
}
