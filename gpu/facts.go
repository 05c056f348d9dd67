//go:build cgo

package gpu

import (
	"fmt"
	"math"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
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
	// directTie is Backend.directTie.
	directTie bool
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
	// sharedMax is the device's maxComputeSharedMemorySize; 0 (facts
	// built by hand) means enough for every kernel. No pass's kernel may
	// take more (see also sortFits).
	sharedMax uint64
	// soft32 and soft64: the device does not promise to keep float32
	// (float64) subnormals in arithmetic (shaderDenormPreserveFloat32,
	// ...Float64; with knobs.DeviceFloats taken as if it did), so float
	// sum, sub, prod and mean steps that meet them run again in integer
	// arithmetic (FLAG_SOFT_FLOATS). softAlways (knobs.SoftFloats) runs
	// every such step so, without float atomic add. (Float atomic add
	// itself is exactAtomics' concern.)
	soft32, soft64, softAlways bool
	// exactAtomics is Backend.exactAtomics (FLAG_EXACT_ATOMICS).
	exactAtomics bool
	// noFloat64: the device lacks shaderFloat64 (or Backend.noShaderFloat64
	// is set), so float64 arithmetic reductions are refused.
	noFloat64 bool
	// noInt64: the device lacks 64-bit integers in shaders (shaderInt64;
	// also with knobs.NoShaderInt64), so that every kernel runs its 32-bit
	// baseline variant (shaders.Key.NoInt64).
	noInt64 bool
	// Backend.deterministic, forceCAS, noPrivate, forceWide, noBuckets,
	// orderedMax.
	deterministic, forceCAS, noPrivate, forceWide, noBuckets bool
	// noHot: Backend.noHot (planHot).
	noHot bool
	// widePrivate: Backend.widePrivate (planPrivate).
	widePrivate bool
	// splitBuckets: Backend.splitBuckets (planBucket).
	splitBuckets bool
	// countAtomics: Options.CountAtomics.
	countAtomics bool
	orderedMax   uint64
	// table: the device's workgroup memory holds the last-writer table
	// (4*tableWords bytes), and Backend.noTable is not set.
	table bool
	// ownOutput: the call's output is the backend's own buffer, none of
	// the caller's tensors (Execute), so that a call a bad index stops may
	// leave it half written: the host discards it. Atomic reductions then
	// check the indices in the pass that applies them (job.direct).
	ownOutput bool
	// scanRun is Backend.scanRun.
	scanRun uint32
	// keepOwners: the backend keeps owner words clear between calls
	// (Options.MaxPoolBytes >= 0: it keeps buffers at all), so that a
	// call whose scatter clears the words it claimed (callPlan.keepsOwners)
	// clears them itself only on first use.
	keepOwners bool
}

// softFloats sets soft32, soft64 and softAlways from the device's
// promises and the knobs (always: knobs.SoftFloats, which also turns off
// float atomic add; device: knobs.DeviceFloats).
func (f *facts) softFloats(caps vk.Capabilities, always, device bool) {
	f.softAlways = always
	f.soft32 = always || !caps.DenormPreserveFloat32 && !device
	f.soft64 = always || !caps.DenormPreserveFloat64 && !device
	f.float32Add = f.float32Add && !always
	f.float64Add = f.float64Add && !always
}

// softFlags returns the flags of p's float arithmetic steps: none for
// other dtypes and reductions, FLAG_SOFT_FLOATS where the device may
// flush the subnormals of its type (float16 steps, in float32, meet none),
// FLAG_SOFT_ALWAYS with knobs.SoftFloats, and FLAG_EXACT_ATOMICS for the
// float32 and float64 sums of exactAtomics.
func (f *facts) softFlags(p *ops.Plan) uint32 {
	switch p.Reduction {
	case ops.Sum, ops.Sub, ops.Prod, ops.Mean:
	default:
		return 0
	}
	var soft bool
	var flags uint32
	switch p.DType {
	case tensor.Float32, tensor.BFloat16:
		soft = f.soft32
	case tensor.Float64:
		soft = f.soft64
	}
	if f.exactAtomics && (p.DType == tensor.Float32 || p.DType == tensor.Float64) && p.Reduction != ops.Prod {
		flags |= flagExactAtomics
	}
	switch {
	case !soft:
	case f.softAlways:
		flags |= flagSoftFloats | flagSoftAlways
	default:
		flags |= flagSoftFloats
	}
	return flags
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
// batch's resident tensors keep theirs); those calls' outputs are also the
// backend's own (facts.ownOutput). b.mu is held.
func (b *Backend) facts(stream bool) facts {
	caps := b.dev.Capabilities()
	f := facts{
		run: b.run, walkMin: b.walkMin, copyMin: b.copyMin, directTie: b.directTie, maxGroups: b.maxGroups,
		shift: b.shift, maxShift: b.maxShift, streamShift: b.shift,
		float32Add: caps.Float32AtomicAdd && !b.noFloatAtomics, float64Add: caps.Float64AtomicAdd && !b.noFloatAtomics,
		int64Atomics:  caps.Int64BufferAtomics && !b.noInt64Atomics,
		noInt64:       !caps.ShaderInt64 || b.noShaderInt64,
		deterministic: b.deterministic, forceCAS: b.forceCAS, noPrivate: b.noPrivate, forceWide: b.forceWide, noBuckets: b.noBuckets, noHot: b.noHot,
		countAtomics: b.countAtomics, widePrivate: b.widePrivate, splitBuckets: b.splitBuckets,
		orderedMax: b.orderedMax, ownOutput: stream, scanRun: b.scanRun, exactAtomics: b.exactAtomics,
		keepOwners: b.poolLimit >= 0,
		table:      caps.MaxComputeSharedMemorySize >= 4*tableWords && !b.noTable,
	}
	f.noFloat64 = !caps.ShaderFloat64 || b.noShaderFloat64
	f.softFloats(caps, b.softFloats, b.deviceFloats)
	f.sharedMax = uint64(caps.MaxComputeSharedMemorySize)
	if stream {
		f.streamMin = b.streamMin
		if f.streamMin == 0 {
			f.streamMin = streamMin
		}
		f.streamShift = b.callShift(f.streamMin)
	}
	return f
}

// typeDefaults returns the run and the tuning a Backend takes on a device
// of type t (before knobs): on CPU devices runs of cpuRun positions, the
// column walk from cpuWalkMin columns and copy commands for runs of
// copyMinRun bytes; on GPUs one position per invocation, the walk from
// gpuWalkMin and no copy commands.
func typeDefaults(t vk.DeviceType) (run uint32, tn tuning) {
	tn = tuning{walkMin: gpuWalkMin, orderedMax: orderedSmall, exactAtomics: true, directTie: true, widePrivate: true}
	if t == vk.DeviceCPU {
		tn.walkMin, tn.copyMin, tn.exactAtomics, tn.directTie, tn.widePrivate = cpuWalkMin, copyMinRun, false, false, false
		return cpuRun, tn
	}
	return 1, tn
}

// lacking names what every kernel needs that a device without buffer
// device addresses, or with workgroups of fewer than groupSize
// invocations, lacks. (Devices without shaderInt64 run the 32-bit
// baseline variants: facts.noInt64.)
func lacking(addresses bool, caps vk.Capabilities) []string {
	var missing []string
	if !addresses {
		missing = append(missing, "bufferDeviceAddress (Vulkan 1.2 or VK_KHR_buffer_device_address)")
	}
	if caps.MaxComputeWorkGroupInvocations < groupSize || caps.MaxComputeWorkGroupSize[0] < groupSize {
		missing = append(missing, fmt.Sprintf("workgroups of %d invocations (maxComputeWorkGroupInvocations %d, maxComputeWorkGroupSize.x %d)",
			groupSize, caps.MaxComputeWorkGroupInvocations, caps.MaxComputeWorkGroupSize[0]))
	}
	return missing
}

// infoFacts returns the facts of a Backend opened with opts on the device
// that info describes: what Open and Backend.facts derive from the
// device, read from its description instead.
func infoFacts(info vk.DeviceInfo, opts Options) facts {
	caps := info.Capabilities
	run, tn := typeDefaults(info.Type)
	shift := chunkShift(caps.MaxMemoryAllocationSize)
	f := facts{
		run: run, walkMin: tn.walkMin, copyMin: tn.copyMin, directTie: tn.directTie, maxGroups: caps.MaxComputeWorkGroupCount,
		shift: shift, maxShift: shift, streamMin: streamMin, streamShift: shift,
		float32Add: caps.Float32AtomicAdd, float64Add: caps.Float64AtomicAdd, int64Atomics: caps.Int64BufferAtomics,
		noInt64:       !caps.ShaderInt64,
		deterministic: opts.Deterministic, orderedMax: tn.orderedMax, exactAtomics: tn.exactAtomics,
		countAtomics: opts.CountAtomics, widePrivate: tn.widePrivate,
		// As Backend.facts(true): Execute's output is the backend's own.
		ownOutput:  true,
		table:      caps.MaxComputeSharedMemorySize >= 4*tableWords,
		keepOwners: opts.MaxPoolBytes >= 0,
	}
	f.noFloat64 = !caps.ShaderFloat64
	f.softFloats(caps, false, false)
	f.sharedMax = uint64(caps.MaxComputeSharedMemorySize)
	if opts.MaxPoolBytes < 0 && caps.UnifiedMemory && !opts.NoUnifiedMemory {
		// Backend.streams: a large output is read back chunk by chunk.
		f.streamShift = min(shift, streamShift)
	}
	return f
}

// PlanFor returns what Execute of p needs of the device that info
// describes, opened with opts, as Backend.Needs on that device would
// return it: the plan is worked out from the device's description alone
// (one element of vk.Devices, as 'gpuscatter devices --json' prints it),
// so no device is needed. It fails with an error wrapping
// ops.ErrUnsupported where Open would refuse the device, and with
// Execute's error for a plan the device cannot run; whether the device
// has the memory for the call is CheckFitsFor's answer.
func PlanFor(info vk.DeviceInfo, opts Options, p *ops.Plan) (PlanNeeds, error) {
	return planFor(info, opts, p, false)
}

// PlanInPlaceFor is PlanFor for the call in place on resident tensors
// (Backend.NeedsInPlace).
func PlanInPlaceFor(info vk.DeviceInfo, opts Options, p *ops.Plan) (PlanNeeds, error) {
	return planFor(info, opts, p, true)
}

// planFor is PlanFor, or PlanInPlaceFor with inPlace.
func planFor(info vk.DeviceInfo, opts Options, p *ops.Plan, inPlace bool) (PlanNeeds, error) {
	caps := info.Capabilities
	if missing := lacking(caps.BufferDeviceAddress, caps); len(missing) > 0 {
		return PlanNeeds{}, fmt.Errorf("%w: vulkan: device %q lacks %v", ops.ErrUnsupported, info.Name, missing)
	}
	f := infoFacts(info, opts)
	if inPlace {
		// As Backend.facts(false): the output is the caller's tensor.
		f.ownOutput, f.streamMin = false, 0
	}
	return f.callNeeds(p, inPlace)
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
	if f.noFloat64 && Float64Arithmetic(p.DType, p.Reduction) {
		// Refused whatever the sizes, even with no updates to fold, so
		// that whether a call runs depends on its operator, dtype and
		// reduction alone.
		return nil, lacks(p, "shaderFloat64", "float64 arithmetic in shaders")
	}
	if f.noInt64 {
		if err := baselineFits(p, j); err != nil {
			return nil, err
		}
		j.noInt64 = true
	}
	if err := f.planSkip(p, j); err != nil {
		return nil, err
	}
	if p.Reduction != ops.None {
		if err := f.planReduction(p, j); err != nil {
			return nil, err
		}
	}
	f.planWalk(j)
	f.planTable(j)
	f.planCopies(j)
	return j, nil
}

// planSkip sets up SkipBadIndices on a caller's tensor (a resident call;
// Execute's own outputs run as usual and backendkit.ExecuteSkipping runs
// them again without the bad indices when one is found). Every pass then
// goes on past a bad index (flagSkipBad): resolve marks it NO_ROW, which
// the scatter skips, an atomic reduction's scatter checks the raw indices
// itself with no pass before (planDirect), and a linear TensorScatter's
// scatter checks each batch entry's write index instead of a pass or the
// check of them all before it writes (flagCheckAll). NO_ROW must not be
// a row: the indices address at most 2^32-1 rows.
func (f *facts) planSkip(p *ops.Plan, j *job) error {
	if !p.SkipBadIndices || f.ownOutput || j.kind == shaders.Slice {
		return nil
	}
	if rows := indexedRows(p); rows >= 1<<32 {
		return unsupported(p, "SkipBadIndices: indices address %d rows of data; at most 2^32-1", rows)
	}
	j.skip = true
	j.flags |= flagSkipBad
	if j.kind == shaders.Cache && j.updates > 0 {
		j.flags &^= flagCheckAll
		j.checks = 0
	}
	return nil
}

// indexedRows returns how many rows (index values, or index tuples'
// targets) the indices of p address.
func indexedRows(p *ops.Plan) uint64 {
	if p.Kind == ops.KindND {
		rows := uint64(1)
		for _, s := range p.Shape[:p.TupleLen] {
			rows *= uint64(s)
		}
		return rows
	}
	return uint64(p.Shape[p.Axis])
}

// baselineFits reports whether plan p, translated into j, runs on the
// 32-bit baseline variants of a device without shaderInt64: they take
// 32-bit positions only (every count of the plan at most 2^31), and
// float64 arithmetic (sum, sub, prod, mean) needs 64-bit integers as well
// as shaderFloat64 (refused, as without shaderFloat64, whatever the
// sizes). Both refusals wrap a FeatureError naming shaderInt64.
func baselineFits(p *ops.Plan, j *job) error {
	if Float64Arithmetic(p.DType, p.Reduction) {
		return lacks(p, "shaderInt64", "float64 arithmetic on 32-bit words")
	}
	if j.posBits != 32 {
		return &ops.Error{Op: p.Op.Name, Input: "data", Err: &FeatureError{Feature: "shaderInt64"},
			Msg: "vulkan: tensors of more than 2^31 elements (or 64-bit positions) need shaderInt64, which the device lacks"}
	}
	return nil
}

// tableMax is the most index positions (tuples, or indices) a FLAG_TABLE
// resolve takes: one workgroup, TABLE_RUN positions per invocation.
const tableMax = tableRun * groupSize

// planTable makes a plan whose updates can collide (reduction none, owner
// words) resolve the last writer of every slot in a table in workgroup
// memory instead, where one workgroup can take its index positions (at
// most tableMax): the table is sized to the updates, while owner words,
// cleared, claimed and read, take 4 bytes per slot of the output, which
// for a large tensor patched in a few places is most of the call's
// traffic. Plans with more positions keep the owner words: their updates
// then cover a large part of the output, or the owner words' cost is
// shared by many updates (gather plans, with more updates than outputs,
// read them output-major). The table needs 32-bit positions and slots
// below NO_ROW.
func (f *facts) planTable(j *job) {
	if !f.table || j.flags&flagOwner == 0 || j.gather || j.posBits != 32 || j.resolve > tableMax || j.owners >= math.MaxUint32 {
		return
	}
	j.flags = j.flags&^flagOwner | flagTable
	j.owners = 0
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

// lacks returns the refusal of plan p on a device without feature (what
// it is, in words): an *ops.Error naming the operator, the reduction and
// the dtype, wrapping a FeatureError.
func lacks(p *ops.Plan, feature, what string) error {
	return &ops.Error{Op: p.Op.Name, Input: "reduction", Err: &FeatureError{Feature: feature},
		Msg: fmt.Sprintf("vulkan: reduction %s on %v data needs %s (%s), which the device lacks", p.ReductionName(), p.DType, feature, what)}
}
