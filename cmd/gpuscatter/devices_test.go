//go:build cgo

package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/vk"
)

func TestDevicesListsLavapipeOrAnyDevice(t *testing.T) {
	code, stdout, stderr := runCLI(t, "devices")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "0: ")
	assert.Contains(t, stdout, "buffer device address:")
	assert.Contains(t, stdout, "max storage binding:")
}

func TestDevicesJSON(t *testing.T) {
	code, stdout, stderr := runCLI(t, "devices", "--json")
	require.Equal(t, exitOK, code, stderr)
	var devs []vk.DeviceInfo
	require.NoError(t, json.Unmarshal([]byte(stdout), &devs))
	require.NotEmpty(t, devs)
	assert.NotEmpty(t, devs[0].Name)
	assert.Positive(t, devs[0].Capabilities.MaxStorageBufferRange)
}

func TestDevicesRejectsStrayArguments(t *testing.T) {
	code, _, stderr := runCLI(t, "devices", "--json=maybe")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "gpuscatter: ")
}

// TestDevicesShowShaderFloat64: both listings say whether each device has
// shaderFloat64 (float64 sum, sub, prod and mean need it), the text one as
// the JSON one does.
func TestDevicesShowShaderFloat64(t *testing.T) {
	code, stdout, stderr := runCLI(t, "devices", "--json")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"shaderFloat64": `)
	var devs []vk.DeviceInfo
	require.NoError(t, json.Unmarshal([]byte(stdout), &devs))
	require.NotEmpty(t, devs)
	code, text, stderr := runCLI(t, "devices")
	require.Equal(t, exitOK, code, stderr)
	blocks := strings.Split(text, "\n"+"1: ")
	assert.Contains(t, blocks[0], fmt.Sprintf("  shader float64:        %v\n", devs[0].Capabilities.ShaderFloat64))
	assert.Equal(t, len(devs), strings.Count(text, "  shader float64:  "))
}

// TestDevicesMeasured: each device's measured figures are in both
// listings, kept in the cache folder after the first listing and read
// back by the next; --remeasure measures again.
func TestDevicesMeasured(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	code, stdout, stderr := runCLI(t, "devices", "--json")
	require.Equal(t, exitOK, code, stderr)
	var devs []vk.DeviceInfo
	require.NoError(t, json.Unmarshal([]byte(stdout), &devs))
	require.NotEmpty(t, devs)
	m := devs[0].Measured
	require.NotNil(t, m, "the default device was measured")
	for name, v := range map[string]float64{"upload": m.UploadGBps, "download": m.DownloadGBps, "copy": m.CopyGBps, "submit": m.SubmitWaitUs} {
		assert.Positive(t, v, name)
	}
	kept, err := filepath.Glob(filepath.Join(cache, "gpuscatter", "measured-*.json"))
	require.NoError(t, err)
	assert.NotEmpty(t, kept, "the figures are kept beside the pipeline cache")

	code, stdout, stderr = runCLI(t, "devices", "--json")
	require.Equal(t, exitOK, code, stderr)
	var again []vk.DeviceInfo
	require.NoError(t, json.Unmarshal([]byte(stdout), &again))
	assert.Equal(t, *m, *again[0].Measured, "read back, not measured again")

	code, text, stderr := runCLI(t, "devices", "--remeasure")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `\n  measured: +upload [0-9.e+]+ GB/s, download [0-9.e+]+ GB/s, device copy [0-9.e+]+ GB/s, submit and wait \d+ µs\n`, text)
}
