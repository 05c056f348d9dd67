package cpuref

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// foldGrain bins every output of at least one update per four elements
// (bins of 64 bytes, blocks of 64 entries) and forces the fold: serial
// (banded on every count of units), serial without its one-pass loop,
// serial without its assembly loop, serial without bands, or binned.
func foldGrain(fold int, noDirect, noAsm, noBand bool) *grain {
	return &grain{task: 2, run: 2, piece: 1, decode: 7, copy: 64, bigOut: 1 << 40, owned: 4, binOut: 1, bin: 64, binBlock: 6,
		fold: fold, serialNoDirect: noDirect, serialNoAsm: noAsm, serialNoBand: noBand, serialBandUnits: 1}
}

// foldPaths are the serial fold (one-pass, where it can with the
// assembly loop, banded on several workers where the processor has
// AVX2; the same unbanded; one-pass in Go; and decode-then-fold) and the binned fold, which must give the
// same bits.
var foldPaths = []struct {
	name string
	g    *grain
}{
	{"binned", foldGrain(foldForceBinned, false, false, false)},
	{"serial", foldGrain(foldForceSerial, false, false, false)},
	{"serial-unbanded", foldGrain(foldForceSerial, false, false, true)},
	{"serial-go", foldGrain(foldForceSerial, false, true, false)},
	{"serial-decoded", foldGrain(foldForceSerial, true, false, false)},
}

// TestFoldPathsAgree runs plans that run binned with the fold forced
// serial (with and without its one-pass loop) and binned, and wants the
// bits of the naive reference from each, in place and not, on 1 and 3
// workers: every float dtype and the float reductions (sum, sub, prod,
// mean with and without use_init_val, min and max), int32 and int64
// indices, negative ones, one-dimensional ScatterElements and ScatterND
// (the one-pass loop), ScatterElements along axis 1 and ScatterND of
// pairs (the decoded loop), duplicate-heavy and sparse indices (a quarter
// of an update per element, the fewest planBins bins), empty updates,
// and update counts at the edges of serialStep.
func TestFoldPathsAgree(t *testing.T) {
	seed := int64(20261201)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	ixOf := func(dt tensor.DType, shape []int, bound int, neg bool) *tensor.Tensor {
		x, err := tensor.New(dt, shape)
		require.NoError(t, err)
		for i := range x.Len() {
			v := int64(rng.Intn(bound))
			if neg && rng.Intn(3) == 0 {
				v -= int64(bound)
			}
			if dt == tensor.Int32 {
				tensor.View[int32](x)[i] = int32(v)
			} else {
				tensor.View[int64](x)[i] = v
			}
		}
		return x
	}
	type tc struct {
		name string
		req  ops.Request
	}
	var cases []tc
	dtypes := []tensor.DType{tensor.Float32, tensor.Float64, tensor.Float16, tensor.BFloat16}
	for di, dt := range dtypes {
		it := []tensor.DType{tensor.Int64, tensor.Int32}[di%2]
		// s elements and n updates: about 16 per element, a quarter per
		// element, and counts around serialStep (one unit short, exact,
		// one over, two steps and one).
		for _, sn := range [][2]int{{61, 977}, {400, 100}, {3, serialStep - 1}, {5, serialStep}, {700, serialStep + 1}, {2000, 2*serialStep + 1}, {9, 0}} {
			s, n := sn[0], sn[1]
			for _, red := range []string{"add", "mul", "min", "max"} {
				cases = append(cases, tc{fmt.Sprintf("SE18-%v-%s-%d-into-%d", dt, red, n, s), ops.Request{
					Op: "ScatterElements-18", Reduction: red, Data: orderTensor(rng, dt, []int{s}, true),
					Indices: ixOf(it, []int{n}, s, true), Updates: orderTensor(rng, dt, []int{n}, true)}})
			}
			for _, red := range []string{"sum", "prod", "mean"} {
				for _, init := range []bool{true, false} {
					cases = append(cases, tc{fmt.Sprintf("SE12-%v-%s-init%v-%d-into-%d", dt, red, init, n, s), ops.Request{
						Op: "ScatterElementsUpdate-12", Reduction: red, Axis: tensor.Scalar(0), UseInitVal: &init,
						Data: orderTensor(rng, dt, []int{s}, true), Indices: ixOf(it, []int{n}, s, true),
						Updates: orderTensor(rng, dt, []int{n}, true)}})
				}
			}
			cases = append(cases, tc{fmt.Sprintf("SND15-sub-%v-%d-into-%d", dt, n, s), ops.Request{
				Op: "ScatterNDUpdate-15", Reduction: "sub", Data: orderTensor(rng, dt, []int{s}, true),
				Indices: ixOf(it, []int{n, 1}, s, false), Updates: orderTensor(rng, dt, []int{n}, true)}})
			cases = append(cases, tc{fmt.Sprintf("SND18-add-%v-%d-into-%d", dt, n, s), ops.Request{
				Op: "ScatterND-18", Reduction: "add", Data: orderTensor(rng, dt, []int{s}, true),
				Indices: ixOf(it, []int{n, 1}, s, true), Updates: orderTensor(rng, dt, []int{n}, true)}})
		}
		if dt == tensor.Float32 {
			// The assembly loop with int32 indices as well (float32
			// takes int64 above), in groups of four and the tail.
			for _, sn := range [][2]int{{61, 977}, {3, 7}, {700, serialStep + 3}} {
				cases = append(cases, tc{fmt.Sprintf("SE18-%v-int32-add-%d-into-%d", dt, sn[1], sn[0]), ops.Request{
					Op: "ScatterElements-18", Reduction: "add", Data: orderTensor(rng, dt, []int{sn[0]}, true),
					Indices: ixOf(tensor.Int32, []int{sn[1]}, sn[0], true), Updates: orderTensor(rng, dt, []int{sn[1]}, true)}})
			}
			// The banded fold over several chunks (each folded while the
			// next is kept), a chunk's edge and a tail short of 8, with
			// int64 and int32 indices, and ScatterND.
			for _, sn := range [][2]int{{5000, 3*bandChunk + 13}, {777, 2 * bandChunk}, {2, bandChunk + 1}} {
				for _, ix := range []tensor.DType{tensor.Int64, tensor.Int32} {
					cases = append(cases, tc{fmt.Sprintf("SE18-%v-%v-add-%d-into-%d", dt, ix, sn[1], sn[0]), ops.Request{
						Op: "ScatterElements-18", Reduction: "add", Data: orderTensor(rng, dt, []int{sn[0]}, true),
						Indices: ixOf(ix, []int{sn[1]}, sn[0], true), Updates: orderTensor(rng, dt, []int{sn[1]}, true)}})
				}
				cases = append(cases, tc{fmt.Sprintf("SND15-sum-%v-%d-into-%d", dt, sn[1], sn[0]), ops.Request{
					Op: "ScatterNDUpdate-15", Reduction: "sum", Data: orderTensor(rng, dt, []int{sn[0]}, true),
					Indices: ixOf(tensor.Int32, []int{sn[1], 1}, sn[0], true), Updates: orderTensor(rng, dt, []int{sn[1]}, true)}})
			}
		}
		// The decoded loop: along axis 1, and ScatterND of pairs.
		cases = append(cases, tc{fmt.Sprintf("SE18-axis1-%v-add", dt), ops.Request{
			Op: "ScatterElements-18", Reduction: "add", Axis: tensor.Scalar(1), Data: orderTensor(rng, dt, []int{7, 30}, true),
			Indices: ixOf(it, []int{7, 700}, 30, true), Updates: orderTensor(rng, dt, []int{7, 700}, true)}})
		cases = append(cases, tc{fmt.Sprintf("SND18-pairs-%v-mul", dt), ops.Request{
			Op: "ScatterND-18", Reduction: "mul", Data: orderTensor(rng, dt, []int{11, 13}, true),
			Indices: ixOf(it, []int{3000, 2}, 11, false), Updates: orderTensor(rng, dt, []int{3000}, true)}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := opstest.Naive(c.req)
			require.NoError(t, err)
			p, err := ops.Prepare(c.req)
			require.NoError(t, err)
			var first *tensor.Tensor
			for _, fp := range foldPaths {
				for _, w := range []int{1, 3} {
					b := &Backend{Workers: w, grain: fp.g}
					if p.NumUpdates() > 0 {
						x := &exec{g: *fp.g, p: p, out: want, w: w}
						require.True(t, x.planBins(), "the plan runs binned")
					}
					for _, inPlace := range []bool{false, true} {
						name := fmt.Sprintf("%s w%d in place %v", fp.name, w, inPlace)
						pp := *p
						out, err := tensor.New(p.DType, p.Shape)
						require.NoError(t, err)
						if inPlace {
							out = p.Data.Clone()
							pp.Data = out
						}
						require.NoError(t, b.Execute(context.Background(), &pp, out), name)
						if d := opstest.DiffFor(p.Reduction, out, want); d != "" {
							t.Fatalf("%s against the naive reference (seed %d): %s", name, seed, d)
						}
						if first == nil {
							first = out
						} else if d := opstest.DiffExact(out, first); d != "" {
							t.Fatalf("%s against %s (seed %d): %s", name, foldPaths[0].name, seed, d)
						}
					}
				}
			}
		})
	}
}

// TestSerialFoldBadIndex: a bad index found part way through a serial
// fold gives the error of the first bad position, as the binned fold
// does, and leaves out untouched, in place too.
func TestSerialFoldBadIndex(t *testing.T) {
	seed := int64(20261202)
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	const s, n = 300, bandChunk + 3*serialStep + 5
	for _, red := range []string{"sum", "mean", "prod"} {
		for _, init := range []bool{true, false} {
			// Bad units at each place of a group of four (the assembly
			// loop's), in the tail, at the edges of a step, and in the
			// banded fold's first and second chunks.
			for _, at := range [][]int{{0}, {1}, {6, 9}, {serialStep - 1}, {serialStep, n - 1}, {n - 1}, {2*serialStep + 3, serialStep + 7}, {bandChunk - 1}, {bandChunk + 9, n - 2}} {
				ix, err := tensor.New(tensor.Int64, []int{n})
				require.NoError(t, err)
				for i := range n {
					tensor.View[int64](ix)[i] = int64(rng.Intn(s))
				}
				for _, a := range at {
					tensor.View[int64](ix)[a] = int64(s + a%5)
				}
				req := ops.Request{Op: "ScatterElementsUpdate-12", Reduction: red, Axis: tensor.Scalar(0), UseInitVal: &init,
					Data: orderTensor(rng, tensor.Float32, []int{s}, false), Indices: ix, Updates: orderTensor(rng, tensor.Float32, []int{n}, false)}
				p, err := ops.Prepare(req)
				require.NoError(t, err)
				name := fmt.Sprintf("%s init %v bad at %v", red, init, at)
				wantErr := (&Backend{Workers: 2, grain: foldPaths[0].g}).Execute(context.Background(), p, p.Data.Clone())
				require.ErrorIs(t, wantErr, ops.ErrIndexRange, name)
				for _, fp := range foldPaths[1:] {
					out, err := tensor.New(p.DType, p.Shape)
					require.NoError(t, err)
					for i := range out.Data {
						out.Data[i] = 0x5a
					}
					before := out.Clone()
					err = (&Backend{Workers: 2, grain: fp.g}).Execute(context.Background(), p, out)
					require.Error(t, err, name)
					require.Equal(t, wantErr.Error(), err.Error(), "%s %s", fp.name, name)
					require.True(t, tensor.Equal(out, before), "%s %s: out was written", fp.name, name)

					inPlace := p.Data.Clone()
					pp := *p
					pp.Data = inPlace
					err = (&Backend{Workers: 2, grain: fp.g}).Execute(context.Background(), &pp, inPlace)
					require.Equal(t, wantErr.Error(), err.Error(), "%s %s in place", fp.name, name)
					require.True(t, tensor.Equal(inPlace, p.Data), "%s %s: written in place", fp.name, name)
				}
			}
		}
	}
	// A bad index is reported for the next call's mean counts to start
	// from zero: the same call, corrected, gives the reference's bits.
	init := true
	req := ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "mean", Axis: tensor.Scalar(0), UseInitVal: &init,
		Data: orderTensor(rng, tensor.Float32, []int{50}, false), Indices: int64s(serialStep + 1), Updates: orderTensor(rng, tensor.Float32, []int{serialStep + 1}, false)}
	for i := range serialStep + 1 {
		tensor.View[int64](req.Indices)[i] = int64(i % 50)
	}
	want, err := opstest.Naive(req)
	require.NoError(t, err)
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	out, err := tensor.New(p.DType, p.Shape)
	require.NoError(t, err)
	require.NoError(t, (&Backend{Workers: 2, grain: foldPaths[1].g}).Execute(context.Background(), p, out))
	require.Empty(t, opstest.DiffExact(out, want))
}

// TestFoldChooserFollowsFigures: with the fold by figures, a float sum,
// sub, prod or mean runs serial where the figures estimate the serial
// fold faster at out's size and update count, binned where they estimate
// the binned fold faster, where out is larger than their largest point,
// and where there are none to go by in the Backend's (a Backend without
// figures measures its own, which this does not reach); other reductions
// and dtypes run binned whatever the figures say.
func TestFoldChooserFollowsFigures(t *testing.T) {
	// Serial 2 ns per update at 4 MiB, 10 at 16 MiB; binned 4 at both,
	// with 8 ns per element of out.
	fig := &cost.CPU{Threads: 2, CopyGBps: 10, MoveGBps: 10, ElementNs: 1, ReduceNs: 1, Fold: []cost.FoldPoint{
		{OutBytes: 4 << 20, SerialNs: 2, BinnedNs: 4, BinnedOutNs: 8},
		{OutBytes: 16 << 20, SerialNs: 10, BinnedNs: 4, BinnedOutNs: 8},
	}}
	require.NoError(t, fig.Check())
	plan := func(dt tensor.DType, red ops.Reduction, outLen, n int) *ops.Plan {
		return &ops.Plan{Kind: ops.KindElements, Reduction: red, UseInitVal: true, DType: dt, Outer: 1, J: n, Inner: 1, Shape: []int{outLen}}
	}
	chooses := func(p *ops.Plan, f *cost.CPU, w int) bool {
		x := &exec{g: defaultGrain, ctx: context.Background(), p: p, out: &tensor.Tensor{DType: p.DType, Shape: p.Shape}, w: w, fig: f}
		require.True(t, x.planBins(), "the plan runs binned")
		return x.foldSerial()
	}
	const mi = 1 << 20
	for _, c := range []struct {
		name   string
		p      *ops.Plan
		w      int
		serial bool
	}{
		{"float32 sum into 4 MiB", plan(tensor.Float32, ops.Sum, mi, 16*mi), 2, true},
		{"float32 sum into 16 MiB", plan(tensor.Float32, ops.Sum, 4*mi, 16*mi), 2, false},
		// At 8 MiB, halfway in the logarithm: serial 6 ns, binned 4.
		{"float32 sum into 8 MiB", plan(tensor.Float32, ops.Sum, 2*mi, 16*mi), 2, false},
		// On 1 worker the binned fold takes twice as long: 8 ns.
		{"float32 sum into 8 MiB, 1 worker", plan(tensor.Float32, ops.Sum, 2*mi, 16*mi), 1, true},
		// Few updates: the binned fold's part per element of out decides.
		// 4 MiB, 1M elements, 256K updates: serial 0.5 ms, binned 9.4.
		{"float32 sum into 4 MiB, a quarter per element", plan(tensor.Float32, ops.Sum, mi, mi/4), 2, true},
		{"float32 sum into 12 MiB, a quarter per element", plan(tensor.Float32, ops.Sum, 3*mi, 3*mi/4), 2, true},
		{"float32 sum into 12 MiB, 16 per element", plan(tensor.Float32, ops.Sum, 3*mi, 48*mi), 2, false},
		{"float64 sub into 4 MiB", plan(tensor.Float64, ops.Sub, mi/2, 16*mi), 2, true},
		{"float16 prod into 4 MiB", plan(tensor.Float16, ops.Prod, 2*mi, 16*mi), 2, true},
		{"bfloat16 mean into 4 MiB", plan(tensor.BFloat16, ops.Mean, 2*mi, 16*mi), 2, true},
		{"float32 sum into 64 MiB, past the figures", plan(tensor.Float32, ops.Sum, 16*mi, 16*mi), 2, false},
		{"float32 max into 4 MiB", plan(tensor.Float32, ops.Max, mi, 16*mi), 2, false},
		{"float32 min into 4 MiB", plan(tensor.Float32, ops.Min, mi, 16*mi), 2, false},
		{"int32 sum into 4 MiB", plan(tensor.Int32, ops.Sum, mi, 16*mi), 2, false},
		{"float32 none into 4 MiB", plan(tensor.Float32, ops.None, mi, 16*mi), 2, false},
	} {
		require.Equal(t, c.serial, chooses(c.p, fig, c.w), c.name)
	}
	// Figures that favour the binned fold everywhere, and the serial.
	binned := &cost.CPU{Threads: 2, Fold: []cost.FoldPoint{{OutBytes: 1, SerialNs: 9, BinnedNs: 1}, {OutBytes: 1 << 30, SerialNs: 9, BinnedNs: 1}}}
	serial := &cost.CPU{Threads: 2, Fold: []cost.FoldPoint{{OutBytes: 1, SerialNs: 1, BinnedNs: 9}, {OutBytes: 1 << 30, SerialNs: 1, BinnedNs: 9}}}
	for _, p := range []*ops.Plan{plan(tensor.Float32, ops.Sum, mi, 16*mi), plan(tensor.Float64, ops.Mean, 8*mi, 8*mi)} {
		require.False(t, chooses(p, binned, 2))
		require.True(t, chooses(p, serial, 2))
	}
	// The forced folds win over the figures.
	x := &exec{g: *foldGrain(foldForceBinned, false, false, false), p: plan(tensor.Float32, ops.Sum, mi, 16*mi), fig: serial}
	require.False(t, x.foldSerial())
	x = &exec{g: *foldGrain(foldForceSerial, false, false, false), p: plan(tensor.Float32, ops.Max, mi, 16*mi), fig: binned}
	require.True(t, x.foldSerial())

	// Execute goes by Backend.Figures: the same bits either way.
	rng := rand.New(rand.NewSource(5))
	req := ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: orderTensor(rng, tensor.Float32, []int{1 << 10}, true),
		Indices: int64s(1 << 14), Updates: orderTensor(rng, tensor.Float32, []int{1 << 14}, true)}
	for i := range 1 << 14 {
		tensor.View[int64](req.Indices)[i] = int64(rng.Intn(1 << 10))
	}
	want, err := opstest.Naive(req)
	require.NoError(t, err)
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	for _, f := range []*cost.CPU{serial, binned} {
		g := *foldGrain(foldByFigures, false, false, false)
		out, err := tensor.New(p.DType, p.Shape)
		require.NoError(t, err)
		require.NoError(t, (&Backend{Workers: 2, grain: &g, Figures: f}).Execute(context.Background(), p, out))
		require.Empty(t, opstest.DiffFor(p.Reduction, out, want))
	}

	// Given no figures, the first call that chooses measures them and
	// hands them to Keep, once for the process; a Backend given figures
	// never measures.
	measuredFold.Lock()
	saved := measuredFold.fig
	measuredFold.fig = nil
	measuredFold.Unlock()
	defer func() {
		measuredFold.Lock()
		measuredFold.fig = saved
		measuredFold.Unlock()
	}()
	var kept []cost.CPU
	keep := func(c cost.CPU) { kept = append(kept, c) }
	big, err := ops.Prepare(ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: f32Tensor([]int{mi}, 1),
		Indices: int64s(mi / 4), Updates: f32Tensor([]int{mi / 4}, 2)})
	require.NoError(t, err)
	out, err := tensor.New(big.DType, big.Shape)
	require.NoError(t, err)
	require.NoError(t, (&Backend{Figures: serial, Keep: keep}).Execute(context.Background(), big, out))
	require.Empty(t, kept, "given figures")
	for range 2 {
		require.NoError(t, (&Backend{Keep: keep}).Execute(context.Background(), big, out))
	}
	require.Len(t, kept, 1)
	require.True(t, kept[0].Complete())
}

// int64s returns an int64 tensor of n zeros.
func int64s(n int) *tensor.Tensor {
	x, err := tensor.New(tensor.Int64, []int{n})
	if err != nil {
		panic(err)
	}
	return x
}

// TestSerialFoldOrderInGroups: the serial fold's float32 sums, which the
// assembly loop takes four units at a time, keep position order inside a
// group: every pair of a group's four units (and units of neighbouring
// groups) lands on one element, each update a NaN of its own payload, so
// that the element keeps the first one's (the out-first rule of x + y).
// Every fold path, int32 and int64 indices, some of them negative.
func TestSerialFoldOrderInGroups(t *testing.T) {
	patterns := [][4]int{{0, 0, 1, 1}, {0, 1, 0, 1}, {0, 1, 1, 0}, {0, 0, 0, 0}, {0, 1, 2, 2}}
	const groups = 3 * serialStep / 4
	s := 2 * groups
	n := 4*groups + 3 // and a tail
	for _, it := range []tensor.DType{tensor.Int32, tensor.Int64} {
		ix, err := tensor.New(it, []int{n})
		require.NoError(t, err)
		upd, err := tensor.New(tensor.Float32, []int{n})
		require.NoError(t, err)
		for j := range n {
			g := j / 4
			// Group g's elements are 2g mod s and the next ones; the
			// last element of a group is the first of the next
			// group's pattern too, so order across groups counts.
			v := int64((2*g + patterns[g%len(patterns)][j%4]) % s)
			if j%7 == 3 {
				v -= int64(s)
			}
			if it == tensor.Int32 {
				tensor.View[int32](ix)[j] = int32(v)
			} else {
				tensor.View[int64](ix)[j] = v
			}
			tensor.View[float32](upd)[j] = math.Float32frombits(0x7f800000 | uint32(j+1)) // signalling: quieted by the fold
		}
		data, err := tensor.New(tensor.Float32, []int{s})
		require.NoError(t, err)
		req := ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: data, Indices: ix, Updates: upd}
		want, err := opstest.Naive(req)
		require.NoError(t, err)
		p, err := ops.Prepare(req)
		require.NoError(t, err)
		for _, fp := range foldPaths {
			out, err := tensor.New(p.DType, p.Shape)
			require.NoError(t, err)
			require.NoError(t, (&Backend{Workers: 2, grain: fp.g}).Execute(context.Background(), p, out))
			require.Empty(t, opstest.DiffExact(out, want), "%s, %v indices", fp.name, it)
		}
	}
}
