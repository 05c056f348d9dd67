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
	assert.Equal(t, "vk: the device stopped answering: submitted work did not complete within 3s (Options.DeviceTimeout, GPUSCATTER_DEVICE_TIMEOUT)", err.Error())
}
