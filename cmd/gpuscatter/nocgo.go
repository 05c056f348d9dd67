//go:build !cgo

package main

import (
	"context"

	"github.com/gpuscatter/gpuscatter/ops"
)

// A build without cgo has no Vulkan backend: newGPUBackend stays nil, so
// --backend gpu fails with errNoGPUBackend and auto runs on the CPU; check,
// devices and plan say the same.

func deviceOf(ops.Backend) (deviceKind, bool) { return deviceKind{}, false }

func deviceTimed(b ops.Backend) ops.Backend { return b }

var checkCommand = noVulkanCommand("check", "qualify a Vulkan device (not in this build: it has no Vulkan)")

var devicesCommand = noVulkanCommand("devices", "list the Vulkan devices (not in this build: it has no Vulkan)")

var planCommand = noVulkanCommand("plan", "print a call's plan on the GPU (not in this build: it has no Vulkan)")

var warmCommand = noVulkanCommand("warm", "compile a call's GPU pipelines ahead of time (not in this build: it has no Vulkan)")

// noVulkanCommand is a command that needs Vulkan: it fails with
// errNoGPUBackend.
func noVulkanCommand(name, summary string) *command {
	return &command{name: name, summary: summary, operands: "...",
		run: func(context.Context, *cli, []string) error { return errNoGPUBackend }}
}

func estimatorOf(ops.Backend) estimator { return nil }

// deviceText is err's message: a build without Vulkan has no device
// errors to put in the command line's words.
func deviceText(err error) string { return err.Error() }

// deviceLostAdvice is empty: a build without Vulkan loses no device.
func deviceLostAdvice(error, bool) string { return "" }
