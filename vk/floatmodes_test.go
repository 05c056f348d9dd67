//go:build cgo

package vk

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChooseFloatModes(t *testing.T) {
	all, none := [3]bool{true, true, true}, [3]bool{}
	only32 := [3]bool{false, true, false}
	no16 := [3]bool{false, true, true}
	for _, c := range []struct {
		name         string
		independence uint32
		denorm       [3]bool
		want         [3]bool
	}{
		{"all widths on their own", independenceAll, no16, no16},
		{"32-bit on its own, 16 and 64 together", independence32BitOnly, no16, only32},
		{"32-bit on its own, 16 and 64 both offered", independence32BitOnly, all, all},
		{"all together, one missing", independenceNone, no16, none},
		{"all together, all offered", independenceNone, all, all},
		{"nothing offered", independenceAll, none, none},
	} {
		m := chooseFloatModes(c.independence, c.denorm, all)
		assert.Equal(t, c.want, m.denorm, c.name)
		assert.Equal(t, all, m.signed, c.name)
	}
}

// executionModes returns the (mode, width) pairs module declares for its
// compute entry points, and its capabilities.
func executionModes(t *testing.T, code []byte) (modes map[[2]uint32]int, caps map[uint32]bool) {
	t.Helper()
	info, err := parseSPIRV(code)
	require.NoError(t, err)
	caps = map[uint32]bool{}
	for _, c := range info.capabilities {
		caps[c] = true
	}
	modes = map[[2]uint32]int{}
	le := binary.LittleEndian
	for i := 5; i < len(code)/4; {
		w := le.Uint32(code[4*i:])
		if w&0xffff == opExecutionMode && w>>16 >= 4 {
			modes[[2]uint32{le.Uint32(code[4*(i+2):]), le.Uint32(code[4*(i+3):])}]++
		}
		i += int(w >> 16)
	}
	return modes, caps
}

// TestDeclareFloatModes declares float controls in the test modules
// (SPIR-V 1.3, which need the extension) and checks the result with
// spirv-val where it is installed (CI; not the kit), and that declaring
// again adds nothing.
func TestDeclareFloatModes(t *testing.T) {
	modules := map[string][]byte{"copy": copySPV, "histogram": histogramSPV, "scatter_add_f32": scatterAddSPV, "spin": spinSPV}
	val, _ := exec.LookPath("spirv-val")
	if val == "" && os.Getenv("CI") == "true" {
		t.Fatal("spirv-val not found; install Debian package spirv-tools")
	}
	full := floatModes{denorm: [3]bool{true, true, true}, signed: [3]bool{true, true, true}}
	for f, code := range modules {
		for _, m := range []floatModes{full, {signed: [3]bool{false, true, false}}, {}} {
			out, err := declareFloatModes(code, m)
			require.NoError(t, err, f)
			modes, caps := executionModes(t, out)
			for k, width := range floatWidths {
				assert.Equal(t, m.denorm[k], modes[[2]uint32{modeDenormPreserve, width}] == 1, "%s: DenormPreserve %d", f, width)
				assert.Equal(t, m.signed[k], modes[[2]uint32{modeSignedZeroInfNanPreserve, width}] == 1, "%s: SignedZeroInfNanPreserve %d", f, width)
			}
			assert.Equal(t, m.denorm != [3]bool{}, caps[capDenormPreserve], f)
			if m == (floatModes{}) {
				assert.Equal(t, code, out, "%s: nothing to declare changes nothing", f)
				continue
			}
			again, err := declareFloatModes(out, m)
			require.NoError(t, err, f)
			assert.Equal(t, out, again, "%s: declaring twice", f)
			if val == "" {
				continue
			}
			path := filepath.Join(t.TempDir(), "m.spv")
			require.NoError(t, os.WriteFile(path, out, 0o644))
			msg, err := exec.Command(val, "--target-env", "vulkan1.2", path).CombinedOutput()
			assert.NoError(t, err, "%s: spirv-val: %s", f, msg)
		}
	}
}

func FuzzDeclareFloatModes(f *testing.F) {
	f.Add(copySPV, uint8(7), uint8(2))
	f.Add(capabilityModule(1, 4464), uint8(1), uint8(0))
	f.Fuzz(func(t *testing.T, code []byte, denorm, signed uint8) {
		code = code[:len(code)&^3]
		if _, err := parseSPIRV(code); err != nil || len(code) < 20 {
			return
		}
		var m floatModes
		for k := range m.denorm {
			m.denorm[k], m.signed[k] = denorm&(1<<k) != 0, signed&(1<<k) != 0
		}
		out, err := declareFloatModes(code, m)
		if err != nil {
			t.Fatalf("a module parseSPIRV accepts: %v", err)
		}
		if _, err := parseSPIRV(out); err != nil {
			t.Fatalf("the declared module does not parse: %v", err)
		}
	})
}
