//go:build cgo

package gpu

import (
	"time"

	"github.com/gpuscatter/gpuscatter/vk"
)

// recorder lowers the passes of calls into the backend's command buffer.
type recorder struct {
	seq    *vk.Sequence
	st     *Stats
	stamps bool
	// marks: mark each call's end (a batch of several calls).
	marks bool
}

// record records the passes of c's plan in order, each followed by its
// timestamp, then, with marks, a progress mark: the device's watchdog sees
// each call of a batch complete (vk.Sequence.Mark), so a batch of any
// length runs as long as each call finishes within its step.
func (rc *recorder) record(c *call) error {
	if err := rc.passes(c, c.plan.passes); err != nil {
		return err
	}
	if rc.marks {
		return wrapVK(rc.seq.Mark())
	}
	return nil
}

// passes records passes of c's plan in order, each followed by its
// timestamp.
func (rc *recorder) passes(c *call, passes []pass) error {
	uses := callUses(c)
	var step passStep
	for i := range passes {
		ps := &passes[i]
		var err error
		switch ps.kind {
		case passDispatch:
			err = rc.dispatch(c, ps, uses)
		case passFill:
			if ps.once && c.ownersClear > 0 {
				continue // and no timestamp: nothing ran
			}
			err = rc.fill(c.tensors[ps.slot])
		case passCopyData:
			err = rc.copyData(c.copyFrom, c.tensors[tOut])
		case passCopyRuns:
			err = rc.copyRuns(ps, c.tensors[tUpd], c.tensors[tOut])
		}
		if err != nil {
			return err
		}
		step.add(ps, c.plan.j.updates)
		if rc.stamps && ps.label != "" {
			if err := rc.seq.Timestamp(c.label + ps.label); err != nil {
				return wrapVK(err)
			}
		}
	}
	rc.seq.Expect(step.time())
	return nil
}

// The slowest rates a device is expected to run a pass at, about 50
// times below lavapipe's on two CPU cores (its figures: about 15 GB/s of
// copies and 20-25 ns per position or atomic; its in-order fold about 240
// ns per item): a call's step (passStep) is its passes' bytes and
// positions at these rates, so only a call far slower than any device
// runs it, or one that never ends, outlasts it.
const (
	slowestBytesPerSecond = 200e6
	slowestItemTime       = time.Microsecond
	// stepFloor is added to every step: a pass's launch and its
	// submission.
	stepFloor = 10 * time.Millisecond
)

// passStep is the work of a call's passes, one step of the watchdog, and
// the longest the device is expected to take for it (vk.Sequence.Expect):
// the passes' bytes at slowestBytesPerSecond or their positions and
// atomics at slowestItemTime, whichever is longer, plus stepFloor each.
type passStep struct {
	bytes, items uint64
	passes       int
}

// add adds ps, of a call of updates updates, to the step.
func (st *passStep) add(ps *pass, updates uint64) {
	st.bytes += ps.read + ps.written
	st.items += ps.positions(updates) + ps.atomics
	st.passes++
}

// time is the step's expected longest time.
func (st *passStep) time() time.Duration {
	mem := time.Duration(float64(st.bytes) / slowestBytesPerSecond * float64(time.Second))
	work := time.Duration(min(st.items, 1<<40)) * slowestItemTime
	return max(mem, work) + time.Duration(st.passes)*stepFloor
}

// callUses declares what each dispatch of c may access: every buffer of
// the call (its tensors and copyFrom), read and written, and the
// parameter buffer, read. The kernels reach them through device
// addresses, which the sequence cannot see. Within a call this keeps every
// pass ordered after the one before; commands of other calls on other
// buffers need not wait. The calls of a batch share one parameter buffer,
// of which the kernels write only their own call's error word (atomically,
// and the call's later passes, which read it, are ordered after by the
// tensors): declared as read, it keeps the calls independent, the copy
// of the parameters that fills it ordered before, and launch places a
// barrier before the error words are read back.
func callUses(c *call) vk.Uses {
	var bufs []*vk.Buffer
	for _, t := range append(append([]*devTensor(nil), c.tensors...), c.copyFrom) {
		if t != nil {
			bufs = append(bufs, t.bufs...)
		}
	}
	// Writes count as reads and writes.
	return vk.Uses{Reads: c.params.bufs, Writes: bufs}
}

// dispatch records the dispatches of pass ps with the call's push
// constants, varied by the pass's run, arguments and segment; uses are the
// call's buffers.
func (rc *recorder) dispatch(c *call, ps *pass, uses vk.Uses) error {
	pc := c.pc
	pc.run, pc.seg = ps.run, ps.seg
	if ps.args != nil {
		pc.hot = [hotWords]uint32{}
		copy(pc.hot[:], ps.args)
	}
	pipe := c.pipes[ps.key]
	for _, d := range ps.dispatches {
		pc.base, pc.end = d.base, d.end
		if err := rc.seq.DispatchUses(pipe, nil, pc.bytes(), d.groups, uses); err != nil {
			return wrapVK(err)
		}
		rc.st.Dispatches++
	}
	return nil
}

// fill zeroes every chunk of t.
func (rc *recorder) fill(t *devTensor) error {
	for _, buf := range t.bufs {
		if err := rc.seq.Fill(buf, 0, 0, 0); err != nil {
			return wrapVK(err)
		}
	}
	return nil
}

// copyData copies tensor from into out, chunk by chunk (they have the
// same size and chunks).
func (rc *recorder) copyData(from, out *devTensor) error {
	for i, buf := range from.bufs {
		if err := rc.seq.Copy(buf, 0, out.bufs[i], 0, from.sizes[i]); err != nil {
			return wrapVK(err)
		}
	}
	return nil
}

// copyRuns records the copy commands of pass ps from upd to out.
func (rc *recorder) copyRuns(ps *pass, upd, out *devTensor) error {
	for _, cc := range ps.copies {
		if err := rc.seq.CopyRegions(upd.bufs[cc.src], out.bufs[cc.dst], cc.regions); err != nil {
			return wrapVK(err)
		}
	}
	return nil
}
