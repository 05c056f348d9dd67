//go:build cgo

package vk_test

import (
	"context"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/internal/callerdev"
	"github.com/gpuscatter/gpuscatter/vk"
)

// adopted returns a Device adopting a program's own device (validation
// on, its messages checked once the program's device is destroyed) and a
// buffer of the program's, filled with 0x11.
func adopted(t *testing.T) (*vk.Device, *callerdev.Device, *callerdev.Buffer) {
	t.Helper()
	pd, err := callerdev.Open(callerdev.Options{Validation: true, Features: vk.Features{BufferDeviceAddress: true, TimelineSemaphore: true}})
	if err != nil {
		t.Fatalf("no usable Vulkan device (install mesa-vulkan-drivers and vulkan-validationlayers for lavapipe): %v", err)
	}
	t.Cleanup(func() {
		pd.Close()
		assert.Empty(t, pd.Messages(), "the program's validation messages")
	})
	d, err := vk.Adopt(vk.External{Instance: unsafe.Pointer(pd.Instance), PhysicalDevice: unsafe.Pointer(pd.Physical),
		Device: unsafe.Pointer(pd.Device), QueueFamily: pd.Family, APIVersion: pd.APIVersion, CreateInfo: pd.CreateInfo()},
		vk.Options{PipelineCacheDir: "off"})
	require.NoError(t, err)
	assert.True(t, d.External())
	assert.True(t, d.DeviceAddresses())
	assert.True(t, d.Timelines())
	assert.Nil(t, d.ValidationMessages(), "the program's instance reports to the program")
	buf, err := pd.NewBuffer(1024, vk.WrapUsage)
	require.NoError(t, err)
	t.Cleanup(buf.Close)
	for i := range buf.Bytes {
		buf.Bytes[i] = 0x11
	}
	t.Cleanup(func() {
		require.NoError(t, d.Close())
		assert.Empty(t, d.LiveObjects())
		assert.NoError(t, pd.Check(buf, 0x77), "the program's buffer after Close")
	})
	return d, pd, buf
}

// TestWrappedViews fills and copies views at offsets of the program's
// buffer, through a Sequence of the adopted Device and one recorded into
// the program's command buffer, and checks every byte of the buffer.
func TestWrappedViews(t *testing.T) {
	d, pd, buf := adopted(t)
	a, err := d.WrapBuffer(buf.Handle64(), 256, 128, vk.WrapUsage)
	require.NoError(t, err)
	b, err := d.WrapBuffer(buf.Handle64(), 512, 128, vk.WrapUsage)
	require.NoError(t, err)
	h, off := a.Handle()
	assert.Equal(t, [2]uint64{buf.Handle64(), 256}, [2]uint64{h, off})
	addr, err := a.Address()
	require.NoError(t, err)
	assert.Equal(t, buf.Address()+256, addr)

	seq, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, seq.Fill(a, 0, 0, 0xa5a5a5a5)) // to the view's end
	require.NoError(t, seq.Fill(b, 0, 64, 0x5a5a5a5a))
	assert.Equal(t, 1, seq.Barriers(), "views of one VkBuffer are one buffer to the barriers")
	require.NoError(t, seq.Copy(a, 0, b, 64, 64))
	assert.Equal(t, 2, seq.Barriers())
	require.NoError(t, seq.Submit(context.Background()))
	require.NoError(t, seq.Close())
	for i, c := range buf.Bytes {
		want := byte(0x11)
		switch {
		case (i >= 256 && i < 384) || (i >= 576 && i < 640):
			want = 0xa5
		case i >= 512 && i < 576:
			want = 0x5a
		}
		if c != want {
			t.Fatalf("byte %d is %#x, want %#x", i, c, want)
		}
	}

	// The same into the program's command buffer, which it submits.
	cmd, err := pd.NewCommands()
	require.NoError(t, err)
	defer cmd.Close()
	require.NoError(t, cmd.Begin())
	cmd.BarrierBefore()
	rec, err := d.RecordInto(cmd.Pointer())
	require.NoError(t, err)
	assert.True(t, rec.Foreign())
	require.NoError(t, rec.Fill(b, 0, 64, 0x3c3c3c3c))
	require.ErrorContains(t, rec.Submit(context.Background()), "the caller submits it")
	require.NoError(t, rec.Finish())
	cmd.BarrierAfter()
	require.NoError(t, cmd.End())
	before := d.Counters()
	require.NoError(t, cmd.SubmitWait())
	assert.Zero(t, d.Counters().Sub(before).Submits)
	require.NoError(t, rec.Close())
	for i := 512; i < 576; i++ {
		require.Equal(t, byte(0x3c), buf.Bytes[i], "byte %d", i)
	}
	assert.Equal(t, byte(0xa5), buf.Bytes[576])
	require.NoError(t, a.Close())
	require.NoError(t, b.Release())
}

// TestWrapRefusals: what WrapBuffer refuses, each named.
func TestWrapRefusals(t *testing.T) {
	d, _, buf := adopted(t)
	for _, tc := range []struct {
		name                 string
		handle, offset, size uint64
		usage                uint32
		want                 string
	}{
		{"null", 0, 0, 64, vk.WrapUsage, "VK_NULL_HANDLE"},
		{"empty", buf.Handle64(), 0, 0, vk.WrapUsage, "size is 0"},
		{"unaligned", buf.Handle64(), 2, 64, vk.WrapUsage, "multiples of 4"},
		{"usage", buf.Handle64(), 0, 64, vk.UsageStorageBuffer, "lacks usage VK_BUFFER_USAGE_TRANSFER_SRC_BIT|VK_BUFFER_USAGE_TRANSFER_DST_BIT|VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT"},
		{"beyond", buf.Handle64(), 1024, 64, vk.WrapUsage, "beyond the buffer"},
	} {
		_, err := d.WrapBuffer(tc.handle, tc.offset, tc.size, tc.usage)
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
	}
}
