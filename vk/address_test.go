//go:build cgo

package vk

import (
	"context"
	_ "embed"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

//go:embed testdata/address.spv
var addressSPV []byte

// TestBufferAddresses copies words between two buffers reached only
// through their device addresses (no descriptor bindings).
func TestBufferAddresses(t *testing.T) {
	d := openTest(t, Options{})
	if !d.DeviceAddresses() {
		t.Fatalf("device %q has no buffer device addresses; every device gpuscatter supports has them", d.Info().Name)
	}
	const n = 1000
	src, err := d.NewBuffer(4 * n)
	require.NoError(t, err)
	dst, err := d.NewBuffer(4 * n)
	require.NoError(t, err)
	in := make([]uint32, n)
	for i := range in {
		in[i] = uint32(i * 7)
	}
	require.NoError(t, src.Upload(0, u32bytes(in)))
	sa, err := src.Address()
	require.NoError(t, err)
	da, err := dst.Address()
	require.NoError(t, err)
	assert.NotZero(t, sa)
	assert.NotEqual(t, sa, da)
	assert.Zero(t, sa%16, "buffer addresses are aligned")

	p, err := d.NewPipeline(PipelineSpec{SPIRV: addressSPV, PushConstantSize: 24})
	require.NoError(t, err)
	seq, err := d.NewSequence()
	require.NoError(t, err)
	push := make([]byte, 24)
	binary.LittleEndian.PutUint64(push[0:], sa)
	binary.LittleEndian.PutUint64(push[8:], da)
	binary.LittleEndian.PutUint32(push[16:], n)
	binary.LittleEndian.PutUint32(push[20:], 3)
	require.NoError(t, seq.Dispatch(p, nil, push, [3]uint32{(n + 63) / 64, 1, 1}))
	require.NoError(t, seq.Submit(context.Background()))
	out := make([]byte, 4*n)
	require.NoError(t, dst.Download(0, out))
	for i, v := range bytesU32(out) {
		require.Equal(t, in[i]+3, v, "word %d", i)
	}

	// Pooled buffers have addresses too; a closed one has none.
	pooled, err := d.Acquire(256)
	require.NoError(t, err)
	_, err = pooled.Address()
	require.NoError(t, err)
	require.NoError(t, pooled.Release())
	require.NoError(t, src.Close())
	_, err = src.Address()
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, seq.Close())
}
