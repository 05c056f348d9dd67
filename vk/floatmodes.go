//go:build cgo

package vk

import (
	"encoding/binary"
)

// floatModes are the SPIR-V float-controls execution modes NewPipeline
// declares in every module, per float width (16, 32 and 64 bits):
// DenormPreserve where denorm is set, SignedZeroInfNanPreserve where
// signed is. Without them a device may flush subnormals to zero and its
// compiler may assume no signed zeros, infinities or NaN.
type floatModes struct {
	denorm, signed [3]bool
}

// floatWidths are the widths of floatModes' entries.
var floatWidths = [3]uint32{16, 32, 64}

// VkShaderFloatControlsIndependence.
const (
	independence32BitOnly = 0
	independenceAll       = 1
	independenceNone      = 2
)

// chooseFloatModes returns the modes a module may declare on a device with
// the given denormBehaviorIndependence, which offers DenormPreserve and
// SignedZeroInfNanPreserve for the widths where denorm and signed are
// set. A device that cannot set the denormal behaviour of each width on
// its own makes the widths that must agree (all of them, or 16 and 64
// bits) take DenormPreserve together or not at all: a module may not
// declare it for one of them alone.
func chooseFloatModes(independence uint32, denorm, signed [3]bool) floatModes {
	m := floatModes{signed: signed}
	switch independence {
	case independenceAll:
		m.denorm = denorm
	case independence32BitOnly:
		m.denorm[1] = denorm[1]
		if denorm[0] && denorm[2] {
			m.denorm[0], m.denorm[2] = true, true
		}
	default:
		if denorm[0] && denorm[1] && denorm[2] {
			m.denorm = denorm
		}
	}
	return m
}

// SPIR-V numbers of the float controls (SPIR-V 1.4, or
// SPV_KHR_float_controls before it).
const (
	opExtension                  = 10
	opExecutionMode              = 16
	capDenormPreserve            = 4464
	capSignedZeroInfNanPreserve  = 4466
	modeDenormPreserve           = 4459
	modeDenormFlushToZero        = 4460
	modeSignedZeroInfNanPreserve = 4461
	spirvVersion14               = 0x00010400
)

// declareFloatModes returns code with the modes of m declared for every
// compute entry point: the capabilities after the header, the extension
// before SPIR-V 1.4, and the execution modes after the last entry point.
// A width for which the module already declares a denormal or
// signed-zero mode keeps the module's. It returns code itself where there
// is nothing to add; the module must have passed parseSPIRV.
func declareFloatModes(code []byte, m floatModes) ([]byte, error) {
	le := binary.LittleEndian
	word := func(i int) uint32 { return le.Uint32(code[4*i:]) }
	var entries []uint32
	afterEntries, lastCap := 0, 5
	caps := map[uint32]bool{}
	hasExt := false
	declared := map[[2]uint32]bool{} // (mode, width) the module declares
	err := eachInstruction(code, func(i int, op uint32, count int) {
		switch op {
		case opCapability:
			if count >= 2 {
				caps[word(i+1)] = true
			}
			if lastCap == i {
				lastCap = i + count
			}
		case opExtension:
			if string(trimNul(code[4*(i+1):4*(i+count)])) == "SPV_KHR_float_controls" {
				hasExt = true
			}
		case opEntryPoint:
			if count >= 3 && word(i+1) == execModelGLCompute {
				entries = append(entries, word(i+2))
			}
			afterEntries = i + count
		case opExecutionMode:
			if count >= 4 {
				mode := word(i + 2)
				if mode == modeDenormFlushToZero {
					mode = modeDenormPreserve // either one settles the width
				}
				declared[[2]uint32{mode, word(i + 3)}] = true
			}
		}
	})
	if err != nil {
		return nil, err
	}
	var modes [][2]uint32
	for k, width := range floatWidths {
		if m.denorm[k] && !declared[[2]uint32{modeDenormPreserve, width}] {
			modes = append(modes, [2]uint32{modeDenormPreserve, width})
		}
		if m.signed[k] && !declared[[2]uint32{modeSignedZeroInfNanPreserve, width}] {
			modes = append(modes, [2]uint32{modeSignedZeroInfNanPreserve, width})
		}
	}
	if len(entries) == 0 || len(modes) == 0 {
		return code, nil
	}
	var head []uint32
	need := map[uint32]bool{}
	for _, md := range modes {
		if md[0] == modeDenormPreserve {
			need[capDenormPreserve] = true
		} else {
			need[capSignedZeroInfNanPreserve] = true
		}
	}
	for _, c := range []uint32{capDenormPreserve, capSignedZeroInfNanPreserve} {
		if need[c] && !caps[c] {
			head = append(head, 2<<16|opCapability, c)
		}
	}
	var ext []uint32
	if word(1) < spirvVersion14 && !hasExt {
		name := []byte("SPV_KHR_float_controls")
		words := len(name)/4 + 1 // with the terminating NUL
		padded := make([]byte, 4*words)
		copy(padded, name)
		ext = append(ext, uint32(1+words)<<16|opExtension)
		for i := 0; i < words; i++ {
			ext = append(ext, le.Uint32(padded[4*i:]))
		}
	}
	var tail []uint32
	for _, e := range entries {
		for _, md := range modes {
			tail = append(tail, 4<<16|opExecutionMode, e, md[0], md[1])
		}
	}
	// A module starts with its capabilities (up to lastCap), then its
	// extensions: the new ones go between the two.
	out := make([]byte, 0, len(code)+4*(len(head)+len(ext)+len(tail)))
	put := func(ws []uint32) {
		for _, w := range ws {
			out = le.AppendUint32(out, w)
		}
	}
	out = append(out, code[:4*lastCap]...)
	put(head)
	put(ext)
	out = append(out, code[4*lastCap:4*afterEntries]...)
	put(tail)
	out = append(out, code[4*afterEntries:]...)
	return out, nil
}

// trimNul returns b up to its first NUL byte.
func trimNul(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}
