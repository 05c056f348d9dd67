//go:build cgo

package vk

import (
	"encoding/binary"
	"fmt"
)

// spirvInfo is what NewPipeline checks in a module before handing it to the
// driver, which may crash rather than fail on a mismatch.
type spirvInfo struct {
	computeEntries []string
	// bindings maps descriptor set to the binding numbers used in it.
	bindings map[uint32][]uint32
	// capabilities are the OpCapability operands, in module order.
	capabilities []uint32
}

const (
	opCapability       = 17
	opEntryPoint       = 15
	opDecorate         = 71
	execModelGLCompute = 5
	decorationBinding  = 33
	decorationSet      = 34
)

// eachInstruction calls fn with the word index, opcode and word count of
// every instruction of the module after its header, and fails on an
// instruction that runs past the end or has no words.
func eachInstruction(code []byte, fn func(i int, op uint32, count int)) error {
	n := len(code) / 4
	for i := 5; i < n; {
		w := binary.LittleEndian.Uint32(code[4*i:])
		op, count := w&0xffff, int(w>>16)
		if count == 0 || i+count > n {
			return fmt.Errorf("vk: malformed SPIR-V at word %d", i)
		}
		fn(i, op, count)
		i += count
	}
	return nil
}

// parseSPIRV walks the instruction stream of a module.
func parseSPIRV(code []byte) (*spirvInfo, error) {
	word := func(i int) uint32 { return binary.LittleEndian.Uint32(code[4*i:]) }
	info := &spirvInfo{bindings: map[uint32][]uint32{}}
	binding := map[uint32]uint32{}
	set := map[uint32]uint32{}
	err := eachInstruction(code, func(i int, op uint32, count int) {
		switch op {
		case opCapability:
			if count >= 2 {
				info.capabilities = append(info.capabilities, word(i+1))
			}
		case opEntryPoint:
			if count >= 4 && word(i+1) == execModelGLCompute {
				info.computeEntries = append(info.computeEntries, string(trimNul(code[4*(i+3):4*(i+count)])))
			}
		case opDecorate:
			if count >= 4 {
				switch word(i + 2) {
				case decorationBinding:
					binding[word(i+1)] = word(i + 3)
				case decorationSet:
					set[word(i+1)] = word(i + 3)
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for id, b := range binding {
		s := set[id]
		info.bindings[s] = append(info.bindings[s], b)
	}
	return info, nil
}

// capabilityNeeds maps SPIR-V capabilities to the device feature each one
// needs (Capabilities' field, as the Vulkan feature is named) and whether
// the device has it enabled. Capabilities not listed are left to the
// driver.
var capabilityNeeds = map[uint32]struct {
	name, feature string
	has           func(Capabilities) bool
}{
	9:    {"Float16", "shaderFloat16", func(c Capabilities) bool { return c.ShaderFloat16 }},
	10:   {"Float64", "shaderFloat64", func(c Capabilities) bool { return c.ShaderFloat64 }},
	11:   {"Int64", "shaderInt64", func(c Capabilities) bool { return c.ShaderInt64 }},
	12:   {"Int64Atomics", "shaderBufferInt64Atomics", func(c Capabilities) bool { return c.Int64BufferAtomics || c.Int64SharedAtomics }},
	22:   {"Int16", "shaderInt16", func(c Capabilities) bool { return c.ShaderInt16 }},
	39:   {"Int8", "shaderInt8", func(c Capabilities) bool { return c.ShaderInt8 }},
	4433: {"StorageBuffer16BitAccess", "storageBuffer16BitAccess", func(c Capabilities) bool { return c.StorageBuffer16BitAccess }},
	4448: {"StorageBuffer8BitAccess", "storageBuffer8BitAccess", func(c Capabilities) bool { return c.StorageBuffer8BitAccess }},
	5347: {"PhysicalStorageBufferAddresses", "bufferDeviceAddress", func(c Capabilities) bool { return c.BufferDeviceAddress }},
	5612: {"AtomicFloat32MinMaxEXT", "shaderBufferFloat32AtomicMinMax", func(c Capabilities) bool { return c.Float32AtomicMinMax }},
	5613: {"AtomicFloat64MinMaxEXT", "shaderBufferFloat64AtomicMinMax", func(c Capabilities) bool { return c.Float64AtomicMinMax }},
	5616: {"AtomicFloat16MinMaxEXT", "shaderBufferFloat16AtomicMinMax", func(c Capabilities) bool { return c.Float16AtomicMinMax }},
	6033: {"AtomicFloat32AddEXT", "shaderBufferFloat32AtomicAdd", func(c Capabilities) bool { return c.Float32AtomicAdd || c.SharedFloat32AtomicAdd }},
	6034: {"AtomicFloat64AddEXT", "shaderBufferFloat64AtomicAdd", func(c Capabilities) bool { return c.Float64AtomicAdd }},
	6095: {"AtomicFloat16AddEXT", "shaderBufferFloat16AtomicAdd", func(c Capabilities) bool { return c.Float16AtomicAdd }},
}

// checkCapabilities refuses a module that declares a capability whose
// feature the device does not have enabled: some drivers crash the process
// compiling such a module (SwiftShader on 64-bit integers) rather than
// fail.
func checkCapabilities(info *spirvInfo, entry string, caps Capabilities) error {
	for _, c := range info.capabilities {
		if need, ok := capabilityNeeds[c]; ok && !need.has(caps) {
			return fmt.Errorf("%w: NewPipeline: module %q declares the SPIR-V capability %s, and the device lacks %s",
				ErrUnsupported, entry, need.name, need.feature)
		}
	}
	return nil
}

// checkModule verifies that spec's entry point exists as a compute entry
// point, that the module only uses set 0 bindings the spec declares, and
// that the device has the features of its capabilities (caps, those
// enabled).
func checkModule(spec *PipelineSpec, caps Capabilities) error {
	info, err := parseSPIRV(spec.SPIRV)
	if err != nil {
		return err
	}
	found := false
	for _, e := range info.computeEntries {
		if e == spec.Entry {
			found = true
			break
		}
	}
	if !found {
		return fmt.Errorf("vk: NewPipeline: no compute entry point %q in the module (has %q)", spec.Entry, info.computeEntries)
	}
	for s, bs := range info.bindings {
		if s != 0 {
			return fmt.Errorf("vk: NewPipeline: the module uses descriptor set %d; only set 0 is supported", s)
		}
		for _, b := range bs {
			if int(b) >= spec.Bindings {
				return fmt.Errorf("vk: NewPipeline: the module uses binding %d but the spec declares %d bindings", b, spec.Bindings)
			}
		}
	}
	return checkCapabilities(info, spec.Entry, caps)
}
