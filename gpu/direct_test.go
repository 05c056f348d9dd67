//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// indexTypes are the integer index types.
var indexTypes = []tensor.DType{tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Uint16,
	tensor.Int32, tensor.Uint32, tensor.Int64, tensor.Uint64}

// directShape is a reduction shape of the one-pass tests: data of shape
// data, indices of shape idx whose values address the leading dims of
// data (ScatterND: idx's last dimension of them; Elements: dimension 0).
type directShape struct {
	name, op, red string
	data, idx     []int
}

var directShapes = []directShape{
	{"elements", "ScatterElements-18", "add", []int{7, 4}, []int{20, 4}},
	{"elements max", "ScatterElements-18", "max", []int{7, 4}, []int{20, 4}},
	{"elements few targets", "ScatterElements-18", "add", []int{3}, []int{200}},
	{"nd tuples of 2", "ScatterNDUpdate-15", "sum", []int{5, 3, 4}, []int{30, 2}},
	{"nd tuples of 2 max", "ScatterNDUpdate-15", "max", []int{5, 3, 4}, []int{30, 2}},
}

// directRequest builds a request of shape s on dt data with it indices:
// small integer values (exact in any order of a sum), indices with
// duplicates and, where the type allows, negative ones; bad >= 0 puts an
// out-of-range index at that flat position of indices, and one more after
// it, so that the first must be the one reported.
func directRequest(t *testing.T, rng *rand.Rand, s directShape, dt, it tensor.DType, bad int) ops.Request {
	t.Helper()
	nd := s.op == "ScatterNDUpdate-15"
	upd := s.idx
	if nd {
		upd = append(append([]int{}, s.idx[:len(s.idx)-1]...), s.data[s.idx[len(s.idx)-1]:]...)
	}
	data, err := tensor.New(dt, s.data)
	require.NoError(t, err)
	updates, err := tensor.New(dt, upd)
	require.NoError(t, err)
	for _, x := range []*tensor.Tensor{data, updates} {
		for i := 0; i < x.Len(); i++ {
			v := rng.Intn(8)
			opstest.SetNumber(x, i, float64(v), uint64(v))
		}
	}
	idx, err := tensor.New(it, s.idx)
	require.NoError(t, err)
	tuple := 1
	if nd {
		tuple = s.idx[len(s.idx)-1]
	}
	for i := 0; i < idx.Len(); i++ {
		size := s.data[0]
		if nd {
			size = s.data[i%tuple]
		}
		v := int64(rng.Intn(size))
		if it.IsSigned() && rng.Intn(3) == 0 {
			v -= int64(size) // counts from the end
		}
		if i == bad || (bad >= 0 && i == idx.Len()-1) {
			v = int64(size) + int64(i%2) // out of range
		}
		setRaw(idx, i, uint64(v))
	}
	req := ops.Request{Op: s.op, Reduction: s.red, Data: data, Indices: idx, Updates: updates}
	if !nd {
		req.Axis = tensor.Scalar(int64(0))
	}
	return req
}

// TestReductionsCheckIndicesInOnePass: an atomic reduction's Execute runs
// one pass, the scatter reading and checking the raw indices of every
// integer type itself; a resident call keeps a resolve pass that only
// checks them where the indices take under 8 bytes a tuple (exactly 8 on
// GPUs), and writes normalised ones otherwise. Either way the results are the CPU
// reference's for every dtype (duplicates, negative indices), and a bad
// index at the first, a middle or the last position gives exactly its
// error, Execute's output and an in-place tensor left as they were.
func TestReductionsCheckIndicesInOnePass(t *testing.T) {
	rng := rand.New(rand.NewSource(testSeed(t, 27)))
	b := openTest(t, Options{})
	b.orderedMax = 0 // small float sums on the atomics too
	ctx := context.Background()
	ref := cpuref.New()
	type combo struct{ dt, it tensor.DType }
	var combos []combo
	for i, dt := range []tensor.DType{tensor.Bool, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Uint16, tensor.Int32, tensor.Uint32,
		tensor.Int64, tensor.Uint64, tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64} {
		combos = append(combos, combo{dt, indexTypes[i%len(indexTypes)]})
	}
	for _, it := range indexTypes {
		combos = append(combos, combo{tensor.Float32, it})
	}
	for _, s := range directShapes {
		for _, c := range combos {
			if c.dt == tensor.Bool && s.red == "add" {
				continue // bool add is OR: covered by the sum shapes
			}
			n := 1
			for _, d := range s.idx {
				n *= d
			}
			for i, bad := range []int{-1, 0, n / 2, n - 1} {
				// Both choices for tuples of 8 bytes, each with good and
				// bad indices: the GPUs' (directTie) and the CPU devices'.
				b.directTie = i%2 == 0
				name := fmt.Sprintf("%s %v data %v indices, bad at %d, directTie %v", s.name, c.dt, c.it, bad, b.directTie)
				req := directRequest(t, rng, s, c.dt, c.it, bad)
				p, err := ops.Prepare(req)
				require.NoError(t, err, name)
				want, _ := tensor.New(p.DType, p.Shape)
				wantErr := ref.Execute(ctx, p, want)
				if bad >= 0 {
					require.ErrorIs(t, wantErr, ops.ErrIndexRange, name)
				} else {
					require.NoError(t, wantErr, name)
				}

				f := b.facts(true)
				pl, err := f.planCall(p)
				require.NoError(t, err, name)
				require.True(t, pl.j.direct && !pl.j.check, "%s:\n%v", name, pl)
				assert.Equal(t, []string{"scatter"}, labels(pl), name)
				out := opstest.SentinelOutput(p)
				before := out.Clone()
				err = b.Execute(ctx, p, out)
				if bad >= 0 {
					require.Error(t, err, name)
					assert.Equal(t, wantErr.Error(), err.Error(), name)
					assert.True(t, tensor.Equal(out, before), "%s: out untouched", name)
				} else {
					require.NoError(t, err, name)
					assert.Empty(t, opstest.DiffExact(out, want), name)
				}

				// In place on resident tensors.
				f = b.facts(false)
				rpl, err := f.planCall(p)
				require.NoError(t, err, name)
				tupleBytes := c.it.Size() * (p.NumIndices() / int(rpl.j.resolve))
				assert.Equal(t, tupleBytes < 8 || tupleBytes == 8 && f.directTie, rpl.j.direct && rpl.j.check, "%s: resident checks first", name)
				assert.Equal(t, []string{"resolve", "scatter"}, labels(rpl), name)
				runInPlace(t, b, req, want, wantErr, bad, name)
			}
		}
	}
}

// TestReductionsWithoutUpdatesStillCheck: with no updates there is no
// scatter to check the indices, so resolve checks them, as cpuref does.
func TestReductionsWithoutUpdatesStillCheck(t *testing.T) {
	b := openTest(t, Options{})
	ctx := context.Background()
	for _, idx := range [][]int64{{}, {0, 9}} {
		req := ops.Request{Op: "ScatterND-18", Reduction: "add", Data: tensor.MustFromSlice([]int{3, 0}, []float32{}),
			Indices: tensor.MustFromSlice([]int{len(idx), 1}, idx), Updates: tensor.MustFromSlice([]int{len(idx), 0}, []float32{})}
		want, wantErr := ops.Run(ctx, cpuref.New(), req)
		got, err := ops.Run(ctx, b, req)
		if wantErr != nil {
			require.Error(t, err)
			assert.Equal(t, wantErr.Error(), err.Error())
			continue
		}
		require.NoError(t, err)
		assert.Empty(t, opstest.DiffExact(got, want))
	}
}
