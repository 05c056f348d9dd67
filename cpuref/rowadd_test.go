package cpuref

import (
	"context"
	"math"
	"math/rand"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// rowBits returns n float32 values whose bits cover the cases where an
// addition could tell two loops apart: NaNs with different payloads,
// infinities, signed zeros, subnormals and ordinary values.
func rowBits(rng *rand.Rand, n int) []float32 {
	special := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), 0, negZero32(),
		math.Float32frombits(1), math.Float32frombits(0x807fffff), math.MaxFloat32, -math.MaxFloat32}
	v := make([]float32, n)
	for i := range v {
		switch rng.Intn(8) {
		case 0:
			v[i] = math.Float32frombits(0x7f800001 | rng.Uint32()&0x807fffff) // NaN, any sign and payload
		case 1:
			v[i] = special[rng.Intn(len(special))]
		default:
			v[i] = float32(rng.NormFloat64()) * float32(math.Pow(2, float64(rng.Intn(40)-20)))
		}
	}
	return v
}

// TestRowAddMatchesGo calls the assembly row adds (AVX-512 and AVX2)
// directly and wants the Go loop's bits: row widths that leave every
// tail (16, 8 and single columns), batches shorter and longer than the
// prefetch distance, rows hit repeatedly within a batch, and values with
// NaN payloads, infinities, signed zeros and subnormals.
func TestRowAddMatchesGo(t *testing.T) {
	type impl struct {
		name string
		have bool
		f    func(out, upd, dst, src unsafe.Pointer, n, inner int)
	}
	impls := []impl{{"avx512", haveRowAVX512, addRowsAVX512}, {"avx2", haveRowAVX2, addRowsAVX2}}
	seed := int64(20261126)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for _, im := range impls {
		if !im.have {
			t.Logf("no %s here: its loop is not used", im.name)
			continue
		}
		for _, inner := range []int{1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 100} {
			for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 64, 500} {
				rows, jn := 1+rng.Intn(2*n+1), n+rng.Intn(5)
				out0 := rowBits(rng, rows*inner)
				upd := rowBits(rng, jn*inner)
				dst, src := make([]int32, n), make([]int32, n)
				for i := range dst {
					dst[i], src[i] = int32(rng.Intn(rows)), int32(rng.Intn(jn))
				}
				want := append([]float32(nil), out0...)
				sumRowsGo(want, upd, dst, src, inner)
				got := append([]float32(nil), out0...)
				updCopy := append([]float32(nil), upd...)
				if n > 0 {
					im.f(unsafe.Pointer(&got[0]), unsafe.Pointer(&upd[0]), unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), n, inner)
				}
				require.Equal(t, f32Bits(want), f32Bits(got), "%s, inner %d, %d rows", im.name, inner, n)
				require.Equal(t, f32Bits(updCopy), f32Bits(upd), "%s changed the updates", im.name)
			}
		}
	}
}

func f32Bits(v []float32) []uint32 {
	b := make([]uint32, len(v))
	for i, x := range v {
		b[i] = math.Float32bits(x)
	}
	return b
}

// TestBatchedRowAddsMatch runs float32 ScatterND sums onto slices down the
// owned and grouped paths with the assembly row adds (AVX-512, AVX2 alone)
// and the Go loop forced, at tiny and default grains (batches of a few
// rows, and of ownedChunk), and wants the bits of the serial backend,
// which folds row by row without batches.
func TestBatchedRowAddsMatch(t *testing.T) {
	seed := int64(20261127)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	var tiny, def []*Backend // tiny grains, and the default ones (large cases only)
	grouped := grain{task: 2, run: 1 << 20, piece: 1, decode: 3, copy: 8, bucket: 64}
	for _, g := range []grain{*tinyGrain, grouped, defaultGrain} {
		for _, mode := range []struct{ noAsm, no512 bool }{{false, false}, {false, true}, {true, false}} {
			g := g
			g.rowNoAsm, g.rowNoAVX512 = mode.noAsm, mode.no512
			bs := []*Backend{{Workers: 2, grain: &g}, {Workers: 3, grain: &g}}
			if g.task == tinyGrain.task {
				tiny = append(tiny, bs...)
			} else {
				def = append(def, bs...)
			}
		}
	}
	for _, c := range []struct{ rows, inner, n int }{{5, 3, 20}, {64, 16, 300}, {1000, 16, 5000}, {4096, 17, 9000},
		{3000, 8, 2500}, {100, 40, 100}, {1 << 14, 16, 1 << 14}} {
		backends := tiny
		if c.n*c.inner >= 1<<17 {
			backends = append(backends, def...)
		}
		data := tensor.MustFromSlice([]int{c.rows, c.inner}, rowBits(rng, c.rows*c.inner))
		upd := tensor.MustFromSlice([]int{c.n, c.inner}, rowBits(rng, c.n*c.inner))
		ind := make([]int64, c.n)
		for i := range ind {
			ind[i] = int64(rng.Intn(c.rows))
		}
		req := ops.Request{Op: "ScatterND-18", Reduction: "add", Data: data, Indices: idx([]int{c.n, 1}, ind...), Updates: upd}
		p, err := ops.Prepare(req)
		require.NoError(t, err)
		want, err := ops.Run(context.Background(), &Backend{Workers: 1}, req)
		require.NoError(t, err)
		for i, b := range backends {
			x := &exec{g: *b.grain, p: p, w: b.Workers, out: want}
			if b.grain.owned > 0 {
				require.True(t, x.planOwned(), "case %+v, backend %d runs owned", c, i)
			} else {
				require.True(t, x.planGroups(), "case %+v, backend %d runs grouped", c, i)
			}
			got, err := ops.Run(context.Background(), b, req)
			require.NoError(t, err)
			require.Equal(t, f32Bits(tensor.View[float32](want)), f32Bits(tensor.View[float32](got)),
				"case %+v, backend %d (%+v)", c, i, *b.grain)
		}
	}
}
