package cpuref

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// orderValues are float values whose sums and products round differently
// in different orders (1e8 + 1 - 1e8 is 0 in float32, 1e8 - 1e8 + 1 is 1),
// with NaNs of different payloads, so that min and max show which NaN came
// first, and zeros of both signs.
var orderValues = []float64{1e8, -1e8, 1, -1, 3, 0.5, 1e-3, 7e7, 0, -0.0, 2, -3}

func orderNaN(i int) float32 { return math.Float32frombits(0x7fc00000 | uint32(i+1)) }

// orderTensor returns a tensor of dt and shape drawn from orderValues (and
// a NaN now and then when nan is set).
func orderTensor(rng *rand.Rand, dt tensor.DType, shape []int, nan bool) *tensor.Tensor {
	t, err := tensor.New(dt, shape)
	if err != nil {
		panic(err)
	}
	for i := range t.Len() {
		v := float32(orderValues[rng.Intn(len(orderValues))])
		if v == 0 && rng.Intn(2) == 0 {
			v = float32(math.Copysign(0, -1))
		}
		if nan && rng.Intn(40) == 0 {
			v = orderNaN(i % 5)
		}
		switch dt {
		case tensor.Float32:
			tensor.View[float32](t)[i] = v
		case tensor.Float64:
			tensor.View[float64](t)[i] = float64(v)
		case tensor.Float16:
			tensor.View[tensor.F16](t)[i] = tensor.F16From(v / 1e5) // within float16's range
		case tensor.BFloat16:
			tensor.View[tensor.BF16](t)[i] = tensor.BF16From(v)
		case tensor.Int32:
			tensor.View[int32](t)[i] = int32(rng.Intn(1<<20) - 1<<19)
		case tensor.Int8:
			tensor.View[int8](t)[i] = int8(rng.Intn(256) - 128)
		}
	}
	return t
}

// orderSplits are work splits that put the updates of one element in
// different tasks, groups, chunks, bins, blocks and owned ranges: worker
// counts, chunk sizes of the index pass, group and bin sizes, block sizes,
// and the paths forced on and off.
func orderSplits() []struct {
	name string
	b    *Backend
} {
	var s []struct {
		name string
		b    *Backend
	}
	add := func(name string, b *Backend) {
		s = append(s, struct {
			name string
			b    *Backend
		}{name, b})
	}
	for _, w := range []int{1, 2, 3, 4, 5, 8} {
		add(fmt.Sprintf("w%d-default", w), &Backend{Workers: w})
		add(fmt.Sprintf("w%d-tiny", w), &Backend{Workers: w, grain: tinyGrain})
		for _, decode := range []int{1, 3, 7, 64} {
			for _, bucket := range []int{1, 4, 16, 256} {
				for _, owned := range []int{0, 8} {
					g := &grain{task: 2, run: 2, piece: 1, decode: decode, copy: 8, bigOut: 0, bucket: bucket, owned: owned}
					add(fmt.Sprintf("w%d-decode%d-bucket%d-owned%d", w, decode, bucket, owned), &Backend{Workers: w, grain: g})
				}
			}
			for _, bin := range []int{1, 8, 64} {
				// Blocks of wcShift and more take the write-combining
				// buffers (binWC 0: with any number of bins), or for
				// 4-byte elements the assembly loops' stage rows; wcShift
				// and wcShift+1 flush into a new block every one to four
				// flushes. The buffers flush with streamed stores, and
				// with plain copies where binNoStream.
				for _, block := range []int{0, 1, 3, wcShift, wcShift + 1, 12} {
					g := &grain{task: 2, run: 2, piece: 1, decode: decode, copy: 8, bigOut: 1 << 40, owned: 4, binOut: 1, fold: foldForceBinned, bin: bin, binBlock: block}
					add(fmt.Sprintf("w%d-decode%d-bin%d-block%d", w, decode, bin, block), &Backend{Workers: w, grain: g})
					if block == wcShift {
						nc := *g
						nc.binNoStream = true
						add(fmt.Sprintf("w%d-decode%d-bin%d-block%d-copy", w, decode, bin, block), &Backend{Workers: w, grain: &nc})
						// The Go partition loops where the assembly ones
						// would run (4-byte elements, see binsimd.go).
						h := *g
						h.binNoAsm = true
						add(fmt.Sprintf("w%d-decode%d-bin%d-block%d-go", w, decode, bin, block), &Backend{Workers: w, grain: &h})
					}
					// In rounds of a few units (lists flushed with plain
					// stores, folded into a copy of data), with the
					// assembly loops and without.
					if block == 0 || block == wcShift || block == 12 {
						r := *g
						r.binRound, r.binRoundOut = 1+decode, 1<<40
						add(fmt.Sprintf("w%d-decode%d-bin%d-block%d-rounds", w, decode, bin, block), &Backend{Workers: w, grain: &r})
						h := r
						h.binNoAsm = true
						add(fmt.Sprintf("w%d-decode%d-bin%d-block%d-rounds-go", w, decode, bin, block), &Backend{Workers: w, grain: &h})
					}
				}
			}
		}
	}
	return s
}

// TestSplitsKeepIndexOrder pins cpuref's order contract: however the work
// is split (workers, tasks, groups, bins, blocks, owned ranges), every
// element folds its updates in index order, so the result equals the naive
// reference (bit for bit but for the sign of NaNs the arithmetic makes) and
// every split gives the same bits, NaN payloads included, on data whose
// rounding depends on the order.
func TestSplitsKeepIndexOrder(t *testing.T) {
	seed := int64(20261124)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	type tc struct {
		name string
		req  ops.Request
	}
	var cases []tc
	idx := func(shape []int, bound int) *tensor.Tensor {
		x, _ := tensor.New(tensor.Int64, shape)
		for i := range x.Len() {
			v := int64(rng.Intn(bound))
			if rng.Intn(4) == 0 {
				v -= int64(bound) // negative indices count from the end
			}
			tensor.View[int64](x)[i] = v
		}
		return x
	}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Float16, tensor.BFloat16, tensor.Int32, tensor.Int8} {
		float := dt != tensor.Int32 && dt != tensor.Int8
		for _, red := range []string{"add", "mul", "min", "max"} {
			if red == "mul" && !float {
				continue
			}
			// 1-D: about 20 updates per element.
			cases = append(cases, tc{fmt.Sprintf("elements-%v-%s", dt, red), ops.Request{
				Op: "ScatterElements-18", Reduction: red,
				Data:    orderTensor(rng, dt, []int{37}, float),
				Indices: idx([]int{751}, 37),
				Updates: orderTensor(rng, dt, []int{751}, float)}})
			// Axis 1 of a 2-D tensor: targets repeat within rows.
			cases = append(cases, tc{fmt.Sprintf("elements-axis1-%v-%s", dt, red), ops.Request{
				Op: "ScatterElements-18", Reduction: red, Axis: tensor.Scalar(1),
				Data:    orderTensor(rng, dt, []int{5, 9}, float),
				Indices: idx([]int{5, 63}, 9),
				Updates: orderTensor(rng, dt, []int{5, 63}, float)}})
			// ScatterND rows of 3 and of 1 element.
			cases = append(cases, tc{fmt.Sprintf("nd-rows-%v-%s", dt, red), ops.Request{
				Op: "ScatterND-18", Reduction: red,
				Data:    orderTensor(rng, dt, []int{23, 3}, float),
				Indices: idx([]int{301, 1}, 23),
				Updates: orderTensor(rng, dt, []int{301, 3}, float)}})
			cases = append(cases, tc{fmt.Sprintf("nd-elements-%v-%s", dt, red), ops.Request{
				Op: "ScatterND-18", Reduction: red,
				Data:    orderTensor(rng, dt, []int{41}, float),
				Indices: idx([]int{613, 1}, 41),
				Updates: orderTensor(rng, dt, []int{613}, float)}})
		}
		for _, red := range []string{"sum", "prod", "min", "max", "mean"} {
			for _, init := range []bool{true, false} {
				cases = append(cases, tc{fmt.Sprintf("elements12-%v-%s-init%v", dt, red, init), ops.Request{
					Op: "ScatterElementsUpdate-12", Reduction: red, Axis: tensor.Scalar(0), UseInitVal: &init,
					Data:    orderTensor(rng, dt, []int{29}, float),
					Indices: idx([]int{587}, 29),
					Updates: orderTensor(rng, dt, []int{587}, float)}})
			}
		}
		cases = append(cases, tc{fmt.Sprintf("nd15-sub-%v", dt), ops.Request{
			Op: "ScatterNDUpdate-15", Reduction: "sub",
			Data:    orderTensor(rng, dt, []int{19, 2}, float),
			Indices: idx([]int{257, 1}, 19),
			Updates: orderTensor(rng, dt, []int{257, 2}, float)}})
	}
	// Each case runs the first split and every splitStride-th of the
	// others, from an offset that moves with the case, so that every
	// split runs on a quarter of the cases (every dtype and reduction
	// among them) rather than every split on every case (1788 splits of
	// 154 cases took over a minute).
	const splitStride = 4
	all := orderSplits()
	for ci, c := range cases {
		splits := all[:1]
		for i := 1 + ci%splitStride; i < len(all); i += splitStride {
			splits = append(splits, all[i])
		}
		t.Run(c.name, func(t *testing.T) {
			want, err := opstest.Naive(c.req)
			require.NoError(t, err)
			p, err := ops.Prepare(c.req)
			require.NoError(t, err)
			var first *tensor.Tensor
			for _, s := range splits {
				out, err := tensor.New(p.DType, p.Shape)
				require.NoError(t, err)
				require.NoError(t, s.b.Execute(context.Background(), p, out), s.name)
				// The naive reference may give a NaN made by the arithmetic
				// (inf * 0) another sign; every split must give the same bits.
				if d := opstest.DiffFor(p.Reduction, out, want); d != "" {
					t.Fatalf("%s against the naive reference (seed %d): %s", s.name, seed, d)
				}
				if first == nil {
					first = out
				} else if d := opstest.DiffExact(out, first); d != "" {
					t.Fatalf("%s against %s (seed %d): %s", s.name, splits[0].name, seed, d)
				}
			}
		})
	}
}
