package cpuref

import (
	"context"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
)

// TestParallelPathsMatchNaive runs random requests through the backends of
// testBackends, whose tiny grains send even small tensors down every
// parallel path (ranges of o, j and k, groups by target, split copies,
// every update of ScatterUpdate-3 or only the last writers), and compares
// each result with the naive reference.
func TestParallelPathsMatchNaive(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	cfgs := []opstest.Config{{}, {MaxElements: 4000, MaxDim: 40, MaxRank: 3}, {MaxElements: 30000, MaxDim: 300, MaxRank: 2}}
	for ci, cfg := range cfgs {
		seed := int64(1000 + ci)
		rng := rand.New(rand.NewSource(seed))
		for i := range n {
			req := opstest.RandomRequest(rng, cfg)
			want, werr := opstest.Naive(req)
			for _, tb := range testBackends {
				got, err := ops.Run(context.Background(), tb.b, req)
				if werr != nil {
					require.EqualError(t, err, werr.Error(), "seed %d, case %d, backend %s\n%s", seed, i, tb.name, opstest.Describe(req))
					continue
				}
				require.NoError(t, err, "seed %d, case %d, backend %s\n%s", seed, i, tb.name, opstest.Describe(req))
				if d := opstest.DiffFor(opstest.ReductionOf(req), got, want); d != "" {
					t.Fatalf("seed %d, case %d, backend %s: %s\n%s", seed, i, tb.name, d, opstest.Describe(req))
				}
			}
		}
	}
}
