//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// cacheReq is TensorScatter-24 of dt: a cache [batch, heads, maxSeq, dim]
// and an update of seq positions, with write_indices of batch entries
// (descriptions only, for planning).
func cacheReq(dt tensor.DType, batch, heads, maxSeq, seq, dim int, mode string, indices bool) ops.Request {
	req := ops.Request{Op: "TensorScatter-24", Mode: mode, Data: desc(dt, batch, heads, maxSeq, dim), Updates: desc(dt, batch, heads, seq, dim)}
	if indices {
		req.Indices = desc(tensor.Int64, batch)
	}
	return req
}

// TestPlanTensorScatter: a TensorScatter call is one copy-bound dispatch
// (no owner words, no sort), checking its write indices itself in linear
// mode; more than LATER_MAX of them take a check pass first, and a call
// without update rows checks them alone. Its traffic is the update read
// and written once and the write indices read once.
func TestPlanTensorScatter(t *testing.T) {
	f16 := tensor.Float16
	for _, c := range []struct {
		name   string
		req    ops.Request
		passes []string
		flags  uint32
	}{
		{"circular", cacheReq(f16, 8, 32, 4096, 1, 128, "circular", true), []string{"scatter"}, flagCircular},
		{"linear checks in the scatter", cacheReq(f16, 8, 32, 4096, 1, 128, "linear", true), []string{"scatter"}, flagCheckAll},
		{"linear of LATER_MAX entries", cacheReq(f16, laterMax, 2, 64, 3, 8, "", true), []string{"scatter"}, flagCheckAll},
		{"linear of more entries checks first", cacheReq(f16, laterMax+1, 2, 64, 3, 8, "", true), []string{"check", "scatter"}, 0},
		{"no write_indices", cacheReq(f16, 8, 2, 64, 3, 8, "", false), []string{"scatter"}, flagZeroStart},
		{"no write_indices, circular", cacheReq(f16, 8, 2, 64, 3, 8, "circular", false), []string{"scatter"}, flagZeroStart | flagCircular},
		{"no update rows checks alone", cacheReq(f16, 8, 2, 64, 0, 8, "linear", true), []string{"check"}, 0},
		{"no update rows, circular", cacheReq(f16, 8, 2, 64, 0, 8, "circular", true), nil, flagCircular},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, f := range []facts{cpuFacts(), gpuFacts()} {
				pl := planOf(t, f, c.req)
				assert.Equal(t, c.passes, labels(pl), "%s", pl)
				assert.Equal(t, c.flags, pl.j.flags&(flagCircular|flagCheckAll|flagZeroStart))
				assert.Zero(t, pl.j.owners)
				assert.Nil(t, pl.j.red)
				n := pl.needs()
				token := uint64(c.req.Updates.Len()) * 2
				idx := uint64(0)
				if c.req.Indices != nil {
					idx = 8 * uint64(c.req.Indices.Len())
				}
				if len(c.passes) > 0 && c.passes[0] == "check" {
					p0 := n.Passes[0]
					assert.Equal(t, "check", p0.Name)
					assert.Equal(t, 1, p0.Dispatches)
					assert.Equal(t, idx, p0.Read)
					assert.Zero(t, p0.Written)
					n.TrafficBytes -= idx
				}
				if token > 0 {
					assert.Equal(t, 2*token+idx, n.TrafficBytes, "the update read and written once, the write indices read once")
					assert.LessOrEqual(t, float64(n.TrafficBytes), 2.2*float64(token)+float64(idx))
				}
			}
		})
	}
}

// TestTensorScatterMatchesReference runs TensorScatter calls through
// Execute and in place on resident tensors and compares them with the
// CPU reference: every element size (sub-word ones with odd rows), units
// widened over long rows, every axis, linear and circular, write indices
// absent, at the end, far past it and negative, batches over LATER_MAX
// (the check pass), calls without update rows, and each bad linear index,
// which must give cpuref's error and leave a resident cache untouched.
func TestTensorScatterMatchesReference(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	b := openTest(t, Options{})
	type shape struct{ batch, heads, maxSeq, seq, dim, axis int }
	shapes := []shape{
		{2, 3, 6, 2, 5, 2}, {3, 2, 7, 7, 3, 2}, {laterMax + 6, 1, 5, 2, 3, 2}, {4, 5, 3, 2, 64, 1},
		{2, 2, 9, 4, 3, 3}, {1, 1, 9, 1, 128, 2}, {5, 3, 4, 0, 2, 2},
	}
	dtypes := []tensor.DType{tensor.Bool, tensor.Int8, tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Int64, tensor.Complex128}
	n := 0
	for _, s := range shapes {
		for _, dt := range dtypes {
			for _, mode := range []string{"", "linear", "circular"} {
				for _, withIndices := range []bool{true, false} {
					for _, bad := range []bool{false, true} {
						if bad && (mode == "circular" || !withIndices) {
							continue // every write index is good
						}
						n++
						req := randomCache(rng, dt, s.batch, s.heads, s.maxSeq, s.seq, s.dim, s.axis, mode, withIndices, bad)
						name := fmt.Sprintf("%d/%v%v/axis%d/%s/indices=%v/bad=%v", n, dt, req.Data.Shape, s.axis, mode, withIndices, bad)
						t.Run(name, func(t *testing.T) { checkCache(t, b, req) })
					}
				}
			}
		}
	}
	assert.Empty(t, b.ValidationMessages())
}

// randomCache builds a TensorScatter call with random values: the axis
// picks which dimension is the sequence (2 or -2 by default, 1 or 3
// otherwise); bad puts one linear write index out of range.
func randomCache(rng *rand.Rand, dt tensor.DType, batch, heads, maxSeq, seq, dim, axis int, mode string, withIndices, bad bool) ops.Request {
	// [batch, heads, dim] with the sequence inserted at the axis.
	ds := slices.Insert([]int{batch, heads, dim}, axis, maxSeq)
	us := slices.Insert([]int{batch, heads, dim}, axis, seq)
	req := ops.Request{Op: "TensorScatter-24", Mode: mode, Data: randTensor(rng, dt, ds), Updates: randTensor(rng, dt, us)}
	switch axis {
	case 2:
		if rng.Intn(2) == 0 {
			req.Axis = tensor.Scalar(-2)
		}
	default:
		req.Axis = tensor.Scalar(int64(axis))
	}
	if !withIndices {
		return req
	}
	w := make([]int64, batch)
	for i := range w {
		switch {
		case mode == "circular":
			w[i] = []int64{rng.Int63n(int64(3 * maxSeq)), -rng.Int63n(int64(5*maxSeq + 1)), math.MaxInt64, math.MinInt64}[rng.Intn(4)]
		default:
			w[i] = rng.Int63n(int64(maxSeq - seq + 1))
			if rng.Intn(3) == 0 {
				w[i] = int64(maxSeq - seq) // ends exactly at the end
			}
		}
	}
	if bad {
		w[rng.Intn(batch)] = []int64{-1, int64(maxSeq - seq + 1), math.MaxInt64, math.MinInt64}[rng.Intn(4)]
	}
	req.Indices = tensor.MustFromSlice([]int{batch}, w)
	return req
}

// randTensor returns a tensor of dt and shape with random bits (bool: 0
// or 1).
func randTensor(rng *rand.Rand, dt tensor.DType, shape []int) *tensor.Tensor {
	x, err := tensor.New(dt, shape)
	if err != nil {
		panic(err)
	}
	rng.Read(x.Data)
	if dt == tensor.Bool {
		for i := range x.Data {
			x.Data[i] &= 1
		}
	}
	return x
}

// checkCache runs req through Execute and as a resident call in place,
// and compares the results (or errors) with cpuref's.
func checkCache(t *testing.T, b *Backend, req ops.Request) {
	ctx := context.Background()
	want, wantErr := cpuResultOrError(req)
	got, err := ops.Run(ctx, b, req)
	if wantErr != nil {
		require.Error(t, err)
		assert.Equal(t, wantErr.Error(), err.Error())
	} else {
		require.NoError(t, err)
		assert.Empty(t, opstest.DiffExact(got, want))
	}
	c := residentCall(t, b, req, true)
	bt := b.NewBatch()
	require.NoError(t, bt.Add(c))
	sub, err := bt.Submit(ctx)
	require.NoError(t, err)
	err = sub.Wait(ctx)
	res := download(t, c.Data)
	if wantErr != nil {
		require.Error(t, err)
		assert.Contains(t, err.Error(), wantErr.Error())
		assert.Empty(t, opstest.DiffExact(res, req.Data), "a bad write index wrote into the resident cache")
		return
	}
	require.NoError(t, err)
	assert.Empty(t, opstest.DiffExact(res, want))
}

// cpuResultOrError returns cpuref's result of req, or its error.
func cpuResultOrError(req ops.Request) (*tensor.Tensor, error) {
	p, err := ops.Prepare(req)
	if err != nil {
		return nil, err
	}
	out, err := tensor.New(p.DType, p.Shape)
	if err != nil {
		return nil, err
	}
	return out, cpuref.New().Execute(context.Background(), p, out)
}
