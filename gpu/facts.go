//go:build cgo

package gpu

import (
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/shaders"
)

// facts are what planning reads of the device and of the backend's
// settings: everything that makes two backends plan one ops.Plan
// differently. Planning reads nothing else, so tests build facts without
// a device.
type facts struct {
	// run is the number of consecutive positions one invocation handles
	// (Backend.run).
	run uint32
	// walkMin and copyMin are Backend.walkMin and Backend.copyMin.
	walkMin, copyMin uint64
	// maxGroups is the device's workgroup-count limits.
	maxGroups [3]uint32
	// shift is log2 of the chunk size of tensors, maxShift of the largest
	// buffer (the parameter buffer's).
	shift, maxShift uint
	// A call whose output takes at least streamMin bytes uses chunks of
	// 2^streamShift bytes (Backend.callShift).
	streamMin   uint64
	streamShift uint
	// The device's atomics: float add on 32- and 64-bit floats, and
	// 64-bit integer atomics on buffers (false also with
	// Paths.NoInt64Atomics).
	float32Add, float64Add, int64Atomics bool
	// Backend.deterministic, forceCAS, noPrivate, forceWide, orderedMax.
	deterministic, forceCAS, noPrivate, forceWide bool
	orderedMax                                    uint64
	// scanRun is Backend.scanRun.
	scanRun uint32
}

// scanBlock returns the words one workgroup of the in-order fold's scans
// takes: groupSize runs of sortRun (Backend.scanRun in tests).
func (f *facts) scanBlock() uint64 {
	if f.scanRun != 0 {
		return groupSize * uint64(f.scanRun)
	}
	return groupSize * sortRun
}

// facts returns the facts of b's device and settings. stream says whether
// large outputs may take smaller chunks (Execute's host-backed calls; a
// batch's resident tensors keep theirs). b.mu is held.
func (b *Backend) facts(stream bool) facts {
	caps := b.dev.Capabilities()
	f := facts{
		run: b.run, walkMin: b.walkMin, copyMin: b.copyMin, maxGroups: b.maxGroups,
		shift: b.shift, maxShift: b.maxShift, streamShift: b.shift,
		float32Add: caps.Float32AtomicAdd, float64Add: caps.Float64AtomicAdd,
		int64Atomics:  caps.Int64BufferAtomics && !b.noInt64Atomics,
		deterministic: b.deterministic, forceCAS: b.forceCAS, noPrivate: b.noPrivate, forceWide: b.forceWide,
		orderedMax: b.orderedMax, scanRun: b.scanRun,
	}
	if stream {
		f.streamMin = b.streamMin
		if f.streamMin == 0 {
			f.streamMin = streamMin
		}
		f.streamShift = b.callShift(f.streamMin)
	}
	return f
}

// callShift returns the chunk shift of a call whose output takes
// outBytes bytes.
func (f *facts) callShift(outBytes uint64) uint {
	if f.streamMin != 0 && outBytes >= f.streamMin {
		return f.streamShift
	}
	return f.shift
}

// planJob translates p into a job for a device with facts f, its
// reduction, column walk and copy commands decided.
func (f *facts) planJob(p *ops.Plan) (*job, error) {
	j, err := newJob(p)
	if err != nil {
		return nil, err
	}
	if f.forceWide {
		j.posBits = 64
	}
	if p.Reduction != ops.None {
		if err := f.planReduction(p, j); err != nil {
			return nil, err
		}
	}
	f.planWalk(j)
	f.planCopies(j)
	return j, nil
}

// jobFor is planJob with b's facts; b.mu is held.
func (b *Backend) jobFor(p *ops.Plan) (*job, error) {
	f := b.facts(true)
	return f.planJob(p)
}

// planCopies makes a Slice plan move its contiguous runs with copy
// commands where the device prefers them (copyMin) and the runs are long
// and few enough (copyMaxRuns).
func (f *facts) planCopies(j *job) {
	run := j.rowRun()
	if f.copyMin == 0 || run == 0 || j.updates == 0 {
		return
	}
	j.copies = run*uint64(j.elemBytes) >= f.copyMin && j.updates/run <= copyMaxRuns
}

// walks reports whether Element plan j has enough columns (o, k) to keep
// the device busy with one scatter invocation per column: at least
// walkMin. Such a plan's scatter walks each column's J updates in index
// order (updates of different columns never meet), which needs neither
// the owner words of reduction none, nor atomics for a reduction, nor the
// sort of the in-order fold. Plans with few columns (a long 1-D index
// tensor) spread the work over every update instead.
func (f *facts) walks(j *job) bool {
	return j.kind == shaders.Element && j.updates > 0 && j.columns() >= f.walkMin
}

// planWalk makes an Element plan with reduction none and colliding updates
// walk its columns where walks allows: the last update wins without the
// owner words, their clearing, and the atomicMax per index in resolve,
// whose random accesses dominate the plan on every device. (planReduction
// decides for reductions.)
func (f *facts) planWalk(j *job) {
	if j.red != nil || j.flags&(flagOwner|flagLater) == 0 || !f.walks(j) {
		return
	}
	j.walk = true
	j.flags = j.flags&^(flagOwner|flagLater) | flagWalk
	j.owners = 0
}
