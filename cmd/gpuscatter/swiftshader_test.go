//go:build cgo

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// swiftShaderICD returns SwiftShader's ICD file as make swiftshader
// fetched it: GPUSCATTER_SWIFTSHADER_ICD (make test sets it), else the
// tree's .cache/swiftshader/current. Without it the test skips, except
// under CI=true, where make test fetches it: there it fails.
func swiftShaderICD(t *testing.T) string {
	t.Helper()
	icd := os.Getenv("GPUSCATTER_SWIFTSHADER_ICD")
	if icd == "" {
		icd, _ = filepath.Abs(filepath.Join("..", "..", ".cache", "swiftshader", "current", "vk_swiftshader_icd.json"))
	}
	if _, err := os.Stat(icd); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no SwiftShader (make swiftshader fetches it): %v", err)
		}
		t.Skipf("no SwiftShader (make swiftshader fetches it): %v", err)
	}
	return icd
}

// TestDeviceSelectsSwiftShader: with SwiftShader added to the Vulkan
// loader's drivers, devices lists it with what it lacks (shaderInt64,
// shaderFloat64), --device selects it by part of its name in any case and
// by index, and a name that matches nothing is one line listing the
// devices.
func TestDeviceSelectsSwiftShader(t *testing.T) {
	icd := swiftShaderICD(t)
	t.Setenv("VK_ADD_DRIVER_FILES", icd)
	t.Setenv(vk.EnvDevice, "")
	code, stdout, stderr := runCLI(t, "devices", "--json")
	require.Equal(t, exitOK, code, stderr)
	var devs []vk.DeviceInfo
	require.NoError(t, json.Unmarshal([]byte(stdout), &devs))
	ss := -1
	for i, d := range devs {
		if strings.Contains(d.Name, "SwiftShader") {
			ss = i
		}
	}
	require.GreaterOrEqual(t, ss, 0, "SwiftShader not among %s", stdout)
	caps := devs[ss].Capabilities
	assert.True(t, caps.BufferDeviceAddress)
	assert.False(t, caps.ShaderInt64)
	assert.False(t, caps.ShaderFloat64)
	code, text, stderr := runCLI(t, "devices")
	require.Equal(t, exitOK, code, stderr)
	block := text[strings.Index(text, fmt.Sprintf("%d: %s", ss, devs[ss].Name)):]
	if next := strings.Index(block[1:], fmt.Sprintf("\n%d: ", ss+1)); next >= 0 {
		block = block[:next+1]
	}
	assert.Contains(t, block, "shader float64:        false\n")

	args, _ := planInputs(t, t.TempDir(), 64, 100)
	for _, sel := range []string{"swiftshader", "SWIFTSHADER", " Subzero", fmt.Sprint(ss)} {
		code, stdout, stderr := runCLI(t, append([]string{"plan", "--json", "--device", sel}, args...)...)
		if code == exitOK {
			var got planJSON
			require.NoError(t, json.Unmarshal([]byte(stdout), &got))
			assert.Equal(t, devs[ss].Name, got.Device, "--device %q", sel)
			continue
		}
		// While the backend needs shaderInt64, the plan is refused, naming
		// the device that was selected.
		requireInputError(t, code, stdout, stderr, fmt.Sprintf("device %q lacks", devs[ss].Name))
	}

	code, stdout, stderr = runCLI(t, append([]string{"plan", "--json", "--device", "nosuchdevice"}, args...)...)
	require.Equal(t, exitError, code, stderr)
	assert.Empty(t, stdout)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, `--device "nosuchdevice" matches no device name (devices: `)
	for i, d := range devs {
		assert.Contains(t, stderr, fmt.Sprintf("%d %q (%s)", i, d.Name, d.Type))
	}
}

// TestSwiftShaderFacts: planned from SwiftShader's own description (as if
// the backend ran without shaderInt64), a float64 add is refused in one
// line naming shaderFloat64, and a float32 add is planned.
func TestSwiftShaderFacts(t *testing.T) {
	icd := swiftShaderICD(t)
	t.Setenv("VK_ICD_FILENAMES", icd)
	t.Setenv(vk.EnvDevice, "")
	code, stdout, stderr := runCLI(t, "devices", "--json")
	require.Equal(t, exitOK, code, stderr)
	var devs []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &devs))
	require.Len(t, devs, 1)
	facts := strings.Replace(string(devs[0]), `"shaderInt64": false`, `"shaderInt64": true`, 1)
	require.Contains(t, facts, `"shaderFloat64": false`)
	dir := t.TempDir()
	path := filepath.Join(dir, "swiftshader.json")
	require.NoError(t, os.WriteFile(path, []byte(facts), 0o644))
	args, _ := planInputs(t, dir, 64, 100)
	code, stdout, stderr = runCLI(t, append([]string{"plan", "--json", "--facts", path}, args...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"device": "SwiftShader`)
	data := writeNPY(t, dir, "d64.npy", tensor.MustFromSlice([]int{64}, make([]float64, 64)))
	updates := writeNPY(t, dir, "u64.npy", tensor.MustFromSlice([]int{100}, make([]float64, 100)))
	for i := range args {
		switch args[i] {
		case "--data":
			args[i+1] = data
		case "--updates":
			args[i+1] = updates
		}
	}
	code, stdout, stderr = runCLI(t, append([]string{"plan", "--facts", path}, args...)...)
	requireInputError(t, code, stdout, stderr, "ScatterElements-18: vulkan: reduction add on float64 data needs shaderFloat64")
}
