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

// lastWriterRequest builds a reduction-none request whose n index
// positions (ScatterND-18: tuples of 2 into data [40, 120, inner];
// ScatterElements-18: a 1-D index into data [rows]) collide as pattern
// says: "one" every position on one slot, "spread" uniformly random
// slots, "stride" slots a multiple of 4096 apart (which a table indexed
// by the slot's low bits would pile up). bad >= 0 puts an out-of-range
// index at that flat position of indices, and another at the last.
func lastWriterRequest(t *testing.T, rng *rand.Rand, op string, dt tensor.DType, inner, n int, pattern string, bad int) ops.Request {
	t.Helper()
	nd := op == "ScatterND-18"
	dataShape, idxShape, updShape := []int{40, 120, inner}, []int{n, 2}, []int{n, inner}
	if !nd {
		dataShape, idxShape, updShape = []int{1 << 15}, []int{n}, []int{n}
	}
	fill := func(shape []int) *tensor.Tensor {
		x, err := tensor.New(dt, shape)
		require.NoError(t, err)
		for i := range x.Data {
			x.Data[i] = byte(rng.Intn(256))
		}
		for i := range x.Strings {
			x.Strings[i] = fmt.Sprint(rng.Intn(1000))
		}
		if dt == tensor.Bool {
			for i := range x.Data {
				x.Data[i] &= 1
			}
		}
		return x
	}
	data, updates := fill(dataShape), fill(updShape)
	// slot returns the slot of position i; rows of ScatterND are r/120, r%120.
	slots := 40 * 120
	if !nd {
		slots = dataShape[0]
	}
	slot := func(i int) int {
		switch pattern {
		case "one":
			return 7
		case "stride":
			return (i % (slots / 4096)) * 4096
		}
		return rng.Intn(slots)
	}
	idx, err := tensor.New(tensor.Int64, idxShape)
	require.NoError(t, err)
	iv := tensor.View[int64](idx)
	for i := 0; i < n; i++ {
		s := slot(i)
		if nd {
			iv[2*i], iv[2*i+1] = int64(s/120), int64(s%120)
			if rng.Intn(3) == 0 {
				iv[2*i+1] -= 120 // counts from the end
			}
		} else {
			iv[i] = int64(s)
			if rng.Intn(3) == 0 {
				iv[i] -= int64(slots)
			}
		}
	}
	if bad >= 0 {
		iv[bad] = 1 << 20
		iv[len(iv)-1] = -(1 << 20)
	}
	return ops.Request{Op: op, Data: data, Indices: idx, Updates: updates}
}

// TestLastWriterTable: plans with reduction none whose updates collide and
// whose index positions one workgroup can take resolve the last writer of
// each slot in a table in workgroup memory, with no owner words; the last
// update in index order wins bit for bit as in the CPU reference, for
// every element size (16-byte units and strings included), every position
// on one slot, uniformly spread slots, and slots that share their low
// bits, at the table's largest size and just past it (owner words); a bad
// index at the first, a middle or the last position gives exactly its
// error and leaves the output and an in-place tensor as they were.
func TestLastWriterTable(t *testing.T) {
	rng := rand.New(rand.NewSource(testSeed(t, 28)))
	b := openTest(t, Options{})
	ctx := context.Background()
	ref := cpuref.New()
	type shape struct {
		op    string
		dt    tensor.DType
		inner int
	}
	shapes := []shape{
		{"ScatterND-18", tensor.Float32, 3}, {"ScatterND-18", tensor.Uint8, 5}, {"ScatterND-18", tensor.Float16, 1},
		{"ScatterND-18", tensor.Int64, 2}, {"ScatterND-18", tensor.Float32, 8}, {"ScatterND-18", tensor.String, 2},
		{"ScatterElements-18", tensor.Float32, 1}, {"ScatterElements-18", tensor.Bool, 1},
		{"ScatterElements-18", tensor.BFloat16, 1}, {"ScatterElements-18", tensor.Float64, 1},
	}
	for _, s := range shapes {
		for _, c := range []struct {
			n       int
			pattern string
			bad     int
		}{
			{laterMax + 1, "one", -1}, {1000, "spread", -1}, {1000, "stride", -1}, {tableMax, "spread", -1},
			{tableMax + 1, "spread", -1}, {500, "spread", 0}, {500, "one", 250}, {500, "spread", 499},
		} {
			name := fmt.Sprintf("%s %v inner %d, %d positions %s, bad at %d", s.op, s.dt, s.inner, c.n, c.pattern, c.bad)
			if s.op == "ScatterND-18" && c.bad >= 0 {
				c.bad = 2*c.bad + 1 // the tuple's second component
			}
			req := lastWriterRequest(t, rng, s.op, s.dt, s.inner, c.n, c.pattern, c.bad)
			if s.op == "ScatterElements-18" {
				req.Axis = tensor.Scalar(int64(0))
			}
			p, err := ops.Prepare(req)
			require.NoError(t, err, name)
			f := b.facts(true)
			pl, err := f.planCall(p)
			require.NoError(t, err, name)
			wantPath := "table"
			if c.n > tableMax {
				wantPath = "owner"
			}
			assert.Equal(t, wantPath, pl.path(), name)
			if wantPath == "table" {
				assert.Equal(t, []string{"resolve", "scatter"}, labels(pl), name)
				assert.Zero(t, pl.j.owners, name)
			}

			want, _ := tensor.New(p.DType, p.Shape)
			wantErr := ref.Execute(ctx, p, want)
			out := opstest.SentinelOutput(p)
			before := out.Clone()
			err = b.Execute(ctx, p, out)
			if c.bad >= 0 {
				require.ErrorIs(t, wantErr, ops.ErrIndexRange, name)
				require.Error(t, err, name)
				assert.Equal(t, wantErr.Error(), err.Error(), name)
				assert.True(t, tensor.Equal(out, before), "%s: out untouched", name)
			} else {
				require.NoError(t, wantErr, name)
				require.NoError(t, err, name)
				assert.Empty(t, opstest.DiffExact(out, want), name)
			}

			if s.dt == tensor.String || c.n > tableMax {
				continue // strings cannot be resident
			}
			runInPlace(t, b, req, want, wantErr, c.bad, name)
		}
	}
}

// TestLastWriterTableFollowsTheShapes: the planner takes the table for
// a few colliding updates into a large tensor (SND5's shape), and owner
// words where the device lacks the workgroup memory, where there are more
// index positions than one workgroup takes, and for gather plans.
func TestLastWriterTableFollowsTheShapes(t *testing.T) {
	f32 := tensor.Float32
	snd5 := func(tuples int) ops.Request {
		return ops.Request{Op: "ScatterNDUpdate-15", Data: desc(f32, 1000, 256, 10, 15),
			Indices: desc(tensor.Int64, tuples, 125, 3), Updates: desc(f32, tuples, 125, 15)}
	}
	table := func() facts { f := gpuFacts(); f.table = true; return f }
	for _, c := range []struct {
		name string
		f    func() facts
		req  ops.Request
		path string
	}{
		{"SND5 at full size", table, snd5(25), "table"},
		{"SND5 without the workgroup memory", gpuFacts, snd5(25), "owner"},
		{"SND5 with more tuples than a table", table, snd5(27), "owner"},
		{"more updates than outputs", table, ops.Request{Op: "ScatterNDUpdate-15", Data: desc(f32, 4, 8),
			Indices: desc(tensor.Int64, 100, 1), Updates: desc(f32, 100, 8)}, "gather"},
	} {
		pl := planOf(t, c.f(), c.req)
		assert.Equal(t, c.path, pl.path(), c.name)
		if c.path == "table" {
			// Traffic: indices, normalised indices written and read,
			// updates read and written; no owner words.
			j := pl.j
			traffic := uint64(0)
			for _, n := range pl.needs().Passes {
				traffic += n.Read + n.Written
			}
			io := pl.host[1] + pl.host[2]
			assert.Equal(t, pl.host[2]+2*pl.host[1]+8*j.resolve, traffic, c.name)
			assert.LessOrEqual(t, traffic, 2*io, "%s: at most twice its indices and updates", c.name)
		}
	}
}
