//go:build cgo

package main

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/testdevice"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/vk"
)

// TestMain makes the commands the tests run in-process open the Vulkan
// backend with NoUnifiedMemory under GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1,
// as on a discrete GPU (package testdevice); a bad value of the variable
// stops the tests. The backends the tests open themselves take it through
// testGPUOptions.
func TestMain(m *testing.M) {
	staged, err := testdevice.NoUnifiedMemory()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if staged {
		newGPUBackend = func(ctx context.Context, s gpuSettings, oneCall bool) (ops.Backend, error) {
			opts := gpuOptions(s, oneCall)
			opts.NoUnifiedMemory = true
			b, err := openVulkan(opts)
			return b, selectorOf(s, err)
		}
	}
	// Each backend a test opens takes over the device and pipelines the
	// last one closed (gpu.KeepDevices), as check's paths do; they are
	// destroyed at the end, the validation layer silent.
	gpu.KeepDevices(true)
	// Run where there is no user cache folder (the kit runs its test
	// binaries under env -i), the commands would warn of the fallback
	// folder on every run: give them a cache folder of their own.
	// TestBinaryHostileCacheFolder sets its own environment.
	cacheDir := ""
	if _, err := os.UserCacheDir(); err != nil {
		dir, err := os.MkdirTemp("", "gpuscatter-test-cache-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		cacheDir = dir
		os.Setenv("XDG_CACHE_HOME", dir)
	}
	code := m.Run()
	if err := gpu.ReleaseInstances(); err != nil {
		fmt.Fprintln(os.Stderr, "ReleaseInstances:", err)
		if code == 0 {
			code = 1
		}
	}
	if cacheDir != "" {
		os.RemoveAll(cacheDir)
	}
	os.Exit(code)
}

// testGPUOptions returns opts with NoUnifiedMemory set where
// GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1 asks for it.
func testGPUOptions(t testing.TB, opts gpu.Options) gpu.Options {
	t.Helper()
	opts.NoUnifiedMemory = testdevice.Staged(t, opts.NoUnifiedMemory)
	return opts
}

// TestCommandsTakeTheTestSwitch: the backend a command opens has unified
// memory exactly when the device has it and
// GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1 does not ask for staging.
func TestCommandsTakeTheTestSwitch(t *testing.T) {
	b, err := newGPUBackend(context.Background(), gpuSettings{}, true)
	require.NoError(t, err)
	defer func() { assert.NoError(t, b.Close()) }()
	info, ok := deviceInfoOf(b)
	require.True(t, ok)
	devs, err := vk.Devices()
	require.NoError(t, err)
	require.Less(t, info.Index, len(devs))
	want := devs[info.Index].Capabilities.UnifiedMemory && !testdevice.Staged(t, false)
	assert.Equal(t, want, info.Capabilities.UnifiedMemory)
}
