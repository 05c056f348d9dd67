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

// TestKeptDevices: with KeepDevices on, Close keeps the device and its
// pipelines, counted by neither Device, and the next Open takes them
// over: the same VkPipeline, no compilation, every object still counted
// and destroyed once; a Pipeline of the closed device stays closed; with
// it off, Open takes over nothing. ReleaseInstances destroys what is
// kept, the validation layer silent.
func TestKeptDevices(t *testing.T) {
	KeepDevices(true)
	defer KeepDevices(false)
	require.NoError(t, ReleaseInstances())
	opts := Options{Validation: true, PipelineCacheDir: "off"}
	a, err := Open(opts)
	require.NoError(t, err)
	p := copyPipeline(t, a, 64)
	handle := p.pipeline
	require.NoError(t, a.Close())
	assert.Empty(t, a.LiveObjects(), "nothing is counted against a closed device")
	assert.True(t, p.isClosed(), "the closed device's pipelines are closed")
	assert.Nil(t, p.pipeline, "their handles moved to the kept device")

	b, err := Open(opts)
	require.NoError(t, err)
	live := b.LiveObjects()
	assert.Equal(t, 1, live["VkDevice"])
	assert.Equal(t, 1, live["VkPipeline"], "the kept pipeline is the new device's")
	q := copyPipeline(t, b, 64)
	assert.Equal(t, handle, q.pipeline, "the same VkPipeline, not compiled again")
	assert.Equal(t, 1, b.LiveObjects()["VkPipeline"])
	runCopy(t, b, q)
	other := copyPipeline(t, b, 32)
	assert.Equal(t, 2, b.LiveObjects()["VkPipeline"])
	require.NoError(t, other.Close(), "a pipeline taken over or new can be closed alone")
	require.NoError(t, b.Close())
	assert.Empty(t, b.LiveObjects())
	assert.Empty(t, b.ValidationMessages())

	// Off: the kept device is destroyed by the next Open, which makes its
	// own and compiles again.
	KeepDevices(false)
	c, err := Open(opts)
	require.NoError(t, err)
	assert.Zero(t, c.LiveObjects()["VkPipeline"], "nothing taken over while off")
	r := copyPipeline(t, c, 64)
	runCopy(t, c, r)
	require.NoError(t, c.Close())
	assert.Empty(t, c.ValidationMessages())

	// A lost device is never kept.
	KeepDevices(true)
	d, err := Open(opts)
	require.NoError(t, err)
	copyPipeline(t, d, 64)
	d.lost.Store(true)
	require.ErrorIs(t, d.Close(), ErrDeviceLost)
	e, err := Open(opts)
	require.NoError(t, err)
	assert.Zero(t, e.LiveObjects()["VkPipeline"], "a lost device's pipelines are not taken over")
	copyPipeline(t, e, 64)
	require.NoError(t, e.Close())
	require.NoError(t, ReleaseInstances(), "the kept device and pipelines go, the layer silent")
	assert.Zero(t, idleInstanceCount())
}

// runCopy runs p (the copy kernel) on d over 256 words and checks them.
func runCopy(t *testing.T, d *Device, p *Pipeline) {
	t.Helper()
	const n = 256
	in := make([]uint32, n)
	for i := range in {
		in[i] = uint32(3*i + 1)
	}
	src := upload(t, d, u32bytes(in))
	dst, err := d.NewBuffer(4 * n)
	require.NoError(t, err)
	s, err := d.NewSequence()
	require.NoError(t, err)
	local := p.Spec().LocalSize[0]
	require.NoError(t, s.Dispatch(p, []Binding{{Buffer: src}, {Buffer: dst}}, push(n, 2), [3]uint32{(n + local - 1) / local, 1, 1}))
	require.NoError(t, s.Submit(testContext(t)))
	for i, v := range bytesU32(download(t, dst, 0, 4*n)) {
		require.Equal(t, in[i]+2, v, "element %d", i)
	}
	require.NoError(t, s.Close())
	require.NoError(t, src.Close())
	require.NoError(t, dst.Close())
}
