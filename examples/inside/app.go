//go:build cgo

package main

import (
	"fmt"
	"os"
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// app is the application's own Vulkan objects, made with vulkan-go: an
// instance, a device with the features gpuscatter asks for, a compute
// queue, a command buffer and fence, and the table's buffer in
// host-visible memory.
type app struct {
	inst   vulkan.Instance
	phys   vulkan.PhysicalDevice
	dev    vulkan.Device
	queue  vulkan.Queue
	family uint32
	pool   vulkan.CommandPool
	cmd    vulkan.CommandBuffer
	fence  vulkan.Fence
	buf    vulkan.Buffer
	mem    vulkan.DeviceMemory
	bytes  []byte
	table  uint64 // buf as the handle gpuscatter takes
}

const apiVersion = 1<<22 | 2<<12 // Vulkan 1.2

// newApp creates the application's objects, or ends the program with a
// note when there is no Vulkan device.
func newApp() *app {
	a, err := create()
	if err != nil {
		fmt.Println("no Vulkan device:", err)
		os.Exit(0)
	}
	return a
}

func ok(call string, r vulkan.Result) error {
	if r != vulkan.Success {
		return fmt.Errorf("%s: VkResult %d", call, r)
	}
	return nil
}

func create() (*app, error) {
	if err := vulkan.SetDefaultGetInstanceProcAddr(); err != nil {
		return nil, err
	}
	if err := vulkan.Init(); err != nil {
		return nil, err
	}
	a := &app{}
	ici := vulkan.InstanceCreateInfo{SType: vulkan.StructureTypeInstanceCreateInfo,
		PApplicationInfo: &vulkan.ApplicationInfo{SType: vulkan.StructureTypeApplicationInfo, ApiVersion: apiVersion}}
	if err := ok("vkCreateInstance", vulkan.CreateInstance(&ici, nil, &a.inst)); err != nil {
		return nil, err
	}
	if err := vulkan.InitInstance(a.inst); err != nil {
		return nil, err
	}
	var n uint32
	vulkan.EnumeratePhysicalDevices(a.inst, &n, nil)
	if n == 0 {
		return nil, fmt.Errorf("no physical device")
	}
	pds := make([]vulkan.PhysicalDevice, n)
	vulkan.EnumeratePhysicalDevices(a.inst, &n, pds)
	a.phys = pds[0]
	var qn uint32
	vulkan.GetPhysicalDeviceQueueFamilyProperties(a.phys, &qn, nil)
	qs := make([]vulkan.QueueFamilyProperties, qn)
	vulkan.GetPhysicalDeviceQueueFamilyProperties(a.phys, &qn, qs)
	for i := range qs {
		if qs[i].Deref(); qs[i].QueueFlags&vulkan.QueueFlags(vulkan.QueueComputeBit) != 0 {
			a.family = uint32(i)
			break
		}
	}
	// The features gpuscatter asks for, as a Vulkan 1.2 feature chain.
	req := gpu.Requirements()
	chain, err := req.Request(unsafe.Pointer(a.inst), unsafe.Pointer(a.phys), apiVersion, req.Features)
	if err != nil {
		return nil, err
	}
	defer chain.Free()
	var exts []string
	for _, e := range chain.Extensions {
		exts = append(exts, e+"\x00")
	}
	dci := vulkan.DeviceCreateInfo{SType: vulkan.StructureTypeDeviceCreateInfo, PNext: chain.Next(),
		QueueCreateInfoCount: 1, PQueueCreateInfos: []vulkan.DeviceQueueCreateInfo{{SType: vulkan.StructureTypeDeviceQueueCreateInfo,
			QueueFamilyIndex: a.family, QueueCount: 1, PQueuePriorities: []float32{1}}},
		EnabledExtensionCount: uint32(len(exts)), PpEnabledExtensionNames: exts}
	if err := ok("vkCreateDevice", vulkan.CreateDevice(a.phys, &dci, nil, &a.dev)); err != nil {
		return nil, err
	}
	vulkan.GetDeviceQueue(a.dev, a.family, 0, &a.queue)
	pci := vulkan.CommandPoolCreateInfo{SType: vulkan.StructureTypeCommandPoolCreateInfo, QueueFamilyIndex: a.family}
	if err := ok("vkCreateCommandPool", vulkan.CreateCommandPool(a.dev, &pci, nil, &a.pool)); err != nil {
		return nil, err
	}
	cmds := make([]vulkan.CommandBuffer, 1)
	cai := vulkan.CommandBufferAllocateInfo{SType: vulkan.StructureTypeCommandBufferAllocateInfo, CommandPool: a.pool,
		Level: vulkan.CommandBufferLevelPrimary, CommandBufferCount: 1}
	if err := ok("vkAllocateCommandBuffers", vulkan.AllocateCommandBuffers(a.dev, &cai, cmds)); err != nil {
		return nil, err
	}
	a.cmd = cmds[0]
	fci := vulkan.FenceCreateInfo{SType: vulkan.StructureTypeFenceCreateInfo}
	if err := ok("vkCreateFence", vulkan.CreateFence(a.dev, &fci, nil, &a.fence)); err != nil {
		return nil, err
	}
	return a, a.newTable()
}

// newTable makes the table's buffer, with the usage gpuscatter needs, in
// host-visible memory with a device address, holding 1..8.
func (a *app) newTable() error {
	bci := vulkan.BufferCreateInfo{SType: vulkan.StructureTypeBufferCreateInfo, Size: 32,
		Usage: vulkan.BufferUsageFlags(gpu.WrapUsage), SharingMode: vulkan.SharingModeExclusive}
	if err := ok("vkCreateBuffer", vulkan.CreateBuffer(a.dev, &bci, nil, &a.buf)); err != nil {
		return err
	}
	a.table = uint64(uintptr(unsafe.Pointer(a.buf)))
	var mr vulkan.MemoryRequirements
	vulkan.GetBufferMemoryRequirements(a.dev, a.buf, &mr)
	mr.Deref()
	var mp vulkan.PhysicalDeviceMemoryProperties
	vulkan.GetPhysicalDeviceMemoryProperties(a.phys, &mp)
	mp.Deref()
	host := vulkan.MemoryPropertyFlags(vulkan.MemoryPropertyHostVisibleBit | vulkan.MemoryPropertyHostCoherentBit)
	var typ uint32
	for i := uint32(0); i < mp.MemoryTypeCount; i++ {
		if mp.MemoryTypes[i].Deref(); mr.MemoryTypeBits&(1<<i) != 0 && mp.MemoryTypes[i].PropertyFlags&host == host {
			typ = i
			break
		}
	}
	flags := vulkan.MemoryAllocateFlagsInfo{SType: vulkan.StructureTypeMemoryAllocateFlagsInfo, Flags: 0x2} // device address
	ref, _ := flags.PassRef()
	defer flags.Free()
	mai := vulkan.MemoryAllocateInfo{SType: vulkan.StructureTypeMemoryAllocateInfo, PNext: unsafe.Pointer(ref),
		AllocationSize: mr.Size, MemoryTypeIndex: typ}
	if err := ok("vkAllocateMemory", vulkan.AllocateMemory(a.dev, &mai, nil, &a.mem)); err != nil {
		return err
	}
	if err := ok("vkBindBufferMemory", vulkan.BindBufferMemory(a.dev, a.buf, a.mem, 0)); err != nil {
		return err
	}
	var p unsafe.Pointer
	if err := ok("vkMapMemory", vulkan.MapMemory(a.dev, a.mem, 0, 32, 0, &p)); err != nil {
		return err
	}
	a.bytes = unsafe.Slice((*byte)(p), 32)
	copy(a.bytes, tensor.MustFromSlice([]int{8}, []int32{1, 2, 3, 4, 5, 6, 7, 8}).Data)
	return nil
}

// external is the application's device as gpuscatter adopts it.
func (a *app) external() gpu.External {
	f := gpu.Requirements().Features // what create asked for; Adopt keeps what the device has
	return gpu.External{Instance: unsafe.Pointer(a.inst), PhysicalDevice: unsafe.Pointer(a.phys), Device: unsafe.Pointer(a.dev),
		QueueFamily: a.family, APIVersion: apiVersion, Features: &f}
}

// computeTransfer and the accesses are what Record's go doc asks the
// barriers around its commands to cover.
const computeTransfer = vulkan.PipelineStageFlags(vulkan.PipelineStageComputeShaderBit | vulkan.PipelineStageTransferBit)

// begin begins the command buffer with the barrier owed before the
// recorded commands: the host's writes of the table visible to them.
func (a *app) begin() unsafe.Pointer {
	bi := vulkan.CommandBufferBeginInfo{SType: vulkan.StructureTypeCommandBufferBeginInfo}
	vulkan.BeginCommandBuffer(a.cmd, &bi)
	mb := vulkan.MemoryBarrier{SType: vulkan.StructureTypeMemoryBarrier, SrcAccessMask: vulkan.AccessFlags(vulkan.AccessHostWriteBit),
		DstAccessMask: vulkan.AccessFlags(vulkan.AccessShaderReadBit | vulkan.AccessShaderWriteBit | vulkan.AccessTransferReadBit | vulkan.AccessTransferWriteBit)}
	vulkan.CmdPipelineBarrier(a.cmd, vulkan.PipelineStageFlags(vulkan.PipelineStageHostBit), computeTransfer, 0, 1, []vulkan.MemoryBarrier{mb}, 0, nil, 0, nil)
	return unsafe.Pointer(a.cmd)
}

// submit records the barrier owed after (the scatter's writes visible to
// the host), ends the command buffer, submits it and waits for the fence.
func (a *app) submit() error {
	mb := vulkan.MemoryBarrier{SType: vulkan.StructureTypeMemoryBarrier,
		SrcAccessMask: vulkan.AccessFlags(vulkan.AccessShaderWriteBit | vulkan.AccessTransferWriteBit), DstAccessMask: vulkan.AccessFlags(vulkan.AccessHostReadBit)}
	vulkan.CmdPipelineBarrier(a.cmd, computeTransfer, vulkan.PipelineStageFlags(vulkan.PipelineStageHostBit), 0, 1, []vulkan.MemoryBarrier{mb}, 0, nil, 0, nil)
	if err := ok("vkEndCommandBuffer", vulkan.EndCommandBuffer(a.cmd)); err != nil {
		return err
	}
	si := []vulkan.SubmitInfo{{SType: vulkan.StructureTypeSubmitInfo, CommandBufferCount: 1, PCommandBuffers: []vulkan.CommandBuffer{a.cmd}}}
	if err := ok("vkQueueSubmit", vulkan.QueueSubmit(a.queue, 1, si, a.fence)); err != nil {
		return err
	}
	return ok("vkWaitForFences", vulkan.WaitForFences(a.dev, 1, []vulkan.Fence{a.fence}, vulkan.True, 60e9))
}

// read returns the table as the application sees it.
func (a *app) read() []int32 {
	return append([]int32(nil), unsafe.Slice((*int32)(unsafe.Pointer(&a.bytes[0])), 8)...)
}

// close destroys the application's objects.
func (a *app) close() {
	vulkan.UnmapMemory(a.dev, a.mem)
	vulkan.FreeMemory(a.dev, a.mem, nil)
	vulkan.DestroyBuffer(a.dev, a.buf, nil)
	vulkan.DestroyFence(a.dev, a.fence, nil)
	vulkan.DestroyCommandPool(a.dev, a.pool, nil)
	vulkan.DestroyDevice(a.dev, nil)
	vulkan.DestroyInstance(a.inst, nil)
}
