//go:build cgo

package gpu

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/gpuscatter/gpuscatter/internal/backendkit"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// Stats describes an Execute call or a resident batch that ran on the
// device.
type Stats struct {
	// Total is the whole call, from Execute's start to its return.
	Total time.Duration
	// Pipelines is the part of Total spent creating pipelines used for the
	// first time (zero once they are all created).
	Pipelines time.Duration
	// Upload and Download are the host-device copies.
	Upload, Download time.Duration
	// Submit is from submitting the command buffer to seeing it complete.
	Submit time.Duration
	// Device is the time the device spent on the passes, from timestamps
	// (zero when the queue has none); Passes breaks it down.
	Device time.Duration
	Passes []PassTime
	// Calls is the number of operator calls: 1 for an Execute, the
	// batch's calls for a resident batch.
	Calls int
	// Dispatches is the number of compute dispatches recorded.
	Dispatches int
	// Bytes is the device memory the calls' passes read and write, as
	// planned (PlanNeeds.TrafficBytes summed over the calls), and
	// HostBytes what the calls copy between host and device memory
	// (PlanNeeds.HostBytes: an Execute's inputs and output; 0 for calls
	// on resident tensors).
	Bytes, HostBytes uint64
	// Submits, Waits and TransferPieces count the host round trips of the
	// call or batch (the device's counters over it): queue submissions,
	// completed waits for a submission, and host copies into or out of
	// memory the device reads or writes. A resident batch of any number of calls is
	// 1 submission, 1 wait and 2 pieces (the parameters, the error
	// words). An Execute adds a piece per input and one for the output:
	// copies through the buffers' mappings on unified memory, and in the
	// same submission otherwise, unless they are large (over 16 MiB),
	// when each staged piece is a submission and a wait of its own. An
	// in-order fold whose longest list the first fold pass finds longer
	// than a segment adds a submission and a wait for its further passes
	// (an Execute's call, or a batch's last).
	Submits, Waits, TransferPieces int
	// Variants names the kernels used.
	Variants []string
	// plans are the calls' plans, which Plan formats only when asked: a
	// plan's text takes microseconds, as long as a call of a batch may.
	plans []*callPlan
	// Reduction says how a reduction ran: "ordered" (the in-order fold),
	// "walk" (column by column in index order), "native" or "cas"
	// (atomics; "+private" when workgroups accumulated in their own memory
	// first, "+hot" when they folded their hot targets there first);
	// empty for reduction none.
	Reduction string
	// AtomicsIssued and AtomicsMaxAddress are, with Options.CountAtomics,
	// the global atomics an Execute's reduction issued (one per update
	// reaching the output: a compare-and-swap loop counts once however
	// often it retries) and the most of them on one output element; 0
	// otherwise.
	AtomicsIssued, AtomicsMaxAddress uint64
}

// LastStats tells where the time of the last call went, for profiling: it
// returns the figures of the last Execute call, or resident batch, that
// completed successfully on the device (a batch's once its completion was
// observed: Submission.Wait, or a host read).
func (b *Backend) LastStats() Stats {
	if b == nil {
		return Stats{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats.clone()
}

// PassTime is the device time of one pass, from timestamps: its label
// (as in PlanNeeds.Passes and Stats.Plan) and its duration.
type PassTime struct {
	Label    string
	Duration time.Duration
}

// String returns the label and the duration, such as "scatter 1.2ms".
func (t PassTime) String() string { return t.Label + " " + t.Duration.String() }

// String summarises the figures on one short line for a person to read,
// whatever the number of calls: the calls, dispatches and submissions,
// the device time, the bytes the passes move on the device and between
// host and device, and the total time, such as "200 calls, 400
// dispatches, 1 submit, device 3.1ms, 12.6 MB on the device, 0 B to and
// from the host, total 5.2ms" (times from a millisecond up rounded to
// the microsecond, from a second up to the millisecond). The time of each pass (Passes), the
// kernels (Variants), the reduction's path and the other counts are the
// fields; Plan gives the plan itself.
func (s Stats) String() string {
	return fmt.Sprintf("%s, %s, %s, device %v, %s on the device, %s to and from the host, total %v",
		plural(s.Calls, "call", "calls"), plural(s.Dispatches, "dispatch", "dispatches"), plural(s.Submits, "submit", "submits"),
		roundDuration(s.Device), formatBytes(s.Bytes), formatBytes(s.HostBytes), roundDuration(s.Total))
}

// roundDuration rounds d to the microsecond from a millisecond up, and
// to the millisecond from a second up: "409.263ms" rather than
// "409.263006ms".
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Microsecond)
	}
	return d
}

// formatBytes renders n as "1.5 GB" (decimal units).
func formatBytes(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// plural returns n and the noun in the number n takes.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Plan describes what the device was asked to do, as planned before
// anything was recorded: for each operator call (several for a batch) its
// path, its tensors and its passes, each with its kernel, positions, run
// and dispatches. The passes are those Passes times.
func (s Stats) Plan() string {
	var parts []string
	for _, pl := range s.plans {
		parts = append(parts, pl.String())
	}
	return strings.Join(parts, "\n")
}

// Execute runs plan p on the device and writes its result into host
// tensor out: it is how ops.Run uses the backend (ops.Backend). out may
// share storage with p.Data. The call uploads data (straight into the output's
// device buffers), updates and indices, records every pass into one
// command buffer and submits it once, then downloads the output. Indices
// are checked on the device; on an out-of-range index Execute returns the
// error p.IndexAt gives for the first bad position, the CPU reference's
// text, and leaves out untouched. Reductions run as the package
// documentation describes.
//
// When ctx is done during the call Execute returns ctx.Err() with out
// untouched; work already submitted finishes in the background and its
// buffers are reclaimed by the next call or Close.
func (b *Backend) Execute(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error {
	start := time.Now()
	ctx, err := backendkit.BeginExecute(ctx, "vulkan", p, out)
	if err != nil {
		return err
	}
	if b == nil {
		return closedPlanError(p)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return closedPlanError(p)
	}
	if b.fault != knobs.NoFault {
		return named(p.Op.Name, b.faulty(ctx, start, p, out))
	}
	if p.SkipBadIndices {
		// The kernels run as usual; a bad index makes the call run again
		// on a copy of data padded to take the bad indices' updates.
		return backendkit.ExecuteSkipping(ctx, p, out, func(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error {
			return named(p.Op.Name, b.executeLocked(ctx, start, p, out))
		})
	}
	return named(p.Op.Name, b.executeLocked(ctx, start, p, out))
}

// faulty is Execute with knobs.Knobs.Fault injected. b.mu is held.
func (b *Backend) faulty(ctx context.Context, start time.Time, p *ops.Plan, out *tensor.Tensor) error {
	if b.fault == knobs.MinAsMax && p.Reduction == ops.Min {
		q := *p
		q.Reduction = ops.Max
		p = &q
	}
	err := b.executeLocked(ctx, start, p, out)
	if err == nil && b.fault == knobs.FlipLast && len(out.Data) > 0 {
		out.Data[len(out.Data)-out.DType.Size()] ^= 1
	}
	return err
}

// executeLocked is Execute once the backend is locked and open: plan
// (pure), then, unless the result is data, check the plan fits and run it.
func (b *Backend) executeLocked(ctx context.Context, start time.Time, p *ops.Plan, out *tensor.Tensor) error {
	f := b.facts(true)
	pl, err := f.planCall(p)
	if err != nil {
		return err
	}
	// Earlier submissions (resident batches) finish first; their
	// outcomes are reported to whoever waits for them.
	if err := b.settle(ctx, false); err != nil {
		return err
	}
	if pl.hostOnly() {
		// Nothing to check or move: the result is data.
		copyData(p, out)
		return nil
	}
	if err := b.checkFits(p, pl.needs()); err != nil {
		return err
	}
	return b.execute(ctx, start, pl, out)
}

// copyData writes data into out.
func copyData(p *ops.Plan, out *tensor.Tensor) {
	if p.DType == tensor.String {
		copy(out.Strings, p.Data.Strings)
		return
	}
	copy(out.Data, p.Data.Data)
}

// handles returns n 32-bit handles first, first+1, ..., the device form of
// a string tensor.
func handles(n int, first uint32) []byte {
	h := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(h[4*i:], first+uint32(i))
	}
	return h
}

// execute runs plan pl of an Execute call: acquire its device tensors,
// create its pipelines, upload the inputs, submit its passes (with the
// parameters and the error word) once and wait, then read the output back
// into out.
func (b *Backend) execute(ctx context.Context, start time.Time, pl *callPlan, out *tensor.Tensor) error {
	p := pl.p
	host, err := hostImages(pl)
	if err != nil {
		return err
	}
	fl := &flight{r: &execution{}, start: start, hold: true, what: p.Op.Name}
	defer func() {
		// Not started, or held by this call: give it back. One still in
		// flight (ctx done) is given back when it completes.
		if !b.isInFlight(fl) {
			b.release(fl)
		}
	}()
	st := &fl.st
	before := b.dev.Counters()
	io, err := b.executeCall(pl, fl)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := moveInputs(ctx, fl.seq, io, host); err != nil {
		return err
	}
	st.Upload = time.Since(t0)
	var outRead []vk.ReadBack
	// The output is read back in the same submission unless further fold
	// passes may follow in a second one.
	if pl.j.updates > 0 && p.DType != tensor.String && !io[tOut].mapped() && io[tOut].size <= recordedMax && len(pl.more) == 0 {
		fl.after = func() (err error) {
			outRead, err = io[tOut].recordReadBack(fl.seq)
			return err
		}
	}
	b.countSince(st, before)
	if err := b.launch(ctx, fl); err != nil {
		return err
	}
	if err := b.complete(ctx, fl); err != nil {
		// ctx is done: the device finishes in the background; nobody
		// will ask for the outcome.
		fl.hold, fl.quiet = false, true
		return err
	}
	fl.reported = true
	if fl.err != nil {
		return fl.err
	}
	if pl.j.updates == 0 {
		copyData(p, out)
		return nil
	}
	// The result is complete on the device: the download ignores ctx, so
	// that out never holds part of it.
	before = b.dev.Counters()
	t0 = time.Now()
	if outRead != nil {
		err = readBackInto(fl.seq, outRead, out.Data)
	} else {
		err = b.readBack(p, io[tOut], out)
	}
	if err != nil {
		return err
	}
	st.Download = time.Since(t0)
	b.countSince(st, before)
	if r := pl.j.red; r != nil && r.countBytes > 0 {
		if st.AtomicsIssued, st.AtomicsMaxAddress, err = b.atomicCounts(fl.calls[0].tensors[tCount]); err != nil {
			return err
		}
	}
	st.Total = time.Since(start)
	b.stats = *st
	return nil
}

// setFlag sets *f, a field of b, to v under b.mu and returns what
// restores its value before (under b.mu too): defer b.setFlag(&b.x, v)().
func (b *Backend) setFlag(f *bool, v bool) (restore func()) {
	b.mu.Lock()
	was := *f
	*f = v
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		*f = was
		b.mu.Unlock()
	}
}

// countAtomicsOnce executes p into out with the global atomics counted,
// as a Backend opened with Options.CountAtomics does, and returns the
// counts (bench --count-atomics).
func (b *Backend) countAtomicsOnce(ctx context.Context, p *ops.Plan, out *tensor.Tensor) (issued, maxAddress uint64, err error) {
	if b == nil {
		return 0, 0, ErrClosed
	}
	defer b.setFlag(&b.countAtomics, true)()
	if err := b.Execute(ctx, p, out); err != nil {
		return 0, 0, err
	}
	st := b.LastStats()
	return st.AtomicsIssued, st.AtomicsMaxAddress, nil
}

// atomicCounts reads T_COUNT, a word per output element, and returns its
// sum and its largest word.
func (b *Backend) atomicCounts(t *devTensor) (sum, most uint64, err error) {
	h := make([]byte, t.size)
	if err := b.download(t, h); err != nil {
		return 0, 0, err
	}
	for i := 0; i+4 <= len(h); i += 4 {
		c := uint64(binary.LittleEndian.Uint32(h[i:]))
		sum += c
		most = max(most, c)
	}
	return sum, most, nil
}

// executeCall acquires the device tensors of an Execute call of plan pl
// into fl (the output, updates and indices are returned), makes its call,
// creates the call's pipelines and takes a sequence for it.
func (b *Backend) executeCall(pl *callPlan, fl *flight) (io [3]*devTensor, err error) {
	for i := range io {
		if io[i], err = b.acquireChunks(pl.host[i], pl.shift); err != nil {
			return io, err
		}
		fl.r.tensors = append(fl.r.tensors, io[i])
	}
	c, err := b.newCall(pl, io, nil, fl.r)
	if err != nil {
		return io, err
	}
	fl.calls = []*call{c}
	// Pipelines before the uploads: creating one can take long on a cold
	// cache.
	t0 := time.Now()
	if err := b.pipelines(c, &fl.st); err != nil {
		return io, err
	}
	fl.st.Pipelines = time.Since(t0)
	fl.st.HostBytes = pl.hostBytes()
	fl.seq, err = b.takeSequence()
	return io, err
}

// moveInputs copies the host images into the device tensors io. Where
// the device's memory is not the host's and they are small, the copies
// travel in the call's one submission (seq) rather than in staged
// transfers of their own, a submission and a wait each; otherwise they
// are made now, through the buffers' mappings or the staging ring.
func moveInputs(ctx context.Context, seq *vk.Sequence, io [3]*devTensor, host [3][]byte) error {
	inBytes := uint64(len(host[0]) + len(host[1]) + len(host[2]))
	for i, h := range host {
		var err error
		if !io[0].mapped() && inBytes <= recordedMax {
			err = io[i].recordUpload(seq, h)
		} else {
			err = io[i].transfer(ctx, h, true)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// recordedMax bounds the inputs, and apart the output, of an Execute call
// that travel in its submission where the device's memory is not the
// host's: larger ones go through the staging ring.
const recordedMax = 16 << 20

// isInFlight reports whether f was submitted and not yet completed.
func (b *Backend) isInFlight(f *flight) bool {
	for _, g := range b.inflight {
		if g == f {
			return true
		}
	}
	return false
}

// hostImages returns the host images of data, updates and indices as
// pl moves them to the device: strings as handles, data's first. Without
// updates only the indices go, to be checked.
func hostImages(pl *callPlan) ([3][]byte, error) {
	p := pl.p
	var h [3][]byte
	if pl.j.updates > 0 {
		h[0], h[1] = p.Data.Data, p.Updates.Data
		if p.DType == tensor.String {
			h[0] = handles(len(p.Data.Strings), 0)
			h[1] = handles(len(p.Updates.Strings), uint32(len(p.Data.Strings)))
		}
	}
	if pl.host[2] > 0 {
		h[2] = p.Indices.Data
	}
	for i, name := range []string{"data", "updates", "indices"} {
		if uint64(len(h[i])) != pl.host[i] {
			return h, &ops.Error{Op: p.Op.Name, Input: name, Err: ops.ErrInvalidTensor,
				Msg: fmt.Sprintf("vulkan: %s holds %d bytes, its shape %d", name, len(h[i]), pl.host[i])}
		}
	}
	return h, nil
}

// readBack downloads the output tensor t into out; string handles are
// turned back into data's and updates' strings.
func (b *Backend) readBack(p *ops.Plan, t *devTensor, out *tensor.Tensor) error {
	if p.DType != tensor.String {
		// Data was uploaded already, so out may be data itself. Only a
		// device fault makes a download fail.
		return b.download(t, out.Data)
	}
	h := make([]byte, t.size)
	if err := t.transfer(context.Background(), h, false); err != nil {
		return err
	}
	res := make([]string, len(p.Data.Strings))
	n := uint32(len(p.Data.Strings))
	for i := range res {
		v := binary.LittleEndian.Uint32(h[4*i:])
		switch {
		case v < n:
			res[i] = p.Data.Strings[v]
		case int(v-n) < len(p.Updates.Strings):
			res[i] = p.Updates.Strings[v-n]
		default:
			return &ops.Error{Op: p.Op.Name, Input: "data", Err: ops.ErrDeviceLost,
				Msg: fmt.Sprintf("vulkan: the device returned string handle %d of %d", v, n+uint32(len(p.Updates.Strings)))}
		}
	}
	copy(out.Strings, res)
	return nil
}

// pipelines creates (or finds) the pipelines of c's dispatches, for its
// flags, and notes the call's plan in st.
func (b *Backend) pipelines(c *call, st *Stats) error {
	c.pipes = map[shaders.Key]*vk.Pipeline{}
	for _, ps := range c.plan.passes {
		if _, ok := c.pipes[ps.key]; ok || ps.kind != passDispatch {
			continue
		}
		pipe, err := b.pipeline(ps.pipeKey(c.plan.flags))
		if err != nil {
			return &ops.Error{Op: c.p.Op.Name, Err: err, Msg: err.Error()}
		}
		c.pipes[ps.key] = pipe
		pk := ps.pipeKey(c.plan.flags)
		if d, ok := b.undispatched[pk]; ok {
			if c.fresh == nil {
				c.fresh = map[pipeKey]time.Duration{}
			}
			c.fresh[pk] = d
			delete(b.undispatched, pk)
		}
		st.Variants = append(st.Variants, variantName(&ps))
	}
	if c.plan.reduction != "" {
		st.Reduction = c.plan.reduction
	}
	st.plans = append(st.plans, c.plan)
	st.Calls++
	st.Bytes += c.plan.trafficBytes()
	return nil
}

// call is one operator call being lowered: its plan, its device tensors
// by slot (T_OUT ... T_LIST), its parameter buffer (the parameter array,
// the chunk tables and the error word) and its pipelines.
type call struct {
	p    *ops.Plan
	plan *callPlan
	// copyFrom, when not nil, is a tensor of data's size copied into the
	// output first (a resident data tensor that is not the output).
	copyFrom *devTensor
	// indices, when not nil, is the resident indices tensor, read back to
	// name a bad index.
	indices *devTensor
	tensors []*devTensor
	// params is the parameter buffer holding the call's block (a
	// batch's calls share one), paramHost the block.
	params    *devTensor
	paramHost []byte
	pc        push
	pipes     map[shaders.Key]*vk.Pipeline
	// fresh holds the pipelines this call dispatches first, compiled by
	// this Backend, with their creation times (noteCompiles).
	fresh map[pipeKey]time.Duration
	label string // prefix of the call's timestamp labels in a batch
	// longest is the word after the error word once the call ran: the
	// longest list of updates of a slot that the in-order fold's first
	// pass found longer than a segment, else 0.
	longest uint32
	// ownersClear, when not 0, is the bytes of the owner words that came
	// clear from an earlier call (Backend.takeClearOwners), so that the
	// plan's once fill is not recorded.
	ownersClear uint64
}

// further returns how many of the fold passes after the first (plan.more)
// the longest list the first one found needs. An Execute's call, and a
// batch's last, keep those passes apart (a batch's others record them
// all); complete runs them.
func (c *call) further() int {
	return max(0, min(int(ceilDiv(uint64(c.longest), segment))-1, len(c.plan.more)))
}

// newCall acquires the scratch tensors of pl (normalised indices, owner
// words, the reduction's) into r and fills in the parameter buffer. io
// holds the output (with data in it, or to receive copyFrom), the updates
// and the indices.
func (b *Backend) newCall(pl *callPlan, io [3]*devTensor, copyFrom *devTensor, r *execution) (*call, error) {
	c := &call{p: pl.p, plan: pl, copyFrom: copyFrom, tensors: io[:]}
	for i, size := range pl.sizes[len(io):] {
		if len(io)+i == tOwner && pl.keepsOwners() && b.carve == nil {
			if t, clear := b.takeClearOwners(size, pl.shift); t != nil {
				c.ownersClear = clear
				r.tensors = append(r.tensors, t)
				c.tensors = append(c.tensors, t)
				continue
			}
		}
		t, err := b.acquireChunks(size, pl.shift)
		if err != nil {
			return nil, err
		}
		r.tensors = append(r.tensors, t)
		c.tensors = append(c.tensors, t)
	}
	words := append([]uint64(nil), pl.params...)
	for i, t := range c.tensors {
		if len(t.addrs) != pl.chunks(i) {
			return nil, fmt.Errorf("vulkan: %s: the %s take %d chunks where the plan has %d; the plan:\n%v",
				pl.p.Op.Name, tensorNames[i], len(t.addrs), pl.chunks(i), pl)
		}
		copy(words[pl.tableAt[i]/8:], t.addrs)
	}
	c.paramHost = make([]byte, pl.paramBytes())
	for i, w := range words {
		binary.LittleEndian.PutUint64(c.paramHost[8*i:], w)
	}
	binary.LittleEndian.PutUint32(c.paramHost[pl.errAt:], noError)
	c.pc = pl.push
	return c, nil
}

// checkIndices returns the error of the first bad index given the call's
// error word as the device left it, or nil. For resident indices the
// values are read back to name the bad one (only when there is one).
func (c *call) checkIndices(w uint32) error {
	if w == noError {
		return nil
	}
	p := c.p
	if c.indices != nil {
		idx, err := tensor.New(p.Indices.DType, p.Indices.Shape)
		if err != nil {
			return err
		}
		if err := c.indices.transfer(context.Background(), idx.Data, false); err != nil {
			return err
		}
		q := *p
		q.Indices = idx
		p = &q
	}
	return badIndex(p, w, c.plan.j.errShift)
}

// variantName names the kernel of ps, with its workgroup memory where the
// pass specialises it.
func variantName(ps *pass) string {
	v, err := pipeKey{key: ps.key, words: ps.words}.variant()
	if err != nil {
		return fmt.Sprintf("%+v", ps.key)
	}
	return v.Name
}
