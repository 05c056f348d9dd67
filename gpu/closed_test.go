//go:build cgo

package gpu

import (
	"context"
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
	require.NoError(t, bt.submitWait(ctx), "an empty batch has nothing to run")
	_, err = b.copyTime(ctx, 1024, 1)
	require.ErrorIs(t, err, ErrClosed)
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	_, err = b.Needs(p)
	require.ErrorIs(t, err, ErrClosed)
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
