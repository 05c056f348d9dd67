// Package gpu runs the scatter operators on a Vulkan device. Backend
// implements ops.Backend and gives the results of the CPU reference
// (package cpuref) bit for bit, except that float sum, sub, prod and mean
// reductions may differ in rounding unless Options.Deterministic is set.
//
// The package is for a Go program that wants the operators of package ops
// on a GPU, or any Vulkan device, rather than the CPU: as an ops.Backend,
// with host tensors in and out of every call (ops.Run, Execute); with
// resident tensors that stay in device memory across calls (Tensor,
// Batch), as a runtime that keeps its tensors on the device does; with the
// figures to plan around the device's memory before a call (Needs,
// CheckResident); and with those to see where a call's time went
// (LastStats).
//
// The device needs buffer device addresses (Vulkan 1.2); any device type
// will do, Mesa's CPU driver lavapipe included. Where it lacks 64-bit
// integers in shaders (shaderInt64) the kernels run their 32-bit baseline
// variants. Open fails with an error wrapping
// ops.ErrNoDevice when there is no device (or the build has no cgo) and
// ops.ErrUnsupported when the device lacks a feature.
//
// Open a Backend, run requests on it with ops.Run (or prepared plans with
// Execute), and Close it. Calls are serialised; a Backend may be shared by
// several goroutines.
//
//	b, err := gpu.Open(gpu.Options{})
//	if err != nil {
//		return err // errors.Is(err, ops.ErrNoDevice): run on cpuref instead
//	}
//	defer b.Close()
//	out, err := ops.Run(ctx, b, req)
//
// A call that needs more device memory than is free is refused before any
// work with an error wrapping ops.ErrOutOfMemory; Backend.Needs gives the
// figure from a plan's shapes, with the passes, dispatches and device
// traffic of the call, and PlanFor gives the same for a device described
// by one element of vk.Devices, without the device.
//
// Float sum, sub, prod and mean fold a target's updates on device atomics,
// in an order the device picks: the results may differ from cpuref's in
// rounding, within the bound DESIGN.md states. With Options.Deterministic
// they fold in index order, bit-identical to cpuref, through a sort on the
// device (slower). Plans of at most 4096 updates, and Element plans with
// many columns, fold in order in every mode; integer, bool, min and max
// reductions are exact (min and max NaN bits included).
//
// Execute moves the inputs to the device and the output back on every
// call. A Tensor (Backend.Upload, Backend.NewTensor) instead stays in
// device memory until its Close; a Batch records Calls on resident
// tensors (in place when Out is Data), each seeing the results of those
// before it, and Submit sends them to the device in one submission and
// returns without waiting: the Submission's Wait gives the outcome, and a
// host read of a tensor waits too. Backend.Run is a batch of one that
// waits. Strings cannot be resident. Backend.ReadTensor, Tensor.CopyFrom and Tensor.CopyTo move a
// tensor's payload between the device and an io.Reader or io.Writer (a
// file's body) without a host copy of it.
//
// A program that owns its Vulkan device keeps it: OpenExternal adopts the
// program's instance, device and queue (External; Requirements lists what
// the device must enable and gives the feature chain for its
// vkCreateDevice), WrapBuffer takes the program's VkBuffers as Tensors
// the Backend never frees (VkBuffer and DeviceAddress give any Tensor's
// buffer back), Batch.Record records calls into the program's command
// buffer with no submission of the Backend's (Recording.Result reads the
// outcome after the program's fence), and Batch.SubmitWith orders a
// submission with the program's timeline semaphores. Close destroys only
// what the Backend created.
//
// When the device fails during a call, the call returns an *ops.Error
// naming the operator (or, for a batch, "batch call k of n" or the
// batch's operators) whose chain holds the sentinels of ops and vk and
// the Vulkan call that failed:
//
//   - out of memory at an allocation, a bind, a mapping, a pipeline's
//     compilation or a submission: ops.ErrOutOfMemory. Nothing is left half
//     done: the Backend works, and the next call computes.
//   - lost (VK_ERROR_DEVICE_LOST from any call): ops.ErrDeviceLost. Every
//     later call fails at once with it; Close releases every Vulkan object
//     and returns it; open a new Backend. For calls on resident tensors the
//     error adds that the tensors are lost with the device.
//   - no answer: no call of a submission completes for
//     Options.DeviceTimeout (or GPUSCATTER_DEVICE_TIMEOUT; a minute by
//     default; longer for a call whose own work is large, see the
//     option): the wait fails with ops.ErrDeviceLost ("the device
//     stopped answering") and the device counts as lost. A long batch is
//     no stall while its calls keep completing. Nothing the stalled work
//     may use (memory, pipelines, command buffers) is destroyed while it
//     may run: Close waits at most the timeout again for the device to go
//     idle, and otherwise leaves the objects alive until the process
//     ends, and says so.
//
// The host inputs of Execute are never changed; its out may hold part of
// a result after an error. No goroutine outlives the call or Close. A
// program that runs host calls can run the same plan on cpuref after
// either sentinel, as `gpuscatter run --backend auto` does.
//
// How the backend works (chunk tables, passes, owner words, the sort, push
// constants, workgroup accumulation, the rounding bound) is in DESIGN.md
// beside this package: https://github.com/gpuscatter/gpuscatter/blob/main/gpu/DESIGN.md
package gpu
