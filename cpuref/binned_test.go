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
	return &grain{task: 2, run: 2, piece: 1, decode: 64, copy: 64, bigOut: 1 << 40, owned: 4, binOut: 1, bin: 256, binBlock: 6,
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
