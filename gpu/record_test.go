//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// independentRequest is countsRequest with data and updates varied by k.
func independentRequest(t *testing.T, k int) ops.Request {
	t.Helper()
	req := countsRequest(t)
	data := tensor.View[float32](req.Data)
	for i := range data {
		data[i] = float32(k*1000 + i)
	}
	upd := tensor.View[float32](req.Updates)
	for i := range upd {
		upd[i] += float32(k)
	}
	return req
}

// TestBarriersBatch records a batch of 1000 small ScatterND calls and logs
// the commands and barriers of its sequence: once with every call on
// tensors of its own (in place, and into a separate output, which adds a
// copy), where the calls need not wait for each other, and once with every
// call in place on the same tensors, where each waits for the one before.
// With unified memory the parameters are written and the error words read
// through the parameter buffer's mapping; staged, a copy command does each
// (2 more commands); staged=false stages too on a device without unified
// memory. Every output must be cpuref's, and the validation layer silent.
func TestBarriersBatch(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	ctx := context.Background()
	for _, tc := range []struct {
		mode   string
		staged bool
	}{{"independent in place", false}, {"independent to an output", false}, {"shared in place", false},
		{"independent in place", true}, {"independent to an output", true}, {"shared in place", true}} {
		mode := tc.mode
		t.Run(fmt.Sprintf("%s/staged=%v", mode, tc.staged), func(t *testing.T) {
			b := openTest(t, Options{NoUnifiedMemory: tc.staged})
			if tc.staged {
				require.False(t, b.device().UnifiedMemory())
			}
			ref := cpuref.New()
			bt := b.NewBatch()
			var outs []*Tensor
			var wants []*tensor.Tensor
			var shared Call
			for k := 0; k < n; k++ {
				var c Call
				switch mode {
				case "shared in place":
					if k == 0 {
						shared = residentCall(t, b, countsRequest(t), true)
					}
					c = shared
				default:
					req := independentRequest(t, k)
					c = residentCall(t, b, req, mode == "independent in place")
					want, err := ops.Run(ctx, ref, req)
					require.NoError(t, err)
					outs, wants = append(outs, c.Out), append(wants, want)
				}
				require.NoError(t, bt.Add(c))
			}
			if mode == "shared in place" {
				// The same call n times: a ScatterND that sets rows is
				// idempotent.
				want, err := ops.Run(ctx, ref, countsRequest(t))
				require.NoError(t, err)
				outs, wants = []*Tensor{shared.Out}, []*tensor.Tensor{want}
			}
			sub, err := bt.Submit(ctx)
			require.NoError(t, err)
			cmds, barriers := sub.f.seq.Len(), sub.f.seq.Barriers()
			require.NoError(t, sub.Wait(ctx))
			t.Logf("batch of %d ScatterND calls, %s: %d commands, %d barriers between them", n, mode, cmds, barriers)
			for k, out := range outs {
				require.Empty(t, opstest.DiffExact(download(t, out), wants[k]), "call %d", k)
			}
			switch mode {
			case "shared in place":
				assert.Equal(t, cmds-1, barriers, "each command waits for the one before")
			case "independent in place":
				// The passes of a call stay ordered (a barrier between a
				// call's two dispatches), calls do not wait for each
				// other. Staged, one barrier orders the parameters' copy
				// before the first call, one the error words before
				// their read-back.
				if !b.device().UnifiedMemory() {
					assert.Equal(t, []int{2*n + 2, n + 2}, []int{cmds, barriers})
				} else {
					assert.Equal(t, []int{2 * n, n}, []int{cmds, barriers})
				}
			default:
				// As in place, with each call's copy of data ordered
				// before its first dispatch (staged, that barrier also
				// orders the parameters' copy before the first call).
				if !b.device().UnifiedMemory() {
					assert.Equal(t, []int{3*n + 2, 2*n + 1}, []int{cmds, barriers})
				} else {
					assert.Equal(t, []int{3 * n, 2 * n}, []int{cmds, barriers})
				}
			}
		})
	}
}
