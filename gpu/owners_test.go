//go:build cgo

package gpu

import (
	"context"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// passLabels returns the labels of the passes of the last call.
func passLabels(b *Backend) []string {
	var l []string
	for _, p := range b.LastStats().Passes {
		l = append(l, p.Label)
	}
	return l
}

// shuffled returns req with its indices permuted by rng and new update
// values, the shapes as they were.
func shuffled(rng *rand.Rand, req ops.Request) ops.Request {
	idx := tensor.View[int64](req.Indices)
	ni, _ := tensor.New(tensor.Int64, req.Indices.Shape)
	nu, _ := tensor.New(req.Updates.DType, req.Updates.Shape)
	for i, p := range rng.Perm(len(idx)) {
		tensor.View[int64](ni)[i] = idx[p]
		tensor.View[float32](nu)[i] = float32(rng.Intn(1000)) - 500
	}
	req.Indices, req.Updates = ni, nu
	return req
}

// TestOwnersKeptClear: an element call of reduction none whose updates
// collide claims owner words; the update that owns each target clears its
// word, so the backend clears the words only on their first use and after
// a call that failed, and every call, with any index values, is the CPU
// reference's bit for bit: repeated Executes, a bad index then a good call,
// a smaller call on the larger kept words, resident calls in place in one
// batch, and a backend that keeps no buffers (which clears every time).
func TestOwnersKeptClear(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(7))
	req := dupRequest("ScatterElements-11", "", tensor.Float32, 3000)
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	b := openTest(t, Options{})
	n, err := b.Needs(p)
	require.NoError(t, err)
	require.Equal(t, "owner", n.Path, "the owner-word path")
	assert.Equal(t, uint64(4*3000), n.FirstClearBytes, "the words are cleared on first use")
	for _, ps := range n.Passes {
		assert.NotEqual(t, "clear", ps.Name, "no clear in the plan's figures")
	}
	assert.Contains(t, n.Plan, "on their first use only")

	execute := func(req ops.Request) ([]string, error) {
		p, err := ops.Prepare(req)
		require.NoError(t, err)
		out, err := tensor.New(p.DType, p.Shape)
		require.NoError(t, err)
		if err := b.Execute(ctx, p, out); err != nil {
			return nil, err
		}
		assert.Empty(t, opstest.DiffExact(out, cpuResult(t, req)))
		return passLabels(b), nil
	}
	for call := range 4 {
		r := req
		if call > 0 {
			r = shuffled(rng, req)
		}
		labels, err := execute(r)
		require.NoError(t, err)
		assert.Equal(t, call == 0, slices.Contains(labels, "clear"), "call %d: %v", call, labels)
	}

	// A bad index stops the scatter, leaving claimed words: the next call
	// clears them.
	bad := shuffled(rng, req)
	tensor.View[int64](bad.Indices)[1234] = 99999
	_, err = execute(bad)
	require.ErrorIs(t, err, ops.ErrIndexRange)
	labels, err := execute(shuffled(rng, req))
	require.NoError(t, err)
	assert.Contains(t, labels, "clear", "after a failed call")
	labels, err = execute(shuffled(rng, req))
	require.NoError(t, err)
	assert.NotContains(t, labels, "clear")

	// A smaller call takes the larger kept words.
	small := dupRequest("ScatterElements-11", "", tensor.Float32, 2000)
	labels, err = execute(shuffled(rng, small))
	require.NoError(t, err)
	assert.NotContains(t, labels, "clear", "the kept words are larger")
	labels, err = execute(shuffled(rng, req))
	require.NoError(t, err)
	assert.NotContains(t, labels, "clear")

	// Resident calls in place, several in one batch, each on the result
	// of the one before.
	data, err := b.Upload(ctx, req.Data)
	require.NoError(t, err)
	defer data.Close()
	want := req.Data
	bt := b.NewBatch()
	var keep []*Tensor
	for range 3 {
		r := shuffled(rng, req)
		r.Data = want
		want = cpuResult(t, r)
		idx, err := b.Upload(ctx, r.Indices)
		require.NoError(t, err)
		upd, err := b.Upload(ctx, r.Updates)
		require.NoError(t, err)
		keep = append(keep, idx, upd)
		require.NoError(t, bt.Add(Call{Op: r.Op, Data: data, Indices: idx, Updates: upd, Out: data}))
	}
	s, err := bt.Submit(ctx)
	require.NoError(t, err)
	require.NoError(t, s.Wait(ctx))
	got, err := data.Download(ctx)
	require.NoError(t, err)
	assert.Empty(t, opstest.DiffExact(got, want))
	for _, k := range keep {
		require.NoError(t, k.Close())
	}

	// A backend that keeps nothing clears every time.
	one := openTest(t, Options{MaxPoolBytes: -1})
	n, err = one.Needs(p)
	require.NoError(t, err)
	assert.Zero(t, n.FirstClearBytes)
	assert.Equal(t, "clear", n.Passes[0].Name)
}
