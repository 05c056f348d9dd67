// Package gpu runs the scatter operators on any Vulkan device: Backend
// implements ops.Backend on package vk and the kernels of package shaders,
// and gives the CPU reference's results (package cpuref) bit for bit,
// except that float sum, sub, prod and mean reductions outside
// deterministic mode may differ in rounding (see "Rounding of float
// reductions on the atomics"). It executes ops.Plan and re-derives no
// operator rule.
//
// # Device requirements
//
// Kernels reach tensors through buffer device addresses (Vulkan 1.2
// bufferDeviceAddress, GL_EXT_buffer_reference) and compute offsets in 64
// bits (shaderInt64); Open fails with an error wrapping
// ops.ErrUnsupported on a device without them. No 8- or 16-bit storage
// feature is needed: indices are read, and 1- and 2-byte elements written,
// through 32-bit words.
//
// # Tensors on the device
//
// Every tensor is a list of chunks, each one pooled buffer of 2^shift bytes
// (the largest power of two within the device's maxMemoryAllocationSize,
// or Options.MaxAllocationBytes); a kernel finds byte offset o of a tensor
// at table[o>>shift] + (o & (2^shift-1)), table being the tensor's list of
// chunk addresses. So neither maxStorageBufferRange nor the allocation
// limit bounds a tensor. When every tensor of a call fits in one chunk the
// kernels skip the table lookups. Data is uploaded straight into the
// output's chunks; strings move as 32-bit handles (data's 0..n-1, then
// updates') and are mapped back on the host. Buffers return to a pool and
// are reused by later calls (Options.MaxPoolBytes).
//
// One small parameter buffer per call holds the plan's parameters, the
// chunk tables and the error word; its hot first 16 words also travel as
// push constants (128 bytes in all, the least every device offers).
// The call's flags (which tensors exist, whether updates collide, whether
// every tensor is one chunk, ...) are a specialization constant: each
// kernel's pipeline is built per set of flags, so the driver drops the
// code of unset ones. CPU devices run both sides of a branch under a mask
// even when no invocation takes one, so that code cost as much as the
// work (3-5x on lavapipe for resolve and the Element scatters).
//
// # Device memory
//
// Backend.Needs works out, from a plan's shapes alone, the device memory
// an Execute of it allocates (every tensor, in the pool's size classes)
// and the passes it runs, with the device bytes each reads and writes.
// Execute checks that figure against the device's free memory (with
// VK_EXT_memory_budget the heap's budget less its usage, else the heap
// less what the backend holds; idle pooled buffers count as free) before
// it allocates or moves anything, and refuses a plan that does not fit
// with an error wrapping ops.ErrOutOfMemory ("needs N MiB of device
// memory; the device has M MiB free"); a device allocation that fails
// later wraps it too, never ops.ErrUnsupported.
//
// Where device memory is the host's (unified memory: CPU devices,
// integrated GPUs), an output of 256 MiB or more is read back chunk by
// chunk, each chunk freed as soon as it is read, in chunks of at most 64
// MiB: the host then holds data, the result and one chunk, not data and
// the result and the whole device copy. Elsewhere uploads and downloads
// go through a staging buffer of at most 16 MiB (package vk).
//
// # Resident tensors and batches
//
// Execute moves every input to the device and the output back on every
// call. A Tensor instead stays in device memory until its Close:
// Backend.Upload and Backend.NewTensor make one, Tensor.Read, Write and
// Download move it, and a Call runs an operator on resident tensors into a
// resident output (which may be data itself, in place). A Batch records
// several calls, each seeing the results of the ones before it, into one
// command buffer submitted once; Backend.Run is a batch of one. Calls are
// validated as they are added (ops.PrepareShapes: the same rules and
// errors as ops.Prepare, payloads left on the device), indices are checked
// on the device as in Execute, and a bad index is read back to give the
// CPU reference's error text. Strings cannot be resident.
//
// Backend.ReadTensor, Tensor.CopyFrom and Tensor.CopyTo move a payload
// between a tensor and an io.Reader or io.Writer (a file's body) without
// a host copy of it: where device memory is host-visible, straight
// through its mapping, else through the staging buffer a few MiB at a
// time. Backend.CheckResident refuses, before any input is read, a call
// the device cannot run or has no memory for.
//
// # Passes
//
// One Execute records every pass into one command buffer and submits it
// once. With reduction none:
//
//  1. clear the owner words (plans where updates can collide);
//  2. resolve (shaders/src/resolve.comp): one invocation per index, or per
//     index tuple of ScatterNDUpdate, reads the raw index of any integer
//     type, checks it against the range its version allows, stores the
//     normalised value and, when updates can collide, claims its slot with
//     atomicMax(owner, j+1). A bad index lowers an error word to its
//     position (shifted to fit 32 bits) instead;
//  3. scatter (scatter.comp, one invocation per update) writes the update
//     when its j+1 owns the slot, so the last update in index order wins;
//     or, for ScatterUpdate and ScatterNDUpdate plans with more updates
//     than outputs, gather (gather.comp) visits each output unit once and
//     copies the update its row's owner names. Element plans whose updates
//     can collide but that have many columns (o, k) (at least 1024 on CPU
//     devices, 65536 on GPUs) claim no owner words: their scatter runs one
//     invocation per column, which applies the column's J updates in index
//     order (updates of different columns never meet), so the clear, the
//     atomicMax per index and the owner reads, random accesses all, are
//     skipped. Other plans whose updates can collide along at most 64
//     index positions J (a large tensor patched in a few places) claim no
//     owner words either, which would take 4 bytes per slot of the output:
//     each update reads the normalised indices of the later ones along J
//     and writes only when none has its index. All of these do nothing
//     once the error word is set.
//
// After the fence, a set error word makes Execute scan the few index
// positions it names on the host with ops.Plan.IndexAt, return that error
// (cpuref's text) and leave out untouched; indices are never read back.
// Plans without update elements still run resolve, since every index is
// checked. Reductions run the passes of the section Reductions, after the
// same resolve, and stop at the same error word.
//
// With reduction none, data movement depends only on the element size, so
// all dtypes share the kernels; contiguous runs (ScatterUpdate and
// ScatterNDUpdate blocks, SliceScatter rows with step 1) move as units of
// up to 16 bytes; a SliceScatter invocation steps along the innermost
// dimension and maps a position to its target only where a row starts.
// On CPU devices a SliceScatter whose innermost dimension has step 1
// moves each contiguous run of at least 256 bytes (up to 65536 runs) as a
// region of a copy command instead, one command per pair of chunks: there
// a copy command is a memcpy, while a shader's memory accesses run lane
// by lane (about 10x slower on lavapipe). GPUs keep the shader. Positions are 32-bit when every count is at most 2^31
// and 64-bit otherwise. Dispatches larger than maxComputeWorkGroupCount
// become 2-D or 3-D grids and several dispatches. On CPU devices (lavapipe)
// each invocation handles a run of 16 consecutive positions.
//
// # Reductions
//
// Plans with a reduction (ScatterNDUpdate-15 sum, sub, prod, min, max;
// ScatterElementsUpdate-12 sum, prod, min, max, mean with use_init_val;
// ScatterElements and ScatterND -16 add, mul and -18 max, min) give the
// CPU reference's results: integers wrap, bool sum, sub, prod, min and max
// are OR, XOR, AND, AND and OR, a float16 or bfloat16 step is computed in
// float32 and rounded to the type by bit arithmetic that mirrors
// tensor.F16From and tensor.BF16From, float min and max propagate NaN and
// order -0 below +0 (compared as integer keys, so neither NaN nor
// subnormals meet a hardware comparison), float sum, sub, prod and mean
// propagate NaN as the CPU's arithmetic in index order does (the
// element's NaN first, then the update's, quieted; a NaN a step creates
// from numbers is the negative quiet NaN), whatever the device's own
// arithmetic does with NaN (except in the native float atomics, which
// are the device's), the mean of integers of 32 bits
// or less sums exactly in 64 bits and floors, and the float mean divides
// with a correctly rounded division done in integer arithmetic (GLSL's
// division is not correctly rounded). Sub folds the negated update, which
// IEEE 754 defines to be the same. The kernels are variants of
// shaders/src/scatter.comp and reduce.comp per dtype, the reduction a
// specialization constant. A plan runs on one of three paths:
//
// Atomics. resolve counts the updates per target where the plan needs the
// counts (mean; use_init_val false); a prepare pass (reduce.comp) starts
// every target that receives updates from the neutral value when
// use_init_val is false, and the 64-bit mean sums from the element; the
// scatter pass folds every update into its target atomically; a finish
// pass divides the means. Each step is a device atomic where one computes
// it exactly (Stats.Reduction "native": atomicAdd, atomicMin and atomicMax
// on 32-bit integers, on 64-bit integers with Int64BufferAtomics, and
// float32 or float64 atomicAdd with Float32AtomicAdd or Float64AtomicAdd),
// and a compare-and-swap loop otherwise ("cas"): products, 1- and 2-byte
// elements (in their 32-bit word), bool (whose results must be normalised
// to 0 or 1, which no single atomic does), float16 and bfloat16, float min
// and max, and 64-bit elements by 64-bit compare-and-swap. The mean's
// 64-bit sums of small integers need only 32-bit atomics: the low word
// first, then the high word with the carry. Float atomic min and max
// (Float32AtomicMinMax) are never used: GL_EXT_shader_atomic_float2 leaves
// NaN and signed zeros unspecified, and lavapipe computes atomicMin(1, NaN)
// = 1, atomicMax(1, NaN) = 1, atomicMin(+0, -0) = +0 and atomicMax(-0, +0)
// = -0, against the contract. Options.ForceCAS takes the loops everywhere.
//
// Contention. When updates pile onto few outputs (the output fits
// shaders.PrivateWords words of workgroup memory and there are at least
// four updates per output element; elements of 4 bytes or less, not bool,
// not mean), each workgroup of the scatter pass folds a share of at least
// 16 updates per output element into its own copy of the output in
// workgroup memory, then folds every element it touched into the output:
// one global atomic per element and workgroup instead of one per update
// (Stats.Reduction "+private"). Hot targets among many outputs get no such
// help.
//
// In order. With Options.Deterministic, float sum, sub, prod and mean fold
// every target's updates in index order, as the CPU reference does, and
// the results are bit-identical to it: resolve counts the updates per slot
// (a target element, or a ScatterNDUpdate row), a scan (sort.comp) turns
// the counts into the slots' first positions, a stable least-significant
// -digit radix sort of the update positions by slot (4-bit digits: per
// pass, tile digit counts, their scan, and a rank-and-move pass that keeps
// index order within each digit) lists every slot's updates in index
// order, and the fold (reduce.comp) walks each slot's list from the first
// update to the last. An invocation folds at most 2^14 updates (a
// segment); a slot with more keeps its partial fold in the output, and
// one further pass per segment continues the listed long slots, so no
// invocation's loop grows with the input (shaders' "Loop bounds"). The
// passes needed follow from the plan's shapes: the longest list an
// Element target can have is J, a row's the number of index tuples. Integer, bool, min and
// max results are exact on the atomics, so they use them in deterministic
// mode too. Float plans with at most 4096 update elements fold in order
// even without Deterministic (the sort costs a few small dispatches there).
// The path needs no atomics beyond 32-bit integer ones, so plans of 8-byte
// elements take it on devices without Int64BufferAtomics. It takes at most
// 2^31 updates and slots; larger plans that need it fail with an error
// wrapping ops.ErrUnsupported.
//
// Column walk. Element plans with many columns (o, k) (at least 1024 on
// CPU devices, 65536 on GPUs; the same rule as for reduction none) take
// neither: their scatter runs one invocation per column, which folds the
// column's updates into their targets in index order with plain loads and
// stores, one dispatch per segment of 2^14 rows of every column, the
// partial folds left in the output between them (targets of different
// columns never meet; 1- and 2-byte elements
// still write their bits of a shared word atomically, and integer means
// sum in the 64-bit accumulators as on the atomics). The prepare and
// finish passes are the atomic path's. Every result, float sum, sub, prod
// and mean included, is the CPU reference's bit for bit, in every mode
// (Stats.Reduction "walk"). 8-byte plans on devices without
// Int64BufferAtomics fold in order instead: the kernel is a variant of the
// atomic scatter, whose 8-byte code declares 64-bit atomics.
//
// # Rounding of float reductions on the atomics
//
// Without Deterministic the atomics fold a target's updates in an order
// the device picks, each step rounded to the type, so float sum, sub, prod
// and mean may differ from the CPU reference's results in rounding, and by
// at most (u is the type's unit roundoff: 2^-11 for float16, 2^-8 for
// bfloat16, 2^-24 for float32, 2^-53 for float64; n the number of updates
// into the element; g(n) = (1+u)^n - 1, about n*u):
//
//	sum, sub: |gpu - cpuref| <= 2*g(n)*S, S the sum of the magnitudes of
//	          the operands (the element's original value when it counts,
//	          and the updates)
//	prod:     |gpu - cpuref| <= 2*g(n)*P, P the magnitude of the exact
//	          product of the operands
//	mean:     |gpu - cpuref| <= 2*g(n)*S/c + u*(|gpu| + |cpuref|) plus the
//	          smallest subnormal, c the count
//
// Both results are then roundings of the same exact value along a
// different sequence of n roundings, each within g(n) of it. The bound
// holds while no intermediate result overflows (S or P, times 1+g(n),
// below the largest finite value) and, for prod, none leaves the normal
// range; NaN, infinities and zero factors give the same results in any
// order. Devices whose float atomics flush subnormals (NVIDIA's
// atomicAdd on float32 does) may differ further by n times the smallest
// normal value. Integer, bool, min and max reductions are exact in every
// mode.
//
// Float arithmetic assumes the device keeps float32 subnormals (lavapipe
// does; the shaders do not request SPV_KHR_float_controls), else results
// with subnormal float32 (or bfloat16) intermediates may differ, in
// deterministic mode too.
package gpu
