//go:build cgo

package main

import (
	"fmt"
	"os"
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"

	"github.com/gpuscatter/gpuscatter/examples/internal/vkapp"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// app is the application's own Vulkan objects, made with vulkan-go (the
// examples' shared vkapp): an instance, a device with the features
// gpuscatter asks for, a compute queue, a command buffer and fence, and
// the table's buffer in host-visible memory.
type app struct {
	inst  *vkapp.Instance
	dev   *vkapp.Device
	chain *gpu.FeatureRequest // the device's feature chain, kept as vkapp asks
	cmds  *vkapp.Commands
	buf   *vkapp.Buffer
	table uint64 // buf as the handle gpuscatter takes
}

// newApp creates the application's objects, or ends the program with a
// note when there is no Vulkan device.
func newApp() *app {
	a := &app{}
	if err := a.create(); err != nil {
		a.close()
		fmt.Println("no Vulkan device:", err)
		os.Exit(0)
	}
	return a
}

func (a *app) create() error {
	if err := vkapp.Load(nil); err != nil {
		return err
	}
	var err error
	if a.inst, err = vkapp.NewInstance("gpuscatter inside", nil, false); err != nil {
		return err
	}
	// The features gpuscatter asks for, as a Vulkan 1.2 feature chain.
	a.dev, err = a.inst.OpenDevice(nil, nil, func(pd vulkan.PhysicalDevice) (unsafe.Pointer, []string, error) {
		req := gpu.Requirements()
		chain, err := req.Request(unsafe.Pointer(a.inst.Handle), unsafe.Pointer(pd), a.inst.APIVersion, req.Features)
		if err != nil {
			return nil, nil, err
		}
		a.chain = chain
		return chain.Next(), chain.Extensions, nil
	})
	if err != nil {
		return err
	}
	if a.cmds, err = a.dev.NewCommands(1, false); err != nil {
		return err
	}
	// The table's buffer, with the usage gpuscatter needs, in host-visible
	// memory with a device address, holding 1..8.
	if a.buf, err = a.dev.NewBuffer(32, vulkan.BufferUsageFlagBits(gpu.WrapUsage), true); err != nil {
		return err
	}
	a.table = a.buf.Uint64()
	copy(unsafe.Slice((*byte)(a.buf.Mapped), 32), tensor.MustFromSlice([]int{8}, []int32{1, 2, 3, 4, 5, 6, 7, 8}).Data)
	return nil
}

// external is the application's device as gpuscatter adopts it.
func (a *app) external() gpu.External {
	ext := a.dev.External()
	f := gpu.Requirements().Features // what create asked for; Adopt keeps what the device has
	ext.Features = &f                // instead of reading ext.CreateInfo
	return ext
}

// computeTransfer and the accesses are what Record's go doc asks the
// barriers around its commands to cover.
const computeTransfer = vulkan.PipelineStageComputeShaderBit | vulkan.PipelineStageTransferBit

// begin begins the command buffer with the barrier owed before the
// recorded commands: the host's writes of the table visible to them.
func (a *app) begin() unsafe.Pointer {
	cmd, _ := a.cmds.Begin(0)
	vkapp.Barrier(cmd, vulkan.PipelineStageHostBit, vulkan.AccessHostWriteBit, computeTransfer,
		vulkan.AccessShaderReadBit|vulkan.AccessShaderWriteBit|vulkan.AccessTransferReadBit|vulkan.AccessTransferWriteBit)
	return unsafe.Pointer(cmd)
}

// submit records the barrier owed after (the scatter's writes visible to
// the host), ends the command buffer, submits it and waits for the fence.
func (a *app) submit() error {
	vkapp.Barrier(a.cmds.Buffers[0], computeTransfer, vulkan.AccessShaderWriteBit|vulkan.AccessTransferWriteBit,
		vulkan.PipelineStageHostBit, vulkan.AccessHostReadBit)
	if err := a.cmds.Submit(0, nil, nil, nil); err != nil {
		return err
	}
	return a.cmds.Wait(0)
}

// read returns the table as the application sees it.
func (a *app) read() []int32 {
	return append([]int32(nil), unsafe.Slice((*int32)(a.buf.Mapped), 8)...)
}

// close destroys the application's objects.
func (a *app) close() {
	if a.dev != nil {
		a.dev.DestroyBuffer(a.buf)
		if a.cmds != nil {
			a.cmds.Destroy()
		}
		a.dev.Destroy()
	}
	a.chain.Free()
	if a.inst != nil {
		a.inst.Destroy()
	}
}
