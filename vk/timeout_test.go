//go:build cgo

package vk

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeviceTimeoutSetting: Options.DeviceTimeout, then
// GPUSCATTER_DEVICE_TIMEOUT, then DefaultDeviceTimeout; a bad value of
// either is an error naming it, and Open fails with it before touching a
// device. DeviceTimeoutFromEnv gives the variable's part: its timeout, or
// Open's error.
func TestDeviceTimeoutSetting(t *testing.T) {
	for _, c := range []struct {
		opt  time.Duration
		env  string
		want time.Duration
		err  string
	}{
		{0, "", DefaultDeviceTimeout, ""},
		{0, "90s", 90 * time.Second, ""},
		{0, " 5m ", 5 * time.Minute, ""},
		{2 * time.Second, "90s", 2 * time.Second, ""},
		{0, "90", 0, `vk: GPUSCATTER_DEVICE_TIMEOUT="90": want a positive duration such as 90s or 5m`},
		{0, "0s", 0, `vk: GPUSCATTER_DEVICE_TIMEOUT="0s": want a positive duration such as 90s or 5m`},
		{0, "-1s", 0, `vk: GPUSCATTER_DEVICE_TIMEOUT="-1s": want a positive duration such as 90s or 5m`},
		{0, "0", 0, `vk: GPUSCATTER_DEVICE_TIMEOUT="0": want a positive duration such as 90s or 5m`},
		{0, "abc", 0, `vk: GPUSCATTER_DEVICE_TIMEOUT="abc": want a positive duration such as 90s or 5m`},
		{0, "NaN", 0, `vk: GPUSCATTER_DEVICE_TIMEOUT="NaN": want a positive duration such as 90s or 5m`},
		{-time.Second, "", 0, "vk: Options.DeviceTimeout -1s: want a positive duration"},
	} {
		t.Setenv(EnvDeviceTimeout, c.env)
		got, err := deviceTimeout(c.opt)
		if c.opt == 0 {
			env, envErr := DeviceTimeoutFromEnv()
			assert.Equal(t, got, env, "%q", c.env)
			assert.Equal(t, err, envErr, "%q", c.env)
		}
		if c.err != "" {
			assert.EqualError(t, err, c.err, "%v %q", c.opt, c.env)
			d, oerr := Open(Options{DeviceTimeout: c.opt})
			assert.Nil(t, d)
			assert.EqualError(t, oerr, c.err, "Open")
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%v %q", c.opt, c.env)
	}
}

// TestStallError: the error of a wait past the timeout matches
// ErrDeviceLost and says what happened and what sets the bound.
func TestStallError(t *testing.T) {
	err := error(&StallError{Timeout: 3 * time.Second})
	assert.True(t, errors.Is(err, ErrDeviceLost))
	assert.False(t, errors.Is(err, ErrOutOfMemory))
	assert.Equal(t, "vk: the device stopped answering: submitted work made no progress for 3s (Options.DeviceTimeout, GPUSCATTER_DEVICE_TIMEOUT)", err.Error())
}

// spinner records dispatches of the spin kernel, calibrated to take about
// a chosen time each on the test's device.
type spinner struct {
	t      *testing.T
	d      *Device
	p      *Pipeline
	out    *Buffer
	groups uint32 // workgroups of a dispatch that took about took
	took   time.Duration
}

// spinMaxGroups bounds a spin dispatch: llvmpipe stops every loop after
// 65535 iterations, so a dispatch is made slow by its workgroups.
const spinIters, spinMaxGroups = 60_000, 1 << 16

func newSpinner(t *testing.T, d *Device, atLeast time.Duration) *spinner {
	t.Helper()
	out, err := d.NewBuffer(4 * 64 * spinMaxGroups)
	require.NoError(t, err)
	p, err := d.NewPipeline(PipelineSpec{SPIRV: spinSPV, Bindings: 1, PushConstantSize: 8})
	require.NoError(t, err)
	sp := &spinner{t: t, d: d, p: p, out: out, groups: 1}
	s, err := d.NewSequence()
	require.NoError(t, err)
	defer s.Close()
	for {
		require.NoError(t, s.Reset())
		sp.record(s, sp.groups)
		start := time.Now()
		require.NoError(t, s.Submit(testContext(t)))
		sp.took = time.Since(start)
		if sp.took >= atLeast || sp.groups >= spinMaxGroups/64 {
			break
		}
		sp.groups *= 2
	}
	// The pace is the fastest of three runs: the first pays for warming
	// up, and a loaded moment slows any one run down. Work sized from it
	// lasts at least as long as planned.
	for range 2 {
		start := time.Now()
		require.NoError(t, s.Submit(testContext(t)))
		sp.took = min(sp.took, time.Since(start))
	}
	t.Logf("%d workgroups of spin take %v", sp.groups, sp.took)
	return sp
}

// record records one spin dispatch of groups workgroups into s.
func (sp *spinner) record(s *Sequence, groups uint32) {
	require.NoError(sp.t, s.Dispatch(sp.p, []Binding{{Buffer: sp.out}}, push(64*groups, spinIters), [3]uint32{groups, 1, 1}))
}

// TestWatchdogSeesProgress: the device timeout bounds a step without
// progress, not the work. A Sequence of marked steps, each well within
// the timeout, completes however long it is in all; a step announced by
// Expect completes past the timeout; the same work without marks is a
// stall, reported within the timeout (plus a poll).
func TestWatchdogSeesProgress(t *testing.T) {
	const timeout = 300 * time.Millisecond
	d, err := Open(Options{Validation: true, PipelineCacheDir: "off", DeviceTimeout: timeout})
	require.NoError(t, err)
	var closeErr error
	t.Cleanup(func() {
		// The unmarked run stalled the device: Close waits for it to go
		// idle, then releases everything.
		assert.ErrorIs(t, closeErr, ErrDeviceLost)
		assert.Empty(t, d.ValidationMessages(), "validation messages")
		assert.Empty(t, d.LiveObjects(), "live Vulkan objects after Close")
	})
	// Steps of about a fifteenth of the timeout, so that a loaded
	// machine slowing one down several times over is no stall.
	sp := newSpinner(t, d, 20*time.Millisecond)
	s, err := d.NewSequence()
	require.NoError(t, err)

	// Marked steps of about a fifteenth of the timeout each, more than two
	// timeouts in all (the count doubles until they are).
	var all time.Duration
	steps := int(3*timeout/sp.took) + 2
	for {
		require.NoError(t, s.Reset())
		for i := 0; i < steps; i++ {
			sp.record(s, sp.groups)
			require.NoError(t, s.Mark())
		}
		assert.Equal(t, steps, s.Marks())
		start := time.Now()
		require.NoError(t, s.Submit(testContext(t)), "%d marked steps of about %v", steps, sp.took)
		all = time.Since(start)
		t.Logf("%d marked steps took %v under a %v timeout", steps, all, timeout)
		if all > 2*timeout || steps >= 1024 {
			break
		}
		steps *= 2
	}
	require.Greater(t, all, 2*timeout)
	// Twice over: a resubmitted Sequence starts its marks again.
	require.NoError(t, s.Submit(testContext(t)))
	// One step of about eight timeouts, from the marked run's pace (so
	// that it still outlasts the timeout when the machine runs it faster).
	long := min(uint32(float64(sp.groups*uint32(steps))*float64(8*timeout)/float64(all))+1, spinMaxGroups)

	// One step past the timeout, announced.
	require.NoError(t, s.Reset())
	assert.Zero(t, s.Marks())
	sp.record(s, long)
	s.Expect(40 * timeout)
	start := time.Now()
	require.NoError(t, s.Submit(testContext(t)), "an announced step")
	announced := time.Since(start)
	t.Logf("an announced step took %v", announced)

	// The same step unannounced and unmarked: a stall.
	require.NoError(t, s.Reset())
	sp.record(s, long)
	start = time.Now()
	err = s.Submit(testContext(t))
	stalled := time.Since(start)
	var se *StallError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, timeout, se.Timeout)
	assert.GreaterOrEqual(t, stalled, timeout)
	assert.Less(t, stalled, timeout+time.Second, "the stall is reported within the timeout")
	require.NoError(t, s.Close())
	// Once the work is done (it took announced when it was announced),
	// Close finds the device idle.
	time.Sleep(2*announced + timeout)
	closeErr = d.Close()
}

// TestStallKeepsObjects: after a stall, nothing the device may still use
// is destroyed. Closing the buffer, the Sequence and the device while
// the stalled work runs leaves their objects alive (Close says so), and
// the work completes without faulting. (TestWatchdogSeesProgress closes
// a stalled device once its work is done: then Close releases
// everything.)
func TestStallKeepsObjects(t *testing.T) {
	const timeout = 300 * time.Millisecond
	d, err := Open(Options{Validation: true, PipelineCacheDir: "off", DeviceTimeout: timeout})
	require.NoError(t, err)
	sp := newSpinner(t, d, 40*time.Millisecond)
	s, err := d.NewSequence()
	require.NoError(t, err)
	// At least eight timeouts of work at the fastest pace seen.
	groups := min(sp.groups*uint32(8*timeout/sp.took+1), spinMaxGroups)
	sp.record(s, groups)
	require.NoError(t, s.Start(testContext(t)))
	start := time.Now()
	require.ErrorIs(t, s.Wait(testContext(t)), ErrDeviceLost)
	t.Logf("stalled after %v", time.Since(start))
	require.ErrorIs(t, s.Submit(testContext(t)), ErrDeviceLost, "a stalled device is lost to later calls")

	require.NoError(t, sp.out.Close())
	require.NoError(t, s.Close())
	live := d.LiveObjects()
	assert.Equal(t, 1, live["VkCommandPool"], "the Sequence's pool is kept: %v", live)
	assert.NotZero(t, live["VkBuffer"], "the buffer is kept")
	err = d.Close()
	require.ErrorIs(t, err, ErrDeviceLost)
	assert.Contains(t, err.Error(), "left its objects alive until the process ends")
	assert.NotEmpty(t, d.LiveObjects(), "the objects are left alive")
	// The work goes on using them: this process would fault if they had
	// been freed.
	time.Sleep(2*time.Duration(float64(sp.took)*float64(groups)/float64(sp.groups)) + 300*time.Millisecond)
}
