//go:build cgo

package gpu

import "github.com/gpuscatter/gpuscatter/internal/knobs"

// Package internal/knobs opens a Backend with knobs through open, which
// this package registers there; nothing outside the module can.
func init() { knobs.Register(open) }

// tuning is the part of a Backend's state that picks execution paths where
// the device type and the plan's size would: Open sets it for the device,
// package internal/knobs overrides it (force), tests set fields directly.
// It also holds the counters tests read. Backend embeds it.
type tuning struct {
	// walkMin is the least number of columns for which Element plans
	// walk them (planWalk): cpuWalkMin or gpuWalkMin.
	walkMin uint64
	// exactAtomics: float atomic add takes only updates no flush can
	// change (FLAG_EXACT_ATOMICS): on GPUs, whose float atomics are units
	// of their own that may flush subnormals whatever the shader asks
	// (NVIDIA's do); not on CPU devices, whose float atomics are the
	// host's compare-and-swap around the float add of the shader's own
	// arithmetic (TestSubnormalSteps checks lavapipe's), where the check
	// costs lavapipe a fifth of its float sums (knobs.ExactAtomics forces
	// it).
	exactAtomics bool
	// copyMin, when not 0, makes Slice plans whose contiguous runs hold
	// at least copyMin bytes move them with copy commands (planCopies): on
	// CPU devices, where a copy command is a memcpy and a shader's memory
	// accesses run lane by lane, copyMinRun.
	copyMin uint64
	// directTie: a resident reduction whose indices take exactly 8 bytes
	// a tuple checks them in a pass of their own and lets the scatter read
	// them raw (planDirect), as when they take fewer, rather than write
	// normalised words: on GPUs, where the fewer bytes are the cost; not on
	// CPU devices, where decoding a raw index per element costs more than
	// the bytes it saves (lavapipe: SND-sum-dup in place at scale 0.25,
	// 40 ms with normalised words against 46-52 ms raw).
	directTie bool
	// forceWide makes every job use 64-bit positions.
	forceWide bool
	// forceCAS makes reductions use compare-and-swap loops where the
	// device has an atomic instruction for the step.
	forceCAS bool
	// orderedMax is the largest number of update elements for which float
	// sum, sub, prod and mean fold in order even without deterministic
	// (orderedSmall; 0 reaches the atomics with small plans).
	orderedMax uint64
	// scanRun, when not 0, is the run of the in-order fold's scans instead
	// of sortRun: smaller blocks, so that tests reach more levels.
	scanRun uint32
	// noPrivate turns off the workgroup-memory accumulation.
	noPrivate bool
	// widePrivate: the workgroup-memory accumulation takes outputs up to
	// what the device's workgroup memory holds (shaders.PrivateCapacity)
	// rather than shaders.PrivateWords: on GPUs, whose workgroup atomics
	// cost far less than their global ones; not on CPU devices, where both
	// are the host's atomics and the copy's clear and flush only add work
	// (lavapipe: 4M float32 adds into 6000 elements took 82 ms through a
	// copy of 8192 words against 52 ms on the global atomics;
	// knobs.WideWorkgroupAccumulation forces it).
	widePrivate bool
	// noBuckets makes in-order folds that would be bucketed (planBucket)
	// sort by every digit of the slot and fold slot by slot.
	noBuckets bool
	// splitBuckets splits each bucket of the bucketed fold into
	// 1<<bucketSplitBits, a workgroup each, at the cost of a radix pass
	// more (reduction.bsplit). Off on every device until a GPU has timed
	// whether the fold's parallelism pays for the pass's bytes (DESIGN.md,
	// "Bucketed"); knobs.SplitBuckets turns it on.
	splitBuckets bool
	// noHot turns off the folding of hot targets in workgroup memory.
	noHot bool
	// noTable makes plans whose updates collide claim owner words where
	// the last-writer table would serve (planTable).
	noTable bool
	// noInt64Atomics makes reductions act as on a device without 64-bit
	// atomics.
	noInt64Atomics bool
	// noFloatAtomics makes reductions act as on a device without float
	// atomic add.
	noFloatAtomics bool
	// softFloats and deviceFloats are knobs.SoftFloats and
	// knobs.DeviceFloats.
	softFloats, deviceFloats bool
	// noShaderFloat64 makes planning act as on a device without
	// shaderFloat64.
	noShaderFloat64 bool
	// noShaderInt64 makes plans act as on a device without shaderInt64.
	noShaderInt64 bool
	// fault is the deliberate error Execute injects (knobs.Fault).
	fault knobs.Fault
	// budget, when not 0, caps the device memory a call may take below
	// what the device has free (checkFits).
	budget uint64
	// streamMin, when not 0, replaces the constant streamMin.
	streamMin uint64
	// freedEarly counts the output chunks download freed as it read them.
	freedEarly int
	// quickFigures is knobs.QuickFigures: Figures probes at
	// 1/quickProbeDiv of their size, quickProbeReps runs each.
	quickFigures bool
	// onBuild, when set, is called as a batch's call k (from 0) starts
	// acquiring its buffers and pipelines, and with k = n when all n
	// have: the fault tests aim there.
	onBuild func(k int)
}

// force applies the knobs of k that are not zero (MaxAllocationBytes
// already went to vk.Open).
func (b *Backend) force(k knobs.Knobs) {
	if k.ChunkBytes != 0 {
		b.shift = min(chunkShift(k.ChunkBytes), b.maxShift)
	}
	// 64-bit positions need shaderInt64: without it the knob is void, and
	// the paths that set it run the 32-bit baseline.
	b.forceWide = k.WidePositions && b.dev.Capabilities().ShaderInt64 && !k.NoShaderInt64
	b.forceCAS = k.ForceCAS
	if k.Run != 0 {
		b.run = min(k.Run, maxRun)
	}
	for i, n := range k.MaxWorkGroups {
		if n != 0 && n < b.maxGroups[i] {
			b.maxGroups[i] = n
		}
	}
	if k.WalkMinColumns != 0 {
		b.walkMin = k.WalkMinColumns
	}
	if k.CopyMinBytes != 0 {
		b.copyMin = k.CopyMinBytes
	}
	b.budget = k.MemoryBudget
	if k.NoOrderedSmall {
		b.orderedMax = 0
	}
	b.noPrivate = k.NoWorkgroupAccumulation
	if k.WideWorkgroupAccumulation {
		b.widePrivate = true
	}
	b.noTable = k.NoTable
	b.noHot = k.NoHotKeys
	b.noBuckets = k.NoBuckets
	b.splitBuckets = k.SplitBuckets
	b.noInt64Atomics = k.NoInt64Atomics
	b.noFloatAtomics = k.NoFloatAtomics
	b.softFloats = k.SoftFloats
	if k.ExactAtomics {
		b.exactAtomics = true
	}
	b.deviceFloats = k.DeviceFloats
	b.noShaderFloat64 = k.NoShaderFloat64
	b.noShaderInt64 = k.NoShaderInt64
	b.fault = k.Fault
	b.quickFigures = k.QuickFigures
}
