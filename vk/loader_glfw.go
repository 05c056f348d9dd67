//go:build (glfw || darwin || windows) && cgo

package vk

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/go-gl/glfw/v3.3/glfw"
)

// platformGetInstanceProcAddr initialises GLFW, which finds the platform's
// Vulkan loader, and returns GLFW's vkGetInstanceProcAddr. GLFW is never
// terminated: terminating it would unload the loader library that every
// function pointer points into.
func platformGetInstanceProcAddr() (unsafe.Pointer, string, error) {
	if err := glfw.Init(); err != nil {
		return nil, "", fmt.Errorf("glfw.Init: %v", err)
	}
	if !glfw.VulkanSupported() {
		return nil, "", errors.New("GLFW found no Vulkan loader (GLFW needs a display: on Linux set DISPLAY or run under xvfb-run)")
	}
	fn := glfw.GetVulkanGetInstanceProcAddress()
	if fn == nil {
		return nil, "", errors.New("GLFW returned no vkGetInstanceProcAddr")
	}
	return fn, "glfw", nil
}
