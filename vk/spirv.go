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
}

const (
	opEntryPoint       = 15
	opDecorate         = 71
	execModelGLCompute = 5
	decorationBinding  = 33
	decorationSet      = 34
)

// parseSPIRV walks the instruction stream of a module.
func parseSPIRV(code []byte) (*spirvInfo, error) {
	le := binary.LittleEndian
	n := len(code) / 4
	word := func(i int) uint32 { return le.Uint32(code[4*i:]) }
	info := &spirvInfo{bindings: map[uint32][]uint32{}}
	binding := map[uint32]uint32{}
	set := map[uint32]uint32{}
	for i := 5; i < n; {
		w := word(i)
		op, count := w&0xffff, int(w>>16)
		if count == 0 || i+count > n {
			return nil, fmt.Errorf("vk: malformed SPIR-V at word %d", i)
		}
		switch op {
		case opEntryPoint:
			if count >= 4 && word(i+1) == execModelGLCompute {
				raw := code[4*(i+3) : 4*(i+count)]
				end := 0
				for end < len(raw) && raw[end] != 0 {
					end++
				}
				info.computeEntries = append(info.computeEntries, string(raw[:end]))
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
		i += count
	}
	for id, b := range binding {
		s := set[id]
		info.bindings[s] = append(info.bindings[s], b)
	}
	return info, nil
}

// checkModule verifies that spec's entry point exists as a compute entry
// point and that the module only uses set 0 bindings the spec declares.
func checkModule(spec *PipelineSpec) error {
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
	return nil
}
