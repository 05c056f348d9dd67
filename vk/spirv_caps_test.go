//go:build cgo

package vk

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// module assembles a SPIR-V header and OpCapability instructions for caps.
func capabilityModule(caps ...uint32) []byte {
	words := []uint32{spirvMagic, 0x00010300, 0, 100, 0}
	for _, c := range caps {
		words = append(words, 2<<16|opCapability, c)
	}
	out := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}

// TestCheckCapabilities: a module declaring a capability whose feature the
// device lacks is refused before the driver sees it, naming both; one the
// device has, or one the table does not know, passes.
func TestCheckCapabilities(t *testing.T) {
	const shader, int64Cap, float64Cap, atomicF32Add, vulkanMemoryModel = 1, 11, 10, 6033, 5345
	for _, tc := range []struct {
		name string
		caps []uint32
		dev  Capabilities
		want string
	}{
		{"int64 missing", []uint32{shader, int64Cap}, Capabilities{}, `module "main" declares the SPIR-V capability Int64, and the device lacks shaderInt64`},
		{"int64 present", []uint32{shader, int64Cap}, Capabilities{ShaderInt64: true}, ""},
		{"float64 missing", []uint32{shader, int64Cap, float64Cap}, Capabilities{ShaderInt64: true}, "capability Float64, and the device lacks shaderFloat64"},
		{"float atomics in workgroup memory only", []uint32{atomicF32Add}, Capabilities{SharedFloat32AtomicAdd: true}, ""},
		{"float atomics missing", []uint32{atomicF32Add}, Capabilities{}, "capability AtomicFloat32AddEXT, and the device lacks shaderBufferFloat32AtomicAdd"},
		{"unknown capability", []uint32{shader, vulkanMemoryModel}, Capabilities{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := parseSPIRV(capabilityModule(tc.caps...))
			require.NoError(t, err)
			assert.Equal(t, tc.caps, info.capabilities)
			err = checkCapabilities(info, "main", tc.dev)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrUnsupported)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestProjectModulesPass: the test modules pass the check on the default
// device, which has what they use.
func TestProjectModulesPass(t *testing.T) {
	d := openTest(t, Options{})
	for name, code := range map[string][]byte{"copy": copySPV, "histogram": histogramSPV, "scatter_add_f32": scatterAddSPV} {
		info, err := parseSPIRV(code)
		require.NoError(t, err, name)
		assert.Contains(t, info.capabilities, uint32(1), "%s declares Shader", name)
		if name == "scatter_add_f32" && !d.Capabilities().Float32AtomicAdd {
			continue
		}
		assert.NoError(t, checkCapabilities(info, "main", d.Capabilities()), name)
	}
}

// FuzzParseSPIRV: any word stream is parsed or refused with an error,
// never a panic, and the capability check takes whatever parses.
func FuzzParseSPIRV(f *testing.F) {
	f.Add(capabilityModule(1, 11, 6033))
	f.Add(copySPV)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, code []byte) {
		code = code[:len(code)&^3]
		info, err := parseSPIRV(code)
		if err != nil {
			return
		}
		_ = checkCapabilities(info, "main", Capabilities{})
	})
}
