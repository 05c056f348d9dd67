//go:build cgo

package vk

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInstancesAreReused opens and closes devices many times in a row, with
// validation and without, and lists the devices between: at most one
// instance is created per setting, however many cycles (a driver that
// fails after a few dozen vkCreateInstance cycles then never meets its
// limit), and each device still ends with no live object and no message.
func TestInstancesAreReused(t *testing.T) {
	for _, validation := range []bool{true, false} {
		before := instancesCreated.Load()
		for i := 0; i < 40; i++ {
			d, err := Open(Options{Validation: validation, PipelineCacheDir: "off"})
			require.NoError(t, err)
			require.NoError(t, d.Close())
			assert.Empty(t, d.ValidationMessages(), "validation messages")
			assert.Empty(t, d.LiveObjects(), "live Vulkan objects after Close")
			if !validation {
				_, err := Devices()
				require.NoError(t, err)
			}
		}
		assert.LessOrEqual(t, instancesCreated.Load()-before, int64(1), "instances created in 40 cycles, validation %v", validation)
	}
}

// TestInstancesFollowTheEnvironment: a change of the loader's environment
// between two Opens gets a new instance, as a fresh process would (the
// drivers and layers found depend on it), and changing it back reuses the
// instance made under it.
func TestInstancesFollowTheEnvironment(t *testing.T) {
	cycle := func() {
		d, err := Open(Options{PipelineCacheDir: "off"})
		require.NoError(t, err)
		require.NoError(t, d.Close())
	}
	cycle()
	before := instancesCreated.Load()
	t.Setenv("VK_LOADER_LAYERS_DISABLE", "~implicit~")
	cycle()
	cycle()
	assert.Equal(t, before+1, instancesCreated.Load(), "a new environment makes one new instance")
	require.NoError(t, os.Unsetenv("VK_LOADER_LAYERS_DISABLE"))
	cycle()
	assert.Equal(t, before+1, instancesCreated.Load(), "the first environment's instance is reused")
}

// TestReusedInstanceLogs: the messages a device collected stay with it
// after Close, and the next device on the same instance starts from the
// messages of the instance's creation alone.
func TestReusedInstanceLogs(t *testing.T) {
	a, err := Open(Options{Validation: true, PipelineCacheDir: "off"})
	require.NoError(t, err)
	inst := a.inst
	a.inst.log.add("planted message")
	require.NoError(t, a.Close())
	assert.Equal(t, []string{"planted message"}, a.ValidationMessages())
	b, err := Open(Options{Validation: true, PipelineCacheDir: "off"})
	require.NoError(t, err)
	assert.Same(t, inst, b.inst, "the idle instance is reused")
	assert.Empty(t, b.ValidationMessages())
	require.NoError(t, b.Close())
	assert.Equal(t, []string{"planted message"}, a.ValidationMessages())
	assert.Empty(t, b.ValidationMessages())
	// Memory reads no budget through an instance given back.
	assert.NotPanics(t, func() { a.Memory() })
}

// TestReleaseInstances destroys the kept instances, with the validation
// layer silent, and a later Open makes a new one.
func TestReleaseInstances(t *testing.T) {
	d, err := Open(Options{Validation: true, PipelineCacheDir: "off"})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	require.Positive(t, idleInstanceCount())
	require.NoError(t, ReleaseInstances())
	assert.Zero(t, idleInstanceCount())
	before := instancesCreated.Load()
	d, err = Open(Options{Validation: true, PipelineCacheDir: "off"})
	require.NoError(t, err)
	assert.Equal(t, before+1, instancesCreated.Load())
	require.NoError(t, d.Close())
}
