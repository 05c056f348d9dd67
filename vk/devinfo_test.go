//go:build cgo

package vk

import (
	"encoding/json"
	"testing"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseDeviceInfoRoundTrip: every device's JSON, as 'gpuscatter
// devices --json' prints it, reads back as it was, alone or as an array
// of one.
func TestParseDeviceInfoRoundTrip(t *testing.T) {
	devs, err := Devices()
	require.NoError(t, err)
	require.NotEmpty(t, devs)
	for _, d := range devs {
		b, err := json.MarshalIndent(d, "", "  ")
		require.NoError(t, err)
		got, err := ParseDeviceInfo(b)
		require.NoError(t, err)
		assert.Equal(t, d, got)
		got, err = ParseDeviceInfo([]byte("[" + string(b) + "]\n"))
		require.NoError(t, err)
		assert.Equal(t, d, got)
	}
}

// TestParseDeviceInfoRefuses: JSON that is not one device that can be
// planned for fails with one line saying what is wrong.
func TestParseDeviceInfoRefuses(t *testing.T) {
	devs, err := Devices()
	require.NoError(t, err)
	require.NotEmpty(t, devs)
	good, err := json.Marshal(devs[0])
	require.NoError(t, err)
	edit := func(f func(d *DeviceInfo)) string {
		d := devs[0]
		f(&d)
		b, err := json.Marshal(d)
		require.NoError(t, err)
		return string(b)
	}
	for _, c := range []struct{ in, want string }{
		{"", "want a JSON object"},
		{"42", "want a JSON object"},
		{"[]", "an array of 0 devices"},
		{"[" + string(good) + "," + string(good) + "]", "an array of 2 devices"},
		{"{", "not a device description"},
		{`{"name": 7}`, "not a device description"},
		{edit(func(d *DeviceInfo) { d.Name = "" }), "no name"},
		{edit(func(d *DeviceInfo) { d.Type = "gpu" }), `type "gpu" is not a device type`},
		{edit(func(d *DeviceInfo) { d.Capabilities.MaxMemoryAllocationSize = 0 }), "maxMemoryAllocationSize is 0"},
		{edit(func(d *DeviceInfo) { d.Capabilities.MaxComputeWorkGroupCount[1] = 0 }), "maxComputeWorkGroupCount[1] is 0"},
		{edit(func(d *DeviceInfo) { d.Capabilities.MaxComputeWorkGroupCount[2] = 16 }), "maxComputeWorkGroupCount[2] is 16, less than any device has (at least 65535)"},
		{edit(func(d *DeviceInfo) { d.Capabilities.MaxComputeSharedMemorySize = 0 }), "capabilities.maxComputeSharedMemorySize is 0 or missing"},
		{edit(func(d *DeviceInfo) { d.Capabilities.MaxComputeSharedMemorySize = 1 << 30 }), "maxComputeSharedMemorySize is 1073741824, more than any device has (at most 16777216)"},
		{edit(func(d *DeviceInfo) { d.Capabilities.MaxComputeWorkGroupSize[0] = 0 }), "capabilities.maxComputeWorkGroupSize[0] is 0 or missing"},
		{edit(func(d *DeviceInfo) { d.Capabilities.MaxComputeWorkGroupInvocations = 64 }), "maxComputeWorkGroupInvocations is 64, less than any device has"},
		{edit(func(d *DeviceInfo) { d.DeviceLocalMemory = 0 }), "deviceLocalMemory is 0 or missing"},
		{edit(func(d *DeviceInfo) { d.DeviceLocalMemory = 1 << 60 }), "deviceLocalMemory is 1152921504606846976, more than any device has"},
		{edit(func(d *DeviceInfo) {
			d.Measured = &Measured{UploadGBps: 1, DownloadGBps: 1, CopyGBps: 0, SubmitWaitUs: 5, ProbeBytes: 1}
		}),
			"measured: cost: invalid figures: copy_gbps is 0; want a positive figure"},
		{edit(func(d *DeviceInfo) {
			d.Measured = &Measured{UploadGBps: 1, DownloadGBps: 1, CopyGBps: 1, SubmitWaitUs: 5, ProbeBytes: 1,
				CPU: &cost.CPU{Threads: 2, CopyGBps: 1, MoveGBps: 1, ElementNs: -1, ReduceNs: 1}}
		}),
			"measured: cost: invalid figures: cpu.element_ns is -1; want a positive figure"},
	} {
		_, err := ParseDeviceInfo([]byte(c.in))
		require.Error(t, err, c.in)
		assert.Contains(t, err.Error(), c.want, c.in)
		assert.NotContains(t, err.Error(), "\n")
	}
}
