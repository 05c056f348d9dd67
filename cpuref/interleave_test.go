package cpuref

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestInterleave2MatchesGo builds rows with the AVX-512 and AVX2 loops and
// the Go loop forced, at every length up to past a few blocks of 16, and
// wants what the definition gives: updates at even places, data at odd
// ones, nothing written past the row.
func TestInterleave2MatchesGo(t *testing.T) {
	seed := int64(20261128)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	modes := []struct {
		name string
		have bool
		g    grain
	}{
		{"avx512", haveRowAVX512, grain{}},
		{"avx2", haveRowAVX2, grain{rowNoAVX512: true}},
		{"go", true, grain{sliceNoAsm: true}},
	}
	for _, m := range modes {
		if !m.have {
			t.Logf("no %s here: its loop is not used", m.name)
			continue
		}
		for n := 0; n <= 70; n++ {
			dat := make([]uint32, n+3)
			u := make([]uint32, (n+1)/2+3)
			for i := range dat {
				dat[i] = rng.Uint32()
			}
			for i := range u {
				u[i] = rng.Uint32()
			}
			want := make([]uint32, n+3)
			for i := range n {
				if i%2 == 0 {
					want[i] = u[i/2]
				} else {
					want[i] = dat[i]
				}
			}
			got := make([]uint32, n+3)
			const guard = 0xdeadbeef
			for i := n; i < len(got); i++ {
				got[i], want[i] = guard, guard
			}
			interleave2(got[:n], dat[:n], u[:(n+1)/2], &m.g)
			require.Equal(t, want, got, "%s, %d elements", m.name, n)
		}
	}
}

// TestSliceScatterRowBuildsMatch runs SliceScatter-15 with a step of 2 on
// a second dimension down the fused path, with rows built by AVX-512, AVX2
// and the Go loop, and with the copy-then-store path, and wants the naive
// result: starts at 0 and 1, stops that leave the last element of a row
// written or not, negative steps along the first dimension, and a slice
// of single elements with a stride of 2 from a merged third dimension.
func TestSliceScatterRowBuildsMatch(t *testing.T) {
	seed := int64(20261129)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	var backends []*Backend
	for _, m := range []struct{ noBuild, noAsm, no512 bool }{{false, false, false}, {false, false, true}, {false, true, false}, {true, false, false}} {
		for _, g := range []grain{*tinyGrain, defaultGrain} {
			g.sliceNoBuild, g.sliceNoAsm, g.rowNoAVX512 = m.noBuild, m.noAsm, m.no512
			backends = append(backends, &Backend{Workers: 2, grain: &g}, &Backend{Workers: 3, grain: &g})
		}
	}
	cases := []struct {
		shape             []int
		start, stop, step []int64
	}{
		{[]int{8, 40}, []int64{0, 0}, []int64{8, 40}, []int64{2, 2}},
		{[]int{9, 41}, []int64{1, 1}, []int64{9, 41}, []int64{2, 2}},
		{[]int{9, 41}, []int64{0, 0}, []int64{9, 41}, []int64{1, 2}},
		{[]int{7, 33}, []int64{6, 3}, []int64{-8, 30}, []int64{-1, 2}},
		{[]int{64, 100}, []int64{2, 1}, []int64{60, 99}, []int64{3, 2}},
		{[]int{40, 5, 2}, []int64{0, 0, 1}, []int64{40, 5, 2}, []int64{1, 1, 1}},
		{[]int{300, 1000}, []int64{0, 0}, []int64{math.MaxInt64, math.MaxInt64}, []int64{2, 2}},
	}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Int32} {
		for _, c := range cases {
			req := ops.Request{Op: "SliceScatter-15", Data: randomBits(rng, dt, c.shape),
				Start: idx([]int{len(c.start)}, c.start...), Stop: idx([]int{len(c.stop)}, c.stop...),
				Step: idx([]int{len(c.step)}, c.step...)}
			ushape := make([]int, len(c.shape))
			for d, n := range c.shape {
				_, ushape[d] = ops.SliceRange(c.start[d], c.stop[d], c.step[d], n)
			}
			req.Updates = randomBits(rng, dt, ushape)
			want, err := opstest.Naive(req)
			require.NoError(t, err)
			for i, b := range backends {
				got, err := ops.Run(context.Background(), b, req)
				require.NoError(t, err)
				require.True(t, tensor.Equal(want, got), "%v %+v, backend %d (%+v)", dt, c, i, *b.grain)
			}
		}
	}
}
