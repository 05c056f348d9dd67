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

// countsRequest is a small ScatterND-18 call: f32 data [64, 4], 4 index
// tuples, each updating one row.
func countsRequest(t *testing.T) ops.Request {
	t.Helper()
	data, err := tensor.New(tensor.Float32, []int{64, 4})
	require.NoError(t, err)
	idx, err := tensor.FromSlice([]int{4, 1}, []int64{3, 17, 40, 63})
	require.NoError(t, err)
	upd, err := tensor.FromSlice([]int{4, 4}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	require.NoError(t, err)
	return ops.Request{Op: "ScatterND-18", Data: data, Indices: idx, Updates: upd}
}

// roundTrips are the counts of a Stats.
type roundTrips struct{ submits, waits, pieces int }

func tripsOf(s Stats) roundTrips { return roundTrips{s.Submits, s.Waits, s.TransferPieces} }

// TestCountsExecute pins the host round trips of one Execute of a small
// ScatterND. It copies data, indices and updates to the device (3 pieces),
// the parameters into the submission's memory (1), reads back the error
// word (1) and the output (1): 6 pieces, and 1 submission and 1 wait. With
// unified memory the inputs and output are copies through the buffers'
// mappings; with staging they travel in the call's submission.
func TestCountsExecute(t *testing.T) {
	for _, staged := range []bool{false, true} {
		t.Run(fmt.Sprintf("staged=%v", staged), func(t *testing.T) {
			b := openTest(t, Options{NoUnifiedMemory: staged})
			req := countsRequest(t)
			p, err := ops.Prepare(req)
			require.NoError(t, err)
			out, err := tensor.New(p.DType, p.Shape)
			require.NoError(t, err)
			require.NoError(t, b.Execute(context.Background(), p, out))
			got := tripsOf(b.LastStats())
			t.Logf("Execute: %+v", got)
			assert.Equal(t, roundTrips{1, 1, 6}, got)
			assert.Empty(t, opstest.DiffExact(out, cpuResult(t, req)))
		})
	}
}

// TestCountsBatch pins the host round trips of a resident batch of N
// calls on inputs already on the device: the parameters of every call go
// into the submission's memory at once and the error words come back in
// it, so the batch is 1 submission, 1 wait and 2 transfer pieces whatever
// N is, with unified memory and with staging alike. Submit itself waits on
// no fence: the wait is Wait's.
func TestCountsBatch(t *testing.T) {
	for _, staged := range []bool{false, true} {
		b := openTest(t, Options{NoUnifiedMemory: staged})
		req := countsRequest(t)
		c := residentCall(t, b, req, true)
		for _, n := range []int{1, 4, 16, 300} {
			t.Run(fmt.Sprintf("staged=%v/N=%d", staged, n), func(t *testing.T) {
				bt := b.NewBatch()
				for i := 0; i < n; i++ {
					require.NoError(t, bt.Add(c))
				}
				before := b.dev.Counters()
				sub, err := bt.Submit(context.Background())
				require.NoError(t, err)
				atSubmit := b.dev.Counters().Sub(before)
				assert.Equal(t, roundTrips{1, 0, 1}, roundTrips{int(atSubmit.Submits), int(atSubmit.Waits), int(atSubmit.TransferPieces)},
					"Submit: one submission, no wait, the parameters")
				require.NoError(t, sub.Wait(context.Background()))
				got := tripsOf(sub.Stats())
				t.Logf("batch of %d: %+v", n, got)
				assert.Equal(t, roundTrips{1, 1, 2}, got)
				assert.Equal(t, got, tripsOf(b.LastStats()))
			})
		}
	}
}

// cpuResult returns the CPU reference's result of req.
func cpuResult(t *testing.T, req ops.Request) *tensor.Tensor {
	t.Helper()
	want, err := ops.Run(context.Background(), cpuref.New(), req)
	require.NoError(t, err)
	return want
}
