//go:build cgo

package gpu

import (
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/vk"
)

// sortKey returns the variant of a Sort stage.
func sortKey(s shaders.Stage) shaders.Key {
	return shaders.Key{Family: shaders.Sort, PosBits: 32, Stage: s}
}

// recorder records the passes of one call into its command buffer.
type recorder struct {
	b      *Backend
	seq    *vk.Sequence
	st     *Stats
	stamps bool
	pc     push   // the call's push constants; dispatches vary base, end and hot
	prefix string // the call's label prefix (batches of several calls)
}

// stamp writes a timestamp after the pass just recorded.
func (rc *recorder) stamp(label string) error {
	if !rc.stamps || label == "" {
		return nil
	}
	return wrapVK(rc.seq.Timestamp(rc.prefix + label))
}

// record records the passes of c: the copy of a resident data tensor into
// the output, the clearing of the owner words, resolve, and the scatter
// (or the reduction's passes).
func (rc *recorder) record(c *call) error {
	rc.pc, rc.prefix = c.pc, c.label
	j := c.j
	if c.copyFrom != nil {
		out := c.tensors[tOut]
		for i, buf := range c.copyFrom.bufs {
			if err := rc.seq.Copy(buf, 0, out.bufs[i], 0, c.copyFrom.sizes[i]); err != nil {
				return wrapVK(err)
			}
		}
		if len(c.copyFrom.bufs) > 0 {
			if err := rc.stamp("copy"); err != nil {
				return err
			}
		}
	}
	if j.owners > 0 {
		for _, buf := range c.tensors[tOwner].bufs {
			if err := rc.seq.Fill(buf, 0, 0, 0); err != nil {
				return wrapVK(err)
			}
		}
		if err := rc.stamp("clear"); err != nil {
			return err
		}
	}
	if c.keys.resolve != nil && j.resolve > 0 {
		if err := rc.dispatch(c.keys.pipes[*c.keys.resolve], j.resolve, nil, "resolve"); err != nil {
			return err
		}
	}
	switch {
	case j.updates == 0:
		return nil
	case j.copies:
		return rc.copyRuns(c)
	case j.red == nil:
		return rc.scatter(c.keys.pipes[c.keys.scatter], j)
	case j.red.ordered:
		return rc.ordered(c, c.keys.pipes)
	default:
		return rc.atomic(j, c.keys.pipes, c.keys.scatter)
	}
}

// dispatch records pipe over positions [0, n), in as many dispatches as
// the device's limits need. args, when not nil, replace the hot words (the
// reduce and sort kernels' arguments). A label stamps the pass.
func (rc *recorder) dispatch(pipe *vk.Pipeline, n uint64, args []uint32, label string) error {
	return rc.dispatchRun(pipe, n, rc.pc.run, args, label)
}

// dispatchRun is dispatch with run consecutive positions per invocation
// instead of the backend's.
func (rc *recorder) dispatchRun(pipe *vk.Pipeline, n uint64, run uint32, args []uint32, label string) error {
	pc := rc.pc
	pc.run = run
	if args != nil {
		pc.hot = [hotWords]uint32{}
		copy(pc.hot[:], args)
	}
	for _, d := range splitDispatch(n, pipe.Spec().LocalSize[0], run, rc.b.maxGroups) {
		pc.base, pc.end = d.base, d.end
		if err := rc.seq.Dispatch(pipe, nil, pc.bytes(), d.groups); err != nil {
			return wrapVK(err)
		}
		rc.st.Dispatches++
	}
	return rc.stamp(label)
}

// scatter records the scatter (or gather) pass of reduction none or of an
// atomic or walked reduction, its workgroup-memory form aside.
func (rc *recorder) scatter(pipe *vk.Pipeline, j *job) error {
	if j.walk {
		// A column is a run of J updates already: one per invocation, and
		// one dispatch per segment of the columns, in order.
		defer func() { rc.pc.seg = 0 }()
		for seg := uint64(0); seg < j.walkSegments(); seg++ {
			rc.pc.seg = uint32(seg)
			if err := rc.dispatchRun(pipe, j.scatterInvocations(), 1, nil, "scatter"); err != nil {
				return err
			}
		}
		return nil
	}
	return rc.dispatch(pipe, j.scatterInvocations(), nil, "scatter")
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

// copyRuns records the copy commands of a Slice plan whose runs move as
// copy regions (job.copies): its regions, split where either tensor's
// chunks end, one command per pair of source and destination chunks.
func (rc *recorder) copyRuns(c *call) error {
	upd, out := c.tensors[tUpd], c.tensors[tOut]
	chunk := uint64(1) << rc.b.shift
	type pair struct{ src, dst uint64 }
	byPair := map[pair][]vk.CopyRegion{}
	var order []pair
	for _, r := range c.j.copyRegions() {
		for r.Size > 0 {
			n := min(r.Size, chunk-r.SrcOffset%chunk, chunk-r.DstOffset%chunk)
			k := pair{r.SrcOffset / chunk, r.DstOffset / chunk}
			if _, ok := byPair[k]; !ok {
				order = append(order, k)
			}
			byPair[k] = append(byPair[k], vk.CopyRegion{SrcOffset: r.SrcOffset % chunk, DstOffset: r.DstOffset % chunk, Size: n})
			r.SrcOffset, r.DstOffset, r.Size = r.SrcOffset+n, r.DstOffset+n, r.Size-n
		}
	}
	for _, k := range order {
		if err := rc.seq.CopyRegions(upd.bufs[k.src], out.bufs[k.dst], byPair[k]); err != nil {
			return wrapVK(err)
		}
	}
	return rc.stamp("scatter")
}

// atomic records an atomic (or walked) reduction: prepare, scatter,
// finish.
func (rc *recorder) atomic(j *job, pipes map[shaders.Key]*vk.Pipeline, scatterKey shaders.Key) error {
	r := j.red
	reduce := pipes[r.reduceKey(j)]
	if r.prepare {
		if err := rc.dispatch(reduce, j.outputs, []uint32{phasePrepare}, "prepare"); err != nil {
			return err
		}
	}
	if r.private {
		// One 1-D dispatch of r.groups workgroups; each strides over the
		// updates (scatter.comp, scatterPrivate).
		pc := rc.pc
		pc.base, pc.end = 0, j.updates
		if err := rc.seq.Dispatch(pipes[scatterKey], nil, pc.bytes(), [3]uint32{r.groups, 1, 1}); err != nil {
			return wrapVK(err)
		}
		rc.st.Dispatches++
		if err := rc.stamp("scatter"); err != nil {
			return err
		}
	} else if err := rc.scatter(pipes[scatterKey], j); err != nil {
		return err
	}
	if r.finish {
		return rc.dispatch(reduce, j.outputs, []uint32{phaseFinish}, "finish")
	}
	return nil
}

// ordered records the in-order fold: the slot starts (an exclusive scan
// of the counts resolve took), the radix sort of the update positions by
// slot, and the fold.
func (rc *recorder) ordered(c *call, pipes map[shaders.Key]*vk.Pipeline) error {
	j, r := c.j, c.j.red
	if err := rc.scan(pipes, tOwner, r.slots+1); err != nil {
		return err
	}
	perm := uint32(tNone)
	kin, vin := uint32(tNorm), uint32(tNone)
	for pass := 0; pass < r.passes; pass++ {
		kout, vout := uint32(tK1), uint32(tV1)
		if pass%2 == 1 {
			kout, vout = tK2, tV2
		}
		if pass == r.passes-1 {
			kout = tNone // the keys are not needed after the last pass
		}
		args := []uint32{uint32(r.items), uint32(pass * radixBits), uint32(r.tiles), kin, vin, kout, vout}
		if err := rc.dispatch(pipes[sortKey(shaders.RadixCount)], r.items, args, "radix-count"); err != nil {
			return err
		}
		if err := rc.scan(pipes, tHist, 16*r.tiles); err != nil {
			return err
		}
		if err := rc.dispatch(pipes[sortKey(shaders.RadixScatter)], r.items, args, "radix-scatter"); err != nil {
			return err
		}
		kin, vin, perm = kout, vout, vout
	}
	// Segment 0 of every slot, then the further segments of the slots
	// that segment 0 listed (at most listWords-1 of them).
	list := uint32(tNone)
	if r.segments > 1 {
		list = tList
		for _, buf := range c.tensors[tList].bufs {
			if err := rc.seq.Fill(buf, 0, 0, 0); err != nil {
				return wrapVK(err)
			}
		}
	}
	fold := pipes[r.reduceKey(j)]
	for seg := uint64(0); seg < r.segments; seg++ {
		n := r.slots * r.inner
		if seg > 0 {
			n = (r.listWords - 1) * r.inner
		}
		args := []uint32{phaseFold, uint32(r.inner), uint32(r.inner >> 32), perm, uint32(seg), list}
		// One position per invocation: a run of positions would make an
		// invocation's loop run up to run*segment times.
		if err := rc.dispatchRun(fold, n, 1, args, "fold"); err != nil {
			return err
		}
	}
	return nil
}

// scan records an exclusive scan, in place, of the first n words of
// tensor x: each level's blocks are scanned and their totals written to
// the next level (in T_SCAN) until one block holds them all; then every
// level gets the scanned totals of the one above added back.
func (rc *recorder) scan(pipes map[shaders.Key]*vk.Pipeline, x uint32, n uint64) error {
	type level struct {
		t      uint32
		off, n uint64
	}
	blk := groupSize * uint64(rc.b.run)
	levels := []level{{x, 0, n}}
	var off uint64
	for last := n; last > blk; {
		last = ceilDiv(last, blk)
		levels = append(levels, level{tScan, off, last})
		off += last
	}
	up, down := pipes[sortKey(shaders.ScanUp)], pipes[sortKey(shaders.ScanDown)]
	args := func(i int) []uint32 {
		l := levels[i]
		a := []uint32{uint32(l.n), l.t, uint32(l.off), tNone, 0}
		if i+1 < len(levels) {
			a[3], a[4] = levels[i+1].t, uint32(levels[i+1].off)
		}
		return a
	}
	for i, l := range levels {
		if err := rc.dispatch(up, l.n, args(i), "scan"); err != nil {
			return err
		}
	}
	for i := len(levels) - 2; i >= 0; i-- {
		if err := rc.dispatch(down, levels[i].n, args(i), "scan"); err != nil {
			return err
		}
	}
	return nil
}
