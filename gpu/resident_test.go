//go:build cgo

package gpu

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// upload uploads x (nil stays nil) and closes it at the end of the test,
// unless the test closed b, which released it (Close is then ErrClosed).
func upload(t *testing.T, b *Backend, x *tensor.Tensor) *Tensor {
	t.Helper()
	if x == nil {
		return nil
	}
	r, err := b.Upload(context.Background(), x)
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := r.Close(); !errors.Is(err, ErrClosed) {
			assert.NoError(t, err)
		}
	})
	return r
}

// residentCall uploads req's tensors and returns the call with a fresh,
// zeroed output (or data itself when inPlace).
func residentCall(t *testing.T, b *Backend, req ops.Request, inPlace bool) Call {
	t.Helper()
	c := CallOf(req)
	c.Data, c.Indices, c.Updates = upload(t, b, req.Data), upload(t, b, req.Indices), upload(t, b, req.Updates)
	c.Out = c.Data
	if !inPlace && req.Data != nil {
		out, err := b.NewTensor(context.Background(), req.Data.DType, req.Data.Shape)
		require.NoError(t, err)
		t.Cleanup(func() {
			if err := out.Close(); !errors.Is(err, ErrClosed) {
				assert.NoError(t, err)
			}
		})
		c.Out = out
	}
	return c
}

// runInPlace runs req in place on resident tensors and checks the outcome:
// wantErr's text, data untouched, where bad >= 0 (a bad index); want
// otherwise.
func runInPlace(t *testing.T, b *Backend, req ops.Request, want *tensor.Tensor, wantErr error, bad int, name string) {
	t.Helper()
	rc := residentCall(t, b, req, true)
	err := b.Run(context.Background(), rc)
	got := download(t, rc.Out)
	if bad >= 0 {
		require.Error(t, err, name)
		assert.Equal(t, wantErr.Error(), err.Error(), name)
		assert.Empty(t, opstest.DiffExact(got, req.Data), "%s: in place, data untouched", name)
		return
	}
	require.NoError(t, err, name)
	assert.Empty(t, opstest.DiffExact(got, want), "%s: in place", name)
}

// download returns the host copy of r.
func download(t *testing.T, r *Tensor) *tensor.Tensor {
	t.Helper()
	h, err := r.Download(context.Background())
	require.NoError(t, err)
	return h
}

// TestResidentValidationTable runs the validation table through resident
// calls: every row whose tensors can be uploaded (well formed, not
// strings) must give the error Execute gives, or cpuref's result.
func TestResidentValidationTable(t *testing.T) {
	b := openTest(t, Options{})
	ran := 0
	for _, c := range opstest.ValidationCases() {
		req := c.Request
		uploadable := true
		for _, x := range []*tensor.Tensor{req.Data, req.Indices, req.Updates} {
			uploadable = uploadable && (x == nil || (x.Check() == nil && x.DType != tensor.String))
		}
		if !uploadable || req.Data == nil {
			continue // Execute's conformance suite covers these rows
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			call := residentCall(t, b, req, false)
			err := b.Run(context.Background(), call)
			if c.Err != nil {
				opstest.RequireCaseError(t, c, err)
				return
			}
			require.NoError(t, err)
			want, err := ops.Run(context.Background(), cpuref.New(), req)
			require.NoError(t, err)
			assert.Empty(t, opstest.DiffFor(opstest.ReductionOf(req), download(t, call.Out), want))
		})
	}
	require.Greater(t, ran, 250, "rows run through resident calls")
}

// TestBatchChainsCalls records three operators in one submission, each
// reading the previous one's output, and compares the result with the
// same chain on cpuref.
func TestBatchChainsCalls(t *testing.T) {
	b := openTest(t, Options{})
	ctx := context.Background()
	data := tensor.MustFromSlice([]int{4, 5}, []float32{
		0, 1, 2, 3, 4,
		5, 6, 7, 8, 9,
		10, 11, 12, 13, 14,
		15, 16, 17, 18, 19})
	req1 := ops.Request{Op: "ScatterNDUpdate-15", Data: data,
		Indices: tensor.MustFromSlice([]int{2, 1}, []int64{3, -4}),
		Updates: tensor.MustFromSlice([]int{2, 5}, []float32{1, 1, 1, 1, 1, 2, 2, 2, 2, 2}), Reduction: "sum"}
	req2 := ops.Request{Op: "ScatterElements-18",
		Indices: tensor.MustFromSlice([]int{1, 5}, []int32{0, 3, 2, 1, 0}),
		Updates: tensor.MustFromSlice([]int{1, 5}, []float32{-1, -2, -3, -4, -5}), Reduction: "max"}
	req3 := ops.Request{Op: "SliceScatter-15",
		Updates: tensor.MustFromSlice([]int{2, 2}, []float32{100, 200, 300, 400}),
		Start:   tensor.MustFromSlice([]int{2}, []int64{0, 1}), Stop: tensor.MustFromSlice([]int{2}, []int64{4, 5}),
		Step: tensor.MustFromSlice([]int{2}, []int64{2, 2})}

	// The chain on the CPU.
	ref := cpuref.New()
	want := data
	for _, req := range []*ops.Request{&req1, &req2, &req3} {
		req.Data = want
		var err error
		want, err = ops.Run(ctx, ref, *req)
		require.NoError(t, err)
	}

	c1 := residentCall(t, b, req1, false)
	c2 := Call{Op: req2.Op, Data: c1.Out, Indices: upload(t, b, req2.Indices), Updates: upload(t, b, req2.Updates), Reduction: "max"}
	out2, err := b.NewTensor(ctx, tensor.Float32, []int{4, 5})
	require.NoError(t, err)
	defer out2.Close()
	c2.Out = out2
	c3 := Call{Op: req3.Op, Data: out2, Out: out2, Updates: upload(t, b, req3.Updates), Start: req3.Start, Stop: req3.Stop, Step: req3.Step}

	batch := b.NewBatch()
	for _, c := range []Call{c1, c2, c3} {
		require.NoError(t, batch.Add(c))
	}
	require.Equal(t, 3, batch.Len())
	require.NoError(t, batch.submitWait(ctx))
	assert.Equal(t, 0, batch.Len(), "Submit empties the batch")
	assert.Empty(t, opstest.DiffExact(download(t, out2), want))
	assert.True(t, opstest.Same(download(t, c1.Data), data), "the first call's data is unchanged")

	// One submission: every pass of the three calls is in one sequence.
	labels := map[string]bool{}
	for _, p := range b.LastStats().Passes {
		labels[strings.SplitN(p.Label, ":", 2)[0]] = true
	}
	if b.device().Capabilities().Timestamps {
		assert.Equal(t, map[string]bool{"1": true, "2": true, "3": true}, labels)
	}

	// An empty batch is a no-op.
	require.NoError(t, batch.submitWait(ctx))
}

// TestBatchIndexError: a bad index in the second of three calls gives the
// error Execute gives for that call, prefixed with its place; the first
// call's output is complete and the second's holds its data.
func TestBatchIndexError(t *testing.T) {
	b := openTest(t, Options{})
	ctx := context.Background()
	data := tensor.MustFromSlice([]int{6}, []int32{1, 2, 3, 4, 5, 6})
	good := ops.Request{Op: "ScatterElements-18", Data: data,
		Indices: tensor.MustFromSlice([]int{2}, []int64{0, 5}), Updates: tensor.MustFromSlice([]int{2}, []int32{10, 60})}
	bad := good
	bad.Indices = tensor.MustFromSlice([]int{3}, []int64{1, 6, -9})
	bad.Updates = tensor.MustFromSlice([]int{3}, []int32{7, 8, 9})
	_, wantErr := ops.Run(ctx, cpuref.New(), bad)
	require.ErrorIs(t, wantErr, ops.ErrIndexRange)

	c1 := residentCall(t, b, good, false)
	c2 := residentCall(t, b, bad, false)
	c2.Data = c1.Out
	c3 := residentCall(t, b, good, false)
	c3.Data = c2.Out
	batch := b.NewBatch()
	for _, c := range []Call{c1, c2, c3} {
		require.NoError(t, batch.Add(c))
	}
	err := batch.submitWait(ctx)
	require.ErrorIs(t, err, ops.ErrIndexRange)
	assert.Equal(t, "batch call 2 of 3: "+wantErr.Error(), err.Error())
	var e *ops.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "indices", e.Input)

	want1, err := ops.Run(ctx, cpuref.New(), good)
	require.NoError(t, err)
	assert.Empty(t, opstest.DiffExact(download(t, c1.Out), want1))
	assert.Empty(t, opstest.DiffExact(download(t, c2.Out), want1), "the failing call's output holds its data")

	// Alone, the bad call gives exactly Execute's error, and an in-place
	// output is left as it was.
	c2.Out = c2.Data
	err = b.Run(ctx, c2)
	assert.Equal(t, wantErr.Error(), err.Error())
	assert.Empty(t, opstest.DiffExact(download(t, c1.Out), want1))
}

// TestResidentErrors covers the resident API's own errors.
func TestResidentErrors(t *testing.T) {
	ctx := context.Background()
	b := openTest(t, Options{})
	req := ops.Request{Op: "ScatterElements-18",
		Data:    tensor.MustFromSlice([]int{4}, []float32{1, 2, 3, 4}),
		Indices: tensor.MustFromSlice([]int{2}, []int64{0, 1}), Updates: tensor.MustFromSlice([]int{2}, []float32{5, 6})}
	c := residentCall(t, b, req, false)

	check := func(c Call, sentinel error, input, text string) {
		t.Helper()
		err := b.Run(ctx, c)
		require.ErrorIs(t, err, sentinel)
		var e *ops.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, input, e.Input)
		assert.Contains(t, err.Error(), text)
	}
	bad := c
	bad.Out = nil
	check(bad, ops.ErrOutput, "out", "out is nil")
	bad.Out = c.Updates
	check(bad, ops.ErrOutput, "out", "out is the updates tensor")
	bad.Out = c.Indices
	check(bad, ops.ErrOutput, "out", "out is the indices tensor")
	wrong, err := b.NewTensor(ctx, tensor.Float32, []int{5})
	require.NoError(t, err)
	bad.Out = wrong
	check(bad, ops.ErrOutput, "out", "out is float32[5], want float32[4]")
	bad = c
	bad.Data = nil
	check(bad, ops.ErrMissingInput, "data", "data is required")
	bad = c
	bad.Op = "NoSuchOp"
	require.ErrorIs(t, b.Run(ctx, bad), ops.ErrUnknownOp)

	// A closed tensor, in Add and between Add and Submit.
	require.NoError(t, wrong.Close())
	require.NoError(t, wrong.Close(), "Close is idempotent")
	bad = c
	bad.Data, bad.Out = wrong, wrong
	check(bad, ops.ErrInvalidTensor, "data", "closed")
	scratch, err := b.Upload(ctx, req.Updates)
	require.NoError(t, err)
	bad = c
	bad.Updates = scratch
	batch := b.NewBatch()
	require.NoError(t, batch.Add(bad))
	require.NoError(t, scratch.Close())
	require.ErrorIs(t, batch.submitWait(ctx), ops.ErrInvalidTensor)
	_, err = wrong.Download(ctx)
	require.ErrorIs(t, err, ops.ErrInvalidTensor)

	// Strings cannot be resident; malformed host tensors are refused.
	_, err = b.Upload(ctx, &tensor.Tensor{DType: tensor.String, Shape: []int{1}, Strings: []string{"a"}})
	require.ErrorIs(t, err, ops.ErrUnsupported)
	_, err = b.Upload(ctx, &tensor.Tensor{DType: tensor.Float32, Shape: []int{3}, Data: make([]byte, 4)})
	require.ErrorIs(t, err, ops.ErrInvalidTensor)
	_, err = b.NewTensor(ctx, tensor.Float32, []int{-1})
	require.ErrorIs(t, err, ops.ErrInvalidTensor)

	// Read and Write need the tensor's dtype and shape.
	require.ErrorIs(t, c.Data.Write(ctx, tensor.MustFromSlice([]int{3}, []float32{1, 2, 3})), ops.ErrShape)
	require.ErrorIs(t, c.Data.Read(ctx, tensor.MustFromSlice([]int{4}, []int32{1, 2, 3, 4})), ops.ErrShape)
	src := tensor.MustFromSlice([]int{4}, []float32{9, 8, 7, 6})
	require.NoError(t, c.Data.Write(ctx, src))
	assert.True(t, opstest.Same(download(t, c.Data), src))
	assert.Equal(t, []int{4}, c.Data.Shape())
	assert.Equal(t, tensor.Float32, c.Data.DType())
	assert.Equal(t, uint64(16), c.Data.Bytes())

	// A tensor of another backend.
	other := openTest(t, Options{})
	foreign, err := other.Upload(ctx, req.Data)
	require.NoError(t, err)
	bad = c
	bad.Data = foreign
	check(bad, ops.ErrInvalidTensor, "data", "another backend")

	// A done context: nothing runs.
	done, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, b.Run(done, c), context.Canceled)

	// Closing the backend releases its tensors; using one, or closing it,
	// is ErrClosed (TestClosedBackendTensorsAndBatches has every method).
	require.NoError(t, other.Close())
	_, err = foreign.Download(ctx)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, foreign.Close(), ErrClosed)
	_, err = other.Upload(ctx, req.Data)
	require.True(t, errors.Is(err, ops.ErrNoDevice), "%v", err)
}

// TestResidentZeroSize: empty tensors upload, run and download.
func TestResidentZeroSize(t *testing.T) {
	b := openTest(t, Options{})
	req := ops.Request{Op: "ScatterNDUpdate-15",
		Data:    &tensor.Tensor{DType: tensor.Float32, Shape: []int{0, 3}},
		Indices: &tensor.Tensor{DType: tensor.Int64, Shape: []int{0, 1}},
		Updates: &tensor.Tensor{DType: tensor.Float32, Shape: []int{0, 3}}}
	c := residentCall(t, b, req, false)
	require.NoError(t, b.Run(context.Background(), c))
	got := download(t, c.Out)
	assert.Equal(t, []int{0, 3}, got.Shape)
}

// TestBatchHonoursContext: a deadline that expires during a large batch
// returns the context's error. The batch then ran completely (the device
// finishes in the background, and the next use of the tensors waits for
// it) or, when the deadline passed before the submission, not at all;
// never in part. A later batch runs normally.
func TestBatchHonoursContext(t *testing.T) {
	b := openTest(t, Options{})
	req := reversedRequest(4 << 20)
	want, err := ops.Run(context.Background(), cpuref.New(), req)
	require.NoError(t, err)
	c := residentCall(t, b, req, true) // in place: rerunning gives the same result
	for _, d := range []time.Duration{time.Millisecond, 20 * time.Millisecond, 200 * time.Millisecond, time.Minute} {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		batch := b.NewBatch()
		for range 3 {
			require.NoError(t, batch.Add(c))
		}
		err := batch.submitWait(ctx)
		cancel()
		got := download(t, c.Data)
		t.Logf("deadline %v: %v (result complete: %v)", d, err, opstest.DiffExact(got, want) == "")
		if err == nil {
			assert.Empty(t, opstest.DiffExact(got, want), "after a deadline of %v", d)
			continue
		}
		require.ErrorIs(t, err, context.DeadlineExceeded)
		if opstest.DiffExact(got, want) != "" {
			assert.Empty(t, opstest.DiffExact(got, req.Data), "after a deadline of %v: neither the result nor data", d)
			require.NoError(t, c.Data.Write(context.Background(), req.Data))
		}
	}
	require.NoError(t, b.Run(context.Background(), c))
	assert.Empty(t, opstest.DiffExact(download(t, c.Data), want))
}

// TestBatchFailureContract pins what Submit documents for a bad index in
// call 2 of 3: call 1 completed, call 2's output holds a copy of its data,
// call 3 ran on what its inputs then held, and the batch is empty after.
// The README states the same.
func TestBatchFailureContract(t *testing.T) {
	b := openTest(t, Options{})
	ctx := context.Background()
	data := tensor.MustFromSlice([]int{4}, []int32{1, 2, 3, 4})
	good := ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: data,
		Indices: tensor.MustFromSlice([]int{1}, []int64{0}), Updates: tensor.MustFromSlice([]int{1}, []int32{10})}
	bad := good
	bad.Indices = tensor.MustFromSlice([]int{1}, []int64{4})
	c1 := residentCall(t, b, good, false)
	c2 := residentCall(t, b, bad, false)
	c2.Data = c1.Out
	c3 := residentCall(t, b, good, false)
	c3.Data = c2.Out
	batch := b.NewBatch()
	for _, c := range []Call{c1, c2, c3} {
		require.NoError(t, batch.Add(c))
	}
	err := batch.submitWait(ctx)
	require.ErrorIs(t, err, ops.ErrIndexRange)
	assert.Contains(t, err.Error(), "batch call 2 of 3: ")
	assert.Zero(t, batch.Len(), "the batch is empty after Submit, whatever the outcome")

	after1 := tensor.MustFromSlice([]int{4}, []int32{11, 2, 3, 4})
	assert.Empty(t, opstest.DiffExact(download(t, c1.Out), after1), "call 1 completed")
	assert.Empty(t, opstest.DiffExact(download(t, c2.Out), after1), "call 2's output holds a copy of its data")
	after3 := tensor.MustFromSlice([]int{4}, []int32{21, 2, 3, 4})
	assert.Empty(t, opstest.DiffExact(download(t, c3.Out), after3), "call 3 ran on what call 2's output held")
	require.NoError(t, batch.submitWait(ctx), "an empty batch has nothing to run")
}

// submitWait submits bt and waits for it: the synchronous use.
func (bt *Batch) submitWait(ctx context.Context) error {
	s, err := bt.Submit(ctx)
	if err != nil {
		return err
	}
	return s.Wait(ctx)
}

// reversedRequest is a ScatterElements-11 call on f32 data of n zeros
// whose n updates (0, 1, ...) go to the positions in reverse order: large
// enough to outlast a short deadline on any device.
func reversedRequest(n int) ops.Request {
	data, _ := tensor.New(tensor.Float32, []int{n})
	upd, _ := tensor.New(tensor.Float32, []int{n})
	idx, _ := tensor.New(tensor.Int32, []int{n})
	for i := range tensor.View[int32](idx) {
		tensor.View[int32](idx)[i] = int32(n - 1 - i)
		tensor.View[float32](upd)[i] = float32(i)
	}
	return ops.Request{Op: "ScatterElements-11", Data: data, Indices: idx, Updates: upd}
}
