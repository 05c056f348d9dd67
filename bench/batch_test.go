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
	assert.Contains(t, b.String(), "inputs resident on the device: 1000 calls in one batch, 2.000 ms per batch, 0.0020 ms per call")
	assert.Contains(t, b.String(), "host round trips per batch: 2001 submits, 2001 waits, 2000 transfer pieces")
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	for _, s := range []string{`"calls":1000`, `"resident_per_call_ms":0.002`, `"submits":2001`, `"waits":2001`, `"transfer_pieces":2000`, `"per_call_ms":`} {
		assert.Contains(t, string(js), s)
	}
}

// stepFake is a batchFake that is also a StepRunner: it runs the decode
// steps in place on a copy of data on the CPU reference, in order, or
// (skip) leaves the last one out, and reports one submit and one wait.
type stepFake struct {
	batchFake
	steps *int
	skip  bool
}

func (f stepFake) RunResidentSteps(ctx context.Context, req ops.Request, steps []*tensor.Tensor, repeats int, out *tensor.Tensor) ([]time.Duration, error) {
	*f.steps = len(steps)
	copy(out.Data, req.Data.Data)
	n := len(steps)
	if f.skip {
		n--
	}
	for _, idx := range steps[:n] {
		p, err := ops.Prepare(ops.Request{Op: req.Op, Mode: req.Mode, Data: out, Indices: idx, Updates: req.Updates})
		if err != nil {
			return nil, err
		}
		if err := f.fake.Execute(ctx, p, out); err != nil {
			return nil, err
		}
	}
	times := fakeTimes(repeats)
	*f.batchCalls = 1
	return times, nil
}

func (f stepFake) LastRoundTrips() (int, int, int) { return 1, 1, 2 }

// TestDecodeWorkload: KV-decode runs its 1000 steps in place, call i with
// the write indices advanced by i, on the CPU one Execute after the other
// and on a StepRunner as one resident batch alone (no Execute, no batch of
// identical calls); the batch's result is verified against the CPU's, so
// a step left out fails it; the JSON reports the time per step, the round
// trips and the plan traffic of one step.
func TestDecodeWorkload(t *testing.T) {
	ws, err := Select([]string{"kv-decode"}, QuickScale, 1)
	require.NoError(t, err)
	w := ws[0]
	require.True(t, w.Decode)
	require.Equal(t, []int{1, 32, 4096, 128}, w.DataShape, "--scale shrinks the batch of sequences only")
	req, err := w.Request()
	require.NoError(t, err)
	assert.Equal(t, "circular", req.Mode)
	steps := w.StepIndices(req)
	require.Len(t, steps, 1000)
	for i, s := range steps {
		require.Equal(t, tensor.View[int64](req.Indices)[0]+int64(i), tensor.View[int64](s)[0])
	}
	for _, skip := range []bool{false, true} {
		resident, executes, batchCalls, stepCalls := 0, 0, 0, 0
		f := &fake{}
		tgt := gpuTarget(f)
		tgt.Backend = stepFake{batchFake: batchFake{residentFake: residentFake{fake: f, calls: &resident}, executes: &executes, batchCalls: &batchCalls},
			steps: &stepCalls, skip: skip}
		rep, err := Run(context.Background(), []Target{cpuTarget(), tgt}, ws, testOptions())
		require.NoError(t, err)
		assert.Zero(t, executes, "no Execute per step on the device")
		assert.Zero(t, resident, "no RunResident")
		assert.Equal(t, 1, batchCalls, "RunResidentSteps, not RunResidentBatch")
		assert.Equal(t, 1000, stepCalls)
		cpu, gpu := rep.Results[0], rep.Results[1]
		assert.True(t, cpu.Verified)
		assert.Equal(t, !skip, gpu.Verified, "skip=%v", skip)
		if skip {
			continue
		}
		assert.Equal(t, []int{1, 1, 2}, []int{gpu.Submits, gpu.Waits, gpu.TransferPieces})
		assert.Equal(t, 2*time.Millisecond, gpu.Median)
		assert.Equal(t, gpu.Median, gpu.ResidentTime)
		assert.Equal(t, int64(1000*(3*32*128*2+8)), gpu.Bytes, "in place: the one-pass bytes, each token read, its target read and written, its write index read")
		js, err := json.Marshal(rep)
		require.NoError(t, err)
		for _, s := range []string{`"calls":1000`, `"resident_per_call_ms":0.002`, `"per_call_ms":0.002`, `"submits":1`, `"waits":1`} {
			assert.Contains(t, string(js), s)
		}
	}
}
