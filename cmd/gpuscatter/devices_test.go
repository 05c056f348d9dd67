//go:build cgo

package main

import (
	"encoding/json"
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
