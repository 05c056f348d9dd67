// Package knobs forces the execution paths that the GPU backend (package
// gpu) otherwise chooses by device type and plan size, so that one device
// can run them all: internal/gpucheck, behind `gpuscatter check`, and the
// tests. Results do not depend on the knobs, only the work the device does
// to reach them, except Fault.
//
// Design: package gpu exports no knob. At init it registers its unexported
// open-with-knobs function here (Register), and Open calls it; that
// registration is the only package-level variable involved.
package knobs

import (
	"fmt"

	"github.com/gpuscatter/gpuscatter/internal/vkfault"
)

// Knobs are the settings Open applies on top of gpu.Options. Each zero
// field keeps the backend's own choice.
type Knobs struct {
	// MaxAllocationBytes caps the size of one buffer, and so the chunk
	// size of tensors on the device (the largest power of two not above
	// it, at least 16 bytes). Zero means the device's limit.
	MaxAllocationBytes uint64
	// ForceCAS makes reductions update elements with compare-and-swap
	// loops even where the device has an atomic instruction for the step
	// (integer add, min and max; float add with float atomics).
	ForceCAS bool
	// ChunkBytes sets the chunk size of tensors on the device (the largest
	// power of two not above it, at least 16 bytes, at most the device's
	// allocation limit) without lowering the size of other buffers, as
	// MaxAllocationBytes does.
	ChunkBytes uint64
	// WidePositions makes every kernel use 64-bit positions, which the
	// backend otherwise takes only for tensors of 2^32 elements or more.
	// On a device without shaderInt64 (or with NoShaderInt64) it has no
	// effect: 64-bit positions need 64-bit integers.
	WidePositions bool
	// Run is the number of consecutive positions one invocation handles
	// (16 on CPU devices, 1 on GPUs; at most 64).
	Run uint32
	// MaxWorkGroups lowers the device's workgroup-count limits, per
	// dimension (a zero entry keeps the device's), so that passes use 2-D
	// and 3-D grids and split into several dispatches.
	MaxWorkGroups [3]uint32
	// WalkMinColumns is the least number of columns for which an Element
	// plan walks its columns in index order (1024 on CPU devices, 65536
	// on GPUs); 1 makes every Element plan walk.
	WalkMinColumns uint64
	// CopyMinBytes makes Slice plans whose contiguous runs hold at least
	// this many bytes move them with copy commands (CPU devices: 256;
	// GPUs: never).
	CopyMinBytes uint64
	// NoOrderedSmall makes small float sum, sub, prod and mean plans use
	// atomics as large ones do, instead of folding in index order. Their
	// results then differ from cpuref's by rounding.
	NoOrderedSmall bool
	// NoBuckets makes in-order folds that would be bucketed (one radix
	// pass by the slot's top digit, then a workgroup per bucket) sort by
	// every digit of the slot and fold slot by slot.
	NoBuckets bool
	// SplitBuckets splits each bucket of that fold by the slot's next two
	// bits, a workgroup each (four times the workgroups), after a radix
	// pass more by the digit two bits under the top one.
	SplitBuckets bool
	// NoWorkgroupAccumulation turns off the accumulation of reductions in
	// workgroup memory before the atomics on the output.
	NoWorkgroupAccumulation bool
	// WideWorkgroupAccumulation lets that accumulation take outputs up to
	// what the device's workgroup memory holds, as on GPUs, on a CPU
	// device too.
	WideWorkgroupAccumulation bool
	// NoHotKeys turns off the folding of each workgroup's hot targets in
	// workgroup memory before the global atomics.
	NoHotKeys bool
	// NoTable makes plans whose updates collide claim owner words where
	// the last-writer table would serve.
	NoTable bool
	// NoInt64Atomics makes reductions act as on a device without 64-bit
	// atomics.
	NoInt64Atomics bool
	// NoFloatAtomics makes reductions act as on a device without float32
	// and float64 atomic add: float sums take compare-and-swap loops and
	// float32 min and max the variants on integer atomics alone.
	NoFloatAtomics bool
	// SoftFloats makes every step of float32, bfloat16 and float64 sum,
	// sub, prod and mean run in integer arithmetic, as the backend runs
	// only the steps that meet subnormals on a device that does not
	// promise to keep them, so that tests cover that arithmetic over the
	// whole range. Float sums then take compare-and-swap loops.
	SoftFloats bool
	// ExactAtomics makes float atomic add take only the updates whose sums
	// no flush of subnormals can change, the others the compare-and-swap
	// loop, as on GPUs, also on CPU devices (lavapipe), which otherwise
	// take every update.
	ExactAtomics bool
	// DeviceFloats takes float sum, sub, prod and mean steps as the
	// device computes them even on a device that does not promise to keep
	// subnormals (shaderDenormPreserveFloat32, ...Float64): no integer
	// arithmetic for steps that meet subnormals. Such steps may then
	// differ from the CPU reference's (SwiftShader flushes them to zero).
	DeviceFloats bool
	// NoShaderFloat64 makes planning act as on a device without
	// shaderFloat64: float64 sum, sub, prod and mean are refused.
	NoShaderFloat64 bool
	// NoShaderInt64 makes the backend plan as on a device without 64-bit
	// integers in shaders (shaderInt64): every kernel runs its 32-bit
	// baseline variant.
	NoShaderInt64 bool
	// Fault makes the backend deliberately wrong, to show that a
	// qualification run catches a broken kernel.
	Fault Fault
	// MemoryBudget, when not 0, caps the device memory a call may take
	// below what the device has free, so that the refusal of a plan over
	// the device's memory can be reached on any device.
	MemoryBudget uint64
	// Faults makes chosen Vulkan calls of the backend's device fail as a
	// failing device's do (vkfault.Install): the fault tests.
	Faults *vkfault.Plan
	// QuickFigures makes the device figures (gpu.Backend.Figures) come
	// from probes a sixty-fourth of their size, each timed twice: figures
	// of the right form and order, in a fraction of the time (on
	// SwiftShader a measurement takes about a minute), for the tests of
	// how figures are measured, kept, found and remeasured, which need
	// figures, not good ones. Estimates made from them are rougher.
	QuickFigures bool
}

// Fault is a deliberate error Knobs.Fault injects into results.
type Fault int

// The faults.
const (
	// NoFault leaves results alone.
	NoFault Fault = iota
	// FlipLast flips the lowest bit of the last element of the output of
	// every Execute call that succeeds with a numeric output.
	FlipLast
	// MinAsMax runs every min reduction of Execute as max.
	MinAsMax
)

// opener is the function Register was given: package gpu's
// func(gpu.Options, Knobs) (*gpu.Backend, error).
var opener any

// Register records the backend's open-with-knobs function; package gpu
// calls it once, at init.
func Register[O, B any](open func(O, Knobs) (B, error)) { opener = open }

// Open opens a backend with options opts and knobs k through the
// registered function, whose option and backend types O and B must be:
// Open[gpu.Options, *gpu.Backend]. It fails when no such function is
// registered (a build without cgo has no Vulkan backend).
func Open[O, B any](opts O, k Knobs) (B, error) {
	open, ok := opener.(func(O, Knobs) (B, error))
	if !ok {
		var none B
		return none, fmt.Errorf("knobs: no backend registered to open %T with knobs", opts)
	}
	return open(opts, k)
}
