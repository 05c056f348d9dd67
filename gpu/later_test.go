//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestLastUpdateWinsEitherSideOfLaterMax: ScatterNDUpdate-15 and
// ScatterElements-18 with many colliding updates give cpuref's result
// with J = laterMax (each update looks at the later indices, no owner
// words) and J = laterMax+1 (the last-writer table, or owner words where
// the table is off).
func TestLastUpdateWinsEitherSideOfLaterMax(t *testing.T) {
	seed := rand.Int63()
	r := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	for _, noTable := range []bool{false, true} {
		b := openTest(t, Options{})
		b.noTable = noTable
		for _, J := range []int{laterMax, laterMax + 1} {
			for _, op := range []string{"ScatterNDUpdate-15", "ScatterElements-18"} {
				t.Run(fmt.Sprintf("%s/J=%d/noTable=%v", op, J, noTable), func(t *testing.T) {
					// More outputs than updates: ScatterNDUpdate scatters
					// (with more updates it gathers, and claims owner words).
					data := tensor.MustFromSlice([]int{200, 3}, make([]int32, 600))
					var req ops.Request
					if op == "ScatterNDUpdate-15" {
						idx := make([]int64, J)
						for i := range idx {
							idx[i] = int64(r.Intn(20)) - 10 // negative counts from the end
						}
						upd := make([]int32, 3*J)
						for i := range upd {
							upd[i] = int32(i + 1)
						}
						req = ops.Request{Op: op, Data: data, Indices: tensor.MustFromSlice([]int{J, 1}, idx), Updates: tensor.MustFromSlice([]int{J, 3}, upd)}
					} else {
						idx := make([]int64, 2*J)
						for i := range idx {
							idx[i] = int64(r.Intn(3))
						}
						upd := make([]int32, 2*J)
						for i := range upd {
							upd[i] = int32(i + 1)
						}
						req = ops.Request{Op: op, Data: data, Indices: tensor.MustFromSlice([]int{2, J}, idx), Updates: tensor.MustFromSlice([]int{2, J}, upd),
							Axis: tensor.Scalar(int64(1))}
					}
					p, err := ops.Prepare(req)
					require.NoError(t, err)
					j := jobOf(t, b, req)
					if J <= laterMax {
						// The scatter is charged for the later indices each
						// update reads: J*(J-1)/2 words per row of updates.
						f := b.facts(true)
						pl, err := f.planCall(p)
						require.NoError(t, err)
						var scatter *pass
						for i := range pl.passes {
							if pl.passes[i].label == "scatter" {
								scatter = &pl.passes[i]
							}
						}
						require.NotNil(t, scatter)
						rows := j.updates / uint64(J)
						assert.Equal(t, j.updates*uint64(j.elemBytes)+4*j.resolve+4*rows*uint64(J*(J-1)/2), scatter.read)
					}
					assert.Equal(t, J <= laterMax, j.flags&flagLater != 0, "FLAG_LATER")
					assert.Equal(t, J <= laterMax || !noTable, j.owners == 0, "no owner words")
					assert.Equal(t, J > laterMax && !noTable, j.flags&flagTable != 0, "FLAG_TABLE")
					got, err := tensor.New(p.DType, p.Shape)
					require.NoError(t, err)
					require.NoError(t, b.Execute(context.Background(), p, got))
					want, err := tensor.New(p.DType, p.Shape)
					require.NoError(t, err)
					require.NoError(t, cpuref.New().Execute(context.Background(), p, want))
					assert.Equal(t, want.Data, got.Data, "seed %d", seed)
				})
			}
		}
	}
}
