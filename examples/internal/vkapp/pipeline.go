//go:build cgo

package vkapp

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// Pipeline is a compute pipeline whose shader reads and writes storage
// buffers at bindings 0, 1, ... of set 0, with push constants, and the
// one descriptor set that binds them.
type Pipeline struct {
	d         *Device
	Handle    vk.Pipeline
	Layout    vk.PipelineLayout
	setLayout vk.DescriptorSetLayout
	pool      vk.DescriptorPool
	Set       vk.DescriptorSet
	push      uint32
}

// NewPipeline compiles SPIR-V spv with bufs storage-buffer bindings and
// push bytes of push constants, and binds buffers (one per binding) to
// its descriptor set.
func (d *Device) NewPipeline(spv []byte, push uint32, buffers ...*Buffer) (*Pipeline, error) {
	if len(spv)%4 != 0 {
		return nil, fmt.Errorf("SPIR-V of %d bytes is no whole number of words", len(spv))
	}
	words := make([]uint32, len(spv)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(spv[4*i:])
	}
	p := &Pipeline{d: d, push: push}
	var module vk.ShaderModule
	smci := vk.ShaderModuleCreateInfo{SType: vk.StructureTypeShaderModuleCreateInfo, CodeSize: uint(len(spv)), PCode: words}
	if err := Check("vkCreateShaderModule", vk.CreateShaderModule(d.Handle, &smci, nil, &module)); err != nil {
		return nil, err
	}
	defer vk.DestroyShaderModule(d.Handle, module, nil)

	bindings := make([]vk.DescriptorSetLayoutBinding, len(buffers))
	for i := range bindings {
		bindings[i] = vk.DescriptorSetLayoutBinding{
			Binding:         uint32(i),
			DescriptorType:  vk.DescriptorTypeStorageBuffer,
			DescriptorCount: 1,
			StageFlags:      vk.ShaderStageFlags(vk.ShaderStageComputeBit),
		}
	}
	dslci := vk.DescriptorSetLayoutCreateInfo{SType: vk.StructureTypeDescriptorSetLayoutCreateInfo, BindingCount: uint32(len(bindings)), PBindings: bindings}
	var setLayout vk.DescriptorSetLayout
	if err := Check("vkCreateDescriptorSetLayout", vk.CreateDescriptorSetLayout(d.Handle, &dslci, nil, &setLayout)); err != nil {
		return nil, err
	}
	p.setLayout = setLayout
	plci := vk.PipelineLayoutCreateInfo{
		SType:          vk.StructureTypePipelineLayoutCreateInfo,
		SetLayoutCount: 1,
		PSetLayouts:    []vk.DescriptorSetLayout{p.setLayout},
	}
	if push > 0 {
		plci.PushConstantRangeCount = 1
		plci.PPushConstantRanges = []vk.PushConstantRange{{StageFlags: vk.ShaderStageFlags(vk.ShaderStageComputeBit), Size: push}}
	}
	var layout vk.PipelineLayout
	if err := Check("vkCreatePipelineLayout", vk.CreatePipelineLayout(d.Handle, &plci, nil, &layout)); err != nil {
		p.Destroy()
		return nil, err
	}
	p.Layout = layout
	cpci := []vk.ComputePipelineCreateInfo{{
		SType: vk.StructureTypeComputePipelineCreateInfo,
		Stage: vk.PipelineShaderStageCreateInfo{
			SType:  vk.StructureTypePipelineShaderStageCreateInfo,
			Stage:  vk.ShaderStageComputeBit,
			Module: module,
			PName:  "main\x00",
		},
		Layout: p.Layout,
	}}
	pipes := make([]vk.Pipeline, 1)
	if err := Check("vkCreateComputePipelines", vk.CreateComputePipelines(d.Handle, vk.NullPipelineCache, 1, cpci, nil, pipes)); err != nil {
		p.Destroy()
		return nil, err
	}
	p.Handle = pipes[0]

	dpci := vk.DescriptorPoolCreateInfo{
		SType:         vk.StructureTypeDescriptorPoolCreateInfo,
		MaxSets:       1,
		PoolSizeCount: 1,
		PPoolSizes:    []vk.DescriptorPoolSize{{Type: vk.DescriptorTypeStorageBuffer, DescriptorCount: uint32(len(buffers))}},
	}
	var pool vk.DescriptorPool
	if err := Check("vkCreateDescriptorPool", vk.CreateDescriptorPool(d.Handle, &dpci, nil, &pool)); err != nil {
		p.Destroy()
		return nil, err
	}
	p.pool = pool
	dsai := vk.DescriptorSetAllocateInfo{
		SType:              vk.StructureTypeDescriptorSetAllocateInfo,
		DescriptorPool:     p.pool,
		DescriptorSetCount: 1,
		PSetLayouts:        []vk.DescriptorSetLayout{p.setLayout},
	}
	var set vk.DescriptorSet
	if err := Check("vkAllocateDescriptorSets", vk.AllocateDescriptorSets(d.Handle, &dsai, &set)); err != nil {
		p.Destroy()
		return nil, err
	}
	p.Set = set
	writes := make([]vk.WriteDescriptorSet, len(buffers))
	for i, b := range buffers {
		writes[i] = vk.WriteDescriptorSet{
			SType:           vk.StructureTypeWriteDescriptorSet,
			DstSet:          p.Set,
			DstBinding:      uint32(i),
			DescriptorCount: 1,
			DescriptorType:  vk.DescriptorTypeStorageBuffer,
			PBufferInfo:     []vk.DescriptorBufferInfo{{Buffer: b.Handle, Range: vk.DeviceSize(vk.WholeSize)}},
		}
	}
	vk.UpdateDescriptorSets(d.Handle, uint32(len(writes)), writes, 0, nil)
	return p, nil
}

// Dispatch records binding p, its descriptor set and push constants (a
// pointer to a struct of p's push-constant bytes, or nil) and a dispatch
// of groups workgroups.
func (p *Pipeline) Dispatch(cmd vk.CommandBuffer, push unsafe.Pointer, groups uint32) {
	vk.CmdBindPipeline(cmd, vk.PipelineBindPointCompute, p.Handle)
	vk.CmdBindDescriptorSets(cmd, vk.PipelineBindPointCompute, p.Layout, 0, 1, []vk.DescriptorSet{p.Set}, 0, nil)
	if p.push > 0 {
		vk.CmdPushConstants(cmd, p.Layout, vk.ShaderStageFlags(vk.ShaderStageComputeBit), 0, p.push, push)
	}
	vk.CmdDispatch(cmd, groups, 1, 1)
}

// Destroy destroys the pipeline and its layouts and descriptor pool.
func (p *Pipeline) Destroy() {
	h := p.d.Handle
	if p.pool != vk.NullDescriptorPool {
		vk.DestroyDescriptorPool(h, p.pool, nil)
	}
	if p.Handle != vk.NullPipeline {
		vk.DestroyPipeline(h, p.Handle, nil)
	}
	if p.Layout != vk.NullPipelineLayout {
		vk.DestroyPipelineLayout(h, p.Layout, nil)
	}
	if p.setLayout != vk.NullDescriptorSetLayout {
		vk.DestroyDescriptorSetLayout(h, p.setLayout, nil)
	}
}

// Groups is the number of workgroups of size local that cover n
// invocations.
func Groups(n, local int) uint32 { return uint32((n + local - 1) / local) }
