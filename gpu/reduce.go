//go:build cgo

package gpu

import (
	"fmt"
	"math/bits"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// orderedSmall is the default Backend.orderedMax: float sum, sub, prod and
// mean plans with at most this many update elements fold in index order
// even without Options.Deterministic. The sort then costs a few small
// dispatches, while the results become reproducible and bit-identical to
// the CPU reference.
const orderedSmall = 1 << 12

// Private accumulation (shaders/src/scatter.comp, FLAG_PRIVATE) pays when
// updates pile onto few outputs: it needs at least privateMinRatio
// updates per output element, and each workgroup takes at least
// privateShare updates per output element so that its final fold into the
// output (one atomic per element it touched) stays a small part of its
// work.
const (
	privateMinRatio = 4
	privateShare    = 16
)

// reduction is how a plan with a reduction runs on this device. Atomic
// plans resolve, optionally prepare (use_init_val false, mean), scatter
// with atomics and optionally finish (mean); ordered plans resolve with
// counts, scan the counts into slot starts, sort the update positions by
// slot and fold every slot in order.
type reduction struct {
	dtype   tensor.DType
	red     shaders.Reduction
	useInit bool

	ordered bool // the in-order fold; see also job.walk
	atomics shaders.Atomics
	private bool
	// countBytes is T_COUNT's size: a word per output element where the
	// atomics are counted (Options.CountAtomics), else 0.
	countBytes uint64
	// hot: the atomic scatter folds each workgroup's hot targets in
	// workgroup memory first (planHot, FLAG_HOT).
	hot    bool
	groups uint32 // private: workgroups of the scatter pass
	// words: private: the workgroup memory, in words, of its copy of the
	// output (privateWords; the pipeline's SPEC_PRIV_WORDS).
	words uint32

	// counts: resolve counts the updates of every slot (FLAG_COUNT).
	counts          bool
	prepare, finish bool
	accBytes        uint64 // T_ACC

	// The ordered path: items sorted (update elements, or index tuples),
	// slots they sort into (output elements, or rows), elements per slot,
	// radix passes (0 when there is one slot) and tiles (of sortRun runs)
	// per pass. carry: slots of one element sort the update elements
	// themselves along with the keys, in vwords 32-bit words each (2 for
	// 8-byte elements), else the items' positions (vwords 1).
	items, slots, inner uint64
	passes              int
	tiles               uint64
	carry               bool
	vwords              uint64
	scanWords           uint64 // T_SCAN
	// chain is the longest list a slot can have, segments the number of
	// fold passes: one per segment of it; listWords the size of T_LIST, which
	// names the slots whose lists take more than one (a count, then at
	// most items/(segment+1) slots).
	chain     uint64
	segments  uint64
	listWords uint64
	// bucket: the bucketed fold (planBucket): one radix pass by the top
	// digit of the slot, bits bshift and up, so that a bucket of
	// 1<<bshift slots lies together in index order; then one workgroup
	// per bucket folds it in workgroup memory (reduce.comp, BUCKET),
	// segments passes at most, T_LIST holding the lists of the buckets not
	// yet done and their next items between them. No counts, no slot
	// starts. bsplit > 0 (facts.splitBuckets): the sort takes a radix
	// pass by the digit bsplit bits under the top one first, so that a
	// digit's items lie in order of the slot's top 8+bsplit bits, and
	// each digit's bucket is folded as 1<<bsplit buckets of 1<<bshift
	// slots, a workgroup each (bshift is the fold's: the top digit starts
	// at bit bshift+bsplit).
	bucket bool
	bshift uint
	bsplit uint
}

// planReduction decides how the reduction of p runs on a device with
// facts f and sets j.red, the owner (count) words and the flags. It fails
// with ops.ErrUnsupported where the in-order fold is needed but the plan
// is too large for its 32-bit positions, and with a FeatureError where
// the device lacks the workgroup memory the fold needs (planJob refuses
// float64 sum, sub, prod and mean without shaderFloat64 before).
func (f *facts) planReduction(p *ops.Plan, j *job) error {
	r := &reduction{dtype: p.DType, red: shaders.ReductionOf(p.Reduction), useInit: p.UseInitVal}
	j.red = r
	j.flags |= flagXTables | f.softFlags(p)
	if r.useInit {
		j.flags |= flagUseInit
	}
	if j.updates == 0 {
		return nil // resolve alone checks the indices
	}
	elem := uint64(p.DType.Size())
	// Without shaderInt64 there are no 64-bit atomics either.
	no64 := elem == 8 && (!f.int64Atomics || f.noInt64)
	switch {
	case f.walks(j) && !no64:
		// Folds in index order with no atomics, so deterministic modes
		// need nothing more; but the kernel is a variant of the atomic
		// scatter, whose 8-byte code declares 64-bit atomics.
		j.walk = true
		j.flags |= flagWalk
	case j.skip && no64:
		// The sort of the in-order fold has a place for every update:
		// none for one that a bad index skips.
		return &ops.Error{Op: p.Op.Name, Input: "reduction", Err: &FeatureError{Feature: "shaderBufferInt64Atomics"},
			Msg: fmt.Sprintf("vulkan: SkipBadIndices on a resident tensor with reduction %s on %v data needs shaderBufferInt64Atomics (without 64-bit atomics the call folds in order, whose sort cannot leave out a skipped update), which the device lacks; run it without SkipBadIndices, or with Execute",
				p.ReductionName(), p.DType)}
	case j.skip && p.Reduction.OrderSensitive(p.DType) && f.deterministic:
		return unsupported(p, "SkipBadIndices on a resident tensor with reduction %s on %v data in deterministic mode: the in-order fold's sort cannot leave out a skipped update; run it without SkipBadIndices, or with Execute",
			p.ReductionName(), p.DType)
	case p.Reduction.OrderSensitive(p.DType) && (f.deterministic || j.updates <= f.orderedMax && f.sortFits(p, j) && !j.skip):
		// Small plans fold in order only where the device can sort
		// them; else they take the atomics as large ones do. Integer,
		// bool, min and max plans need no order: any gives cpuref's bits
		// (float min and max NaNs included), so deterministic mode
		// leaves them on the atomics.
		r.ordered = true
	case no64:
		// Neither 64-bit atomics nor 64-bit compare-and-swap: fold in
		// order, which needs none.
		r.ordered = true
	}
	if r.ordered {
		return f.planOrdered(p, j, r)
	}
	r.atomics = f.atomics(p, j, r)
	if p.Kind == ops.KindElements && (p.Reduction == ops.Mean || !r.useInit) {
		r.counts = true
		r.prepare = true
		j.flags |= flagCount
		j.owners = j.outputs
	}
	if p.Reduction == ops.Mean {
		r.finish = true
		if p.DType.IsInteger() && elem <= 4 {
			r.accBytes = 8 * j.outputs
		}
	}
	f.planPrivate(p, j, r)
	f.planHot(p, j, r)
	f.planDirect(j, r)
	if f.countAtomics && !j.walk {
		j.flags |= flagCountAtomics
		r.countBytes = 4 * j.outputs
	}
	return nil
}

// planDirect makes an atomic reduction's scatter (not a column walk, which
// reads its indices along the column) read and check the raw
// indices itself (FLAG_DIRECT) where resolve would only normalise them
// (no counts to take): on an output of the backend's own (Execute) with no
// resolve pass at all, since a bad index only makes the host discard the
// output; on a caller's tensor after a resolve pass that only checks them,
// where reading the indices twice costs less than writing a normalised
// word per index tuple and reading it back with the tuple's position word
// (indices of under 8 bytes a tuple; of exactly 8 on GPUs, facts.directTie:
// an in-place sum with one int64 index per update then moves its Execute
// plan's bytes and its indices' once more, the least a check before any
// write allows).
func (f *facts) planDirect(j *job, r *reduction) {
	if r.counts || j.walk || j.resolve == 0 {
		return
	}
	switch {
	case f.ownOutput, j.skip:
		// No pass before: a bad index only makes the host discard the
		// output, or (SkipBadIndices) skips its updates.
	case uint64(j.indexBytes)*j.indices < 8*j.resolve,
		f.directTie && uint64(j.indexBytes)*j.indices == 8*j.resolve:
		j.check = true
	default:
		return
	}
	j.direct = true
	j.flags |= flagDirect
	if j.indexSigned {
		j.flags |= flagIndexSigned
	}
	switch j.indexBytes {
	case 2:
		j.flags |= flagIndex2
	case 4:
		j.flags |= flagIndex4
	case 8:
		j.flags |= flagIndex8
	}
}

// atomics returns how the atomic path updates an element: with the
// device's atomic instruction where it has one for the step and a variant
// uses it; float32 min and max on integer atomics where the device lacks
// float32 atomic add (which the native float32 variants need); else with
// compare-and-swap loops.
func (f *facts) atomics(p *ops.Plan, j *job, r *reduction) shaders.Atomics {
	if f.forceCAS {
		return shaders.CAS
	}
	native := true
	switch p.DType {
	case tensor.Float32:
		native = f.float32Add
	case tensor.Float64:
		native = f.float64Add
	}
	if _, err := shaders.Lookup(r.scatterKey(j, shaders.Native)); native && err == nil {
		return shaders.Native
	}
	if _, err := shaders.Lookup(r.scatterKey(j, shaders.IntMinMax)); err == nil {
		return shaders.IntMinMax
	}
	return shaders.CAS
}

// planPrivate turns on the workgroup-memory accumulation where many
// updates share few outputs: outputs of up to shaders.PrivateWords words,
// or on GPUs (facts.widePrivate) of up to what the device's workgroup
// memory holds.
func (f *facts) planPrivate(p *ops.Plan, j *job, r *reduction) {
	elem := uint64(p.DType.Size())
	tile := groupSize * uint64(f.run)
	need, capacity := ceilDiv(j.outputs*elem, 4), uint64(shaders.PrivateWords)
	if f.widePrivate {
		capacity = shaders.PrivateCapacity(f.sharedMax)
	}
	if !j.walk && !f.noPrivate && j.posBits == 32 && elem <= 4 && p.DType != tensor.Bool && p.Reduction != ops.Mean &&
		need <= capacity && j.updates >= privateMinRatio*j.outputs {
		groups := ceilDiv(j.updates, max(tile, privateShare*j.outputs))
		if groups <= uint64(f.maxGroups[0]) {
			r.private = true
			r.groups = uint32(groups)
			r.words = privateWords(need, f.sharedMax)
			j.flags |= flagPrivate
		}
	}
}

// privateWords returns the words the workgroup-memory scatter's pipeline
// takes for an output of need words: shaders.PrivateWords doubled until
// it holds them, at most the device's capacity. The steps keep the
// pipelines a backend creates few, and a small output from taking
// workgroup memory that would leave fewer workgroups resident.
func privateWords(need, shared uint64) uint32 {
	w := uint64(shaders.PrivateWords)
	for w < need {
		w *= 2
	}
	return uint32(min(w, shaders.PrivateCapacity(shared)))
}

// planHot makes an atomic scatter fold the updates of each workgroup's hot
// targets in workgroup memory before they reach the output (FLAG_HOT,
// scatter.comp's scatterHot): where targets follow a power law, the hot
// ones take one global atomic per workgroup instead of one per update,
// which would queue on their addresses. It serves the plans the
// workgroup-memory scatter serves (elements of at most 4 bytes, not bool,
// no mean, 32-bit positions) whose outputs are too large for it, with at
// least 2*groupSize updates, and whose indices, where they are on the
// host (Execute, PlanFor of a request with data), look skewed to a sample
// (skewedIndices): a uniform call does not pay the census.
func (f *facts) planHot(p *ops.Plan, j *job, r *reduction) {
	if r.private || j.walk || f.noHot || j.posBits != 32 || p.DType.Size() > 4 || p.DType == tensor.Bool ||
		p.Reduction == ops.Mean || j.updates < 2*groupSize || !skewedIndices(p) {
		return
	}
	r.hot = true
	j.flags |= flagHot
}

// The sample skewedIndices reads: hotSample index values, of which
// hotSampled or more equal means skewed.
const (
	hotSample  = 1024
	hotSampled = 8
)

// skewedIndices reports whether a sample of p's index values shows one
// value that hotSampled of hotSample positions hold (about 1/128 of the
// updates or more: a uniform call into K targets reaches that with K
// around 128 or fewer, where the census pays too), or p's indices are not
// on the host (a resident call: each workgroup's census decides on the
// device). An index value is a target's coordinate along the indexed
// dimension (ScatterND: the tuple's first; negative ones counted as their
// positive form), so a hot target's value is at least as frequent as the
// target: the sample can take a spread call for skewed, never a skewed
// one for spread. Positions are a fixed pseudo-random sample (all of them
// below hotSample), so the decision is a function of the call and PlanFor
// and Execute make the same one.
func skewedIndices(p *ops.Plan) bool {
	seen := make(map[int64]int, hotSample)
	skewed := false
	onHost := sampleIndices(p, func(v int64) bool {
		seen[v]++
		skewed = seen[v] >= hotSampled
		return !skewed
	})
	return skewed || !onHost
}

// sampleIndices calls visit with each index value of skewedIndices'
// sample, in its order, until visit returns false, and reports whether
// p's indices are on the host to be sampled.
func sampleIndices(p *ops.Plan, visit func(v int64) bool) bool {
	step := 1
	if p.Kind == ops.KindND {
		step = p.TupleLen
	}
	n := p.NumIndices()
	if p.Indices == nil || step < 1 || n == 0 || len(p.Indices.Data) < n*p.Indices.DType.Size() {
		return false
	}
	items := n / step
	for i := 0; i < min(items, hotSample); i++ {
		item := i
		if items > hotSample {
			// Fibonacci hashing of i: spread over [0, items).
			item = int((uint64(i) * 0x9E3779B97F4A7C15 >> 11) % uint64(items))
		}
		pos := item * step
		v, _ := p.Indices.IntAt(pos)
		if v < 0 {
			v += int64(p.Shape[p.IndexDim(pos)]) // -1 and s-1 are one target
		}
		if !visit(v) {
			break
		}
	}
	return true
}

// hottestUpdates estimates, from skewedIndices' sample, how many of p's
// updates meet its most frequent target (cost.Pass.Hottest): the
// sample's share of its most frequent value times the updates, where an
// index value names one target (ScatterElements of one dimension,
// ScatterND of single elements); 0 elsewhere, and where the indices are
// not on the host.
func hottestUpdates(p *ops.Plan) uint64 {
	elems := (p.Kind == ops.KindElements && len(p.Shape) == 1) || (p.Kind == ops.KindND && p.TupleLen == len(p.Shape))
	if !elems {
		return 0
	}
	seen := make(map[int64]int, hotSample)
	most, sampled := 0, 0
	if !sampleIndices(p, func(v int64) bool {
		seen[v]++
		most, sampled = max(most, seen[v]), sampled+1
		return true
	}) || sampled == 0 {
		return 0
	}
	return uint64(most) * uint64(p.NumUpdates()) / uint64(sampled)
}

// planOrdered fills in the in-order fold.
func (f *facts) planOrdered(p *ops.Plan, j *job, r *reduction) error {
	r.items = j.resolve
	r.inner = 1
	r.slots = orderedSlots(p, j)
	if p.Kind == ops.KindND {
		r.inner = uint64(p.Inner)
	} else {
		j.flags |= flagTarget // sort by target, not by index value
	}
	if r.items > narrowLimit || r.slots+1 > narrowLimit {
		return unsupported(p, "the in-order fold takes at most 2^31 updates and targets; this plan has %d and %d", r.items, r.slots)
	}
	if !f.sortFits(p, j) {
		return &ops.Error{Op: p.Op.Name, Input: "data", Err: &FeatureError{Feature: fmt.Sprintf("%d bytes of workgroup memory", sortSharedBytes)},
			Msg: fmt.Sprintf("vulkan: the in-order fold's sort takes %d bytes of workgroup memory; the device's maxComputeSharedMemorySize is %d",
				sortSharedBytes, f.sharedMax)}
	}
	r.carry, r.vwords = r.inner == 1, 1
	if r.carry && p.DType.Size() == 8 {
		r.vwords = 2
	}
	r.tiles = ceilDiv(r.items, groupSize*sortRun)
	keyBits := bits.Len64(r.slots - 1)
	if f.planBucket(p, j, r, keyBits) {
		return nil
	}
	r.counts = true
	j.flags |= flagCount
	j.owners = r.slots + 1 // counts, then scanned into starts
	// The longest list a slot can have: an Element target receives the
	// updates of its own column only, a row any index tuple.
	r.chain = r.items
	if p.Kind == ops.KindElements {
		r.chain = min(r.chain, uint64(p.J))
	}
	r.segments = ceilDiv(r.chain, segment)
	if r.segments > 1 {
		r.listWords = 1 + r.items/(segment+1)
		if p.Reduction == ops.Mean && p.DType.IsInteger() && p.DType.Size() <= 4 {
			r.accBytes = 8 * j.outputs // partial sums between the passes
		}
	}
	r.passes = (keyBits + radixBits - 1) / radixBits
	r.scanWords = max(scanScratch(r.slots+1, f.scanBlock()), scanScratch(radixDigits*r.tiles, f.scanBlock()))
	if r.passes > 0 && radixDigits*r.tiles > narrowLimit {
		return unsupported(p, "the in-order fold's sort needs %d tile counts; at most 2^31", radixDigits*r.tiles)
	}
	return nil
}

// bucketPass is the fewest items of a bucket that each pass of the
// bucketed fold folds, unless the bucket ends first: it takes chunks of
// groupSize items while an invocation's steps stay within segment, and a
// chunk costs at most 2*groupSize of them (reduce.comp, bucketFold).
const bucketPass = segment / (2 * groupSize) * groupSize

// planBucket makes the in-order fold of r bucketed where that serves:
// slots of one element (the updates carried through the sort), every
// reduction but mean (whose division needs every slot's count) with
// use_init_val, and more than one radix pass's worth of slots, but no
// more slots than one pass sorts into buckets that fit the workgroup
// memory of the bucketed kernel (bucketWords words: 2^20 slots of up to
// 4 bytes, 2^19 of 8). One radix pass by the top digit then replaces the
// counts, the scan of the slot starts and every other radix pass: the
// fold reads each item's slot and value once, and each bucket's elements
// once a pass. It reports whether it did.
func (f *facts) planBucket(p *ops.Plan, j *job, r *reduction, keyBits int) bool {
	if f.noBuckets || !r.carry || p.Reduction == ops.Mean || !r.useInit || keyBits <= radixBits {
		return false
	}
	shift := keyBits - radixBits
	if uint64(1)<<shift > bucketWords/r.vwords || radixDigits*r.tiles > narrowLimit {
		return false
	}
	v, err := shaders.Lookup(r.bucketKey(j))
	if err != nil || f.sharedMax != 0 && uint64(v.SharedBytes) > f.sharedMax {
		return false
	}
	r.bucket, r.bshift, r.passes = true, uint(shift), 1
	if f.splitBuckets && shift >= bucketSplitBits {
		r.bshift, r.bsplit = uint(shift-bucketSplitBits), bucketSplitBits
	}
	nb := uint64(radixDigits) << r.bsplit
	r.listWords = 3*(1+nb) + nb // reduce.comp's B_LIST and B_NEXT
	r.scanWords = scanScratch(radixDigits*r.tiles, f.scanBlock())
	r.segments = 1 + ceilDiv(r.items-min(r.items, bucketPass), bucketPass)
	return true
}

// sortSharedBytes is the workgroup memory of the sort's scatter stage
// (STAGE_RADIX_SCATTER of shaders/src/sort.comp), the most of any kernel
// but the last-writer table's resolve (4*tableWords): the workgroup scan's
// scanA, scanB (a uvec4 per invocation each) and segA, segB (a uvec4 per
// segment of 8 invocations each), then dbase, dstart (a word per digit),
// nibTotal (16 words) and the sorted tile (a word per item).
// TestWorkgroupMemory checks it against the SPIR-V.
const sortSharedBytes = 2*16*groupSize + 2*16*(groupSize/8) + 4*(2*radixDigits+16+groupSize*sortRun)

// orderedSlots returns the slots the in-order fold of j sorts its updates
// into: a row per index tuple of an ND plan, else an output element.
func orderedSlots(p *ops.Plan, j *job) uint64 {
	if p.Kind == ops.KindND {
		return j.params[pRows]
	}
	return j.outputs
}

// sortFits reports whether the in-order fold of j can run on the device:
// the sort, which every plan of more than one slot takes, needs
// sortSharedBytes of workgroup memory (more than the 16 KiB Vulkan
// guarantees).
func (f *facts) sortFits(p *ops.Plan, j *job) bool {
	return f.sharedMax == 0 || f.sharedMax >= sortSharedBytes || orderedSlots(p, j) <= 1
}

// scanScratch returns the words of T_SCAN that a scan of n words in
// blocks of blk needs: the block totals of every level above the first.
func scanScratch(n, blk uint64) uint64 {
	var words uint64
	for n > blk {
		n = ceilDiv(n, blk)
		words += n
	}
	return words
}

// scatterKey returns the scatter variant of an atomic reduction.
func (r *reduction) scatterKey(j *job, a shaders.Atomics) shaders.Key {
	return shaders.Key{Family: shaders.Scatter, Kind: j.kind, PosBits: j.posBits, NoInt64: j.noInt64, ElemBytes: r.dtype.Size(),
		Reduction: r.red, DType: r.dtype, Atomics: a, Private: r.private || r.hot}
}

// reduceKey returns the variant of the element-wise passes.
func (r *reduction) reduceKey(j *job) shaders.Key {
	return shaders.Key{Family: shaders.Reduce, PosBits: j.posBits, NoInt64: j.noInt64, ElemBytes: r.dtype.Size(), Reduction: r.red, DType: r.dtype}
}

// bucketKey returns the variant of the bucketed fold.
func (r *reduction) bucketKey(j *job) shaders.Key {
	k := r.reduceKey(j)
	k.Private = true
	return k
}

// describe names the path of j's reduction for Stats.Reduction.
func (r *reduction) describe(j *job) string {
	if r.ordered {
		return "ordered"
	}
	if j.walk {
		return "walk"
	}
	s := r.atomics.String()
	if r.private {
		s += "+private"
	}
	if r.hot {
		s += "+hot"
	}
	return s
}

// tensorSizes returns the byte sizes of the call's tensors T_ACC ...
// T_SCAN.
func (r *reduction) tensorSizes() (sizes [numTensors - tAcc]uint64) {
	sizes[tAcc-tAcc] = r.accBytes
	sizes[tList-tAcc] = 4 * r.listWords
	sizes[tCount-tAcc] = r.countBytes
	if !r.ordered || r.passes == 0 {
		return sizes
	}
	sizes[tV1-tAcc] = 4 * r.vwords * r.items
	if r.bucket {
		sizes[tK1-tAcc] = 4 * r.items // the fold reads the slots
		if r.bsplit > 0 {
			sizes[tK2-tAcc], sizes[tV2-tAcc] = 4*r.items, 4*r.vwords*r.items // the first radix pass's
		}
	}
	if r.passes > 1 {
		sizes[tK1-tAcc] = 4 * r.items
		sizes[tK2-tAcc], sizes[tV2-tAcc] = 4*r.items, 4*r.vwords*r.items
	}
	sizes[tHist-tAcc] = 4 * radixDigits * r.tiles
	sizes[tScan-tAcc] = 4 * r.scanWords
	return sizes
}
