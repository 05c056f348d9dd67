//go:build cgo

package gpu

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// bucketRequest returns a reduction of items updates into a 1-D tensor of
// targets elements, the targets of the updates given by at (ScatterND
// with index tuples of one component where nd is set, else
// ScatterElements), the values random.
func bucketRequest(rng *rand.Rand, op string, dt tensor.DType, red string, targets, items int, at func(i int) int64) ops.Request {
	elemOp := "ScatterElements-18"
	if op == "ScatterElementsUpdate-12" {
		elemOp = op
	}
	req := opstest.ContentionRequest(rng, elemOp, dt, red, targets, 0, nil)
	upd := opstest.ContentionRequest(rng, elemOp, dt, red, 1, items, nil).Updates
	shape := []int{items}
	if op != elemOp {
		shape = []int{items, 1}
		req.Op, req.Axis = op, nil
	}
	idx, err := tensor.New(tensor.Int64, shape)
	if err != nil {
		panic(err)
	}
	iv := tensor.View[int64](idx)
	for i := range iv {
		iv[i] = at(i)
	}
	req.Indices, req.Updates = idx, upd
	return req
}

// bucketedPlan returns b's plan of p, which must be bucketed.
func bucketedPlan(t *testing.T, b *Backend, p *ops.Plan) *callPlan {
	t.Helper()
	f := b.facts(false)
	pl, err := f.planCall(p)
	require.NoError(t, err)
	require.True(t, pl.j.red != nil && pl.j.red.bucket, "not bucketed")
	return pl
}

// bucketPattern is a shape of the bucketed fold's tests: so many items
// into so many targets, the target of item i at(i).
type bucketPattern struct {
	name           string
	targets, items int
	at             func(i int) int64
}

// bucketPatterns returns TestBucketedFoldBitIdentity's shapes, their
// random targets drawn from rng.
func bucketPatterns(rng *rand.Rand) []bucketPattern {
	runsOf := func(n int) func(int) int64 {
		// Runs of 1 to 40 updates of one of n targets.
		var cur int64
		left := 0
		return func(int) int64 {
			if left == 0 {
				cur, left = int64(rng.Intn(n)), 1+rng.Intn(40)
			}
			left--
			return cur
		}
	}
	return []bucketPattern{
		{"random, many buckets", 70000, 140000, func(int) int64 { return int64(rng.Intn(70000)) }},
		{"random, negative", 9000, 30000, func(int) int64 { return int64(rng.Intn(18000) - 9000) }},
		{"every update into one element", 3000, 2*segment + 300, func(int) int64 { return 1234 }},
		// Targets 5 and 1029 share a tag (1024 of them) in a bucket of
		// 2048 targets: every round folds one item of a chunk.
		{"alternating targets of one tag", 300000, 20000, func(i int) int64 { return int64(5 + 1024*(i%2)) }},
		{"runs of a few targets", 5000, 40000, runsOf(6)},
		{"a few updates into a million elements", 1 << 20, 5000, func(int) int64 { return int64(rng.Intn(1 << 20)) }},
		// Buckets of 512 targets that take 3 passes (40000 updates into
		// one element), 2 (20000) and one (10000 alternating between
		// two targets: 128 rounds a chunk), as the others.
		{"buckets done in different passes", 70000, 80000, func(i int) int64 {
			switch {
			case i < 40000:
				return 10
			case i < 60000:
				return 600
			case i < 70000:
				return int64(1030 + i%2)
			}
			return int64(rng.Intn(70000))
		}},
	}
}

// TestBucketedFoldBitIdentity: the bucketed fold gives the CPU
// reference's bits for every order-sensitive reduction and element type
// it takes, on random targets over many buckets, on every update into one
// element (a run as long as each chunk, and more passes than the first),
// on alternating targets that share a tag (one item folded per round,
// the most rounds a chunk can take), on runs of a few targets, on a few
// updates into a million elements, with index tuples (ScatterND) and
// negative indices, in an Execute and in a batch; in 16-byte chunks and
// split dispatches; and the 64-bit integer reductions a device without
// 64-bit atomics folds in order, on the 32-bit baseline too.
func TestBucketedFoldBitIdentity(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	patterns := bucketPatterns(rng)
	type opRed struct{ op, red string }
	float := []opRed{{"ScatterElements-18", "add"}, {"ScatterND-18", "mul"}, {"ScatterNDUpdate-15", "sub"}, {"ScatterElementsUpdate-12", "sum"}}
	b := openTest(t, Options{Deterministic: true})
	check := func(b *Backend, name string, req ops.Request, batch bool) {
		t.Helper()
		p, err := ops.Prepare(req)
		require.NoError(t, err, name)
		bucketedPlan(t, b, p)
		got, want := runBoth(t, b, p)
		require.Empty(t, opstest.DiffExact(got, want), name)
		if batch {
			res := runResident(t, b, p, req)
			require.Empty(t, opstest.DiffExact(res, want), name+", batch")
		}
	}
	// At -short (as on SwiftShader), the other float types take the first
	// operator only.
	short := testing.Short()
	for _, pt := range patterns {
		for _, dt := range []tensor.DType{tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64} {
			for k, r := range float {
				if short && dt != tensor.Float32 && k > 0 {
					continue
				}
				if dt == tensor.Float64 && (pt.targets > 1<<19 || !b.dev.Capabilities().ShaderFloat64) {
					// Buckets of 8-byte elements hold half as many
					// targets; float64 arithmetic needs shaderFloat64.
					continue
				}
				name := pt.name + ", " + dt.String() + " " + r.op + " " + r.red
				check(b, name, bucketRequest(rng, r.op, dt, r.red, pt.targets, pt.items, pt.at), dt == tensor.Float32 && k == 0)
			}
		}
	}
	// The same on other shapes of the device: tensors in 16-byte chunks
	// (every bucket's elements, slots and values across chunks), and
	// dispatches split into 2-D and 3-D grids and several dispatches
	// (buckets found from the workgroup's position); not at -short (as
	// on SwiftShader, TestSwiftShader).
	for _, c := range []struct {
		name  string
		knobs knobs.Knobs
	}{{"16-byte chunks", knobs.Knobs{ChunkBytes: 16}}, {"grids", knobs.Knobs{MaxWorkGroups: [3]uint32{1, 2, 65535}}}} {
		if testing.Short() {
			break
		}
		bs := openTest(t, Options{Deterministic: true}, c.knobs)
		for _, pt := range []bucketPattern{patterns[1], patterns[2], patterns[4]} { // patterns[0] in 16-byte chunks takes 17 s
			name := c.name + ", " + pt.name
			check(bs, name, bucketRequest(rng, "ScatterElements-18", tensor.Float32, "add", pt.targets, pt.items, pt.at), true)
		}
	}
	// 64-bit integers without 64-bit atomics fold in order, bucketed:
	// with shaderInt64, and on the 32-bit baseline (element pairs).
	for _, c := range []struct {
		name  string
		knobs knobs.Knobs
	}{{"no 64-bit atomics", knobs.Knobs{NoInt64Atomics: true}}, {"32-bit baseline", knobs.Knobs{NoShaderInt64: true}}} {
		bi := openTest(t, Options{}, c.knobs)
		n := 5
		if short {
			n = 3
		}
		for _, pt := range patterns[:n] {
			for _, red := range []string{"add", "max", "mul"} {
				name := c.name + ", " + pt.name + ", int64 " + red
				check(bi, name, bucketRequest(rng, "ScatterElements-18", tensor.Int64, red, pt.targets, pt.items, pt.at), false)
			}
		}
	}
}

// TestBucketedFoldPassesFollowTheData: with the same shapes (four updates
// per element of 70000, 273 buckets of 256 elements), spreading the
// updates uniformly folds them in one pass, and putting every update into
// one element takes the further passes the first pass reports: it folds
// 62 chunks of 256 (each one round and a run of 256 steps, within
// SEGMENT), and asks for one further pass per bucketPass items left,
// ceil((280000 - 62*256) / 8192) = 33. A batch's last call records the
// same; the results are the CPU reference's bits.
func TestBucketedFoldPassesFollowTheData(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	b := openTest(t, Options{Deterministic: true})
	const targets, items = 70000, 4 * 70000
	for _, c := range []struct {
		name    string
		at      func(i int) int64
		further int
	}{
		{"uniformly spread", func(i int) int64 { return int64(i % targets) }, 0},
		{"every update into one element", func(int) int64 { return 777 }, 33},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := bucketRequest(rng, "ScatterElements-18", tensor.Float32, "add", targets, items, c.at)
			p, err := ops.Prepare(req)
			require.NoError(t, err)
			pl := bucketedPlan(t, b, p)
			require.Len(t, pl.more, 34, "the further passes the shapes allow")
			got, want := runBoth(t, b, p)
			require.Empty(t, opstest.DiffExact(got, want))
			dispatches := 0
			for _, ps := range append(pl.passes, pl.more[:c.further]...) {
				dispatches += len(ps.dispatches)
			}
			assert.Equal(t, dispatches, b.LastStats().Dispatches, "dispatches")
			res := runResident(t, b, p, req)
			require.Empty(t, opstest.DiffExact(res, want), "batch")
			assert.Equal(t, dispatches, b.LastStats().Dispatches, "a batch's last call: dispatches")
		})
	}
}

// TestBucketedFoldCharges: the bucketed plan of a deterministic float
// sum (16 updates per element of a million, SE-sum-dup's shapes) takes
// one radix pass and no counts, moves at most 4 times the bytes a single
// pass must, and charges each further pass for the items and buckets it
// can still fold, falling pass by pass; the slot-by-slot fold (NoBuckets)
// takes three radix passes.
func TestBucketedFoldCharges(t *testing.T) {
	const n = 1 << 20
	f := cpuFacts()
	f.deterministic = true
	req := elementsReq("add", tensor.Float32, []int{n}, []int{16 * n})
	pl := planOf(t, f, req)
	r := pl.j.red
	require.True(t, r.bucket)
	assert.Equal(t, 1, r.passes)
	assert.Zero(t, pl.j.flags&flagCount, "no counts")
	assert.Zero(t, pl.j.owners, "no owner words")
	onePass := uint64(16*n*(8+4) + 2*n*4) // indices, updates, data read and written
	var traffic uint64
	dispatches := 0
	for _, ps := range pl.passes {
		traffic += ps.read + ps.written
		dispatches += len(ps.dispatches)
	}
	assert.LessOrEqual(t, traffic, 4*onePass)
	assert.Equal(t, 7, dispatches, "resolve, radix count, 3 scans, radix scatter, fold")
	prev := pl.passes[len(pl.passes)-1].read
	for s, ps := range pl.more {
		assert.Equal(t, uint32(s+1), ps.seg)
		assert.Less(t, ps.read, prev, "further pass %d reads less than the one before", s+1)
		prev = ps.read
	}
	f.noBuckets = true
	old := planOf(t, f, req)
	assert.False(t, old.j.red.bucket)
	assert.Equal(t, 3, old.j.red.passes)
}

// TestBucketedFoldBatch: a batch's first call records every further pass
// its shapes allow (a later call may read its output), so its lists of
// unfinished buckets go round through passes with nothing left to fold;
// both calls give the CPU reference's bits, applied twice.
func TestBucketedFoldBatch(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	b := openTest(t, Options{Deterministic: true})
	ctx := context.Background()
	const targets, items = 70000, 80000
	req := bucketRequest(rng, "ScatterElements-18", tensor.Float32, "add", targets, items, func(i int) int64 {
		switch {
		case i < 40000:
			return 10 // a bucket of 3 passes
		case i < 60000:
			return 600 // one of 2
		}
		return int64(rng.Intn(targets))
	})
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	pl := bucketedPlan(t, b, p)
	require.Len(t, pl.more, 9, "the further passes the shapes allow")
	want := referenceRepeated(t, req, 2)[2]
	c, data := inPlaceCall(t, b, req)
	bt := b.NewBatch()
	require.NoError(t, bt.Add(c))
	require.NoError(t, bt.Add(c))
	s, err := bt.Submit(ctx)
	require.NoError(t, err)
	require.NoError(t, s.Wait(ctx))
	got, err := data.Download(ctx)
	require.NoError(t, err)
	require.Empty(t, opstest.DiffExact(got, want))
	inline := 0
	for _, ps := range append(pl.passes, pl.more...) {
		inline += len(ps.dispatches)
	}
	// The last call: 40000-15872 items left in its longest bucket, one
	// further pass per bucketPass of them.
	assert.Equal(t, inline+inline-len(pl.more)+3, s.Stats().Dispatches, "the first call records every pass, the last the 3 its data needs")
}

// TestSplitBucketsBitIdentity: the split bucketed fold
// (knobs.SplitBuckets: a radix pass more, by the digit two bits under the
// top one, then four workgroups for each digit's bucket, each finding its
// items by binary search) gives the CPU reference's bits on every shape
// of TestBucketedFoldBitIdentity, over the float types and the
// order-sensitive reductions, in an Execute (the first shape in a batch
// too); in 16-byte chunks; and for int64 on the 32-bit baseline. Its plan
// takes two radix passes where the unsplit one takes one, and a fold
// workgroup per 1<<bshift slots: about four times as many. At -short (as
// on SwiftShader, TestSwiftShader) neither the batch nor the chunks run.
func TestSplitBucketsBitIdentity(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	type opRed struct{ op, red string }
	reds := []opRed{{"ScatterElements-18", "add"}, {"ScatterND-18", "mul"}, {"ScatterNDUpdate-15", "sub"}, {"ScatterElementsUpdate-12", "sum"}}
	dts := []tensor.DType{tensor.Float32, tensor.Float16, tensor.BFloat16, tensor.Float64}
	split := openTest(t, Options{Deterministic: true}, knobs.Knobs{SplitBuckets: true})
	whole := openTest(t, Options{Deterministic: true})
	foldGroups := func(pl *callPlan) uint64 {
		for _, ps := range pl.passes {
			if ps.label == "fold" {
				return ps.n / groupSize
			}
		}
		return 0
	}
	count := func(names []string, name string) (n int) {
		for _, s := range names {
			if s == name {
				n++
			}
		}
		return n
	}
	check := func(b *Backend, name string, req ops.Request, batch bool) {
		t.Helper()
		p, err := ops.Prepare(req)
		require.NoError(t, err, name)
		pl := bucketedPlan(t, b, p)
		require.Equal(t, uint(bucketSplitBits), pl.j.red.bsplit, name)
		got, want := runBoth(t, b, p)
		require.Empty(t, opstest.DiffExact(got, want), name)
		if batch {
			res := runResident(t, b, p, req)
			require.Empty(t, opstest.DiffExact(res, want), name+", batch")
		}
	}
	for i, pt := range bucketPatterns(rng) {
		dt, r := dts[i%len(dts)], reds[i%len(reds)]
		if dt == tensor.Float64 && (pt.targets > 1<<19 || !split.dev.Capabilities().ShaderFloat64) {
			dt = tensor.Float32
		}
		name := pt.name + ", " + dt.String() + " " + r.op + " " + r.red
		req := bucketRequest(rng, r.op, dt, r.red, pt.targets, pt.items, pt.at)
		p, err := ops.Prepare(req)
		require.NoError(t, err, name)
		ps, pw := bucketedPlan(t, split, p), bucketedPlan(t, whole, p)
		require.Zero(t, pw.j.red.bsplit, name)
		assert.Equal(t, 2, count(labels(ps), "radix-scatter"), "%s: %v", name, labels(ps))
		assert.Equal(t, 1, count(labels(pw), "radix-scatter"), "%s: %v", name, labels(pw))
		red := ps.j.red
		assert.Equal(t, (red.slots-1)>>red.bshift+1, foldGroups(ps), name)
		assert.Equal(t, pw.j.red.bshift, red.bshift+red.bsplit, name)
		assert.Greater(t, foldGroups(ps), 3*foldGroups(pw)-3, name)
		check(split, name, req, i == 0 && !testing.Short())
	}
	chunks := openTest(t, Options{Deterministic: true}, knobs.Knobs{SplitBuckets: true, ChunkBytes: 16})
	narrow := openTest(t, Options{}, knobs.Knobs{SplitBuckets: true, NoShaderInt64: true})
	for i, pt := range bucketPatterns(rng)[:3] {
		// In 16-byte chunks the shape of 30000 items (140000 take 17 s).
		if i == 1 && !testing.Short() {
			check(chunks, "16-byte chunks, "+pt.name, bucketRequest(rng, "ScatterElements-18", tensor.Float32, "add", pt.targets, pt.items, pt.at), false)
		}
		check(narrow, "32-bit baseline, "+pt.name, bucketRequest(rng, "ScatterElements-18", tensor.Int64, "mul", pt.targets, pt.items, pt.at), false)
	}
}
