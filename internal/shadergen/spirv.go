package main

import (
	"encoding/binary"
	"fmt"
)

// SPIR-V opcodes, storage classes and decorations this reader needs.
const (
	opCapability    = 17
	opExecutionMode = 16
	opTypeInt       = 21
	opTypeFloat     = 22
	opTypeVector    = 23
	opTypeArray     = 28
	opTypeStruct    = 30
	opTypePointer   = 32
	opConstant      = 43
	opSpecConstant  = 50
	opVariable      = 59
	opDecorate      = 71
	opMemberDecor   = 72

	modeLocalSize       = 17
	storagePushConstant = 9
	storageWorkgroup    = 4
	decorSpecID         = 1
	decorOffset         = 35
	decorArrayStride    = 6
	spirvMagic          = 0x07230203
)

// shaderInfo is what the table records from a module.
type shaderInfo struct {
	localSize   [3]uint32
	pushSize    uint32
	pushOffsets []uint32 // of the block's members, in order
	caps        []uint32 // the capabilities the module declares
	// The workgroup memory of the module: shared bytes, plus for arrays
	// sized by a specialization constant, spec[id] bytes per unit of
	// constant id (whose default is specDefault[id]).
	shared      uint32
	spec        map[uint32]uint32
	specDefault map[uint32]uint32
}

// sharedBytes returns the workgroup memory of a module with
// specialization constants values (those beyond it take their defaults).
func (info shaderInfo) sharedBytes(values []uint32) uint32 {
	n := info.shared
	for id, per := range info.spec {
		v := info.specDefault[id]
		if int(id) < len(values) {
			v = values[id]
		}
		n += per * v
	}
	return n
}

// wideCaps names the capabilities that the 32-bit baseline (INT64=0)
// must not declare: 64-bit and small integers, float64, 8- and 16-bit
// storage and 64-bit atomics, which a device such as SwiftShader lacks.
var wideCaps = map[uint32]string{
	10: "Float64", 11: "Int64", 12: "Int64Atomics", 22: "Int16", 39: "Int8",
	4433: "StorageBuffer16BitAccess", 4434: "UniformAndStorageBuffer16BitAccess", 4435: "StoragePushConstant16",
	4448: "StorageBuffer8BitAccess", 4449: "UniformAndStorageBuffer8BitAccess", 4450: "StoragePushConstant8",
}

// inspect reads the workgroup size and the size of the push-constant block
// (the end of its last member) from a SPIR-V module.
func inspect(code []byte) (shaderInfo, error) {
	var info shaderInfo
	if len(code)%4 != 0 || len(code) < 20 {
		return info, fmt.Errorf("not a SPIR-V module (%d bytes)", len(code))
	}
	words := make([]uint32, len(code)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(code[4*i:])
	}
	if words[0] != spirvMagic {
		return info, fmt.Errorf("SPIR-V magic number missing")
	}
	scalar := map[uint32]uint32{}    // type id -> size in bytes
	vector := map[uint32][2]uint32{} // type id -> component type, count
	structs := map[uint32][]uint32{} // type id -> member types
	pointers := map[uint32][2]uint32{}
	offsets := map[[2]uint32]uint32{} // (struct, member) -> offset
	arrays := map[uint32][2]uint32{}  // type id -> element type, length id
	strides := map[uint32]uint32{}    // array type id -> stride
	constants := map[uint32]uint32{}  // id -> 32-bit value
	var pushPointer uint32
	var workgroup []uint32          // pointer types of workgroup variables
	specIDs := map[uint32]uint32{}  // spec constant id -> SpecId
	specVals := map[uint32]uint32{} // spec constant id -> default
	for i := 5; i < len(words); {
		n, op := int(words[i]>>16), words[i]&0xffff
		if n == 0 || i+n > len(words) {
			return info, fmt.Errorf("malformed instruction at word %d", i)
		}
		args := words[i+1 : i+n]
		switch op {
		case opCapability:
			if len(args) >= 1 {
				info.caps = append(info.caps, args[0])
			}
		case opExecutionMode:
			if len(args) >= 5 && args[1] == modeLocalSize {
				info.localSize = [3]uint32{args[2], args[3], args[4]}
			}
		case opTypeInt, opTypeFloat:
			scalar[args[0]] = args[1] / 8
		case opTypeVector:
			vector[args[0]] = [2]uint32{args[1], args[2]}
		case opTypeArray:
			arrays[args[0]] = [2]uint32{args[1], args[2]}
		case opConstant:
			if len(args) >= 3 {
				constants[args[1]] = args[2]
			}
		case opSpecConstant:
			if len(args) >= 3 {
				specVals[args[1]] = args[2]
			}
		case opDecorate:
			if len(args) >= 3 && args[1] == decorArrayStride {
				strides[args[0]] = args[2]
			}
			if len(args) >= 3 && args[1] == decorSpecID {
				specIDs[args[0]] = args[2]
			}
		case opTypeStruct:
			structs[args[0]] = append([]uint32(nil), args[1:]...)
		case opTypePointer:
			pointers[args[0]] = [2]uint32{args[1], args[2]}
		case opVariable:
			if len(args) >= 3 && args[2] == storagePushConstant {
				pushPointer = args[0]
			}
			if len(args) >= 3 && args[2] == storageWorkgroup {
				workgroup = append(workgroup, args[0])
			}
		case opMemberDecor:
			if len(args) >= 4 && args[2] == decorOffset {
				offsets[[2]uint32{args[0], args[1]}] = args[3]
			}
		}
		i += n
	}
	if info.localSize == [3]uint32{} {
		return info, fmt.Errorf("no LocalSize execution mode")
	}
	// Workgroup variables: scalars, vectors and arrays of them.
	var elemSize func(t uint32) (uint32, bool)
	elemSize = func(t uint32) (uint32, bool) {
		if v, isVec := vector[t]; isVec {
			return scalar[v[0]] * v[1], scalar[v[0]] > 0
		}
		size, ok := scalar[t]
		return size, ok
	}
	info.spec, info.specDefault = map[uint32]uint32{}, map[uint32]uint32{}
	for _, p := range workgroup {
		t := pointers[p][1]
		if a, isArray := arrays[t]; isArray {
			size, ok := elemSize(a[0])
			if !ok {
				return info, fmt.Errorf("workgroup array of a type this reader does not size")
			}
			if n, known := constants[a[1]]; known {
				info.shared += n * size
				continue
			}
			id, isSpec := specIDs[a[1]]
			if !isSpec {
				return info, fmt.Errorf("workgroup array of unknown length")
			}
			info.spec[id] += size
			info.specDefault[id] = specVals[a[1]]
			continue
		}
		size, ok := elemSize(t)
		if !ok {
			return info, fmt.Errorf("workgroup variable of a type this reader does not size")
		}
		info.shared += size
	}
	if pushPointer == 0 {
		return info, nil
	}
	ptr, ok := pointers[pushPointer]
	if !ok {
		return info, fmt.Errorf("push-constant variable has no pointer type")
	}
	members, ok := structs[ptr[1]]
	if !ok {
		return info, fmt.Errorf("push-constant block is not a struct")
	}
	for m, t := range members {
		size, ok := scalar[t]
		if v, isVec := vector[t]; isVec {
			size, ok = scalar[v[0]]*v[1], scalar[v[0]] > 0
		}
		if a, isArray := arrays[t]; isArray {
			n, known := constants[a[1]]
			size, ok = n*strides[t], known && strides[t] > 0
		}
		if !ok {
			return info, fmt.Errorf("push-constant member %d has a type this reader does not size", m)
		}
		off := offsets[[2]uint32{ptr[1], uint32(m)}]
		info.pushOffsets = append(info.pushOffsets, off)
		if end := off + size; end > info.pushSize {
			info.pushSize = end
		}
	}
	return info, nil
}
