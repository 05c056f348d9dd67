//go:build cgo

package vk

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	vulkan "github.com/vulkan-go/vulkan"
)

// openHazardTest opens the default device with validation, like openTest,
// but leaves the validation messages to the test.
func openHazardTest(t *testing.T) *Device {
	t.Helper()
	d, err := Open(Options{Validation: true, PipelineCacheDir: "off"})
	require.NoError(t, err, "a Vulkan device is required; on Debian install mesa-vulkan-drivers (lavapipe) and vulkan-validationlayers")
	t.Cleanup(func() {
		assert.NoError(t, d.Close())
		assert.Empty(t, d.LiveObjects(), "live Vulkan objects after Close")
	})
	return d
}

// recordUnordered records fill commands of value into s with no barrier
// between them or before them, bypassing the sequence's hazard tracking:
// a deliberate hazard for the validation layer to find.
func recordUnordered(t *testing.T, s *Sequence, b *Buffer, values ...uint32) {
	t.Helper()
	require.NoError(t, s.begin())
	for _, v := range values {
		vulkan.CmdFillBuffer(s.cmd, b.handle, 0, vulkan.DeviceSize(b.alloc), v)
		s.commands++
	}
}

func syncHazards(msgs []string) []string {
	var out []string
	for _, m := range msgs {
		if strings.Contains(m, "SYNC-HAZARD") {
			out = append(out, m)
		}
	}
	return out
}

// TestSyncValidationReportsHazard proves that synchronization validation is
// on: two transfer writes to the same buffer with no barrier between them
// are reported as a write-after-write hazard.
func TestSyncValidationReportsHazard(t *testing.T) {
	d := openHazardTest(t)
	require.True(t, d.inst.syncValidation, "synchronization validation is off: %v", d.ValidationMessages())
	b, err := d.NewBuffer(256)
	require.NoError(t, err)
	s, err := d.NewSequence()
	require.NoError(t, err)
	recordUnordered(t, s, b, 1, 2)
	require.NoError(t, s.Submit(testContext(t)))
	hazards := syncHazards(d.ValidationMessages())
	require.NotEmpty(t, hazards, "no hazard reported; messages: %v", d.ValidationMessages())
	assert.Contains(t, hazards[0], "SYNC-HAZARD-WRITE-AFTER-WRITE")
	require.NoError(t, s.Close())
	require.NoError(t, b.Close())
}

// TestSyncValidationSilentWithBarriers records the same two writes through
// the sequence, which orders them, and a copy of the result: no message.
func TestSyncValidationSilentWithBarriers(t *testing.T) {
	d := openTest(t, Options{})
	require.True(t, d.inst.syncValidation)
	b, err := d.NewBuffer(256)
	require.NoError(t, err)
	c, err := d.NewBuffer(256)
	require.NoError(t, err)
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Fill(b, 0, 0, 1))
	require.NoError(t, s.Fill(b, 0, 0, 2))
	require.NoError(t, s.Copy(b, 0, c, 0, 256))
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, []uint32{2, 2, 2, 2}, bytesU32(download(t, c, 0, 16)))
	assert.Empty(t, d.ValidationMessages())
}
