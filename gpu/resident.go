//go:build cgo

package gpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Tensor is a tensor held in the device's memory (a resident tensor):
// upload it once, run several operators on it (Backend.Run, Batch), and
// download the result once, instead of moving every input and output
// across the bus on every call as Execute does. Backend.Upload and
// Backend.NewTensor create one; Close releases its memory, and closing the
// Backend releases every Tensor it made. String tensors cannot be
// resident (on the device they are handles into host memory).
//
// A Tensor is tied to its Backend; its methods are safe for concurrent use
// (they serialise with the Backend's other calls).
type Tensor struct {
	b      *Backend
	dtype  tensor.DType
	shape  []int
	dev    *devTensor
	closed bool // guarded by b.mu
	// ext is the caller's buffer range a wrapped tensor is (WrapBuffer),
	// nil for the Backend's own.
	ext *extRange
}

// DType returns the tensor's element type (the zero DType for a nil
// Tensor).
func (t *Tensor) DType() tensor.DType {
	if t == nil {
		return 0
	}
	return t.dtype
}

// Shape returns a copy of the tensor's shape (nil for a nil Tensor).
func (t *Tensor) Shape() []int {
	if t == nil {
		return nil
	}
	return slices.Clone(t.shape)
}

// Bytes returns the size of the tensor's payload in bytes, what CopyTo
// writes and CopyFrom reads (0 for a nil Tensor).
func (t *Tensor) Bytes() uint64 {
	if t == nil || t.dev == nil {
		return 0
	}
	return t.dev.size
}

// backend returns t's Backend, or ErrClosed for a nil Tensor or one made
// by no Backend (the zero Tensor).
func (t *Tensor) backend() (*Backend, error) {
	if t == nil || t.b == nil {
		return nil, ErrClosed
	}
	return t.b, nil
}

// desc returns a payload-less host tensor with t's dtype and shape, the
// form ops.PrepareShapes reads.
func (t *Tensor) desc() *tensor.Tensor {
	return &tensor.Tensor{DType: t.dtype, Shape: t.shape}
}

// residentError returns an error about a resident tensor argument.
func residentError(op, input string, sentinel error, format string, args ...any) error {
	return &ops.Error{Op: op, Input: input, Err: sentinel, Msg: "vulkan: " + fmt.Sprintf(format, args...)}
}

// newResident allocates a resident tensor of dt and shape; b.mu is held.
func (b *Backend) newResident(dt tensor.DType, shape []int) (*Tensor, error) {
	if b.closed {
		return nil, ErrClosed
	}
	desc := &tensor.Tensor{DType: dt, Shape: shape}
	if err := desc.CheckShape(); err != nil {
		return nil, fmt.Errorf("%w: vulkan: resident tensor: %w", ops.ErrInvalidTensor, err)
	}
	if dt == tensor.String {
		return nil, fmt.Errorf("%w: vulkan: string tensors cannot be resident on the device; use Execute", ops.ErrUnsupported)
	}
	n, _ := tensor.NumElements(shape)
	dev, err := b.acquire(uint64(n) * uint64(dt.Size()))
	if err != nil {
		return nil, err
	}
	return b.keepResident(&Tensor{b: b, dtype: dt, shape: slices.Clone(shape), dev: dev}), nil
}

// keepResident adds t to the Backend's open resident tensors (those Close
// closes) and returns it; b.mu is held.
func (b *Backend) keepResident(t *Tensor) *Tensor {
	if b.resident == nil {
		b.resident = map[*Tensor]struct{}{}
	}
	b.resident[t] = struct{}{}
	return t
}

// NewTensor returns a zero-filled resident tensor of dt and shape, for
// instance the output of a Call.
func (b *Backend) NewTensor(ctx context.Context, dt tensor.DType, shape []int) (*Tensor, error) {
	if b == nil {
		return nil, ErrClosed
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.newResident(dt, shape)
	if err != nil {
		return nil, err
	}
	if err := b.zero(ctx, t.dev); err != nil {
		b.closeResident(t)
		return nil, err
	}
	return t, nil
}

// zero fills t with zero bytes on the device.
func (b *Backend) zero(ctx context.Context, t *devTensor) (err error) {
	if len(t.bufs) == 0 {
		return nil
	}
	seq, err := b.dev.NewSequence()
	if err != nil {
		return wrapVK(err)
	}
	defer func() { err = errors.Join(err, wrapVK(seq.Close())) }()
	for _, buf := range t.bufs {
		if err := seq.Fill(buf, 0, 0, 0); err != nil {
			return wrapVK(err)
		}
	}
	// Zeroing is short: it is waited for even when ctx is done, so that
	// the sequence can be closed.
	return wrapVK(seq.Submit(context.Background()))
}

// Upload copies host tensor src into a new resident tensor, which calls
// then use without moving it between host and device again.
func (b *Backend) Upload(ctx context.Context, src *tensor.Tensor) (*Tensor, error) {
	if b == nil {
		return nil, ErrClosed
	}
	if err := src.Check(); err != nil {
		return nil, fmt.Errorf("%w: vulkan: upload: %w", ops.ErrInvalidTensor, err)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.newResident(src.DType, src.Shape)
	if err != nil {
		return nil, err
	}
	if err := t.dev.transfer(ctx, src.Data, true); err != nil {
		b.closeResident(t)
		return nil, err
	}
	return t, nil
}

// usable reports whether t can take part in a call: ErrClosed once b is
// closed; b.mu is held.
func (t *Tensor) usable(b *Backend) error {
	switch {
	case t.b != b:
		return fmt.Errorf("%w: vulkan: the tensor belongs to another backend", ops.ErrInvalidTensor)
	case b.closed:
		return ErrClosed
	case t.closed:
		return fmt.Errorf("%w: vulkan: the tensor is closed", ops.ErrInvalidTensor)
	}
	return nil
}

// sameLayout reports whether host tensor h has t's dtype and shape.
func (t *Tensor) sameLayout(h *tensor.Tensor, what string) error {
	if err := h.Check(); err != nil {
		return fmt.Errorf("%w: vulkan: %s: %w", ops.ErrInvalidTensor, what, err)
	}
	if h.DType != t.dtype || !tensor.SameShape(h.Shape, t.shape) {
		return fmt.Errorf("%w: vulkan: %s is %v%s, the resident tensor %v%s", ops.ErrShape, what,
			h.DType, tensor.FormatShape(h.Shape), t.dtype, tensor.FormatShape(t.shape))
	}
	return nil
}

// Write copies host tensor src, of t's dtype and shape, into t. When ctx is
// done during the copy, t holds part of src. Like every method of a Tensor
// that moves its payload, it returns ErrClosed once t's Backend is closed
// and an error wrapping ops.ErrInvalidTensor once t is.
func (t *Tensor) Write(ctx context.Context, src *tensor.Tensor) error {
	return t.transferHost(ctx, src, "src", true)
}

// Read copies t into host tensor dst, of t's dtype and shape: Download
// into memory the caller already has. When ctx is done during the copy,
// dst holds part of t.
func (t *Tensor) Read(ctx context.Context, dst *tensor.Tensor) error {
	return t.transferHost(ctx, dst, "dst", false)
}

// transferHost copies host tensor h (named what in errors) into t, or t
// into h, once the device is done with t.
func (t *Tensor) transferHost(ctx context.Context, h *tensor.Tensor, what string, upload bool) error {
	if _, err := t.backend(); err != nil {
		return err
	}
	if err := t.sameLayout(h, what); err != nil {
		return err
	}
	return t.withDevice(ctx, !upload, func(ctx context.Context) error {
		return t.dev.transfer(ctx, h.Data, upload)
	})
}

// withDevice runs f (with ctx, Background when nil) while it holds t's
// backend, once t is usable and the device is done with the work
// submitted before. A read (f reads t's result) first returns the error of
// a failed submission that no Submission.Wait reported, instead of
// running f: the result may be the failed call's.
func (t *Tensor) withDevice(ctx context.Context, read bool, f func(ctx context.Context) error) error {
	b, err := t.backend()
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := t.usable(b); err != nil {
		return err
	}
	if err := b.settle(ctx, read); err != nil {
		return err
	}
	return f(ctx)
}

// Download returns a host copy of t, to bring a result back from the
// device.
func (t *Tensor) Download(ctx context.Context) (*tensor.Tensor, error) {
	var h *tensor.Tensor
	err := t.withDevice(ctx, true, func(ctx context.Context) (err error) {
		if h, err = tensor.New(t.dtype, t.shape); err != nil {
			return err
		}
		return t.dev.transfer(ctx, h.Data, false)
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// Close releases the tensor's device memory once the program no longer
// needs it, after waiting for work in flight. It is idempotent while the
// Backend is open; once the Backend is closed (which released every
// tensor) it returns ErrClosed.
func (t *Tensor) Close() error {
	b, err := t.backend()
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if t.closed {
		return nil
	}
	// The device must be done with t's buffers before they go back.
	err = b.settle(context.Background(), false)
	b.closeResident(t)
	return err
}

// closeResident releases t's buffers; b.mu is held and the device does not
// use them.
func (b *Backend) closeResident(t *Tensor) {
	t.closed = true
	b.releaseTensor(t.dev)
	delete(b.resident, t)
	b.trimPool()
}

// Call is one operator call on resident tensors: the fields of
// ops.Request, with Data, Indices and Updates on the device, and Out, the
// resident tensor that receives the result. Out must have data's dtype and
// shape; it may be Data itself (in place: data's copy is skipped), but it
// must not be Indices or Updates.
type Call struct {
	Op                     string
	Data, Indices, Updates *Tensor
	Out                    *Tensor
	// Axis, Start, Stop, Step and Axes are host tensors, as in ops.Request.
	Axis, Start, Stop, Step, Axes *tensor.Tensor
	Reduction                     string
	UseInitVal                    *bool
	Mode                          string // TensorScatter-24: "linear" (or "") or "circular"
	// SkipBadIndices is ops.Request's opt-in, for indices from the
	// caller's own code: a bad index skips its updates, every other update
	// is applied, and the call still reports the first bad index, with Out
	// then holding that result. No pass checks the indices before the
	// scatter, so an in-place reduction is one pass over indices and
	// updates. The in-order fold (deterministic mode, or 8-byte elements
	// on a device without 64-bit atomics) cannot skip an update and
	// refuses the call with ops.ErrUnsupported.
	SkipBadIndices bool
}

// CallOf returns the Call of req's operator and attributes (axis, slice
// parameters, reduction, use_init_val, mode) with no tensors, for a
// caller that runs an ops.Request on resident tensors: it sets Data,
// Indices, Updates and Out.
func CallOf(req ops.Request) Call {
	return Call{Op: req.Op, Axis: req.Axis, Start: req.Start, Stop: req.Stop, Step: req.Step, Axes: req.Axes,
		Reduction: req.Reduction, UseInitVal: req.UseInitVal, Mode: req.Mode, SkipBadIndices: req.SkipBadIndices}
}

// Batch records operator calls on resident tensors and runs them in one
// submission to the device, in order, each call seeing the results of the
// ones before it (the output of one may be an input of the next). Add
// validates each call as it is added; Submit runs them. A Batch is not a
// transaction: when a call fails on the device, the calls before it have
// completed (see Submit for what the others hold). A Batch holds no
// device resources between calls and is used by one goroutine at a time.
type Batch struct {
	b     *Backend
	calls []batched
}

type batched struct {
	c Call
	p *ops.Plan
}

// NewBatch returns an empty batch of calls for b, to run several calls on
// resident tensors in one submission.
func (b *Backend) NewBatch() *Batch { return &Batch{b: b} }

// Len returns the number of calls added since the last Submit.
func (bt *Batch) Len() int {
	if bt == nil {
		return 0
	}
	return len(bt.calls)
}

// Add validates c and appends it to the batch. The errors are Prepare's
// (*ops.Error wrapping ops' sentinels), plus ops.ErrMissingInput for a nil
// tensor, ops.ErrInvalidTensor for a closed one or one of another Backend,
// and ops.ErrOutput for an output of the wrong dtype or shape or one that
// is also an input other than Data; ErrClosed comes first, once the
// Backend is closed.
func (bt *Batch) Add(c Call) error {
	if bt == nil || bt.b == nil {
		return ErrClosed
	}
	p, err := bt.b.prepareCall(c)
	if err != nil {
		return err
	}
	bt.calls = append(bt.calls, batched{c: c, p: p})
	return nil
}

// prepareCall validates c and returns its plan; ErrClosed comes first.
func (b *Backend) prepareCall(c Call) (*ops.Plan, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, ErrClosed
	}
	o, err := ops.Lookup(c.Op)
	if err != nil {
		b.mu.Unlock()
		return nil, err
	}
	op := o.Name
	req := ops.Request{Op: c.Op, Axis: c.Axis, Start: c.Start, Stop: c.Stop, Step: c.Step, Axes: c.Axes,
		Reduction: c.Reduction, UseInitVal: c.UseInitVal, Mode: c.Mode, SkipBadIndices: c.SkipBadIndices}
	for _, in := range []struct {
		name string
		t    *Tensor
		dst  **tensor.Tensor
	}{{"data", c.Data, &req.Data}, {"indices", c.Indices, &req.Indices}, {"updates", c.Updates, &req.Updates}, {"out", c.Out, nil}} {
		if in.t == nil {
			continue // Prepare names a missing input; out is checked below
		}
		if err := in.t.usable(b); err != nil {
			b.mu.Unlock()
			return nil, &ops.Error{Op: op, Input: in.name, Err: ops.ErrInvalidTensor, Msg: in.name + ": " + err.Error()}
		}
		if in.dst != nil {
			*in.dst = in.t.desc()
		}
	}
	b.mu.Unlock()
	p, err := ops.PrepareShapes(req)
	if err != nil {
		return nil, err
	}
	switch {
	case c.Out == nil:
		return nil, residentError(op, "out", ops.ErrOutput, "out is nil")
	case c.Out == c.Updates:
		return nil, residentError(op, "out", ops.ErrOutput, "out is the updates tensor; it may only be data (in place)")
	case c.Out == c.Indices:
		return nil, residentError(op, "out", ops.ErrOutput, "out is the indices tensor; it may only be data (in place)")
	case c.Out.dtype != p.DType || !tensor.SameShape(c.Out.shape, p.Shape):
		return nil, residentError(op, "out", ops.ErrOutput, "out is %v%s, want %v%s (the dtype and shape of data)",
			c.Out.dtype, tensor.FormatShape(c.Out.shape), p.DType, tensor.FormatShape(p.Shape))
	}
	return p, nil
}

// Run runs one call on resident tensors and waits for it: a batch of one,
// submitted and waited for. For a call that returns without waiting,
// submit a Batch of one.
func (b *Backend) Run(ctx context.Context, c Call) error {
	bt := b.NewBatch()
	if err := bt.Add(c); err != nil {
		return err
	}
	s, err := bt.Submit(ctx)
	if err != nil {
		return err
	}
	return s.Wait(ctx)
}

// Submit records the batch's calls into one command buffer (their
// parameters and the read-back of their error words included), submits it
// to the device once and returns without waiting: the host waits only
// when it needs a result. The batch is then empty, whatever the outcome.
// Submit returns an error only for what it finds before the submission (a
// closed tensor, device memory, ctx already done; ErrClosed, even for an
// empty batch, once the Backend is closed); then no call runs.
//
// The Submission's Wait returns the batch's outcome. When a call finds a
// bad index, that is the error Execute would give (the CPU reference's
// text) for the first such call, prefixed with its place in the batch:
// the calls before it completed, its output holds a copy of its data (or,
// in place, is unchanged), and the calls after it, like batches submitted
// later, ran on whatever their inputs then held, so their outputs should
// be discarded. Until a Wait returns it, that error is also returned by
// the next Tensor.Read, Download or CopyTo (of any tensor of the Backend:
// the result may be the failed call's) and by Backend.Close.
//
// Submissions run in order, each seeing the results of those before.
// Reading or writing a tensor from the host (Read, Write, CopyFrom,
// CopyTo, Download), closing one, and Execute first wait for every
// submission in flight. At most 8 submissions are in flight: Submit waits
// for the oldest beyond that, and for any whose last call folds in order
// and may need further passes (see the package's DESIGN.md, "In order").
func (bt *Batch) Submit(ctx context.Context) (*Submission, error) { return bt.submit(ctx, nil, nil) }

// submit is Submit, waiting for and signalling timeline semaphores where
// wait or signal are given (SubmitWith).
func (bt *Batch) submit(ctx context.Context, wait, signal []SemaphoreValue) (*Submission, error) {
	if bt == nil {
		return nil, ErrClosed
	}
	start := time.Now()
	calls, b, err := bt.take()
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if run, err := b.ready(ctx, calls); !run {
		return nil, err
	}
	f := &flight{r: &execution{}, start: start, what: batchName(calls), resident: true}
	before := b.dev.Counters()
	for len(b.inflight) >= maxInFlight {
		if err := b.complete(ctx, b.inflight[0]); err != nil {
			return nil, err
		}
	}
	// A batch whose last call may need further fold passes runs them when
	// its completion is observed: before anything submitted after it.
	if err := b.completeContinuing(ctx); err != nil {
		return nil, err
	}
	every := len(wait) > 0 || len(signal) > 0
	f.wait, f.signal = wait, signal
	err = b.buildCalls(calls, f, every)
	if err == nil {
		f.seq, err = b.takeSequence()
	}
	b.countSince(&f.st, before)
	if err == nil {
		err = b.launch(ctx, f)
	}
	if err != nil {
		b.release(f)
		return nil, f.named(err)
	}
	return &Submission{b: b, f: f}, nil
}

// take empties the batch and returns its calls and Backend: ErrClosed for
// a nil batch or one of no Backend.
func (bt *Batch) take() ([]batched, *Backend, error) {
	if bt == nil {
		return nil, nil, ErrClosed
	}
	calls := bt.calls
	bt.calls = nil
	if bt.b == nil {
		return nil, nil, ErrClosed
	}
	return calls, bt.b, nil
}

// ready says, with b.mu held, whether a batch's calls are to be submitted
// or recorded now: not once the Backend is closed (ErrClosed), for no
// calls (a nil error) or when ctx is done (its error).
func (b *Backend) ready(ctx context.Context, calls []batched) (bool, error) {
	if b.closed {
		return false, ErrClosed
	}
	if len(calls) == 0 {
		return false, nil
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return true, nil
}

// completeContinuing completes, with b.mu held, every submission in flight
// whose last call may need further fold passes, which run when its
// completion is observed.
func (b *Backend) completeContinuing(ctx context.Context) error {
	for i := 0; i < len(b.inflight); {
		if g := b.inflight[i]; g.continues() {
			if err := b.complete(ctx, g); err != nil {
				return err
			}
			continue
		}
		i++
	}
	return nil
}

// batchName names a batch's calls in its errors: the operator of a batch
// of one, and "batch of n calls of" the operators of a larger one.
func batchName(calls []batched) string {
	var names []string
	seen := map[string]bool{}
	for _, c := range calls {
		if n := c.p.Op.Name; !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if len(calls) == 1 {
		return names[0]
	}
	if len(names) > 3 {
		names = append(names[:3], "...")
	}
	return fmt.Sprintf("batch of %d calls of %s", len(calls), strings.Join(names, ", "))
}

// callError prefixes err with the call's place in a batch of several.
func callError(k, n int, err error) error {
	if n == 1 || err == nil {
		return err
	}
	return fmt.Errorf("batch call %d of %d: %w", k+1, n, err)
}

// buildBatch plans the calls and acquires their device buffers and
// pipelines into f.
func (b *Backend) buildBatch(calls []batched, f *flight) error { return b.buildCalls(calls, f, false) }

// buildCalls is buildBatch; with every, the last call records every
// further fold pass its shapes allow too, so that the batch needs no
// second submission (a recording, or a submission that signals
// semaphores).
func (b *Backend) buildCalls(calls []batched, f *flight, every bool) error {
	t0 := time.Now()
	st := &f.st
	for k, bc := range calls {
		if b.onBuild != nil {
			b.onBuild(k)
		}
		c := bc.c
		for _, t := range []*Tensor{c.Data, c.Indices, c.Updates, c.Out} {
			if t == nil {
				continue
			}
			if err := t.usable(b); err != nil {
				return callError(k, len(calls), &ops.Error{Op: bc.p.Op.Name, Err: ops.ErrInvalidTensor, Msg: err.Error()})
			}
		}
		fc := b.facts(false)
		pl, err := fc.planCall(bc.p)
		if err != nil {
			return callError(k, len(calls), err)
		}
		io := [3]*devTensor{c.Out.dev, c.Updates.dev, {}}
		if c.Indices != nil {
			io[2] = c.Indices.dev
		}
		var from *devTensor
		var fromBytes uint64
		if c.Data != c.Out {
			from, fromBytes = c.Data.dev, c.Data.dev.size
		}
		if err := pl.resident([3]uint64{io[0].size, io[1].size, io[2].size}, fromBytes); err != nil {
			return callError(k, len(calls), err)
		}
		if k < len(calls)-1 || every {
			// Later calls may read the output: every further fold pass
			// the shapes allow goes into the one submission.
			pl.passes, pl.more = append(pl.passes, pl.more...), nil
		}
		call, err := b.newCall(pl, io, from, f.r)
		if err != nil {
			return callError(k, len(calls), named(bc.p.Op.Name, err))
		}
		if err := b.pipelines(call, st); err != nil {
			return callError(k, len(calls), named(bc.p.Op.Name, err))
		}
		if c.Indices != nil {
			call.indices = c.Indices.dev
		}
		if len(calls) > 1 {
			call.label = fmt.Sprintf("%d:", k+1)
		}
		f.calls = append(f.calls, call)
	}
	if b.onBuild != nil {
		b.onBuild(len(calls))
	}
	st.Pipelines = time.Since(t0)
	return nil
}
