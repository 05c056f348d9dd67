//go:build cgo

package gpu

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// longestList returns the most updates any target of an Element plan of
// a 1-D data tensor receives.
func longestList(t *testing.T, p *ops.Plan) int {
	counts := map[int]int{}
	longest := 0
	for i := 0; i < p.Indices.Len(); i++ {
		v, err := p.IndexAt(i)
		require.NoError(t, err)
		counts[v]++
		longest = max(longest, counts[v])
	}
	return longest
}

// inPlaceCall uploads req's tensors to b (closed when t ends) and returns
// its call in place on them, and the data tensor.
func inPlaceCall(t *testing.T, b *Backend, req ops.Request) (Call, *Tensor) {
	t.Helper()
	up := func(x *tensor.Tensor) *Tensor {
		r, err := b.Upload(context.Background(), x)
		require.NoError(t, err)
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	data := up(req.Data)
	c := CallOf(req)
	c.Data, c.Out, c.Indices, c.Updates = data, data, up(req.Indices), up(req.Updates)
	return c, data
}

// referenceRepeated returns req's data and the CPU reference's results of
// req applied to it once, twice, ... k times.
func referenceRepeated(t *testing.T, req ops.Request, k int) []*tensor.Tensor {
	t.Helper()
	want := []*tensor.Tensor{req.Data}
	for i := 0; i < k; i++ {
		r := req
		r.Data = want[i]
		p, err := ops.Prepare(r)
		require.NoError(t, err)
		out, err := tensor.New(p.DType, p.Shape)
		require.NoError(t, err)
		require.NoError(t, cpuref.New().Execute(context.Background(), p, out))
		want = append(want, out)
	}
	return want
}

// runResident runs p as a batch call on resident tensors, in place, and
// returns the output.
func runResident(t *testing.T, b *Backend, p *ops.Plan, req ops.Request) *tensor.Tensor {
	t.Helper()
	ctx := context.Background()
	c, data := inPlaceCall(t, b, req)
	require.NoError(t, b.Run(ctx, c))
	got, err := data.Download(ctx)
	require.NoError(t, err)
	return got
}

// TestFoldPassesFollowTheData: with the same shapes (3 segments and a
// bit of updates into 4 elements), an Execute runs one fold pass when
// every list fits a segment and one more per further segment of the
// longest list the indices make, in a second submission only then; the
// results are the CPU reference's bits, as are a batch's, which records
// the passes the shapes allow.
func TestFoldPassesFollowTheData(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	b := openTest(t, Options{Deterministic: true})
	n := 3*segment + 100
	spread := func(i int) int64 { return int64(i % 4) }
	for _, c := range []struct {
		name    string
		index   func(i int) int64
		further int
	}{
		{"every update into one element", func(int) int64 { return 2 }, 3},
		{"uniformly spread", spread, 0},
		{"random", func(int) int64 { return int64(rng.Intn(4)) }, 0},
		{"one list a segment long", func(i int) int64 {
			if i < segment {
				return 1
			}
			return []int64{0, 2, 3}[i%3]
		}, 0},
		{"one list a segment and one long", func(i int) int64 {
			if i <= segment {
				return 3
			}
			return int64(i % 3)
		}, 1},
		{"one list two segments and one long", func(i int) int64 {
			if i%3 != 0 {
				return -4 // element 0, counted from the end
			}
			return spread(i)
		}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := opstest.ContentionRequest(rng, "ScatterElements-18", tensor.Float32, "add", 4, n/4, nil)
			idx := tensor.View[int64](req.Indices)
			for i := range idx {
				idx[i] = c.index(i)
			}
			p, err := ops.Prepare(req)
			require.NoError(t, err)
			longest := longestList(t, p)
			require.Equal(t, c.further, max(0, (longest+segment-1)/segment-1), "the case's longest list is %d", longest)

			got, want := runBoth(t, b, p)
			require.Empty(t, opstest.DiffExact(got, want))
			st := b.LastStats()
			require.Equal(t, "ordered", st.Reduction)
			f := b.facts(false)
			pl, err := f.planCall(p)
			require.NoError(t, err)
			dispatches := 0
			for _, ps := range append(pl.passes, pl.more[:c.further]...) {
				dispatches += len(ps.dispatches)
			}
			assert.Equal(t, dispatches, st.Dispatches, "dispatches")
			assert.Len(t, pl.more, 3, "the further passes the shapes allow")
			submits := 1
			if c.further > 0 {
				submits = 2
			}
			// Without unified memory the output comes back through the
			// staging ring, one submission of its own (it is smaller
			// than a staging chunk): further passes may follow, so it is
			// not read back in the call's last submission.
			execSubmits := submits
			if !b.device().UnifiedMemory() {
				execSubmits++
			}
			assert.Equal(t, execSubmits, st.Submits, "submissions")

			res := runResident(t, b, p, req)
			require.Empty(t, opstest.DiffExact(res, want), "batch")
			rst := b.LastStats()
			assert.Equal(t, dispatches, rst.Dispatches, "a batch's last call: dispatches")
			assert.Equal(t, submits, rst.Submits, "a batch's last call: submissions")
		})
	}
}

// TestBatchFoldsBeforeLaterCalls: in a batch, a call whose lists may
// take further fold passes records them all when a later call follows
// (which may read its output), the last call only those its data needs;
// a batch submitted after one whose last call may fold further sees its
// complete result.
func TestBatchFoldsBeforeLaterCalls(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	b := openTest(t, Options{Deterministic: true})
	ctx := context.Background()
	n := 2*segment + 7
	req := opstest.ContentionRequest(rng, "ScatterElements-18", tensor.Float32, "add", 3, n/3, nil)
	idx := tensor.View[int64](req.Indices)
	for i := range idx {
		idx[i] = int64(i % 2) // two lists of a segment and more
	}
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	// The CPU reference, applied twice and three times.
	want := referenceRepeated(t, req, 3)
	c, data := inPlaceCall(t, b, req)
	bt := b.NewBatch()
	require.NoError(t, bt.Add(c))
	require.NoError(t, bt.Add(c))
	s1, err := bt.Submit(ctx)
	require.NoError(t, err)
	// Submitted before s1 is waited for: it must see both calls' sums.
	require.NoError(t, bt.Add(c))
	s2, err := bt.Submit(ctx)
	require.NoError(t, err)
	require.NoError(t, s1.Wait(ctx))
	require.NoError(t, s2.Wait(ctx))
	got, err := data.Download(ctx)
	require.NoError(t, err)
	require.Empty(t, opstest.DiffExact(got, want[3]))

	f := b.facts(false)
	pl, err := f.planCall(p)
	require.NoError(t, err)
	inline := 0
	for _, ps := range append(pl.passes, pl.more...) {
		inline += len(ps.dispatches)
	}
	last := inline - len(pl.more) + 1 // the lists take one further pass
	assert.Equal(t, inline+last, s1.Stats().Dispatches, "the first call records every pass, the last one more")
	assert.Equal(t, 2, s1.Stats().Submits)
	assert.Equal(t, last, s2.Stats().Dispatches)
}

// TestDeterministicFoldBitIdentity: float sum, sub, prod and mean of
// every float type fold in index order, bit for bit as the CPU reference,
// with lists that cross the segment bound (every update into one target),
// lists that do not, slots that take every digit pass of the sort, and no
// updates at all; in an Execute and in a batch.
func TestDeterministicFoldBitIdentity(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	b := openTest(t, Options{Deterministic: true})
	no := false
	type opRed struct {
		op, red string
		useInit *bool
	}
	reds := []opRed{
		{"ScatterElementsUpdate-12", "sum", nil}, {"ScatterElementsUpdate-12", "prod", &no},
		{"ScatterElementsUpdate-12", "mean", nil}, {"ScatterElementsUpdate-12", "mean", &no},
		{"ScatterElements-18", "mul", nil}, {"ScatterNDUpdate-15", "sub", nil}, {"ScatterND-18", "add", nil},
	}
	for _, dt := range []tensor.DType{tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64} {
		for _, r := range reds {
			for _, shape := range []struct {
				name               string
				targets, perTarget int
			}{
				{"one long list", 1, segment + 300},
				{"short lists", 50, 20},
				{"many lists", 70000, 2}, // three digit passes over 35 tiles
				{"no updates", 3, 0},
			} {
				name := dt.String() + " " + r.op + " " + r.red + " " + shape.name
				req := opstest.ContentionRequest(rng, r.op, dt, r.red, shape.targets, shape.perTarget, r.useInit)
				p, err := ops.Prepare(req)
				require.NoError(t, err, name)
				got, want := runBoth(t, b, p)
				require.Empty(t, opstest.DiffExact(got, want), name)
				if shape.perTarget > 0 {
					require.Equal(t, "ordered", b.LastStats().Reduction, name)
				}
				if shape.perTarget > 0 && dt == tensor.Float32 {
					res := runResident(t, b, p, req)
					require.Empty(t, opstest.DiffExact(res, want), name+" batch")
				}
			}
		}
	}
}
