package cpuref

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// roundsGrain bins every output and runs binned scatters in rounds of
// round units (in bins of 1 KiB, else of 256 bytes), with the assembly
// loops where they apply (blocks of 64).
func roundsGrain(round int) *grain {
	return &grain{task: 2, run: 2, piece: 1, decode: 64, copy: 64, bigOut: 1 << 40, owned: 4, binOut: 1, fold: foldForceBinned, bin: 256, binBlock: 6,
		binRound: round, binRoundOut: 1 << 40, binRoundBin: 1024}
}

// TestBinnedRoundsLeaveOutUntouched: in rounds, out is written only once
// every round is done. A bad index in a late round (the first of several
// named, as without rounds), a stop while the rounds run, and in place.
func TestBinnedRoundsLeaveOutUntouched(t *testing.T) {
	seed := int64(20261127)
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	const s, n = 1000, 1 << 16
	data := orderTensor(rng, tensor.Float32, []int{s}, true)
	upd := orderTensor(rng, tensor.Float32, []int{n}, true)
	ix, err := tensor.New(tensor.Int32, []int{n})
	require.NoError(t, err)
	for i := range n {
		tensor.View[int32](ix)[i] = int32(rng.Intn(2*s) - s)
	}
	rounds := &Backend{Workers: 3, grain: roundsGrain(1000)}
	onePass := &Backend{Workers: 3, grain: roundsGrain(0)}
	for _, red := range []string{"add", "max"} {
		req := ops.Request{Op: "ScatterElements-18", Reduction: red, Data: data, Indices: ix, Updates: upd}
		p, err := ops.Prepare(req)
		require.NoError(t, err)
		want, err := tensor.New(p.DType, p.Shape)
		require.NoError(t, err)
		require.NoError(t, onePass.Execute(context.Background(), p, want))
		require.Greater(t, (&exec{g: *rounds.grain, p: p, out: want}).binRounds(n), 1, "the plan goes in rounds")

		// In place, the same bits.
		inPlace := data.Clone()
		pp := *p
		pp.Data = inPlace
		require.NoError(t, rounds.Execute(context.Background(), &pp, inPlace))
		require.Empty(t, opstest.DiffExact(inPlace, want), red)

		// Bad indices in late rounds.
		for _, at := range [][]int{{n - 1}, {n / 2, n - 3}, {40000, 39999 + 1000}} {
			bad := ix.Clone()
			for _, a := range at {
				tensor.View[int32](bad)[a] = s + int32(a%7)
			}
			breq := req
			breq.Indices = bad
			bp, err := ops.Prepare(breq)
			require.NoError(t, err)
			name := fmt.Sprintf("%s bad at %v", red, at)
			wantErr := onePass.Execute(context.Background(), bp, want.Clone())
			require.ErrorIs(t, wantErr, ops.ErrIndexRange, name)
			out, err := tensor.New(bp.DType, bp.Shape)
			require.NoError(t, err)
			for i := range out.Data {
				out.Data[i] = 0x5a
			}
			before := out.Clone()
			err = rounds.Execute(context.Background(), bp, out)
			require.Error(t, err, name)
			require.Equal(t, wantErr.Error(), err.Error(), name)
			require.True(t, tensor.Equal(before, out), "%s: out was written", name)
		}

		// Stopped while the rounds run: the whole result, or out as it was.
		for _, delay := range []time.Duration{0, 20 * time.Microsecond, 200 * time.Microsecond, 2 * time.Millisecond} {
			ctx, cancel := context.WithCancel(context.Background())
			out, err := tensor.New(p.DType, p.Shape)
			require.NoError(t, err)
			before := out.Clone()
			go func() {
				time.Sleep(delay)
				cancel()
			}()
			err = rounds.Execute(ctx, p, out)
			if err == nil {
				require.Empty(t, opstest.DiffExact(out, want), "%s stop after %v", red, delay)
			} else {
				require.ErrorIs(t, err, context.Canceled)
				require.True(t, tensor.Equal(before, out), "%s stop after %v: out was written", red, delay)
			}
			cancel()
		}
	}
}

// TestPlanBinsPerWorker: a binned plan has bins of at most the bin size
// (g.bin, or g.binRoundBin in rounds) and at least two per worker where
// out allows, and no bins smaller than that needs: doubling the bins'
// size would break one of the two. An output of a power of two elements
// split into exactly two bins per worker keeps those bins (SE-sum-dup,
// 16M float32 updates into 1M, on two workers: four bins of 1 MiB).
func TestPlanBinsPerWorker(t *testing.T) {
	const mi = 1 << 20
	cases := []struct {
		name     string
		dt       tensor.DType
		red      ops.Reduction
		out, upd int
		w        int
		bins     int
	}{
		{"SE-sum-dup, 1 worker", tensor.Float32, ops.Sum, mi, 16 * mi, 1, 4},
		{"SE-sum-dup, 2 workers", tensor.Float32, ops.Sum, mi, 16 * mi, 2, 4},
		{"SE-sum-dup, 3 workers", tensor.Float32, ops.Sum, mi, 16 * mi, 3, 8},
		{"SE-sum-dup, 4 workers", tensor.Float32, ops.Sum, mi, 16 * mi, 4, 8},
		{"SE-sum-dup, 5 workers", tensor.Float32, ops.Sum, mi, 16 * mi, 5, 16},
		{"1M+1 elements, 2 workers", tensor.Float32, ops.Sum, mi + 1, 16 * mi, 2, 5},
		{"SND-max-i32, 2 workers", tensor.Int32, ops.Max, 4 * mi, 8 * mi, 2, 32},
		{"SND-max-i32, 16 workers", tensor.Int32, ops.Max, 4 * mi, 8 * mi, 16, 32},
		{"SND-max-i32, 17 workers", tensor.Int32, ops.Max, 4 * mi, 8 * mi, 17, 64},
		{"mean, no rounds, 2 workers", tensor.Float32, ops.Mean, mi, 16 * mi, 2, 8},
		{"small out, 2 workers", tensor.Int64, ops.Sum, 1 << 19, 1 << 21, 2, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &ops.Plan{Kind: ops.KindElements, Reduction: c.red, UseInitVal: true, DType: c.dt,
				Outer: 1, J: c.upd, Inner: 1, Shape: []int{c.out}}
			// Rounds are off by default (grain.binRound); these cases
			// plan with them on, as a caller that sets the grain does.
			g := defaultGrain
			g.binRound = 256 << 10
			x := &exec{g: g, p: p, w: c.w, out: &tensor.Tensor{DType: c.dt, Shape: []int{c.out}}}
			require.True(t, x.planBins(), "the plan runs binned")
			nb := (c.out-1)>>x.binShift + 1
			require.Equal(t, c.bins, nb, "bins (shift %d)", x.binShift)
			bin := x.g.bin
			if x.binRounds(x.binUnits()) > 1 {
				bin = x.g.binRoundBin
			}
			size := c.dt.Size() << x.binShift
			require.LessOrEqual(t, size, bin, "a bin's bytes")
			require.True(t, 2*size > bin || (c.out-1)>>(x.binShift+1)+1 < 2*c.w,
				"bins of twice the size would do: %d bytes, %d bins for %d workers", size, nb, c.w)
		})
	}
}
