//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
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
// ScatterND. It uploads data, indices, updates and the parameter buffer
// (4 pieces), downloads the error word and the output (2 pieces): 6
// pieces. With unified memory they are plain copies and the call is
// 1 submission and 1 wait; with staging each piece is a submission and a
// wait of its own: 1+6 = 7 of each.
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
			const pieces = 6
			want := roundTrips{1, 1, pieces}
			if staged {
				want = roundTrips{1 + pieces, 1 + pieces, pieces}
			}
			assert.Equal(t, want, got)
		})
	}
}

// TestCountsBatch pins the host round trips of a resident batch of N
// calls on inputs already on the device. Each call uploads its parameter
// buffer before the batch is submitted and downloads its error word after
// it: 2N transfer pieces. With unified memory they are plain copies: 1
// submission and 1 wait whatever N is. With staging each piece is a
// submission and a wait of its own: 2N+1 of each.
func TestCountsBatch(t *testing.T) {
	for _, staged := range []bool{false, true} {
		b := openTest(t, Options{NoUnifiedMemory: staged})
		req := countsRequest(t)
		c := residentCall(t, b, req, true)
		for _, n := range []int{1, 4, 16} {
			t.Run(fmt.Sprintf("staged=%v/N=%d", staged, n), func(t *testing.T) {
				bt := b.NewBatch()
				for i := 0; i < n; i++ {
					require.NoError(t, bt.Add(c))
				}
				require.NoError(t, bt.Submit(context.Background()))
				got := tripsOf(b.LastStats())
				t.Logf("batch of %d: %+v", n, got)
				want := roundTrips{1, 1, 2 * n}
				if staged {
					want = roundTrips{2*n + 1, 2*n + 1, 2 * n}
				}
				assert.Equal(t, want, got)
			})
		}
	}
}

// TestCountsResidentBatch1000 runs the bench's resident batch of 1000
// small calls (RunResidentBatch) and pins its round trips by the formula
// of TestCountsBatch: 1 submit and 1 wait with unified memory, 2N+1 with
// staging, and 2N transfer pieces either way; it logs the time per call.
func TestCountsResidentBatch1000(t *testing.T) {
	const n = 1000
	for _, staged := range []bool{false, true} {
		t.Run(fmt.Sprintf("staged=%v", staged), func(t *testing.T) {
			b := openTest(t, Options{NoUnifiedMemory: staged})
			req := countsRequest(t)
			out, err := tensor.New(req.Data.DType, req.Data.Shape)
			require.NoError(t, err)
			times, err := b.RunResidentBatch(context.Background(), req, n, 2, out)
			require.NoError(t, err)
			require.Len(t, times, 2)
			s, w, p := b.LastRoundTrips()
			got := roundTrips{s, w, p}
			t.Logf("batch of %d: %+v, %v per call", n, got, times[1]/n)
			want := roundTrips{1, 1, 2 * n}
			if staged {
				want = roundTrips{2*n + 1, 2*n + 1, 2 * n}
			}
			assert.Equal(t, want, got)
		})
	}
}
