//go:build cgo

package callerdev

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/vk"
)

// TestMessagesReportLeaks: the validation layer's messages reach
// Messages, those of the device's destruction included, so that the tests
// that adopt a Device and find no message prove the Backend left nothing
// on it.
func TestMessagesReportLeaks(t *testing.T) {
	d, err := Open(Options{Validation: true, Features: vk.Features{BufferDeviceAddress: true}})
	if err != nil {
		t.Fatalf("no usable Vulkan device (install mesa-vulkan-drivers and vulkan-validationlayers for lavapipe): %v", err)
	}
	b, err := d.NewBuffer(256, vk.WrapUsage)
	require.NoError(t, err)
	require.NoError(t, d.Check(b, 42))
	assert.NotZero(t, b.Address())
	assert.Empty(t, d.Messages(), "a correct use")
	b.Memory, b.Handle = nil, nil // leaked
	d.Close()
	msgs := strings.Join(d.Messages(), "\n")
	assert.Contains(t, msgs, "VkBuffer", "the leaked buffer is reported:\n%s", msgs)
}

// TestSynchronizationValidation: two fills of one buffer with no barrier
// between them are a write-after-write hazard, which synchronization
// validation reports to Messages.
func TestSynchronizationValidation(t *testing.T) {
	d, err := Open(Options{Validation: true, Features: vk.Features{BufferDeviceAddress: true}})
	if err != nil {
		t.Fatalf("no usable Vulkan device (install mesa-vulkan-drivers and vulkan-validationlayers for lavapipe): %v", err)
	}
	defer d.Close()
	b, err := d.NewBuffer(256, vk.WrapUsage)
	require.NoError(t, err)
	defer b.Close()
	c, err := d.NewCommands()
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Begin())
	c.Fill(b, 1)
	c.Fill(b, 2)
	require.NoError(t, c.End())
	require.NoError(t, c.SubmitWait())
	assert.Contains(t, strings.Join(d.Messages(), "\n"), "SYNC-HAZARD-WRITE-AFTER-WRITE")
}
