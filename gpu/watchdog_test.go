//go:build cgo

package gpu

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// TestLongBatchShortTimeout: the device timeout bounds a pass that makes
// no progress, not a batch. A batch of in-place ScatterND-18 int32 adds
// that runs several timeouts in all, each pass well within one, completes
// with the CPU reference's result.
func TestLongBatchShortTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	b := openTest(t, Options{DeviceTimeout: timeout})
	ctx := context.Background()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	const rows, cols, n = 2000, 16, 1024
	data := make([]int32, rows*cols)
	for i := range data {
		data[i] = int32(rng.Intn(1000))
	}
	idx := make([]int64, n)
	for i := range idx {
		idx[i] = int64(rng.Intn(2*rows) - rows) // negative ones too, and duplicates
	}
	upd := make([]int32, n*cols)
	for i := range upd {
		upd[i] = int32(rng.Intn(100) - 50)
	}
	hostData := tensor.MustFromSlice([]int{rows, cols}, data)
	hostIdx := tensor.MustFromSlice([]int{n, 1}, idx)
	hostUpd := tensor.MustFromSlice([]int{n, cols}, upd)
	dt, err := b.Upload(ctx, hostData)
	require.NoError(t, err)
	it, err := b.Upload(ctx, hostIdx)
	require.NoError(t, err)
	ut, err := b.Upload(ctx, hostUpd)
	require.NoError(t, err)
	call := Call{Op: "ScatterND-18", Reduction: "add", Data: dt, Out: dt, Indices: it, Updates: ut}
	run := func(calls int) time.Duration {
		bt := b.NewBatch()
		for i := 0; i < calls; i++ {
			require.NoError(t, bt.Add(call))
		}
		start := time.Now()
		sub, err := bt.Submit(ctx)
		require.NoError(t, err)
		require.NoError(t, sub.Wait(ctx), "a batch of %d calls", calls)
		return time.Since(start)
	}
	// Enough calls for about four timeouts on this device.
	probe := 32
	run(probe) // compiles the pipelines
	one := run(probe)
	calls := min(int(float64(probe)*float64(4*timeout)/float64(one))+1, 8000)
	took := run(calls)
	t.Logf("%d calls took %v (%d took %v) under a %v timeout", calls, took, probe, one, timeout)
	if b.dev.Info().Type == vk.DeviceCPU {
		require.Greater(t, took, 2*timeout, "the batch outlasts the timeout")
	}

	got, err := dt.Download(ctx)
	require.NoError(t, err)
	want := hostData
	for i := 0; i < 2*probe+calls; i++ {
		want, err = ops.Run(ctx, cpuref.New(), ops.Request{Op: "ScatterND-18", Reduction: "add", Data: want, Indices: hostIdx, Updates: hostUpd})
		require.NoError(t, err)
	}
	assert.Equal(t, tensor.View[int32](want), tensor.View[int32](got))
}
