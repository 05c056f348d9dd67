//go:build cgo

package gpu

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// nanBits are NaNs of each float type for TestMinMaxNaNBits: the least
// and greatest of each sign, quiet and signalling ones, with and without
// payloads.
var nanBits = map[tensor.DType][]uint64{
	tensor.Float16:  {0x7C01, 0x7E00, 0x7E01, 0x7FFF, 0xFC01, 0xFE00, 0xFE05, 0xFFFF},
	tensor.BFloat16: {0x7F81, 0x7FC0, 0x7FC3, 0x7FFF, 0xFF81, 0xFFC0, 0xFFC5, 0xFFFF},
	tensor.Float32:  {0x7F800001, 0x7FC00000, 0x7FC00001, 0x7FFFFFFF, 0xFF800001, 0xFFC00000, 0xFFC12345, 0xFFFFFFFF},
	tensor.Float64: {0x7FF0000000000001, 0x7FF8000000000000, 0x7FF8000000000001, 0x7FFFFFFFFFFFFFFF,
		0xFFF0000000000001, 0xFFF8000000000000, 0xFFF8000012345678, 0xFFFFFFFFFFFFFFFF},
}

// numberBits returns numbers of type dt as bits: both zeros, infinities
// and smallest subnormals, and a few others.
func numberBits(dt tensor.DType) []uint64 {
	var out []uint64
	for _, v := range []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), 1, -1, 2.5, -3, 100} {
		switch dt {
		case tensor.Float16:
			out = append(out, uint64(tensor.F16From(v).Bits()))
		case tensor.BFloat16:
			out = append(out, uint64(tensor.BF16From(v)))
		case tensor.Float32:
			out = append(out, uint64(math.Float32bits(v)))
		default:
			out = append(out, math.Float64bits(float64(v)))
		}
	}
	sign := uint64(1) << (8*dt.Size() - 1)
	return append(out, 1, sign|1)
}

// bitsTensor returns a 1-D tensor of dtype dt holding the given bits.
func bitsTensor(dt tensor.DType, bits []uint64) *tensor.Tensor {
	t, err := tensor.New(dt, []int{len(bits)})
	if err != nil {
		panic(err)
	}
	sz := dt.Size()
	for i, b := range bits {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], b)
		copy(t.Data[i*sz:], w[:sz])
	}
	return t
}

// nanRequest returns a min or max request of perTarget updates into each
// of n elements of dtype dt, in shuffled order, whose elements take NaNs
// by kind (e % 5): 0 numbers only; 1 one NaN among the updates; 2 several
// NaNs of either sign among the updates; 3 a NaN in data and NaNs among
// the updates; 4 a NaN in data and numbers alone among the updates.
// ScatterND-18 with index tuples of one component where nd is set, else
// ScatterElements-18.
func nanRequest(rng *rand.Rand, dt tensor.DType, red string, nd bool, n, perTarget int) ops.Request {
	nans, nums := nanBits[dt], numberBits(dt)
	pick := func(s []uint64) uint64 { return s[rng.Intn(len(s))] }
	data := make([]uint64, n)
	type upd struct {
		target int
		bits   uint64
	}
	var upds []upd
	for e := range data {
		data[e] = pick(nums)
		vals := make([]uint64, perTarget)
		for i := range vals {
			vals[i] = pick(nums)
		}
		switch e % 5 {
		case 1:
			vals[rng.Intn(perTarget)] = pick(nans)
		case 2, 3:
			for _, i := range rng.Perm(perTarget)[:2+rng.Intn(perTarget-1)] {
				vals[i] = pick(nans)
			}
		}
		if e%5 >= 3 {
			data[e] = pick(nans)
		}
		for _, v := range vals {
			upds = append(upds, upd{e, v})
		}
	}
	rng.Shuffle(len(upds), func(i, j int) { upds[i], upds[j] = upds[j], upds[i] })
	idx := make([]int64, len(upds))
	bits := make([]uint64, len(upds))
	for i, u := range upds {
		idx[i], bits[i] = int64(u.target), u.bits
	}
	req := ops.Request{Op: "ScatterElements-18", Reduction: red, Data: bitsTensor(dt, data), Updates: bitsTensor(dt, bits),
		Indices: tensor.MustFromSlice([]int{len(idx)}, idx)}
	if nd {
		req.Op, req.Indices = "ScatterND-18", tensor.MustFromSlice([]int{len(idx), 1}, idx)
	}
	return req
}

// pairsRequest returns a min or max request whose elements each take one
// ordered pair (a, b) of the values nanBits and numberBits give for dt,
// every pair once, as the updates a, b, a, b (in shuffled positions), the
// elements starting from the reduction's identity: so every NaN and
// boundary value (both zeros and infinities, the least and greatest NaN
// of each sign, the quiet bit) meets every other on every path, and four
// updates an element take the workgroup accumulation where the path has it.
func pairsRequest(rng *rand.Rand, dt tensor.DType, red string) ops.Request {
	vals := append(numberBits(dt), nanBits[dt]...)
	r := ops.Max
	if red == "min" {
		r = ops.Min
	}
	id := r.NeutralBits(dt)
	var data, upd []uint64
	var idx []int64
	for _, a := range vals {
		for _, b := range vals {
			for _, v := range []uint64{a, b, a, b} {
				idx = append(idx, int64(len(data)))
				upd = append(upd, v)
			}
			data = append(data, id)
		}
	}
	rng.Shuffle(len(upd), func(i, j int) {
		upd[i], upd[j] = upd[j], upd[i]
		idx[i], idx[j] = idx[j], idx[i]
	})
	return ops.Request{Op: "ScatterElements-18", Reduction: red, Data: bitsTensor(dt, data), Updates: bitsTensor(dt, upd),
		Indices: tensor.MustFromSlice([]int{len(idx)}, idx)}
}

// runsRequest returns a min or max request of n elements, each taking a
// run of consecutive updates: NaNs of both signs and numbers of both
// signs, in an order that turns with the element. With one position per
// invocation (knobs.Knobs.Run 1) neighbouring invocations meet on one
// element, each having loaded it before the others' atomics: so a number,
// or a positive NaN, displaces a NaN that beats it, which float32's
// integer atomics must put back.
func runsRequest(dt tensor.DType, red string, n int) ops.Request {
	nans, nums := nanBits[dt], numberBits(dt)
	// A negative and a positive NaN, numbers of each sign above and below
	// data's, and the greatest NaN of each sign.
	run := []uint64{nans[5], nums[4], nans[1], nums[7], nums[8], nans[3], nums[5], nans[7]}
	var data, upd []uint64
	var idx []int64
	for e := 0; e < n; e++ {
		data = append(data, nums[6])
		for i := range run {
			// Element e takes the run turned by e places, less its
			// last e%len(run) values (keeping two at least).
			if i >= len(run)-e%len(run) && i > 1 {
				continue
			}
			upd = append(upd, run[(i+e)%len(run)])
			idx = append(idx, int64(e))
		}
	}
	return ops.Request{Op: "ScatterElements-18", Reduction: red, Data: bitsTensor(dt, data), Updates: bitsTensor(dt, upd),
		Indices: tensor.MustFromSlice([]int{len(idx)}, idx)}
}

// TestMinMaxNaNBits: float16, bfloat16, float32 and float64 min and max
// give the CPU reference's bits, NaN sign and payload included, where
// one NaN or several of either sign meet an element (in data and in the
// updates, in shuffled order), where every pair of NaNs and boundary
// values meets (pairsRequest), and where neighbouring invocations race on
// an element (runsRequest: float32's atomics must put back a NaN they
// displaced), on every path that folds them: the
// atomics (float32 on integer atomics with and without float atomics;
// compare-and-swap loops for the others and with ForceCAS), each with
// and without workgroup accumulation, deterministic mode, the column
// walk, and the in-order fold of float64 without 64-bit atomics (bucketed
// and slot by slot) and on the 32-bit baseline.
func TestMinMaxNaNBits(t *testing.T) {
	rng := rand.New(rand.NewSource(40))
	floats := []tensor.DType{tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64}
	// One pipeline cache for every configuration: most kernels recur.
	cache := t.TempDir()
	for _, c := range []struct {
		name  string
		opts  Options
		knobs knobs.Knobs
		// path is the reduction path (Stats.Reduction) float32 must
		// take; "" for any.
		path string
		// nd: ScatterND-18 too, in the in-order folds (whose slots are
		// its rows, not elements) and in one atomic configuration.
		nd bool
	}{
		{"atomics", Options{}, knobs.Knobs{NoOrderedSmall: true}, "+private", true},
		// Global atomics with one position per invocation: neighbouring
		// invocations race on an element's runs (runsRequest).
		{"atomics, global", Options{}, knobs.Knobs{NoOrderedSmall: true, NoWorkgroupAccumulation: true, Run: 1}, "", false},
		{"integer atomics alone", Options{}, knobs.Knobs{NoFloatAtomics: true}, "int+private", false},
		{"integer atomics alone, global", Options{}, knobs.Knobs{NoFloatAtomics: true, NoWorkgroupAccumulation: true, Run: 1}, "int", false},
		{"compare-and-swap", Options{}, knobs.Knobs{ForceCAS: true}, "cas+private", false},
		{"compare-and-swap, global", Options{}, knobs.Knobs{ForceCAS: true, NoWorkgroupAccumulation: true}, "cas", false},
		// Min and max take the atomics in deterministic mode too.
		{"deterministic", Options{Deterministic: true}, knobs.Knobs{}, "+private", false},
		{"walk", Options{}, knobs.Knobs{WalkMinColumns: 1}, "", false},
		// Only float64 folds in order here; the others are as above.
		{"no 64-bit atomics, bucketed", Options{}, knobs.Knobs{NoInt64Atomics: true}, "", true},
		{"no 64-bit atomics, slot by slot", Options{}, knobs.Knobs{NoInt64Atomics: true, NoBuckets: true}, "", true},
		{"32-bit baseline", Options{}, knobs.Knobs{NoShaderInt64: true}, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			opts.PipelineCacheDir = cache
			b := openTest(t, opts, c.knobs)
			caps := b.device().Capabilities()
			atomics64 := caps.ShaderInt64 && caps.Int64BufferAtomics
			// A device that already lacks what a knob takes away runs
			// that configuration in the first ones (SwiftShader lacks
			// float atomics and shaderInt64).
			if c.knobs.NoFloatAtomics && !caps.Float32AtomicAdd || c.knobs.NoShaderInt64 && !caps.ShaderInt64 {
				t.Skipf("the device is %s already", c.name)
			}
			for _, dt := range floats {
				if c.knobs.NoInt64Atomics && dt != tensor.Float64 {
					continue
				}
				for _, red := range []string{"min", "max"} {
					for k := 0; k < 4; k++ {
						nd := k == 1
						if nd && !c.nd {
							continue
						}
						// 300 elements: more than one radix digit of
						// slots (the bucketed fold), few enough for
						// workgroup memory; 6 updates each.
						req := nanRequest(rng, dt, red, nd, 300, 6)
						switch k {
						case 2:
							req = pairsRequest(rng, dt, red)
						case 3:
							req = runsRequest(dt, red, 300)
						}
						p, err := ops.Prepare(req)
						require.NoError(t, err)
						got, want := runBoth(t, b, p)
						path := b.LastStats().Reduction
						if d := opstest.DiffExact(got, want); d != "" {
							t.Errorf("%s %v %s on %q: %s", req.Op, dt, red, path, d)
						}
						switch {
						case dt == tensor.Float32 && c.path != "":
							assert.Contains(t, path, c.path, "%s %v %s", req.Op, dt, red)
						case dt == tensor.Float64 && (c.knobs.NoInt64Atomics || c.knobs.NoShaderInt64):
							assert.Equal(t, "ordered", path, "%s %v %s", req.Op, dt, red)
							if c.knobs.NoInt64Atomics {
								f := b.facts(false)
								pl, err := f.planCall(p)
								require.NoError(t, err)
								assert.Equal(t, !c.knobs.NoBuckets, pl.j.red.bucket, "%s %v %s bucketed", req.Op, dt, red)
							}
						case c.knobs.WalkMinColumns != 0 && !nd && (dt != tensor.Float64 || atomics64):
							// (8-byte elements without 64-bit atomics
							// fold in order instead.)
							assert.Equal(t, "walk", path, "%s %v %s", req.Op, dt, red)
						}
					}
				}
			}
		})
	}
}

// TestMinMaxNaNBitsHot: the hot-target fold (scatterHot: workgroup memory
// for the targets its census finds hot, global atomics for the rest)
// gives the CPU reference's NaN bits too, with several NaNs per element:
// 20 elements of 100 updates each, workgroup accumulation off so that the
// plan takes it; the count of global atomics shows the fold happened.
func TestMinMaxNaNBitsHot(t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	b := openTest(t, Options{CountAtomics: true}, knobs.Knobs{NoOrderedSmall: true, NoWorkgroupAccumulation: true})
	for _, dt := range []tensor.DType{tensor.Float16, tensor.BFloat16, tensor.Float32} {
		for _, red := range []string{"min", "max"} {
			req := nanRequest(rng, dt, red, false, 20, 100)
			p, err := ops.Prepare(req)
			require.NoError(t, err)
			got, want := runBoth(t, b, p)
			path := b.LastStats().Reduction
			assert.Contains(t, path, "+hot", "%v %s", dt, red)
			assert.Less(t, b.LastStats().AtomicsIssued, uint64(p.NumUpdates()), "%v %s: the hot targets folded first", dt, red)
			assert.Empty(t, opstest.DiffExact(got, want), "%v %s on %q", dt, red, path)
		}
	}
}
