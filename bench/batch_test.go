package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// batchFake is a residentFake that is also a BatchRunner: a batch runs
// the request once per call on the CPU reference and reports made-up
// round trips (2N+1 submits and waits, 2N pieces, as staging would).
type batchFake struct {
	residentFake
	executes, batchCalls *int
}

func (f batchFake) Execute(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error {
	*f.executes++
	return f.fake.Execute(ctx, p, out)
}

func (f batchFake) RunResidentBatch(ctx context.Context, req ops.Request, calls, repeats int, out *tensor.Tensor) ([]time.Duration, error) {
	*f.batchCalls = calls
	return f.RunResident(ctx, req, repeats, out)
}

func (f batchFake) LastRoundTrips() (int, int, int) {
	n := *f.batchCalls
	return 2*n + 1, 2*n + 1, 2 * n
}

// TestBatchWorkload: SND-1000 runs its calls one Execute after the other
// on every backend, as one resident batch on a BatchRunner, and reports
// the batch's round trips and the time per call.
func TestBatchWorkload(t *testing.T) {
	ws, err := Select([]string{"SND-1000"}, 1, 1)
	require.NoError(t, err)
	require.Equal(t, 1000, ws[0].Calls)
	resident, executes, batchCalls := 0, 0, 0
	f := &fake{}
	tgt := gpuTarget(f)
	tgt.Backend = batchFake{residentFake: residentFake{fake: f, calls: &resident}, executes: &executes, batchCalls: &batchCalls}
	opt := testOptions()
	rep, err := Run(context.Background(), []Target{cpuTarget(), tgt}, ws, opt)
	require.NoError(t, err)
	assert.Equal(t, 1000*(1+opt.Repeats), executes, "a warm-up and the timed executions, 1000 calls each")
	assert.Equal(t, 1000, batchCalls)
	assert.Equal(t, 1, resident)
	gpu := rep.Results[1]
	assert.True(t, gpu.Verified)
	assert.Equal(t, 1000, gpu.Calls)
	assert.Equal(t, []int{2001, 2001, 2000}, []int{gpu.Submits, gpu.Waits, gpu.TransferPieces})
	assert.Zero(t, rep.Results[0].Submits, "the CPU has no round trips")
	var b strings.Builder
	require.NoError(t, rep.WriteTable(&b))
	assert.Contains(t, b.String(), "inputs resident on the device: 1000 calls in one batch, 2.000 ms per batch, 0.002 ms per call")
	assert.Contains(t, b.String(), "host round trips per batch: 2001 submits, 2001 waits, 2000 transfer pieces")
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	for _, s := range []string{`"calls":1000`, `"resident_per_call_ms":0.002`, `"submits":2001`, `"waits":2001`, `"transfer_pieces":2000`, `"per_call_ms":`} {
		assert.Contains(t, string(js), s)
	}
}
