// Package vk is a small Vulkan compute runtime built on
// github.com/vulkan-go/vulkan. It knows nothing about tensors or operators:
// it opens a device, moves bytes in and out of storage buffers, builds
// compute pipelines from SPIR-V and records and submits command sequences.
//
// The vocabulary follows Kompute:
//
//   - Device (Open) is a logical device with one compute queue. It enables
//     every capability it knows that the hardware has (float atomics, int64
//     atomics, 8/16-bit storage, buffer device address, ...), reports them in
//     Capabilities, and keeps a VkPipelineCache that is loaded from and saved
//     to a file. Devices lists the physical devices without opening one.
//   - Buffer (Device.NewBuffer, Device.Acquire) is a storage buffer in
//     device-local memory. Where device-local memory is also host-visible
//     (integrated GPUs, CPU devices such as lavapipe) it is mapped and
//     Upload/Download are memory copies; otherwise they go through a staging
//     buffer. Acquire/Release keep a pool of buffers by size.
//   - Pipeline (Device.NewPipeline) is a compute pipeline whose storage
//     buffers are set 0, bindings 0..n-1, with optional push constants and
//     32-bit specialization constants 0..n-1. Pipelines are cached on the
//     Device.
//   - Sequence (Device.NewSequence) records Dispatch, Fill, Copy, Upload,
//     ReadBack and Timestamp commands, with a memory barrier between two
//     commands only where the later reads or writes a buffer the earlier
//     wrote, or writes one it read, and submits them: Start submits without
//     waiting, Wait waits on the fence while watching a context, Submit
//     does both. Upload and ReadBack move host bytes in the sequence's own
//     submission, through host-visible memory it keeps.
//
// # Loading Vulkan
//
// On Linux and other Unix systems the package opens the versioned loader
// library libvulkan.so.1 itself (the environment variable
// GPUSCATTER_VULKAN_LIBRARY names another file), so the unversioned
// development symlink is not needed at run time. With the build tag glfw, and
// by default on macOS and Windows, the loader is found through GLFW instead;
// GLFW needs a display, so on Linux run such a binary under xvfb-run when
// there is none. Loading happens once per process; its error is kept and
// returned (wrapping ErrNoDevice) by every later Devices or Open.
//
// Structures newer than the 1.1.88 headers that vulkan-go was generated from
// (feature and property structures of Vulkan 1.2 and of extensions, the
// debug messenger) are declared in gsvk.h and called through
// vkGetInstanceProcAddr.
//
// # A device of the program's own
//
// Adopt returns a Device on a VkDevice that the program created (External:
// its instance, physical device, device, queue and the features it was
// created with, from its VkDeviceCreateInfo or given): Capabilities holds
// only what was enabled, Close destroys only what the Device created and
// waits only for its own submissions, and External.Submit wraps each
// queue submission (the program's queue lock). RequestFeatures builds the
// Vulkan 1.2 feature chain a program chains onto its own vkCreateDevice.
// WrapBuffer takes a range of the program's VkBuffer as a Buffer it never
// frees (views of one VkBuffer are ordered as one by hazard tracking);
// RecordInto returns a Sequence that records into the program's command
// buffer and never submits it; StartWith submits with timeline semaphores.
//
// vulkan-go keeps one table of instance-level entry points per process
// (vulkan.InitInstance), which this package fills once, from the first
// instance it meets, its own or the program's. The Khronos loader hands
// out instance-independent trampolines there, so the table serves every
// instance, kept, adopted or destroyed since; a program that calls
// vulkan.Init itself resets the table until its own InitInstance, so it
// should do both before it shares its device.
//
// # Errors
//
// A failed Vulkan call is returned as a *ResultError naming the call and its
// VkResult. errors.Is maps results onto ErrDeviceLost, ErrOutOfMemory,
// ErrNoDevice and ErrUnsupported. Arguments that would make the driver fault
// (offsets, ranges, group counts, entry points, binding counts) are checked
// before any Vulkan call and reported as errors.
//
// # Lifetimes and concurrency
//
// Every object has an idempotent Close. Device.Close waits for the device to
// go idle and destroys whatever the caller left open, in reverse order of
// creation; Device.LiveObjects counts the Vulkan objects still alive. The
// VkInstance is the one exception: Close keeps it, and the next Open made
// under the same validation setting and loader environment (the VK_, MESA_,
// LP_, __GL_ ... variables) reuses it, because some drivers fail
// vkCreateInstance after a few dozen create and destroy cycles in one
// process (NVIDIA's 580 series, with VK_ERROR_INCOMPATIBLE_DRIVER after
// about twenty). ReleaseInstances destroys the kept instances. With
// KeepDevices on, Close keeps the device too, with its pipelines and
// nothing else, on the instance it gives back, and the next Open of the
// same physical device takes them over instead of compiling again
// (keep.go); ReleaseInstances destroys those as well. A
// Device may be used from several goroutines at once (queue submission and
// the pools are synchronised); a Sequence belongs to one goroutine at a time.
//
// # Validation
//
// Options.Validation enables VK_LAYER_KHRONOS_validation (Debian package
// vulkan-validationlayers) with a debug messenger; Device.ValidationMessages
// returns every warning and error it reported, including those raised while
// the device and instance are destroyed. Synchronization validation is on
// with it (VK_EXT_validation_features). Options.GPUAssistedValidation adds
// the layer's GPU-assisted validation: shaders are instrumented, and an
// access through a buffer device address outside every buffer is reported
// as a message ("UNASSIGNED-Device address out of bounds"). Instances are
// kept and reused per setting, never across two.
package vk
