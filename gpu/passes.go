//go:build cgo

package gpu

import (
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/vk"
)

// sortKey returns the variant of a Sort stage (noInt64: its 32-bit
// baseline).
func sortKey(s shaders.Stage, noInt64 bool) shaders.Key {
	return shaders.Key{Family: shaders.Sort, PosBits: 32, NoInt64: noInt64, Stage: s}
}

// planPasses lists the call's passes: the clearing of the owner words,
// resolve, and the scatter (or gather, or copy regions, or the
// reduction's passes), each with the device bytes it moves (estimated
// from the plan's counts; the index values decide how many targets an
// update really meets).
func (pl *callPlan) planPasses() error {
	j := pl.j
	if j.owners > 0 {
		pl.passes = append(pl.passes, pass{label: "clear", kind: passFill, slot: tOwner, written: 4 * j.owners, once: pl.keepsOwners()})
	}
	if j.resolve > 0 && j.kind != shaders.Slice && (!j.direct || j.check) {
		read, written := uint64(j.indexBytes)*j.indices, 4*j.normWords()
		var atomics uint64
		if j.flags&(flagOwner|flagCount) != 0 {
			read, written = read+4*j.resolve, written+4*j.resolve
			atomics = j.resolve
		}
		key := shaders.Key{Family: shaders.Resolve, Kind: j.kind, PosBits: j.posBits, NoInt64: j.noInt64, IndexBytes: j.indexBytes, IndexSigned: j.indexSigned}
		if j.flags&flagTable != 0 {
			// One workgroup takes every position (planTable).
			key.Private = true
			pl.passes = append(pl.passes, pass{label: "resolve", kind: passDispatch, key: key, n: j.resolve, run: 1, strided: true,
				dispatches: []dispatch{{base: 0, end: j.resolve, groups: [3]uint32{1, 1, 1}}}, read: read, written: written, atomics: atomics})
		} else {
			pl.dispatch(pass{label: "resolve", key: key, n: j.resolve, read: read, written: written, atomics: atomics})
		}
	}
	if j.checks > 0 {
		// Cache, linear: the write indices, checked before the scatter.
		key := shaders.Key{Family: shaders.Resolve, Kind: j.kind, PosBits: j.posBits, NoInt64: j.noInt64, IndexBytes: j.indexBytes, IndexSigned: j.indexSigned}
		pl.dispatch(pass{label: "check", key: key, n: j.checks, read: uint64(j.indexBytes) * j.indices})
	}
	e := uint64(j.elemBytes)
	switch r := j.red; {
	case j.updates == 0:
	case j.kind == shaders.Cache:
		// Each update read and written once, and each write index read once
		// (cached: every invocation of a batch entry reads the same word).
		pl.scatter(j.updates*e+uint64(j.indexBytes)*j.indices, j.updates*e)
	case r == nil && j.copies:
		pl.passes = append(pl.passes, pass{label: "scatter", kind: passCopyRuns, copies: j.chunkCopies(pl.shift),
			read: j.updates * e, written: j.updates * e})
	case r == nil:
		read := j.updates*e + 4*j.resolve
		if j.owners > 0 {
			read += 4 * j.resolve
		}
		if j.flags&flagLater != 0 {
			// Each update reads the indices after its own along its
			// index dimension until one names its row (laterWins): at
			// most J-1-j of them, updates*(J-1)/2 words in all.
			J := j.params[pJ]
			read += 4 * (j.updates / J) * (J * (J - 1) / 2)
		}
		written := j.updates * e
		if pl.keepsOwners() {
			// The update that owns its target clears its owner word.
			written += 4 * min(j.updates, j.owners)
		}
		if j.gather {
			pl.scatter(4*j.owners+j.outputs*e, j.outputs*e) // output-major
		} else {
			pl.scatter(read, written)
		}
	case r.ordered:
		pl.ordered()
	default:
		pl.atomic()
	}
	for _, list := range [][]pass{pl.passes, pl.more} {
		for i := range list {
			if err := pl.split(&list[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// keepsOwners reports whether the call's owner words stay clear after it:
// an element plan of reduction none that claims them, whose scatter has
// the update that owns each target clear its word after writing (the
// others, which do not own it, never write), on a backend that keeps
// buffers (facts.keepOwners). The backend then clears the words only the
// first time, or after a call that failed, and its plan's figures leave
// the clear out.
func (pl *callPlan) keepsOwners() bool {
	j := pl.j
	return pl.f.keepOwners && j.red == nil && j.kind == shaders.Element && j.flags&flagOwner != 0 && !j.walk && !j.gather
}

// split splits a dispatch pass into the dispatches its kernel's workgroup
// size and the device's limits need, unless it has them already. It
// fails with ops.ErrUnsupported when the kernel has no variant, as
// creating its pipeline would, or takes more workgroup memory than the
// device offers.
func (pl *callPlan) split(ps *pass) error {
	if ps.kind != passDispatch {
		return nil
	}
	v, err := pipeKey{key: ps.key, words: ps.words}.variant()
	if err != nil {
		return err
	}
	if m := pl.f.sharedMax; m != 0 && uint64(v.SharedBytes) > m {
		return unsupported(pl.p, "kernel %s takes %d bytes of workgroup memory; the device offers %d (maxComputeSharedMemorySize)",
			v.Name, v.SharedBytes, m)
	}
	ps.local = v.LocalSize[0]
	if ps.dispatches == nil {
		ps.dispatches = splitDispatch(ps.n, v.LocalSize[0], ps.run, pl.f.maxGroups)
	}
	return nil
}

// invocations returns the invocations of a dispatch pass that have
// positions to handle: per dispatch, its positions over the run (one
// each where the workgroups stride over the positions, neighbouring
// invocations on neighbouring ones: the workgroup-memory scatter), at most
// the invocations its workgroups launch. Other passes have none.
func (ps *pass) invocations() uint64 {
	inv, _ := ps.withWork()
	return inv
}

// withWork returns the invocations and the workgroups of the pass's
// dispatches that have positions to handle.
func (ps *pass) withWork() (invocations, groups uint64) {
	per := uint64(max(ps.run, 1))
	if ps.strided {
		per = 1
	}
	for _, d := range ps.dispatches {
		launched := uint64(d.groups[0]) * uint64(d.groups[1]) * uint64(d.groups[2])
		inv := min(launched*uint64(ps.local), ceilDiv(d.end-d.base, per))
		invocations += inv
		groups += min(launched, ceilDiv(inv, uint64(max(ps.local, 1))))
	}
	return invocations, groups
}

// dispatch appends dispatch pass ps; a zero run means the backend's.
func (pl *callPlan) dispatch(ps pass) {
	ps.kind = passDispatch
	if ps.run == 0 {
		ps.run = pl.f.run
	}
	pl.passes = append(pl.passes, ps)
}

// scatterKey returns the scatter (or gather) variant of the call.
func (pl *callPlan) scatterKey() shaders.Key {
	j := pl.j
	k := shaders.Key{Family: shaders.Scatter, Kind: j.kind, PosBits: j.posBits, NoInt64: j.noInt64, ElemBytes: j.elemBytes, Reduction: shaders.RedNone}
	if j.red != nil {
		k = j.red.scatterKey(j, j.red.atomics)
	}
	if j.gather {
		k.Family = shaders.Gather
	}
	return k
}

// scatter appends the scatter (or gather) pass of reduction none or of an
// atomic or walked reduction, its workgroup-memory form aside, moving
// read and written bytes. A walk takes one pass per segment of J, one
// column per invocation, the bytes shared among them.
func (pl *callPlan) scatter(read, written uint64) {
	j := pl.j
	if !j.walk {
		ps := pass{label: "scatter", key: pl.scatterKey(), n: j.scatterInvocations(), read: read, written: written}
		if j.red != nil && j.red.hot && pl.f.run > 1 {
			// On CPU devices each workgroup's census and barriers cost
			// a few microseconds: runs of maxRun spread them over 4 times
			// the updates of the usual runs.
			ps.run = maxRun
		}
		pl.dispatch(ps)
		return
	}
	// Each segment moves its share of the J rows of every column.
	segs, J := j.walkSegments(), j.params[pJ]
	var doneR, doneW uint64
	for s := uint64(0); s < segs; s++ {
		chain := min(segment, J-s*segment)
		r, w := read/J*chain+read%J*chain/J, written/J*chain+written%J*chain/J
		if s == segs-1 {
			r, w = read-doneR, written-doneW
		}
		doneR, doneW = doneR+r, doneW+w
		pl.dispatch(pass{label: "scatter", key: pl.scatterKey(), n: j.columns(), run: 1, seg: uint32(s), chain: chain, read: r, written: w})
	}
}

// atomic appends an atomic (or walked) reduction's passes: prepare,
// scatter, finish.
func (pl *callPlan) atomic() {
	j, r := pl.j, pl.j.red
	e := uint64(j.elemBytes)
	reduce := r.reduceKey(j)
	if r.prepare {
		pl.dispatch(pass{label: "prepare", key: reduce, n: j.outputs, args: []uint32{argPhase: phasePrepare},
			read: j.outputs * e, written: j.outputs*e + r.accBytes})
	}
	if r.countBytes > 0 {
		pl.passes = append(pl.passes, pass{label: "clear", kind: passFill, slot: tCount, written: r.countBytes})
	}
	// Atomics read and write the target of every update.
	read, written := j.updates*(2*e+4)+4*j.resolve, j.updates*e
	if j.direct {
		// The scatter reads the raw indices instead of normalised ones.
		read = j.updates*2*e + uint64(j.indexBytes)*j.indices
	}
	if r.private {
		// One 1-D dispatch of r.groups workgroups; each strides over the
		// updates (scatter.comp, scatterPrivate), with an atomic in
		// workgroup memory per update.
		pl.passes = append(pl.passes, pass{label: "scatter", kind: passDispatch, key: pl.scatterKey(), words: r.words, n: j.updates, run: pl.f.run, strided: true,
			dispatches: []dispatch{{base: 0, end: j.updates, groups: [3]uint32{r.groups, 1, 1}}}, read: read, written: written, atomics: j.updates})
	} else {
		pl.scatter(read, written)
		if !j.walk {
			pl.passes[len(pl.passes)-1].atomics = j.updates
		}
	}
	if r.finish {
		pl.dispatch(pass{label: "finish", key: reduce, n: j.outputs, args: []uint32{argPhase: phaseFinish},
			read: j.outputs*e + r.accBytes + 4*j.owners, written: j.outputs * e})
	}
}

// ordered appends the in-order fold: the slot starts (an exclusive scan
// of the counts resolve took), the radix sort by slot of the update
// elements (slots of one element) or positions, and the fold, one pass
// per segment of the longest list.
func (pl *callPlan) ordered() {
	j, r := pl.j, pl.j.red
	if r.bucket {
		pl.bucketed()
		return
	}
	pl.scan(tOwner, r.slots+1)
	// The first pass reads the update elements (carry) or takes the
	// positions as values; the fold reads the last pass's values.
	sorted := uint32(tNone)
	kin, vin := uint32(tNorm), uint32(tNone)
	if r.carry {
		vin = tUpd
	}
	for pass := 0; pass < r.passes; pass++ {
		kout, vout := uint32(tK1), uint32(tV1)
		if pass%2 == 1 {
			kout, vout = tK2, tV2
		}
		if pass == r.passes-1 {
			kout = tNone // the keys are not needed after the last pass
		}
		args := []uint32{argN: uint32(r.items), argShift: uint32(pass * radixBits), argTiles: uint32(r.tiles),
			argKIn: kin, argVIn: vin, argKOut: kout, argVOut: vout, argVWords: uint32(r.vwords), argElem: uint32(j.elemBytes)}
		pl.radix(args)
		kin, vin, sorted = kout, vout, vout
	}
	perm, vals := sorted, uint32(tNone)
	if r.carry {
		perm, vals = tNone, sorted
	}
	// Segment 0 of every slot, then the further segments of the slots
	// that segment 0 listed (at most listWords-1 of them).
	list := uint32(tNone)
	if r.segments > 1 {
		list = tList
		pl.passes = append(pl.passes, pass{kind: passFill, slot: tList, written: 4 * r.listWords})
	}
	for seg := uint64(0); seg < r.segments; seg++ {
		n := r.slots * r.inner
		if seg > 0 {
			n = (r.listWords - 1) * r.inner
		}
		args := []uint32{argPhase: phaseFold, argInnerLo: uint32(r.inner), argInnerHi: uint32(r.inner >> 32),
			argPerm: perm, argSeg: uint32(seg), argList: list, argVals: vals}
		read, written := pl.foldBytes(seg, perm != tNone, vals != tNone)
		// One position per invocation: a run of positions would make an
		// invocation's loop run up to run*segment times.
		pl.dispatch(pass{label: "fold", key: r.reduceKey(j), n: n, run: 1, args: args, seg: uint32(seg),
			chain: min(segment, r.chain-seg*segment), read: read, written: written})
		if seg > 0 {
			pl.deferLast()
		}
	}
}

// bucketed appends the bucketed fold: one radix pass by the top digit of
// the slot (two where split: reduction.bsplit), carrying the update
// elements and writing the slots too, then
// the fold, one workgroup per bucket, in as many passes as its longest
// bucket needs (the first pass says how many: call.further).
func (pl *callPlan) bucketed() {
	j, r := pl.j, pl.j.red
	radix := func(shift uint, kin, vin, kout, vout uint32) {
		pl.radix([]uint32{argN: uint32(r.items), argShift: uint32(shift), argTiles: uint32(r.tiles),
			argKIn: kin, argVIn: vin, argKOut: kout, argVOut: vout, argVWords: uint32(r.vwords), argElem: uint32(j.elemBytes)})
	}
	kin, vin := uint32(tNorm), uint32(tUpd)
	if r.bsplit > 0 {
		// A split fold: by the digit bsplit bits under the top one first,
		// so that the pass by the top digit leaves each digit's items in
		// order of the slot's top 8+bsplit bits (index order within them).
		radix(r.bshift, kin, vin, tK2, tV2)
		kin, vin = tK2, tV2
	}
	radix(r.bshift+r.bsplit, kin, vin, tK1, tV1)
	buckets := (r.slots-1)>>r.bshift + 1
	if r.segments > 1 {
		// The lists of the buckets not yet done start empty.
		pl.passes = append(pl.passes, pass{kind: passFill, slot: tList, written: 4 * r.listWords})
	}
	for seg := uint64(0); seg < r.segments; seg++ {
		args := []uint32{argPhase: phaseFold, argSeg: uint32(seg), argList: tList, argVals: tV1, argBKeys: tK1,
			argBTiles: uint32(r.tiles), argBShift: uint32(r.bshift), argBItems: uint32(r.items), argBSlots: uint32(r.slots),
			argBSplit: uint32(r.bsplit)}
		groups := bucketsLeft(seg, buckets, r.items)
		read, written := pl.bucketBytes(seg, groups)
		pl.dispatch(pass{label: "fold", key: r.bucketKey(j), n: groups * groupSize, run: 1, args: args, seg: uint32(seg),
			chain: segment, read: read, written: written})
		if seg > 0 {
			pl.deferLast()
		}
	}
}

// deferLast moves the last pass to pl.more: a further fold pass, recorded
// only as far as the longest chain or bucket the first fold pass finds
// needs (call.further).
func (pl *callPlan) deferLast() {
	last := len(pl.passes) - 1
	pl.more = append(pl.more, pl.passes[last])
	pl.passes = pl.passes[:last]
}

// bucketsLeft returns the most buckets, of so many over items, that pass
// seg of the bucketed fold can have to fold: every one in pass 0; in a
// later pass only those that held more than seg*bucketPass items, since
// every pass folds at least bucketPass of each.
func bucketsLeft(seg, buckets, items uint64) uint64 {
	if seg == 0 {
		return buckets
	}
	return max(1, min(buckets, items/(seg*bucketPass+1)))
}

// bucketBytes returns the device bytes that pass seg of the bucketed fold,
// over at most so many buckets, reads and writes at most: each bucket's
// bounds (two tile counts), in a later pass also the list's count, its
// entry and its next item; the slot and value of every item it folds (all
// of them in pass 0, those not folded before in a later one); its
// elements, read and written back; a listed bucket's next item, and for
// a bucket left unfinished its next item and its entry in the next list.
func (pl *callPlan) bucketBytes(seg, buckets uint64) (read, written uint64) {
	r := pl.j.red
	e := uint64(pl.j.elemBytes)
	items, slots := r.items, r.slots
	if seg > 0 {
		items -= min(items, seg*bucketPass)
		slots = min(slots, buckets<<r.bshift)
	}
	read = 8*buckets + items*(4+4*r.vwords) + slots*e
	if r.bsplit > 0 {
		read += 2 * 32 * 4 * buckets // each bucket's two binary searches of its digit's slots
	}
	written = slots*e + 8*bucketsLeft(seg+1, buckets, r.items) + 4 // and a list's count emptied
	if seg > 0 {
		read += 4 + 8*buckets
		written += 4 * buckets // a listed bucket's next item, done or not
	}
	return read, written
}

// foldBytes returns the device bytes that segment seg of the in-order fold
// reads and writes at most, charged for the slots it can fold and the
// updates they can hold, not for every update: segment 0 visits every
// slot (its start and end), folds at most segment updates of each and
// reads (with use_init_val) and writes the element of every slot that
// has any; segment s > 0 folds only the listed slots that hold more than
// s segments, at most min(listWords-1, items/(s*segment+1)) of them, and
// at most the items the earlier segments left. An update folded reads
// its value carried through the sort (vals), or its position in the
// sorted list (perm) and its elements.
func (pl *callPlan) foldBytes(seg uint64, perm, vals bool) (read, written uint64) {
	j, r := pl.j, pl.j.red
	e := uint64(j.elemBytes)
	// Bytes read per update folded: its sorted position once (perm), and
	// each of its inner elements, or its value carried through the sort
	// (vals, slots of one element).
	perItem, perElem := uint64(0), e
	switch {
	case vals:
		perElem = 4 * r.vwords
	case perm:
		perItem = 4
	}
	listed := r.listWords - min(r.listWords, 1) // slots the list can name
	slots, folded := min(r.slots, r.items), min(r.items, r.slots*segment)
	read, written = 4*(r.slots+1), 0
	if seg > 0 {
		slots = min(listed, r.items/(seg*segment+1))
		folded = min(slots*segment, r.items-min(r.items, seg*segment))
		read = 4*(1+slots) + 8*slots // the list, then each slot's start and end
	} else if r.segments > 1 {
		written += 4 * (1 + listed) // the list of the longer slots
	}
	elems := slots * r.inner
	read += folded * (perItem + r.inner*perElem)
	if seg > 0 || r.useInit {
		read += elems * e // the element, or the partial fold
	}
	written += elems * e
	if r.accBytes > 0 && r.segments > 1 {
		// The mean's 64-bit partial sums between segments.
		if seg > 0 {
			read += 8 * elems
		}
		if seg+1 < r.segments {
			written += 8 * elems
		}
	}
	return read, written
}

// radix appends one pass of the radix sort: count digits per tile, scan
// the counts, scatter. The count reads the keys; the scatter reads the
// keys, the values unless they are the positions (the first pass) and
// the tile counts, and writes the values and, but for the last pass, the
// keys.
func (pl *callPlan) radix(args []uint32) {
	r := pl.j.red
	hist := 4 * radixDigits * r.tiles
	pl.dispatch(pass{label: "radix-count", key: sortKey(shaders.RadixCount, pl.j.noInt64), n: r.items, run: sortRun, args: args,
		read: 4 * r.items, written: hist})
	pl.scan(tHist, radixDigits*r.tiles)
	// Keys in (and out, but after the last pass), values in and out.
	vin, keys := 4*r.vwords*r.items, 4*r.items
	switch args[argVIn] {
	case tNone:
		vin = 0
	case tUpd:
		vin = r.items * uint64(pl.j.elemBytes)
	}
	if args[argKOut] == tNone {
		keys = 0
	}
	pl.dispatch(pass{label: "radix-scatter", key: sortKey(shaders.RadixScatter, pl.j.noInt64), n: r.items, run: sortRun, args: args,
		read: 4*r.items + vin + hist, written: keys + 4*r.vwords*r.items})
}

// scan appends an exclusive scan, in place, of the first n words of
// tensor x: each level's blocks are scanned and their totals written to
// the next level (in T_SCAN) until one block holds them all; then every
// level gets the scanned totals of the one above added back.
func (pl *callPlan) scan(x uint32, n uint64) {
	type level struct {
		t      uint32
		off, n uint64
	}
	blk := pl.f.scanBlock()
	levels := []level{{x, 0, n}}
	var off uint64
	for last := n; last > blk; {
		last = ceilDiv(last, blk)
		levels = append(levels, level{tScan, off, last})
		off += last
	}
	args := func(i int) []uint32 {
		l := levels[i]
		a := []uint32{argN: uint32(l.n), argX: l.t, argXOff: uint32(l.off), argY: tNone, argYOff: 0}
		if i+1 < len(levels) {
			a[argY], a[argYOff] = levels[i+1].t, uint32(levels[i+1].off)
		}
		return a
	}
	for i, l := range levels {
		pl.dispatch(pass{label: "scan", key: sortKey(shaders.ScanUp, pl.j.noInt64), n: l.n, run: uint32(blk / groupSize), args: args(i),
			read: 4 * l.n, written: 4*l.n + 4*ceilDiv(l.n, blk)})
	}
	for i := len(levels) - 2; i >= 0; i-- {
		l := levels[i]
		pl.dispatch(pass{label: "scan", key: sortKey(shaders.ScanDown, pl.j.noInt64), n: l.n, run: uint32(blk / groupSize), args: args(i),
			read: 4*l.n + 4*ceilDiv(l.n, blk), written: 4 * l.n})
	}
}

// copyRegions returns the regions that move a Slice plan's updates into
// the output, one contiguous run of j.rowRun() units each, as byte offsets
// of the two tensors (the parameter array's base and affine map).
func (j *job) copyRegions() []vk.CopyRegion {
	n := int(j.params[sNDims])
	size := func(i int) uint64 { return j.params[sDimsAt+3*i] }
	stride := func(i int) int64 { return int64(j.params[sDimsAt+3*i+2]) }
	unit, run := uint64(j.elemBytes), j.rowRun()
	rows := j.updates / run
	regions := make([]vk.CopyRegion, 0, rows)
	coord := make([]uint64, n)
	dst := int64(j.params[sBase])
	for r := uint64(0); r < rows; r++ {
		regions = append(regions, vk.CopyRegion{SrcOffset: r * run * unit, DstOffset: uint64(dst) * unit, Size: run * unit})
		// The next run: dimensions 1, 2, ... count up, innermost first.
		for i := 1; i < n; i++ {
			if coord[i]++; coord[i] < size(i) {
				dst += stride(i)
				break
			}
			dst -= int64(coord[i]-1) * stride(i)
			coord[i] = 0
		}
	}
	return regions
}

// chunkCopies returns the copy commands of a Slice plan whose runs move
// as copy regions (job.copies) between tensors in chunks of 2^shift
// bytes: its regions, split where either tensor's chunks end, one command
// per pair of source and destination chunks.
func (j *job) chunkCopies(shift uint) []chunkCopy {
	chunk := uint64(1) << shift
	type pair struct{ src, dst uint64 }
	at := map[pair]int{}
	var out []chunkCopy
	for _, r := range j.copyRegions() {
		for r.Size > 0 {
			n := min(r.Size, chunk-r.SrcOffset%chunk, chunk-r.DstOffset%chunk)
			k := pair{r.SrcOffset / chunk, r.DstOffset / chunk}
			i, ok := at[k]
			if !ok {
				i = len(out)
				at[k] = i
				out = append(out, chunkCopy{src: int(k.src), dst: int(k.dst)})
			}
			out[i].regions = append(out[i].regions, vk.CopyRegion{SrcOffset: r.SrcOffset % chunk, DstOffset: r.DstOffset % chunk, Size: n})
			r.SrcOffset, r.DstOffset, r.Size = r.SrcOffset+n, r.DstOffset+n, r.Size-n
		}
	}
	return out
}
