package gpu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

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
	// "native" or "cas" (atomics; "+private" when workgroups accumulated
	// in their own memory first); empty for reduction none.
	Reduction string
}

// LastStats returns the figures of the last Execute call that ran on the
// device.
func (b *Backend) LastStats() Stats {
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

// pushSize is the size of the push-constant block (Push in
// shaders/src/common.glsl).
const pushSize = 128

// push is the push-constant block of one dispatch.
type push struct {
	params, base, end                  uint64
	outT, updT, idxT, normT, ownerT    uint32 // chunk tables, in the parameter buffer
	errAt, shift, errShift, flags, run uint32
	hot                                [hotWords]uint32
}

func (p *push) bytes() []byte {
	b := make([]byte, pushSize)
	le := binary.LittleEndian
	le.PutUint64(b[0:], p.params)
	le.PutUint64(b[8:], p.base)
	le.PutUint64(b[16:], p.end)
	for i, v := range []uint32{p.outT, p.updT, p.idxT, p.normT, p.ownerT, p.errAt, p.shift, p.errShift, p.flags, p.run} {
		le.PutUint32(b[24+4*i:], v)
	}
	for i, v := range p.hot {
		le.PutUint32(b[64+4*i:], v)
	}
	return b
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
	if p == nil {
		return &ops.Error{Input: "plan", Err: ops.ErrMissingInput, Msg: "vulkan: plan is nil"}
	}
	if err := p.CheckOutput(out); err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	j, err := newJob(p)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.forceWide {
		j.posBits = 64
	}
	if b.closed {
		return &ops.Error{Op: p.Op.Name, Input: "data", Err: ops.ErrNoDevice, Msg: "vulkan: the backend is closed"}
	}
	if p.Reduction != ops.None {
		if err := b.planReduction(p, j); err != nil {
			return err
		}
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
	stats := Stats{}
	r := &execution{}
	err = b.execute(ctx, p, j, out, r, &stats)
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
	stats.Total = time.Since(start)
	b.stats = stats
	return nil
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
	red := j.red

	// Pipelines first: creating one can take long on a cold cache.
	t0 := time.Now()
	pipes := map[shaders.Key]*vk.Pipeline{}
	need := func(k shaders.Key) error {
		if _, ok := pipes[k]; ok {
			return nil
		}
		pipe, err := b.pipeline(k)
		if err != nil {
			return err
		}
		pipes[k] = pipe
		st.Variants = append(st.Variants, variantName(k))
		return nil
	}
	resolveKey, scatterKey := j.keys()
	if resolveKey != nil && j.resolve > 0 {
		if err := need(*resolveKey); err != nil {
			return err
		}
	}
	if j.updates > 0 {
		var keys []shaders.Key
		switch {
		case red == nil:
			keys = append(keys, scatterKey)
		case red.ordered:
			keys = append(keys, sortKey(shaders.ScanUp), sortKey(shaders.ScanDown))
			if red.passes > 0 {
				keys = append(keys, sortKey(shaders.RadixCount), sortKey(shaders.RadixScatter))
			}
			keys = append(keys, red.reduceKey(j))
		default:
			keys = append(keys, scatterKey)
			if red.prepare || red.finish {
				keys = append(keys, red.reduceKey(j))
			}
		}
		for _, k := range keys {
			if err := need(k); err != nil {
				return err
			}
		}
		if red != nil {
			st.Reduction = red.describe()
		}
	}
	st.Pipelines = time.Since(t0)

	// Device tensors. The parameter array, the chunk tables and the error
	// word share one small buffer, the parameter buffer.
	sizes := []uint64{uint64(len(dataHost)), uint64(len(updHost)), uint64(len(idxHost)), 4 * j.resolve, 4 * j.owners}
	if red != nil {
		extra := red.tensorSizes()
		sizes = append(sizes, extra[:]...)
	}
	tensors := make([]*devTensor, len(sizes))
	oneChunk := true
	for i, size := range sizes {
		t, err := b.acquire(size)
		if err != nil {
			return err
		}
		r.tensors = append(r.tensors, t)
		tensors[i] = t
		oneChunk = oneChunk && len(t.bufs) <= 1
	}
	outT, updT, idxT, ownerT := tensors[tOut], tensors[tUpd], tensors[tIdx], tensors[tOwner]
	flags := j.flags
	if oneChunk {
		flags |= flagOneChunk
	}
	words := append([]uint64(nil), j.params...)
	if red != nil {
		// The table offsets of T_ACC ... go in a list at params[P_XT].
		words[pXT] = uint64(len(words))
		words = append(words, make([]uint64, len(sizes)-tAcc)...)
	}
	tableAt := make([]uint32, len(sizes))
	for i, t := range tensors {
		tableAt[i] = uint32(8 * len(words))
		words = append(words, t.addrs...)
		if i >= tAcc {
			words[int(words[pXT])+i-tAcc] = uint64(tableAt[i])
		}
	}
	errAt := uint64(len(words)) * 8
	paramBytes := make([]byte, errAt+8)
	for i, w := range words {
		binary.LittleEndian.PutUint64(paramBytes[8*i:], w)
	}
	binary.LittleEndian.PutUint32(paramBytes[errAt:], noError)
	if uint64(len(paramBytes)) > 1<<b.maxShift {
		return unsupported(p, "the chunk tables need %d bytes, more than one buffer of %d bytes; raise MaxAllocationBytes", len(paramBytes), uint64(1)<<b.maxShift)
	}
	paramT, err := b.acquireWhole(uint64(len(paramBytes)))
	if err != nil {
		return err
	}
	r.tensors = append(r.tensors, paramT)

	t0 = time.Now()
	for _, up := range []struct {
		t    *devTensor
		host []byte
	}{{outT, dataHost}, {updT, updHost}, {idxT, idxHost}, {paramT, paramBytes}} {
		if err := up.t.transfer(ctx, up.host, true); err != nil {
			return err
		}
	}
	st.Upload = time.Since(t0)

	// Record every pass into one command buffer.
	if b.seq == nil {
		if b.seq, err = b.dev.NewSequence(); err != nil {
			return wrapVK(err)
		}
	} else if err := b.seq.Reset(); err != nil {
		return wrapVK(err)
	}
	rec := &recorder{b: b, seq: b.seq, st: st, stamps: b.dev.Capabilities().Timestamps, pc: push{
		params: paramT.addrs[0],
		outT:   tableAt[tOut], updT: tableAt[tUpd], idxT: tableAt[tIdx], normT: tableAt[tNorm], ownerT: tableAt[tOwner],
		errAt: uint32(errAt), shift: uint32(b.shift), errShift: j.errShift, flags: flags, run: b.run,
	}}
	if j.posBits == 32 {
		rec.pc.hot = j.hot()
		if red != nil {
			rec.pc.hot[pXT] = uint32(words[pXT])
		}
	}
	if j.owners > 0 {
		for _, buf := range ownerT.bufs {
			if err := rec.seq.Fill(buf, 0, 0, 0); err != nil {
				return wrapVK(err)
			}
		}
		if err := rec.stamp("clear"); err != nil {
			return err
		}
	}
	if resolveKey != nil && j.resolve > 0 {
		if err := rec.dispatch(pipes[*resolveKey], j.resolve, nil, "resolve"); err != nil {
			return err
		}
	}
	switch {
	case j.updates == 0:
	case red == nil:
		if err := rec.dispatch(pipes[scatterKey], j.scatterInvocations(), nil, "scatter"); err != nil {
			return err
		}
	case red.ordered:
		if err := rec.ordered(j, pipes); err != nil {
			return err
		}
	default:
		if err := rec.atomic(j, pipes, scatterKey); err != nil {
			return err
		}
	}

	seq := rec.seq
	t0 = time.Now()
	if err := seq.Submit(ctx); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			r.waiting = true
			return err
		}
		return wrapVK(err)
	}
	st.Submit = time.Since(t0)
	st.Passes = seq.Timings()
	for _, tm := range st.Passes {
		st.Device += tm.Duration
	}

	var word [4]byte
	if err := paramT.bufs[0].Download(errAt, word[:]); err != nil {
		return wrapVK(err)
	}
	if w := binary.LittleEndian.Uint32(word[:]); w != noError {
		return badIndex(p, w, j.errShift)
	}
	if j.updates == 0 {
		copyData(p, out)
		return nil
	}

	// The result is complete on the device: the download ignores ctx, so
	// that out never holds part of it.
	t0 = time.Now()
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
	} else if err := outT.transfer(context.Background(), out.Data, false); err != nil {
		// Data was uploaded already, so out may be data itself. Only a
		// device fault makes a download fail.
		return err
	}
	st.Download = time.Since(t0)
	return nil
}

func variantName(k shaders.Key) string {
	v, err := shaders.Lookup(k)
	if err != nil {
		return fmt.Sprintf("%+v", k)
	}
	return v.Name
}
