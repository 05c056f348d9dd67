// Package callerdev is a program's own Vulkan device, made with
// github.com/vulkan-go/vulkan directly and not through package vk: its
// instance (with the validation layer, synchronization validation and a
// messenger of its own), device with the features it chooses, compute
// queue, command buffers, host-visible buffers with device addresses and
// timeline semaphores. The tests of package gpu adopt it (OpenExternal)
// as a program would, and use it after the Backend's Close.
package callerdev
