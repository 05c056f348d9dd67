//go:build cgo

package gpu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gpuscatter/gpuscatter/internal/backendkit"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// Stats describes the last Execute call that ran on the device.
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
	Passes []vk.Timing
	// Dispatches is the number of compute dispatches recorded.
	Dispatches int
	// Variants names the kernels used.
	Variants []string
	// Reduction says how a reduction ran: "ordered" (the in-order fold),
	// "walk" (column by column in index order), "native" or "cas"
	// (atomics; "+private" when workgroups accumulated in their own memory
	// first); empty for reduction none.
	Reduction string
}

// LastStats returns the figures of the last Execute call that ran on the
// device.
func (b *Backend) LastStats() Stats {
	if b == nil {
		return Stats{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.stats
	s.Passes = append([]vk.Timing(nil), s.Passes...)
	s.Variants = append([]string(nil), s.Variants...)
	return s
}

// execution holds the device resources of one Execute call.
type execution struct {
	tensors []*devTensor
	// waiting: Submit returned before the device finished (ctx was done).
	waiting bool
}

// Execute writes the result of p into out (ops.Backend). out may share
// storage with p.Data. The call uploads data (straight into the output's
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
		return b.faulty(ctx, start, p, out)
	}
	return b.executeLocked(ctx, start, p, out)
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

// executeLocked is Execute once the backend is locked and open.
func (b *Backend) executeLocked(ctx context.Context, start time.Time, p *ops.Plan, out *tensor.Tensor) error {
	j, err := b.jobFor(p)
	if err != nil {
		return err
	}
	if b.pending != nil {
		if err := b.finish(); err != nil {
			return err
		}
	}
	if j.updates == 0 && j.resolve == 0 {
		// Nothing to check or move: the result is data.
		copyData(p, out)
		return nil
	}
	data, _, _ := hostSizes(p, j)
	if shift := b.callShift(data); shift != b.shift {
		saved := b.shift
		b.shift = shift
		defer func() { b.shift = saved }()
	}
	if err := b.checkFits(p, b.needs(p, j)); err != nil {
		return err
	}
	return b.track(start, func(r *execution, st *Stats) error {
		return b.execute(ctx, p, j, out, r, st)
	})
}

// track runs f with a fresh execution and Stats, then gives the execution's
// buffers back, or keeps them pending when f returned before the device
// finished (ctx done), and keeps the Stats of a call that succeeded. b.mu
// is held.
func (b *Backend) track(start time.Time, f func(r *execution, st *Stats) error) error {
	st := Stats{}
	r := &execution{}
	err := f(r, &st)
	if r.waiting {
		// The device may still use the buffers: keep them until it is done.
		b.pending = r
		return err
	}
	for _, t := range r.tensors {
		b.releaseTensor(t)
	}
	b.trimPool()
	if err != nil {
		return err
	}
	st.Total = time.Since(start)
	b.stats = st
	return nil
}

// jobFor translates p into a job for this device, its reduction planned;
// b.mu is held.
func (b *Backend) jobFor(p *ops.Plan) (*job, error) {
	j, err := newJob(p)
	if err != nil {
		return nil, err
	}
	if b.forceWide {
		j.posBits = 64
	}
	if p.Reduction != ops.None {
		if err := b.planReduction(p, j); err != nil {
			return nil, err
		}
	}
	b.planWalk(j)
	b.planCopies(j)
	return j, nil
}

// planCopies makes a Slice plan move its contiguous runs with copy
// commands where the device prefers them (Backend.copyMin) and the runs
// are long and few enough (copyMaxRuns).
func (b *Backend) planCopies(j *job) {
	run := j.rowRun()
	if b.copyMin == 0 || run == 0 || j.updates == 0 {
		return
	}
	j.copies = run*uint64(j.elemBytes) >= b.copyMin && j.updates/run <= copyMaxRuns
}

// walks reports whether Element plan j has enough columns (o, k) to keep
// the device busy with one scatter invocation per column: at least
// b.walkMin. Such a plan's scatter walks each column's J updates in index
// order (updates of different columns never meet), which needs neither
// the owner words of reduction none, nor atomics for a reduction, nor the
// sort of the in-order fold. Plans with few columns (a long 1-D index
// tensor) spread the work over every update instead.
func (b *Backend) walks(j *job) bool {
	return j.kind == shaders.Element && j.updates > 0 && j.columns() >= b.walkMin
}

// planWalk makes an Element plan with reduction none and colliding updates
// walk its columns where walks allows: the last update wins without the
// owner words, their clearing, and the atomicMax per index in resolve,
// whose random accesses dominate the plan on every device. (planReduction
// decides for reductions.)
func (b *Backend) planWalk(j *job) {
	if j.red != nil || j.flags&(flagOwner|flagLater) == 0 || !b.walks(j) {
		return
	}
	j.walk = true
	j.flags = j.flags&^(flagOwner|flagLater) | flagWalk
	j.owners = 0
}

// finish waits for an execution whose Submit returned early and releases its
// buffers.
func (b *Backend) finish() error {
	r := b.pending
	b.pending = nil
	err := b.seq.Reset()
	for _, t := range r.tensors {
		b.releaseTensor(t)
	}
	b.trimPool()
	return wrapVK(err)
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

func (b *Backend) execute(ctx context.Context, p *ops.Plan, j *job, out *tensor.Tensor, r *execution, st *Stats) error {
	// Host images of the tensors: strings move as handles, data's first.
	// Without updates only the indices go to the device, to be checked.
	var dataHost, updHost, idxHost []byte
	if j.updates > 0 {
		dataHost, updHost = p.Data.Data, p.Updates.Data
		if p.DType == tensor.String {
			if uint64(len(p.Data.Strings))+uint64(len(p.Updates.Strings)) > math.MaxUint32 {
				return unsupported(p, "more than 2^32 strings in data and updates")
			}
			dataHost = handles(len(p.Data.Strings), 0)
			updHost = handles(len(p.Updates.Strings), uint32(len(p.Data.Strings)))
		}
	}
	if j.kind != shaders.Slice {
		idxHost = p.Indices.Data
	}

	// Device tensors: data goes straight into the output's buffers.
	var io [3]*devTensor
	var err error
	for i, size := range []uint64{uint64(len(dataHost)), uint64(len(updHost)), uint64(len(idxHost))} {
		if io[i], err = b.acquire(size); err != nil {
			return err
		}
		r.tensors = append(r.tensors, io[i])
	}
	c, err := b.newCall(p, j, io, nil, r)
	if err != nil {
		return err
	}
	// Pipelines before the uploads: creating one can take long on a cold
	// cache.
	t0 := time.Now()
	if c.keys, err = b.pipelines(j, c.flags, st); err != nil {
		return err
	}
	st.Pipelines = time.Since(t0)
	t0 = time.Now()
	for i, host := range [][]byte{dataHost, updHost, idxHost} {
		if err := io[i].transfer(ctx, host, true); err != nil {
			return err
		}
	}
	if err := c.uploadParams(ctx); err != nil {
		return err
	}
	st.Upload = time.Since(t0)

	if err := b.submit(ctx, []*call{c}, r, st); err != nil {
		return err
	}
	if err := c.checkIndices(); err != nil {
		return err
	}
	if j.updates == 0 {
		copyData(p, out)
		return nil
	}

	// The result is complete on the device: the download ignores ctx, so
	// that out never holds part of it.
	t0 = time.Now()
	outT := io[0]
	if p.DType == tensor.String {
		h := make([]byte, len(dataHost))
		if err := outT.transfer(context.Background(), h, false); err != nil {
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
	} else if err := b.download(outT, out.Data); err != nil {
		// Data was uploaded already, so out may be data itself. Only a
		// device fault makes a download fail.
		return err
	}
	st.Download = time.Since(t0)
	return nil
}

// callKeys are the kernel variants of one call: resolve (nil without
// one), scatter (or gather) and the reduction's (reduce, sort), with their
// pipelines for the call's flags.
type callKeys struct {
	resolve *shaders.Key
	scatter shaders.Key
	pipes   map[shaders.Key]*vk.Pipeline
}

// pipelines creates (or finds) the pipelines j runs with the given flags.
func (b *Backend) pipelines(j *job, flags uint32, st *Stats) (callKeys, error) {
	var ck callKeys
	ck.pipes = map[shaders.Key]*vk.Pipeline{}
	need := func(k shaders.Key) error {
		if _, ok := ck.pipes[k]; ok {
			return nil
		}
		pipe, err := b.pipeline(k, flags)
		if err != nil {
			return err
		}
		ck.pipes[k] = pipe
		st.Variants = append(st.Variants, variantName(k))
		return nil
	}
	ck.resolve, ck.scatter = j.keys()
	if ck.resolve != nil && j.resolve > 0 {
		if err := need(*ck.resolve); err != nil {
			return ck, err
		}
	}
	if j.updates == 0 {
		return ck, nil
	}
	red := j.red
	var keys []shaders.Key
	switch {
	case red == nil && j.copies:
		// Copy commands only.
	case red == nil:
		keys = append(keys, ck.scatter)
	case red.ordered:
		keys = append(keys, sortKey(shaders.ScanUp), sortKey(shaders.ScanDown))
		if red.passes > 0 {
			keys = append(keys, sortKey(shaders.RadixCount), sortKey(shaders.RadixScatter))
		}
		keys = append(keys, red.reduceKey(j))
	default:
		keys = append(keys, ck.scatter)
		if red.prepare || red.finish {
			keys = append(keys, red.reduceKey(j))
		}
	}
	for _, k := range keys {
		if err := need(k); err != nil {
			return ck, err
		}
	}
	if red != nil {
		st.Reduction = red.describe(j)
	}
	return ck, nil
}

// call is one operator call ready to record: its plan and job, its kernels,
// its device tensors by slot (T_OUT ... T_SCAN), and its parameter buffer,
// which holds the parameter array, the chunk tables and the error word.
type call struct {
	p       *ops.Plan
	j       *job
	keys    callKeys
	tensors []*devTensor
	// copyFrom, when not nil, is a tensor of data's size copied into the
	// output before the passes (a resident data tensor that is not the
	// output).
	copyFrom *devTensor
	// indices, when not nil, is the resident indices tensor, read back to
	// name a bad index.
	indices   *devTensor
	params    *devTensor
	paramHost []byte
	errAt     uint64
	pc        push
	flags     uint32 // FLAG_*: the kernels' specialization (pipelines)
	label     string // prefix of the call's timestamp labels in a batch
}

// newCall acquires the scratch tensors of j (normalised indices, owner
// words, the reduction's) into r and builds the parameter buffer. io holds
// the output (with data in it, or to receive copyFrom), the updates and
// the indices.
func (b *Backend) newCall(p *ops.Plan, j *job, io [3]*devTensor, copyFrom *devTensor, r *execution) (*call, error) {
	c := &call{p: p, j: j, copyFrom: copyFrom, tensors: io[:]}
	sizes := []uint64{4 * j.resolve, 4 * j.owners}
	red := j.red
	if red != nil {
		extra := red.tensorSizes()
		sizes = append(sizes, extra[:]...)
	}
	oneChunk := true
	for _, size := range sizes {
		t, err := b.acquire(size)
		if err != nil {
			return nil, err
		}
		r.tensors = append(r.tensors, t)
		c.tensors = append(c.tensors, t)
	}
	for _, t := range c.tensors {
		oneChunk = oneChunk && len(t.bufs) <= 1
	}
	c.flags = j.flags
	if oneChunk {
		c.flags |= flagOneChunk
	}
	words := append([]uint64(nil), j.params...)
	if red != nil {
		// The table offsets of T_ACC ... go in a list at params[P_XT].
		words[pXT] = uint64(len(words))
		words = append(words, make([]uint64, len(c.tensors)-tAcc)...)
	}
	tableAt := make([]uint32, len(c.tensors))
	for i, t := range c.tensors {
		tableAt[i] = uint32(8 * len(words))
		words = append(words, t.addrs...)
		if i >= tAcc {
			words[int(words[pXT])+i-tAcc] = uint64(tableAt[i])
		}
	}
	c.errAt = uint64(len(words)) * 8
	c.paramHost = make([]byte, c.errAt+8)
	for i, w := range words {
		binary.LittleEndian.PutUint64(c.paramHost[8*i:], w)
	}
	binary.LittleEndian.PutUint32(c.paramHost[c.errAt:], noError)
	if uint64(len(c.paramHost)) > 1<<b.maxShift {
		return nil, unsupported(p, "the chunk tables need %d bytes, more than one buffer of %d bytes, the device's allocation limit", len(c.paramHost), uint64(1)<<b.maxShift)
	}
	var err error
	if c.params, err = b.acquireWhole(uint64(len(c.paramHost))); err != nil {
		return nil, err
	}
	r.tensors = append(r.tensors, c.params)
	c.pc = push{
		params: c.params.addrs[0],
		outT:   tableAt[tOut], updT: tableAt[tUpd], idxT: tableAt[tIdx], normT: tableAt[tNorm], ownerT: tableAt[tOwner],
		errAt: uint32(c.errAt), shift: uint32(b.shift), errShift: j.errShift, run: b.run,
	}
	if j.posBits == 32 {
		c.pc.hot = j.hot()
		if red != nil {
			c.pc.hot[pXT] = uint32(words[pXT])
		}
	}
	return c, nil
}

// uploadParams writes the call's parameter buffer.
func (c *call) uploadParams(ctx context.Context) error {
	return c.params.transfer(ctx, c.paramHost, true)
}

// submit records the calls into the backend's sequence in order, submits
// them at once and waits. When ctx is done first it returns ctx.Err() and
// marks r waiting: the device may still use r's buffers.
func (b *Backend) submit(ctx context.Context, calls []*call, r *execution, st *Stats) error {
	var err error
	if b.seq == nil {
		if b.seq, err = b.dev.NewSequence(); err != nil {
			return wrapVK(err)
		}
	} else if err := b.seq.Reset(); err != nil {
		return wrapVK(err)
	}
	rec := &recorder{b: b, seq: b.seq, st: st, stamps: b.dev.Capabilities().Timestamps}
	for _, c := range calls {
		if err := rec.record(c); err != nil {
			return err
		}
	}
	t0 := time.Now()
	if err := b.seq.Submit(ctx); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			r.waiting = true
			return err
		}
		return wrapVK(err)
	}
	st.Submit = time.Since(t0)
	st.Passes = b.seq.Timings()
	for _, tm := range st.Passes {
		st.Device += tm.Duration
	}
	return nil
}

// checkIndices reads the call's error word and returns the error of the
// first bad index, or nil. For resident indices the values are read back
// to name the bad one (only when there is one).
func (c *call) checkIndices() error {
	var word [4]byte
	if err := c.params.bufs[0].Download(c.errAt, word[:]); err != nil {
		return wrapVK(err)
	}
	w := binary.LittleEndian.Uint32(word[:])
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
	return badIndex(p, w, c.j.errShift)
}

func variantName(k shaders.Key) string {
	v, err := shaders.Lookup(k)
	if err != nil {
		return fmt.Sprintf("%+v", k)
	}
	return v.Name
}
