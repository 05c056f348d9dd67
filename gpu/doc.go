// Package gpu runs the scatter operators on any Vulkan device: Backend
// implements ops.Backend on package vk and the kernels of package shaders,
// and gives the CPU reference's results (package cpuref) bit for bit. It
// executes ops.Plan and re-derives no operator rule.
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
// push constants (128 bytes in all, the least any device offers).
//
// # Passes
//
// One Execute records every pass into one command buffer and submits it
// once:
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
//     copies the update its row's owner names. Both do nothing once the
//     error word is set.
//
// After the fence, a set error word makes Execute scan the few index
// positions it names on the host with ops.Plan.IndexAt, return that error
// (cpuref's text) and leave out untouched; indices are never read back.
// Plans without update elements still run resolve, since every index is
// checked.
//
// With reduction none, data movement depends only on the element size, so
// all dtypes share the kernels; contiguous runs (ScatterUpdate and
// ScatterNDUpdate blocks, SliceScatter rows with step 1) move as units of
// up to 16 bytes. Positions are 32-bit when every count is at most 2^31
// and 64-bit otherwise. Dispatches larger than maxComputeWorkGroupCount
// become 2-D or 3-D grids and several dispatches. On CPU devices (lavapipe)
// each invocation handles a run of 16 consecutive positions.
//
// Reductions other than none fail with ops.ErrUnsupported for now; the
// shader sources take them as further variants (REDUCTION in scatter.comp).
package gpu
