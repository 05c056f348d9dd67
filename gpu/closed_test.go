//go:build cgo

package gpu

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// checkClosed calls every method of b, which is nil or closed: each returns
// ErrClosed (which also matches ops.ErrNoDevice), none panics.
func checkClosed(t *testing.T, b *Backend) {
	t.Helper()
	ctx := context.Background()
	req := ops.Request{Op: "ScatterElements-11", Data: tensor.MustFromSlice([]int{3}, []float32{1, 2, 3}),
		Indices: tensor.MustFromSlice([]int{1}, []int64{2}), Updates: tensor.MustFromSlice([]int{1}, []float32{7})}
	_, err := ops.Run(ctx, b, req)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, err, ops.ErrNoDevice)
	_, err = b.Upload(ctx, req.Data)
	require.ErrorIs(t, err, ErrClosed)
	_, err = b.NewTensor(ctx, tensor.Float32, []int{3})
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, b.Run(ctx, Call{Op: "ScatterElements-11"}), ErrClosed)
	bt := b.NewBatch()
	require.ErrorIs(t, bt.Add(Call{Op: "ScatterElements-11"}), ErrClosed)
	assert.Equal(t, 0, bt.Len())
	_, err = bt.Submit(ctx)
	require.ErrorIs(t, err, ErrClosed, "even an empty batch")
	_, err = b.ReadTensor(ctx, tensor.Float32, []int{3}, bytes.NewReader(make([]byte, 12)))
	require.ErrorIs(t, err, ErrClosed)
	_, err = b.copyTime(ctx, 1024, 1)
	require.ErrorIs(t, err, ErrClosed)
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	_, err = b.Needs(p)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, b.CheckResident(p), ErrClosed)
	assert.NotPanics(t, func() { _ = b.LastStats(); _ = b.Name(); _ = b.ValidationMessages() })
}

// TestNilBackend: the README's pattern "g, err := gpu.Open(...); defer
// g.Close(); ops.Run(ctx, g, req)" with no device gets errors, not a
// nil-pointer panic.
func TestNilBackend(t *testing.T) {
	var b *Backend
	checkClosed(t, b)
	require.ErrorIs(t, b.Close(), ErrClosed)
	assert.Equal(t, "vulkan: closed", b.Name())
	assert.Nil(t, b.device())
}

// TestClosedBackend: the same after Close, which stays idempotent.
func TestClosedBackend(t *testing.T) {
	b := openTest(t, Options{})
	require.NoError(t, b.Close())
	checkClosed(t, b)
	require.NoError(t, b.Close())
}

// closedTensor is a resident tensor in one of the states
// TestClosedBackendTensorsAndBatches meets.
type closedTensor struct {
	name string
	t    *Tensor
}

// TestClosedBackendTensorsAndBatches: once the Backend is closed, every
// method of a Tensor that returns an error returns ErrClosed (which also
// matches ops.ErrNoDevice), whether the tensor was open or closed before,
// and so do a Batch's Add and Submit, Backend.Run and the Wait of a
// submission; the accessors still answer. A nil or zero Tensor, and a
// nil Batch, give ErrClosed as a Tensor or Batch of a nil Backend does.
// None panics.
func TestClosedBackendTensorsAndBatches(t *testing.T) {
	ctx := context.Background()
	b := openTest(t, Options{})
	host := tensor.MustFromSlice([]int{3}, []float32{1, 2, 3})
	upload := func(h *tensor.Tensor) *Tensor {
		d, err := b.Upload(ctx, h)
		require.NoError(t, err)
		return d
	}
	open, closedFirst := upload(host), upload(host)
	require.NoError(t, closedFirst.Close())
	call := Call{Op: "ScatterElements-11", Data: open, Out: open,
		Indices: upload(tensor.MustFromSlice([]int{1}, []int64{2})), Updates: upload(tensor.MustFromSlice([]int{1}, []float32{7}))}
	pending := b.NewBatch()
	require.NoError(t, pending.Add(call))
	submitted := b.NewBatch()
	require.NoError(t, submitted.Add(call))
	sub, err := submitted.Submit(ctx)
	require.NoError(t, err)
	waited := b.NewBatch()
	require.NoError(t, waited.Add(call))
	subWaited, err := waited.Submit(ctx)
	require.NoError(t, err)
	require.NoError(t, subWaited.Wait(ctx))
	require.NoError(t, b.Close())

	methods := []struct {
		name string
		call func(d *Tensor) error
	}{
		{"Download", func(d *Tensor) error { _, err := d.Download(ctx); return err }},
		{"Read", func(d *Tensor) error { return d.Read(ctx, host) }},
		{"Write", func(d *Tensor) error { return d.Write(ctx, host) }},
		{"CopyTo", func(d *Tensor) error { _, err := d.CopyTo(ctx, io.Discard); return err }},
		{"CopyFrom", func(d *Tensor) error { _, err := d.CopyFrom(ctx, bytes.NewReader(make([]byte, 12))); return err }},
		{"Close", func(d *Tensor) error { return d.Close() }},
	}
	for _, tc := range []closedTensor{{"open", open}, {"closed first", closedFirst}, {"nil", nil}, {"zero", &Tensor{}}} {
		for _, m := range methods {
			t.Run(tc.name+"/"+m.name, func(t *testing.T) {
				var err error
				require.NotPanics(t, func() { err = m.call(tc.t) })
				require.ErrorIs(t, err, ErrClosed)
				require.ErrorIs(t, err, ops.ErrNoDevice)
				assert.Equal(t, ErrClosed.Error(), err.Error())
			})
		}
	}
	assert.Equal(t, tensor.Float32, open.DType())
	assert.Equal(t, []int{3}, open.Shape())
	assert.NotPanics(t, func() { _, _, _ = (*Tensor)(nil).DType(), (*Tensor)(nil).Shape(), (*Tensor)(nil).Bytes() })

	t.Run("Batch.Add", func(t *testing.T) {
		require.ErrorIs(t, b.NewBatch().Add(call), ErrClosed)
		require.ErrorIs(t, b.NewBatch().Add(Call{Op: "NoSuchOp"}), ErrClosed, "before the call is validated")
		require.ErrorIs(t, (*Batch)(nil).Add(call), ErrClosed)
	})
	t.Run("Batch.Submit", func(t *testing.T) {
		assert.Equal(t, 1, pending.Len())
		_, err := pending.Submit(ctx)
		require.ErrorIs(t, err, ErrClosed, "calls added before Close")
		assert.Equal(t, 0, pending.Len())
		_, err = (*Batch)(nil).Submit(ctx)
		require.ErrorIs(t, err, ErrClosed)
		assert.Equal(t, 0, (*Batch)(nil).Len())
	})
	t.Run("Backend.Run", func(t *testing.T) {
		require.ErrorIs(t, b.Run(ctx, call), ErrClosed)
	})
	t.Run("Submission.Wait", func(t *testing.T) {
		for _, s := range []*Submission{sub, subWaited, {}} {
			require.ErrorIs(t, s.Wait(ctx), ErrClosed)
			assert.True(t, s.Done(), "Close completed it")
			assert.NotPanics(t, func() { _ = s.Stats() })
		}
	})
}
