//go:build cgo

package vk

import (
	"errors"
	"fmt"
	"time"

	vulkan "github.com/vulkan-go/vulkan"
)

// Sentinel errors. Errors returned by this package match them with errors.Is.
var (
	// ErrNoDevice reports that no usable Vulkan device exists: the loader
	// library is missing, no driver is installed, no physical device is
	// present, or the device selector matches none of them.
	ErrNoDevice = errors.New("vk: no Vulkan device")
	// ErrDeviceLost reports that the device was lost (driver reset, hang,
	// fault); the Device must be closed and opened again.
	ErrDeviceLost = errors.New("vk: device lost")
	// ErrOutOfMemory reports that the host or the device ran out of memory.
	ErrOutOfMemory = errors.New("vk: out of memory")
	// ErrUnsupported reports a request the device, the driver or the
	// installed layers cannot satisfy (size over a limit, missing layer or
	// extension, missing feature).
	ErrUnsupported = errors.New("vk: unsupported")
	// ErrPipelineCache reports that the pipeline cache file, or the index
	// of its pipelines beside it, could not be read or written, or was
	// refused (not a regular file, or larger than such a file holds). It
	// reaches only Options.Warn: the device works without the file.
	ErrPipelineCache = errors.New("vk: pipeline cache file")
	// ErrMeasuredFigures reports that the file of the device's measured
	// figures (Device.MeasuredFigures) could not be read or written, or
	// was refused. It reaches only Options.Warn: the figures are measured
	// again.
	ErrMeasuredFigures = errors.New("vk: measured figures file")
	// ErrCacheFolder reports that the default cache folder cannot be used
	// (there is no user cache folder, or it cannot be created), and which
	// folder the cache files go in instead, if any
	// (Options.PipelineCacheDir). It reaches only Options.Warn.
	ErrCacheFolder = errors.New("vk: cache folder")
	// ErrClosed reports the use of a Device, Buffer, Pipeline or Sequence
	// after Close.
	ErrClosed = errors.New("vk: use of closed object")
)

// SelectorError is a device selector (Options.Selector, or
// GPUSCATTER_DEVICE) that selects none of the devices there are: an index
// out of range, or a name that no device's contains. It matches
// ErrNoDevice; a caller that falls back where there is no device can tell
// it apart with errors.As, since the selector names a device the user
// wants.
type SelectorError struct {
	Selector string
	// Reason says why it selects none: ": index out of range" or " matches
	// no device name".
	Reason string
	// Devices lists the devices there are: `0 "llvmpipe (...)" (cpu), ...`.
	Devices string
}

// Error returns "vk: no Vulkan device: selector "x" matches no device name
// (devices: ...)".
func (e *SelectorError) Error() string {
	return fmt.Sprintf("%v: selector %q%s (devices: %s)", ErrNoDevice, e.Selector, e.Reason, e.Devices)
}

// Is reports whether target is ErrNoDevice.
func (e *SelectorError) Is(target error) bool { return target == ErrNoDevice }

// StallError is a wait for the device's work that saw no progress for the
// device's timeout (Options.DeviceTimeout, GPUSCATTER_DEVICE_TIMEOUT), or
// for the step the work announced where that is longer
// (Sequence.Expect): the device stopped answering. It matches
// ErrDeviceLost, and the device is lost from then on: every later call
// fails at once, and nothing the stalled work may use is destroyed until
// the device is known to be idle (Device.Close).
type StallError struct {
	// Timeout is how long the wait saw no progress.
	Timeout time.Duration
}

// Error returns "vk: the device stopped answering: ...".
func (e *StallError) Error() string {
	return fmt.Sprintf("vk: the device stopped answering: submitted work made no progress for %v (Options.DeviceTimeout, %s)",
		e.Timeout, EnvDeviceTimeout)
}

// Is reports whether target is ErrDeviceLost.
func (e *StallError) Is(target error) bool { return target == ErrDeviceLost }

// ResultError is a failed Vulkan call: Call names the entry point and Result
// is the VkResult it returned.
type ResultError struct {
	Call   string
	Result vulkan.Result
}

// Error returns "vk: <call>: <VK_RESULT_NAME>".
func (e *ResultError) Error() string {
	return fmt.Sprintf("vk: %s: %s", e.Call, ResultName(e.Result))
}

// Is maps the result code onto the package sentinels: VK_ERROR_DEVICE_LOST
// is ErrDeviceLost, VK_ERROR_OUT_OF_HOST_MEMORY and
// VK_ERROR_OUT_OF_DEVICE_MEMORY and VK_ERROR_MEMORY_MAP_FAILED (no host
// address space for the mapping) are ErrOutOfMemory,
// VK_ERROR_INCOMPATIBLE_DRIVER is ErrNoDevice, and missing layers,
// extensions, features or formats are ErrUnsupported.
func (e *ResultError) Is(target error) bool {
	switch target {
	case ErrDeviceLost:
		return e.Result == vulkan.ErrorDeviceLost
	case ErrOutOfMemory:
		return e.Result == vulkan.ErrorOutOfHostMemory || e.Result == vulkan.ErrorOutOfDeviceMemory ||
			e.Result == vulkan.ErrorMemoryMapFailed
	case ErrNoDevice:
		return e.Result == vulkan.ErrorIncompatibleDriver
	case ErrUnsupported:
		switch e.Result {
		case vulkan.ErrorLayerNotPresent, vulkan.ErrorExtensionNotPresent,
			vulkan.ErrorFeatureNotPresent, vulkan.ErrorFormatNotSupported:
			return true
		}
	}
	return false
}

// check turns a VkResult into nil or a *ResultError. Positive (non-error)
// results other than VK_SUCCESS are returned as errors too; callers that
// expect VK_TIMEOUT or VK_NOT_READY test for them before calling check.
func check(call string, r vulkan.Result) error {
	if r == vulkan.Success {
		return nil
	}
	return &ResultError{Call: call, Result: r}
}

var resultNames = map[vulkan.Result]string{
	0:           "VK_SUCCESS",
	1:           "VK_NOT_READY",
	2:           "VK_TIMEOUT",
	3:           "VK_EVENT_SET",
	4:           "VK_EVENT_RESET",
	5:           "VK_INCOMPLETE",
	-1:          "VK_ERROR_OUT_OF_HOST_MEMORY",
	-2:          "VK_ERROR_OUT_OF_DEVICE_MEMORY",
	-3:          "VK_ERROR_INITIALIZATION_FAILED",
	-4:          "VK_ERROR_DEVICE_LOST",
	-5:          "VK_ERROR_MEMORY_MAP_FAILED",
	-6:          "VK_ERROR_LAYER_NOT_PRESENT",
	-7:          "VK_ERROR_EXTENSION_NOT_PRESENT",
	-8:          "VK_ERROR_FEATURE_NOT_PRESENT",
	-9:          "VK_ERROR_INCOMPATIBLE_DRIVER",
	-10:         "VK_ERROR_TOO_MANY_OBJECTS",
	-11:         "VK_ERROR_FORMAT_NOT_SUPPORTED",
	-12:         "VK_ERROR_FRAGMENTED_POOL",
	-13:         "VK_ERROR_UNKNOWN",
	-1000069000: "VK_ERROR_OUT_OF_POOL_MEMORY",
	-1000072003: "VK_ERROR_INVALID_EXTERNAL_HANDLE",
	-1000161000: "VK_ERROR_FRAGMENTATION",
	-1000257000: "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS",
	1000297000:  "VK_PIPELINE_COMPILE_REQUIRED",
	-1000000000: "VK_ERROR_SURFACE_LOST_KHR",
	-1000000001: "VK_ERROR_NATIVE_WINDOW_IN_USE_KHR",
	1000001003:  "VK_SUBOPTIMAL_KHR",
	-1000001004: "VK_ERROR_OUT_OF_DATE_KHR",
	-1000003001: "VK_ERROR_INCOMPATIBLE_DISPLAY_KHR",
	-1000011001: "VK_ERROR_VALIDATION_FAILED_EXT",
	-1000012000: "VK_ERROR_INVALID_SHADER_NV",
	-1000174001: "VK_ERROR_NOT_PERMITTED_KHR",
	-1000255000: "VK_ERROR_FULL_SCREEN_EXCLUSIVE_MODE_LOST_EXT",
	1000268000:  "VK_THREAD_IDLE_KHR",
	1000268001:  "VK_THREAD_DONE_KHR",
	1000268002:  "VK_OPERATION_DEFERRED_KHR",
	1000268003:  "VK_OPERATION_NOT_DEFERRED_KHR",
	-1000338000: "VK_ERROR_COMPRESSION_EXHAUSTED_EXT",
}

// ResultName returns the VkResult enumerant name of r, for example
// "VK_ERROR_DEVICE_LOST", or "VkResult(n)" for a value it does not know.
func ResultName(r vulkan.Result) string {
	if s, ok := resultNames[r]; ok {
		return s
	}
	return fmt.Sprintf("VkResult(%d)", int32(r))
}
