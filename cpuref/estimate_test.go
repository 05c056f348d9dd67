package cpuref

import (
	"context"
	"math/rand"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// shapeOnly returns a tensor of dt and shape without a payload, for
// ops.PrepareShapes.
func shapeOnly(dt tensor.DType, shape ...int) *tensor.Tensor {
	return &tensor.Tensor{DType: dt, Shape: shape}
}

func TestWorkOf(t *testing.T) {
	f32 := func(shape ...int) *tensor.Tensor {
		v := make([]float32, prodShape(shape))
		return tensor.MustFromSlice(shape, v)
	}
	i32 := func(shape ...int) *tensor.Tensor {
		v := make([]int32, prodShape(shape))
		return tensor.MustFromSlice(shape, v)
	}
	f16 := func(shape ...int) *tensor.Tensor {
		v := make([]tensor.F16, prodShape(shape))
		return tensor.MustFromSlice(shape, v)
	}
	cases := []struct {
		name          string
		req           ops.Request
		want, inPlace cost.CPUWork
	}{
		{
			// data [2, 8, 4] float32, 256 bytes. Indices 3, 0, 3, 5 name 3
			// of the 8 slices: the 5 others are copied, 2 x 256 x 5/8 bytes,
			// and 2 x 3 runs of 16 + 64 bytes move (the first 3 is
			// overwritten and skipped).
			name: "ScatterUpdate-3 rows",
			req: ops.Request{Op: "ScatterUpdate-3", Data: f32(2, 8, 4), Indices: idx([]int{2, 2}, 3, 0, 3, 5),
				Updates: f32(2, 2, 2, 4), Axis: tensor.Scalar(1)},
			want:    cost.CPUWork{CopyBytes: 320, MoveBytes: 480},
			inPlace: cost.CPUWork{MoveBytes: 480},
		},
		{
			// Inner 1: 4 rows x 2 distinct indices, single elements; 2 of
			// the 6 columns named, 4/6 of the 96 bytes copied.
			name:    "ScatterUpdate-3 single elements",
			req:     ops.Request{Op: "ScatterUpdate-3", Data: f32(4, 6), Indices: idx([]int{3}, 1, 1, 2), Updates: f32(4, 3), Axis: tensor.Scalar(1)},
			want:    cost.CPUWork{CopyBytes: 128, Elements: 8},
			inPlace: cost.CPUWork{Elements: 8},
		},
		{
			// Without index values: of 4 uniform random indices among 8,
			// 8(1 - (7/8)^4) = 3.31 distinct are expected: round(2 x 3.31)
			// = 7 runs, and round(0.586 x 512) = 300 bytes copied.
			name: "ScatterUpdate-3 shapes only",
			req: ops.Request{Op: "ScatterUpdate-3", Data: shapeOnly(tensor.Float32, 2, 8, 4), Indices: shapeOnly(tensor.Int64, 2, 2),
				Updates: shapeOnly(tensor.Float32, 2, 2, 2, 4), Axis: tensor.Scalar(1)},
			want:    cost.CPUWork{CopyBytes: 300, MoveBytes: 560},
			inPlace: cost.CPUWork{MoveBytes: 560},
		},
		{
			// 3 rows of 4 float32, the duplicate moved too: 3 x (16 + 64).
			name:    "ScatterNDUpdate-15 rows",
			req:     ops.Request{Op: "ScatterNDUpdate-15", Data: f32(6, 4), Indices: idx([]int{3, 1}, 1, 4, 1), Updates: f32(3, 4)},
			want:    cost.CPUWork{CopyBytes: 192, MoveBytes: 240},
			inPlace: cost.CPUWork{MoveBytes: 240},
		},
		{
			name:    "ScatterNDUpdate-15 elements",
			req:     ops.Request{Op: "ScatterNDUpdate-15", Data: f32(6, 4), Indices: idx([]int{3, 2}, 1, 2, 4, 0, -1, 3), Updates: f32(3)},
			want:    cost.CPUWork{CopyBytes: 192, Elements: 3},
			inPlace: cost.CPUWork{Elements: 3},
		},
		{
			// float32 sums of rows fold a row at a time, like moves.
			name:    "ScatterND-18 add of rows",
			req:     ops.Request{Op: "ScatterND-18", Reduction: "add", Data: f32(6, 4), Indices: idx([]int{3, 1}, 1, 4, 1), Updates: f32(3, 4)},
			want:    cost.CPUWork{CopyBytes: 192, MoveBytes: 240},
			inPlace: cost.CPUWork{MoveBytes: 240},
		},
		{
			name:    "ScatterND-18 max of int32 rows",
			req:     ops.Request{Op: "ScatterND-18", Reduction: "max", Data: i32(6, 4), Indices: idx([]int{3, 1}, 1, 4, 1), Updates: i32(3, 4)},
			want:    cost.CPUWork{CopyBytes: 192, Reduced: 12},
			inPlace: cost.CPUWork{Reduced: 12},
		},
		{
			name:    "ScatterElements-18 none",
			req:     ops.Request{Op: "ScatterElements-18", Data: f32(4, 5), Indices: idx([]int{2, 5}, 0, 1, 2, 3, 0, 3, 3, 3, 3, 3), Updates: f32(2, 5)},
			want:    cost.CPUWork{CopyBytes: 160, Elements: 10},
			inPlace: cost.CPUWork{Elements: 10},
		},
		{
			name:    "ScatterElements-18 none float16",
			req:     ops.Request{Op: "ScatterElements-18", Data: f16(4, 5), Indices: idx([]int{2, 5}, 0, 1, 2, 3, 0, 3, 3, 3, 3, 3), Updates: f16(2, 5)},
			want:    cost.CPUWork{CopyBytes: 80, Elements: 10},
			inPlace: cost.CPUWork{Elements: 10},
		},
		{
			name:    "ScatterElements-18 add",
			req:     ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: f32(4, 5), Indices: idx([]int{2, 5}, 0, 1, 2, 3, 0, 3, 3, 3, 3, 3), Updates: f32(2, 5)},
			want:    cost.CPUWork{CopyBytes: 160, Reduced: 10},
			inPlace: cost.CPUWork{Reduced: 10},
		},
		{
			// The division pass visits every target again.
			name: "ScatterElementsUpdate-12 mean",
			req: ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "mean", Data: f32(4, 5), Indices: idx([]int{2, 5}, 0, 1, 2, 3, 0, 3, 3, 3, 3, 3),
				Updates: f32(2, 5), Axis: tensor.Scalar(0)},
			want:    cost.CPUWork{CopyBytes: 160, Reduced: 20},
			inPlace: cost.CPUWork{Reduced: 20},
		},
		{
			// use_init_val false: the neutral value is stored first.
			name: "ScatterElementsUpdate-12 sum from neutral",
			req: ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "sum", Data: f32(4, 5), Indices: idx([]int{2, 5}, 0, 1, 2, 3, 0, 3, 3, 3, 3, 3),
				Updates: f32(2, 5), Axis: tensor.Scalar(0), UseInitVal: boolPtr(false)},
			want:    cost.CPUWork{CopyBytes: 160, Elements: 10, Reduced: 10},
			inPlace: cost.CPUWork{Elements: 10, Reduced: 10},
		},
		{
			name: "Scatter-11 strings",
			req:  ops.Request{Op: "Scatter-11", Data: strs("a", "b", "c", "d"), Indices: idx([]int{2}, 3, 0), Updates: strs("x", "y")},
			// A string moves as its 16-byte header.
			want:    cost.CPUWork{CopyBytes: 128, Elements: 2},
			inPlace: cost.CPUWork{Elements: 2},
		},
		{
			// Every second row and column of [4, 6]: 6 elements moved.
			name: "SliceScatter-15",
			req: ops.Request{Op: "SliceScatter-15", Data: f32(4, 6), Updates: f32(2, 3),
				Start: tensor.Ints(0, 0), Stop: tensor.Ints(4, 6), Step: tensor.Ints(2, 2)},
			want:    cost.CPUWork{CopyBytes: 192, MoveBytes: 24},
			inPlace: cost.CPUWork{MoveBytes: 24},
		},
		{
			// A slice that covers all of data copies nothing.
			name: "SliceScatter-15 all of data",
			req: ops.Request{Op: "SliceScatter-15", Data: f32(4, 6), Updates: f32(4, 6),
				Start: tensor.Ints(0), Stop: tensor.Ints(4), Step: tensor.Ints(1)},
			want:    cost.CPUWork{MoveBytes: 96},
			inPlace: cost.CPUWork{MoveBytes: 96},
		},
		{
			// past_cache [2, 1, 8, 4] float32 (256 bytes), update [2, 1, 3, 4]:
			// 24 elements in 2 contiguous blocks.
			name:    "TensorScatter-24",
			req:     ops.Request{Op: "TensorScatter-24", Data: f32(2, 1, 8, 4), Indices: idx([]int{2}, 0, 5), Updates: f32(2, 1, 3, 4)},
			want:    cost.CPUWork{CopyBytes: 512, MoveBytes: 96},
			inPlace: cost.CPUWork{MoveBytes: 96},
		},
		{
			name:    "TensorScatter-24 circular",
			req:     ops.Request{Op: "TensorScatter-24", Mode: ops.ModeCircular, Data: f16(2, 1, 8, 4), Indices: idx([]int{2}, 7, 5), Updates: f16(2, 1, 3, 4)},
			want:    cost.CPUWork{CopyBytes: 256, MoveBytes: 48},
			inPlace: cost.CPUWork{MoveBytes: 48},
		},
		{
			// No updates: a copy of data.
			name:    "ScatterND-18 no updates",
			req:     ops.Request{Op: "ScatterND-18", Data: f32(6, 4), Indices: idx([]int{0, 1}), Updates: f32(0, 4)},
			want:    cost.CPUWork{CopyBytes: 192},
			inPlace: cost.CPUWork{},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prepare := ops.Prepare
			if c.req.Data.Data == nil && c.req.Data.Strings == nil {
				prepare = ops.PrepareShapes
			}
			p, err := prepare(c.req)
			require.NoError(t, err)
			for _, w := range []int{1, 2, 8} {
				require.Equal(t, c.want, workOf(p, false, w), "%d workers", w)
				require.Equal(t, c.inPlace, workOf(p, true, w), "%d workers, in place", w)
			}
			require.Equal(t, c.want, WorkOf(p, false))
			require.Equal(t, c.inPlace, WorkOf(p, true))
		})
	}
}

// TestWorkOfOwned: a reduction of single elements that Execute folds owned
// (2 to 4 workers, about as many updates as elements of out, out under 2
// MiB) copies data twice, in place too, and walks every update on every
// owner; binned (out of 2 MiB or more: a fold the figures choose) or on
// other numbers of workers, it copies once and only folds.
func TestWorkOfOwned(t *testing.T) {
	plan := func(outLen, updates int) *ops.Plan {
		p, err := ops.PrepareShapes(ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: shapeOnly(tensor.Float32, outLen),
			Indices: shapeOnly(tensor.Int64, updates), Updates: shapeOnly(tensor.Float32, updates)})
		require.NoError(t, err)
		return p
	}
	const mi = 1 << 20
	owned := plan(mi/4, mi/4) // out 1 MiB
	for _, w := range []int{2, 4} {
		require.Equal(t, cost.CPUWork{CopyBytes: 4 * mi, Elements: mi / 4, Reduced: mi / 4}, workOf(owned, false, w), "%d workers", w)
		require.Equal(t, cost.CPUWork{CopyBytes: 4 * mi, Elements: mi / 4, Reduced: mi / 4}, workOf(owned, true, w), "%d workers, in place", w)
	}
	for _, w := range []int{1, 8} {
		require.Equal(t, cost.CPUWork{CopyBytes: 2 * mi, Reduced: mi / 4}, workOf(owned, false, w), "%d workers", w)
		require.Equal(t, cost.CPUWork{Reduced: mi / 4}, workOf(owned, true, w), "%d workers, in place", w)
	}
	binned := plan(mi, mi/2) // out 4 MiB
	require.Equal(t, cost.CPUWork{CopyBytes: 8 * mi, Reduced: mi / 2, FoldUpdates: mi / 2, FoldOutLen: mi, FoldOutBytes: 4 * mi}, workOf(binned, false, 2),
		"folded as the figures choose")
	// Eight updates per element: folded by o and k, not owned.
	dup := plan(mi/4, 2*mi)
	require.Equal(t, cost.CPUWork{CopyBytes: 2 * mi, Reduced: 2 * mi}, workOf(dup, false, 2))
}

// TestWorkOfScatterUpdateSkips: ScatterUpdate-3 moves only the last
// update to each slice, where lastWriters looks for them.
func TestWorkOfScatterUpdateSkips(t *testing.T) {
	// 2500 indices into 256 slices (SU1 of the bench): all 256 named.
	rng := rand.New(rand.NewSource(1))
	req := ops.Request{Op: "ScatterUpdate-3", Data: shapeOnly(tensor.Float32, 4, 256, 10, 15), Indices: randIndices(rng, []int{125, 20}, func(int) int { return 256 }),
		Updates: shapeOnly(tensor.Float32, 4, 125, 20, 10, 15), Axis: tensor.Scalar(1)}
	p, err := ops.PrepareShapes(req)
	require.NoError(t, err)
	require.Equal(t, cost.CPUWork{MoveBytes: 4 * 256 * (150*4 + runLineBytes)}, WorkOf(p, false))
	// An axis far longer than the indices: every update applied, and
	// 3 of the 100000 slices named.
	p, err = ops.PrepareShapes(ops.Request{Op: "ScatterUpdate-3", Data: shapeOnly(tensor.Float32, 100000, 2), Indices: idx([]int{4}, 7, 7, 9, 11),
		Updates: shapeOnly(tensor.Float32, 4, 2), Axis: tensor.Scalar(0)})
	require.NoError(t, err)
	require.Equal(t, cost.CPUWork{CopyBytes: 2 * 99997 * 8, MoveBytes: 4 * (8 + runLineBytes)}, WorkOf(p, false))
}

func TestMeasure(t *testing.T) {
	start := time.Now()
	c, err := Measure(context.Background())
	require.NoError(t, err)
	t.Logf("%+v in %v", c, time.Since(start))
	require.NoError(t, c.Check())
	require.Equal(t, runtime.GOMAXPROCS(0), c.Threads)
	// A fold point for each probe size, as foldFigures measures too.
	require.True(t, c.Complete())
	require.Len(t, c.Fold, len(foldProbeBytes))
	for i, f := range c.Fold {
		require.Equal(t, uint64(foldProbeBytes[i]), f.OutBytes)
	}
	lazy, _ := foldFigures(context.Background())
	require.NotNil(t, lazy)
	require.True(t, lazy.Complete())
	again, fresh := foldFigures(context.Background())
	require.False(t, fresh, "measured once for the process")
	require.Same(t, lazy, again)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Measure(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

// BenchmarkEstimate times Execute on calls of a few MB of each kind of
// work and reports, beside the time, the estimate from Measure's figures
// (estimate-ms) and its ratio to the time (estimate/measured): how well
// the model that --backend auto and bench's estimate lines use holds on
// this machine. It reports; a shared machine's timings decide nothing in
// a test (TestWorkOf and its neighbours check the model's arithmetic).
//
//	go test ./cpuref -run '^$' -bench Estimate -count 5
func BenchmarkEstimate(b *testing.B) {
	rng := rand.New(rand.NewSource(11))
	calls := []struct {
		name string
		req  ops.Request
	}{
		// 384 indices into 256 slices of 256 B: 24 MiB of updates, 12.5 MiB
		// moved into 16 MiB, the rest copied.
		{"ScatterUpdate-3-rows", ops.Request{Op: "ScatterUpdate-3", Data: f32Tensor([]int{256, 256, 64}, 1),
			Indices: randIndices(rng, []int{384}, func(int) int { return 256 }), Updates: f32Tensor([]int{256, 384, 64}, 2), Axis: tensor.Scalar(1)}},
		// 512K single elements into 4 MiB.
		{"ScatterElements-18-none", ops.Request{Op: "ScatterElements-18", Data: f32Tensor([]int{512, 2048}, 3),
			Indices: randIndices(rng, []int{256, 2048}, func(int) int { return 512 }), Updates: f32Tensor([]int{256, 2048}, 4)}},
		// 1M updates into 128K elements, 8 each.
		{"ScatterElements-18-add-duplicates", ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: f32Tensor([]int{1 << 17}, 5),
			Indices: randIndices(rng, []int{1 << 20}, func(int) int { return 1 << 17 }), Updates: f32Tensor([]int{1 << 20}, 6)}},
	}
	fig, err := Measure(context.Background())
	require.NoError(b, err)
	b.Logf("figures %+v", fig)
	for _, c := range calls {
		b.Run(c.name, func(b *testing.B) {
			p, err := ops.Prepare(c.req)
			require.NoError(b, err)
			out, err := tensor.New(p.DType, p.Shape)
			require.NoError(b, err)
			require.NoError(b, New().Execute(context.Background(), p, out)) // warm
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				require.NoError(b, New().Execute(context.Background(), p, out))
			}
			per := time.Since(start).Seconds() * 1e3 / float64(b.N)
			est := fig.Estimate(WorkOf(p, false))
			b.ReportMetric(est.Ms, "estimate-ms")
			b.ReportMetric(est.Ms/per, "estimate/measured")
		})
	}
}

// TestWorkOfFold: a float sum, sub, prod or mean that Execute folds as
// the fold figures choose counts its updates and out as a fold, and the
// estimate follows the faster fold's figures; min and max, integer sums
// and outputs too small to bin do not count one.
func TestWorkOfFold(t *testing.T) {
	const mi = 1 << 20
	elems := func(dt tensor.DType, red string, out, n int) *ops.Plan {
		p, err := ops.PrepareShapes(ops.Request{Op: "ScatterElements-18", Reduction: red, Data: shapeOnly(dt, out),
			Indices: shapeOnly(tensor.Int64, n), Updates: shapeOnly(dt, n)})
		require.NoError(t, err)
		return p
	}
	w := WorkOf(elems(tensor.Float32, "add", mi, 16*mi), false)
	require.Equal(t, cost.CPUWork{CopyBytes: 8 * mi, Reduced: 16 * mi, FoldUpdates: 16 * mi, FoldOutLen: mi, FoldOutBytes: 4 * mi}, w)
	for _, p := range []*ops.Plan{elems(tensor.Float32, "max", mi, 16*mi), elems(tensor.Int32, "add", mi, 16*mi), elems(tensor.Float32, "add", 1024, 16*mi)} {
		require.Zero(t, WorkOf(p, false).FoldUpdates, "%v %v into %v", p.DType, p.Reduction, p.Shape)
	}
	// The estimate: the copy, and the faster fold at 4 MiB.
	c := cost.CPU{Threads: 2, CopyGBps: 8, MoveGBps: 1, ElementNs: 1, ReduceNs: 50,
		Fold: []cost.FoldPoint{{OutBytes: 4 * mi, SerialNs: 2, SerialOutNs: 1, BinnedNs: 3, BinnedOutNs: 1}}}
	e := c.Estimate(w)
	require.Len(t, e.Parts, 2)
	require.Equal(t, "copy", e.Parts[0].Name)
	require.InDelta(t, 8*mi/8e9*1e3, e.Parts[0].Ms, 1e-9)
	require.Equal(t, cost.Part{Name: "fold serial", Ms: (16*mi*2 + mi) / 1e6}, e.Parts[1])
	// As Execute chooses: serial where these figures say so.
	x := &exec{g: defaultGrain, ctx: context.Background(), p: elems(tensor.Float32, "add", mi, 16*mi), out: &tensor.Tensor{DType: tensor.Float32, Shape: []int{mi}}, w: 2, fig: &c}
	require.True(t, x.planBins())
	require.True(t, x.foldSerial())
}
