//go:build cgo

package gpu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/vk"
)

// maxInFlight bounds the submissions a Backend keeps in flight: a Submit
// beyond it first waits for the oldest.
const maxInFlight = 8

// paramAlign aligns each call's parameter block in a batch's parameter
// buffer.
const paramAlign = 256

// flight is one submission to the device (an Execute call or a Batch):
// its sequence, the device buffers it uses, its calls and their error
// words read back in the same submission, and its outcome once observed.
type flight struct {
	// what names the calls in the errors of a failed device: the
	// operator, or the batch's (batchName); resident: a Batch's, whose
	// tensors live on the device.
	what     string
	resident bool
	seq      *vk.Sequence
	r        *execution
	calls    []*call
	groups   []paramGroup // the calls' parameter buffers, in call order
	st       Stats
	start    time.Time

	done bool
	err  error // the outcome, once done
	// hold: the one who waits (Execute) reads an output before the
	// buffers go back to the pool, and releases them itself.
	hold bool
	// after, when set, records more after the calls' passes (an
	// Execute's output read back).
	after func() error
	// quiet: nobody will ask for the outcome (an Execute that returned
	// ctx.Err()), so a failure is not reported later.
	quiet    bool
	reported bool
	// wait and signal are the timeline semaphores of a SubmitWith.
	wait, signal []vk.SemaphoreValue
}

// named names f's calls in err (see named); for a Batch on a lost device
// it adds that its tensors are lost too.
func (f *flight) named(err error) error {
	err = named(f.what, err)
	if f.resident && errors.Is(err, ops.ErrDeviceLost) {
		return fmt.Errorf("%w; %w", err, ErrResidentLost)
	}
	return err
}

// execution holds the device buffers of one submission, given back when
// the device is done with them.
type execution struct {
	tensors []*devTensor
}

// Submission is a Batch submitted to the device (Batch.Submit): the host
// did not wait for it. Wait waits for it and returns its outcome. A nil
// Submission (from an empty Batch) is complete and successful.
type Submission struct {
	b *Backend
	f *flight
}

// Wait waits for the submission to complete and returns its outcome: nil,
// or the error of the first call that found a bad index (see Batch.Submit).
// It may be called again and returns the same, until the Backend is
// closed: then it returns ErrClosed (Backend.Close returned an outcome no
// Wait had). When ctx is done first it returns ctx.Err() and the
// submission stays in flight.
func (s *Submission) Wait(ctx context.Context) error {
	if s == nil {
		return nil
	}
	b := s.b
	if b == nil {
		return ErrClosed
	}
	if ctx == nil {
		ctx = context.Background()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if err := b.complete(ctx, s.f); err != nil {
		return err
	}
	s.f.reported = true
	return s.f.err
}

// Done reports, without waiting, whether Wait would return at once, so
// that the host can do other work until the device is done.
func (s *Submission) Done() bool {
	if s == nil || s.b == nil {
		return true
	}
	b := s.b
	b.mu.Lock()
	defer b.mu.Unlock()
	return s.f.done
}

// Stats returns the figures of the submitted batch, for profiling, once
// Wait returned (zero before): its submissions, waits and transfer pieces,
// its device time and passes.
func (s *Submission) Stats() Stats {
	if s == nil || s.b == nil {
		return Stats{}
	}
	b := s.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if !s.f.done {
		return Stats{}
	}
	return s.f.st.clone()
}

// clone returns a copy of s sharing nothing with it.
func (s Stats) clone() Stats {
	s.Passes = append([]PassTime(nil), s.Passes...)
	s.Variants = append([]string(nil), s.Variants...)
	s.plans = append([]*callPlan(nil), s.plans...)
	return s
}

// countSince adds to st the device's round trips since before.
func (b *Backend) countSince(st *Stats, before vk.Counters) {
	n := b.dev.Counters().Sub(before)
	st.Submits += int(n.Submits)
	st.Waits += int(n.Waits)
	st.TransferPieces += int(n.TransferPieces)
}

// takeSequence returns an empty sequence for a new submission; b.mu is
// held.
func (b *Backend) takeSequence() (*vk.Sequence, error) {
	if n := len(b.idleSeqs); n > 0 {
		seq := b.idleSeqs[n-1]
		b.idleSeqs = b.idleSeqs[:n-1]
		if err := seq.Reset(); err != nil {
			return nil, errors.Join(wrapVK(err), wrapVK(seq.Close()))
		}
		return seq, nil
	}
	seq, err := b.dev.NewSequence()
	return seq, wrapVK(err)
}

// putSequence keeps seq for a later submission, or closes it when enough
// are kept or the backend pools nothing (Options.MaxPoolBytes < 0); the
// device is done with it.
func (b *Backend) putSequence(seq *vk.Sequence) {
	if len(b.idleSeqs) < maxInFlight && !b.closed && b.poolLimit >= 0 {
		b.idleSeqs = append(b.idleSeqs, seq)
		return
	}
	_ = seq.Close()
}

// release gives f's buffers and sequence back; the device is done with
// them.
func (b *Backend) release(f *flight) {
	kept := b.ownersLeftClear(f)
	for _, t := range f.r.tensors {
		if c, ok := kept[t]; ok && !b.closed {
			b.keepClearOwners(c.t, c.shift, c.clear)
			continue
		}
		b.releaseTensor(t)
	}
	f.r.tensors = nil
	b.trimPool()
	if f.seq != nil {
		b.putSequence(f.seq)
		f.seq = nil
	}
}

// paramGroup is one parameter buffer of a flight: the blocks of calls
// consecutive calls, and where their error words are read back. A mapped
// buffer (unified memory) is written and read through its mapping, with
// no copy command; another is filled by the submission's first copy and
// its error words read back by its last (rb).
type paramGroup struct {
	buf    *vk.Buffer
	mapped bool
	calls  int
	words  []vk.CopyRegion
	rb     vk.ReadBack
}

// errorWords returns the group's error words, each followed by its
// call's longest list word (reduce.comp), in call order, once the
// submission completed: one host copy either way.
func (g *paramGroup) errorWords(seq *vk.Sequence) ([]byte, error) {
	if !g.mapped {
		b, err := seq.Result(g.rb)
		return b, wrapVK(err)
	}
	last := g.words[len(g.words)-1]
	all := make([]byte, last.SrcOffset+last.Size)
	if err := g.buf.Download(0, all); err != nil {
		return nil, wrapVK(err)
	}
	out := make([]byte, 8*len(g.words))
	for k, w := range g.words {
		copy(out[8*k:], all[w.SrcOffset:w.SrcOffset+w.Size])
	}
	return out, nil
}

// stageParams lays the calls' parameter blocks out in parameter buffers
// (as few as the device's largest buffer allows), records their upload
// into f's sequence and points each call at its block. b.mu is held.
func (b *Backend) stageParams(f *flight) error {
	first := 0
	for _, g := range b.paramGroups(f) {
		if err := b.stageGroup(f, f.calls[first:first+g.calls], g.size); err != nil {
			return err
		}
		first += g.calls
	}
	return nil
}

// paramSpan is one parameter buffer of a flight: its calls and size.
type paramSpan struct {
	calls int
	size  uint64
}

// paramGroups lays f's calls' parameter blocks out in as few buffers as
// the device's largest buffer allows.
func (b *Backend) paramGroups(f *flight) []paramSpan {
	limit := uint64(1) << b.maxShift
	var out []paramSpan
	for first := 0; first < len(f.calls); {
		var size uint64
		last := first
		for ; last < len(f.calls); last++ {
			at := (size + paramAlign - 1) &^ (paramAlign - 1)
			n := f.calls[last].plan.paramBytes()
			if last > first && at+n > limit {
				break
			}
			size = at + n
		}
		out = append(out, paramSpan{calls: last - first, size: size})
		first = last
	}
	return out
}

// paramSizes returns the sizes of f's parameter buffers.
func (b *Backend) paramSizes(f *flight) []uint64 {
	var out []uint64
	for _, g := range b.paramGroups(f) {
		out = append(out, g.size)
	}
	return out
}

// stageGroup puts the parameter blocks of calls into one buffer of size
// bytes and records its upload.
func (b *Backend) stageGroup(f *flight, calls []*call, size uint64) error {
	params, err := b.acquireWhole(size)
	if err != nil {
		return err
	}
	f.r.tensors = append(f.r.tensors, params)
	host := make([]byte, size)
	g := paramGroup{buf: params.bufs[0], mapped: params.mapped(), calls: len(calls), words: make([]vk.CopyRegion, len(calls))}
	var at uint64
	for k, c := range calls {
		at = (at + paramAlign - 1) &^ (paramAlign - 1)
		copy(host[at:], c.paramHost)
		c.params = params
		c.pc.params = params.addrs[0] + at
		// The error word and the longest list word after it.
		g.words[k] = vk.CopyRegion{SrcOffset: at + c.plan.errAt, DstOffset: 8 * uint64(k), Size: 8}
		at += uint64(len(c.paramHost))
	}
	// Host writes before the submission are visible to it.
	if g.mapped {
		err = g.buf.Upload(0, host)
	} else {
		err = f.seq.Upload(g.buf, 0, host)
	}
	if err != nil {
		return wrapVK(err)
	}
	f.groups = append(f.groups, g)
	return nil
}

// launch records f's calls into its sequence (parameter uploads, passes,
// then the error words' readback) and submits it without waiting. On
// success f is in flight; on error the caller discards it.
func (b *Backend) launch(ctx context.Context, f *flight) error {
	before := b.dev.Counters()
	defer b.countSince(&f.st, before)
	if err := b.recordFlight(f); err != nil {
		return err
	}
	if err := f.seq.StartWith(ctx, f.wait, f.signal); err != nil {
		return wrapVK(err)
	}
	b.inflight = append(b.inflight, f)
	return nil
}

// recordFlight records f's calls into its sequence: parameter uploads,
// passes, then the error words' readback. A sequence that records into
// the caller's command buffer gets no timestamps and no progress marks.
func (b *Backend) recordFlight(f *flight) error {
	if err := b.stageParams(f); err != nil {
		return err
	}
	foreign := f.seq.Foreign()
	rec := &recorder{seq: f.seq, st: &f.st, stamps: b.dev.Capabilities().Timestamps && !foreign, marks: len(f.calls) > 1 && !foreign}
	for _, c := range f.calls {
		if err := rec.record(c); err != nil {
			return err
		}
	}
	if f.after != nil || !f.groups[0].mapped {
		// The kernels wrote the error words through device addresses,
		// which the sequence does not track (callUses): order them
		// before the copies that read them back.
		if err := f.seq.Barrier(); err != nil {
			return wrapVK(err)
		}
	}
	if f.after != nil {
		if err := f.after(); err != nil {
			return err
		}
	}
	for i := range f.groups {
		g := &f.groups[i]
		if g.mapped {
			continue // read through the mapping after the submission
		}
		rb, err := f.seq.ReadBack(g.buf, g.words)
		if err != nil {
			return wrapVK(err)
		}
		g.rb = rb
	}
	return nil
}

// complete waits for f (unless done) and settles its outcome: the error
// words are read, the first bad index named, its buffers released (unless
// held) and the Stats kept. It returns an error only when f is still in
// flight: ctx was done first. b.mu is held.
func (b *Backend) complete(ctx context.Context, f *flight) error {
	if f.done {
		return nil
	}
	before := b.dev.Counters()
	t0 := time.Now()
	err := f.seq.Wait(ctx)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return err
	}
	f.st.Submit += time.Since(t0)
	f.done = true
	for i, g := range b.inflight {
		if g == f {
			b.inflight = append(b.inflight[:i], b.inflight[i+1:]...)
			break
		}
	}
	if err != nil {
		f.err = f.named(wrapVK(err))
	} else {
		f.err = b.outcome(f)
	}
	if f.err == nil {
		f.err = f.named(b.foldFurther(f))
	}
	b.countSince(&f.st, before)
	if f.err != nil && !f.quiet {
		b.failed = append(b.failed, f)
	}
	if f.err == nil {
		f.st.Total = time.Since(f.start)
		b.stats = f.st
		if len(f.calls) == 1 {
			b.noteCompiles(f.calls[0], f.st.Passes)
		}
	}
	if !f.hold {
		b.release(f)
	}
	return nil
}

// foldFurther runs, in a second submission of f's sequence, the fold
// passes after the first that f's last call needs (call.further): none,
// and no submission, unless its first fold pass found a list longer than
// a segment. The indices were checked by the first submission. It waits
// regardless of any context: the buffers are f's until it is done.
func (b *Backend) foldFurther(f *flight) error {
	if !f.continues() {
		return nil
	}
	c := f.calls[len(f.calls)-1]
	n := c.further()
	if n == 0 {
		return nil
	}
	if err := f.seq.Reset(); err != nil {
		return wrapVK(err)
	}
	rec := &recorder{seq: f.seq, st: &f.st, stamps: b.dev.Capabilities().Timestamps}
	if err := rec.passes(c, c.plan.more[:n]); err != nil {
		return err
	}
	if err := f.seq.Submit(context.Background()); err != nil {
		return wrapVK(err)
	}
	for _, tm := range f.seq.Timings() {
		f.st.Passes = append(f.st.Passes, PassTime{Label: tm.Label, Duration: tm.Duration})
		f.st.Device += tm.Duration
	}
	return nil
}

// continues reports whether f's last call may need further fold passes
// once its first submission completed (see foldFurther).
func (f *flight) continues() bool {
	return len(f.calls) > 0 && len(f.calls[len(f.calls)-1].plan.more) > 0
}

// outcome reads f's timings and error words and returns the error of the
// first call that found a bad index, prefixed with its place in a batch.
func (b *Backend) outcome(f *flight) error {
	f.st.Passes = nil
	for _, tm := range f.seq.Timings() {
		f.st.Passes = append(f.st.Passes, PassTime{Label: tm.Label, Duration: tm.Duration})
		f.st.Device += tm.Duration
	}
	k := 0
	for _, g := range f.groups {
		words, err := g.errorWords(f.seq)
		if err != nil {
			return err
		}
		for i := 0; i < g.calls; i++ {
			w := binary.LittleEndian.Uint32(words[8*i:])
			f.calls[k].longest = binary.LittleEndian.Uint32(words[8*i+4:])
			if err := f.calls[k].checkIndices(w); err != nil {
				return callError(k, len(f.calls), err)
			}
			k++
		}
	}
	return nil
}

// settle waits for every submission in flight. With report it returns
// the errors of failed submissions that no Wait returned yet (each once),
// prefixed as earlier failures. b.mu is held.
func (b *Backend) settle(ctx context.Context, report bool) error {
	for len(b.inflight) > 0 {
		if err := b.complete(ctx, b.inflight[0]); err != nil {
			return err
		}
	}
	if !report {
		return nil
	}
	var errs []error
	for _, f := range b.failed {
		if !f.reported {
			f.reported = true
			errs = append(errs, fmt.Errorf("vulkan: a batch submitted earlier failed: %w", f.err))
		}
	}
	b.failed = nil
	return errors.Join(errs...)
}
