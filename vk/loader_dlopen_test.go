//go:build !glfw && !darwin && !windows && cgo

package vk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoaderIsVersionedLibrary(t *testing.T) {
	src, err := LoaderSource()
	require.NoError(t, err)
	assert.Equal(t, "libvulkan.so.1", src)
}

func TestMissingLoaderIsErrNoDevice(t *testing.T) {
	out, err := runChild(t, "devices", "GPUSCATTER_VULKAN_LIBRARY=/nonexistent/libvulkan.so.1")
	require.NoError(t, err, out)
	assert.Contains(t, out, "no Vulkan device")
	assert.Contains(t, out, "/nonexistent/libvulkan.so.1")
}
