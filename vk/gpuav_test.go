//go:build cgo

package vk

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openGPUAVTest opens the default device with GPU-assisted validation and
// leaves the validation messages to the test.
func openGPUAVTest(t *testing.T) *Device {
	t.Helper()
	d, err := Open(Options{GPUAssistedValidation: true, PipelineCacheDir: "off"})
	require.NoError(t, err, "a Vulkan device is required; on Debian install mesa-vulkan-drivers (lavapipe) and vulkan-validationlayers")
	t.Cleanup(func() {
		assert.NoError(t, d.Close())
		assert.Empty(t, d.LiveObjects(), "live Vulkan objects after Close")
	})
	return d
}

// dispatchAddressCopy runs testdata/address.comp: words words from src to
// dst, both reached through their device addresses, adding 1.
func dispatchAddressCopy(t *testing.T, d *Device, src, dst *Buffer, words uint32) {
	t.Helper()
	sa, err := src.Address()
	require.NoError(t, err)
	da, err := dst.Address()
	require.NoError(t, err)
	p, err := d.NewPipeline(PipelineSpec{SPIRV: addressSPV, PushConstantSize: 24})
	require.NoError(t, err)
	seq, err := d.NewSequence()
	require.NoError(t, err)
	push := make([]byte, 24)
	binary.LittleEndian.PutUint64(push[0:], sa)
	binary.LittleEndian.PutUint64(push[8:], da)
	binary.LittleEndian.PutUint32(push[16:], words)
	binary.LittleEndian.PutUint32(push[20:], 1)
	require.NoError(t, seq.Dispatch(p, nil, push, [3]uint32{(words + 63) / 64, 1, 1}))
	require.NoError(t, seq.Submit(testContext(t)))
	require.NoError(t, seq.Close())
}

// TestGPUAssistedValidationReportsOutOfBounds proves that GPU-assisted
// validation is on: testdata/address.comp copying 64 words into a buffer
// of 63 writes one word past its end through a buffer device address,
// which the instrumented shader reports (and, instrumented, skips: the
// write lands nowhere, and in any case within the allocation's slack).
func TestGPUAssistedValidationReportsOutOfBounds(t *testing.T) {
	d := openGPUAVTest(t)
	require.True(t, d.inst.gpuAssisted, "GPU-assisted validation is off: %v", d.ValidationMessages())
	require.Empty(t, d.ValidationMessages(), "messages before any shader ran")
	const words = 64
	src := upload(t, d, u32bytes(make([]uint32, words)))
	dst, err := d.NewBuffer(4 * (words - 1))
	require.NoError(t, err)
	dispatchAddressCopy(t, d, src, dst, words)
	// One message per dispatch and instruction at most: the layer
	// reports the first invocation that failed the check.
	msgs := d.ValidationMessages()
	require.NotEmpty(t, msgs, "the out-of-bounds write went unreported")
	for _, m := range msgs {
		assert.Contains(t, m, "[UNASSIGNED-Device address out of bounds]", "messages: %q", msgs)
	}
	assert.Contains(t, msgs[0], "(63, 0, 0 )", "the invocation that wrote past the end")
	require.NoError(t, dst.Close())
	require.NoError(t, src.Close())
}

// TestGPUAssistedValidationSilentInBounds runs the same copy within the
// buffers' bounds under GPU-assisted validation: no message, and the
// instrumented shader still copies every word.
func TestGPUAssistedValidationSilentInBounds(t *testing.T) {
	d := openGPUAVTest(t)
	require.True(t, d.inst.gpuAssisted)
	const words = 200
	in := make([]uint32, words)
	for i := range in {
		in[i] = uint32(3 * i)
	}
	src := upload(t, d, u32bytes(in))
	dst, err := d.NewBuffer(4 * words)
	require.NoError(t, err)
	dispatchAddressCopy(t, d, src, dst, words)
	for i, v := range bytesU32(download(t, dst, 0, 4*words)) {
		require.Equal(t, in[i]+1, v, "word %d", i)
	}
	require.NoError(t, dst.Close())
	require.NoError(t, src.Close())
	require.NoError(t, d.Close())
	assert.Empty(t, d.ValidationMessages())
}

// TestGPUAssistedValidationInstanceNotShared opens devices with each
// validation setting in turn: each takes over the instance kept under its
// own setting and never one made under another (the layer fixes its
// features when the instance is created).
func TestGPUAssistedValidationInstanceNotShared(t *testing.T) {
	byMode := map[validationMode]*instance{}
	for _, tc := range []struct {
		name      string
		opts      Options
		sync, gpu bool
	}{
		{"sync", Options{Validation: true}, true, false},
		{"gpu-assisted", Options{GPUAssistedValidation: true}, true, true},
		{"both", Options{Validation: true, GPUAssistedValidation: true}, true, true},
		{"sync again", Options{Validation: true}, true, false},
		{"off", Options{}, false, false},
		{"gpu-assisted again", Options{GPUAssistedValidation: true}, true, true},
	} {
		tc.opts.PipelineCacheDir = "off"
		d, err := Open(tc.opts)
		require.NoError(t, err, tc.name)
		inst := d.inst
		assert.Equal(t, tc.sync, inst.syncValidation, tc.name)
		assert.Equal(t, tc.gpu, inst.gpuAssisted, tc.name)
		mode := validationModeOf(tc.opts)
		assert.Equal(t, mode, inst.key.validation, tc.name)
		for m, other := range byMode {
			if m != mode {
				assert.NotSame(t, other, inst, "%s: the instance of validation mode %d", tc.name, m)
			}
		}
		if prev, ok := byMode[mode]; ok {
			assert.Same(t, prev, inst, "%s: the instance kept under the same setting", tc.name)
		}
		byMode[mode] = inst
		require.NoError(t, d.Close())
		assert.Empty(t, d.ValidationMessages(), tc.name)
	}
}
