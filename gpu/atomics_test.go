//go:build cgo

package gpu

import (
	"context"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestCountAtomics: with Options.CountAtomics an Execute reports the
// global atomics its reduction issued and the most on one element. On
// power-law targets the global atomics take one per update, the hottest
// target's count exactly; folding the hot targets in workgroup memory
// first issues far fewer, at most an eighth of the hottest target's
// updates on any element, with the same (exact, int32) result. Without
// the option the counts are 0.
func TestCountAtomics(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(5))
	req := opstest.SkewedRequest(rng, "ScatterElementsUpdate-12", tensor.Int32, "sum", 20000, 200000, 1.1, nil)
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	want, err := ops.Run(ctx, cpuref.New(), req)
	require.NoError(t, err)
	hits := map[int64]uint64{}
	for i := 0; i < req.Indices.Len(); i++ {
		v, _ := req.Indices.IntAt(i)
		if v < 0 {
			v += 20000
		}
		hits[v]++
	}
	var hottest uint64
	for _, n := range hits {
		hottest = max(hottest, n)
	}

	run := func(b *Backend) Stats {
		out, _ := tensor.New(p.DType, p.Shape)
		require.NoError(t, b.Execute(ctx, p, out))
		assert.Empty(t, opstest.DiffExact(out, want))
		return b.LastStats()
	}
	global := run(openTest(t, Options{CountAtomics: true}, knobs.Knobs{NoHotKeys: true}))
	assert.Equal(t, "native", global.Reduction)
	assert.Equal(t, uint64(p.NumUpdates()), global.AtomicsIssued, "one per update")
	assert.Equal(t, hottest, global.AtomicsMaxAddress, "the hottest target's updates")

	hot := run(openTest(t, Options{CountAtomics: true}))
	assert.Equal(t, "native+hot", hot.Reduction)
	t.Logf("%d updates, the hottest target takes %d: global atomics %d (most on one element %d); with hot targets folded %d (%d)",
		p.NumUpdates(), hottest, global.AtomicsIssued, global.AtomicsMaxAddress, hot.AtomicsIssued, hot.AtomicsMaxAddress)
	assert.Less(t, hot.AtomicsIssued, global.AtomicsIssued)
	assert.LessOrEqual(t, 8*hot.AtomicsMaxAddress, hottest)

	off := run(openTest(t, Options{}))
	assert.Zero(t, off.AtomicsIssued)
	assert.Zero(t, off.AtomicsMaxAddress)
}
