//go:build cgo

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
)

// TestStreamedRunOverTheBudget: on a device with less memory free than the
// call needs (a budget of one byte), the streamed path declines the run
// before it reads any input into device memory (gpu.Backend.CheckResident),
// and run --backend gpu then fails it with the memory refusal and exit
// status 1, leaving no output.
func TestStreamedRunOverTheBudget(t *testing.T) {
	fx := newFixture(t)
	out := filepath.Join(fx.dir, "out.npy")
	args := []string{"run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"),
		"--updates", fx.f("updates"), "--out", out, "--backend", "gpu"}
	n := streamedRuns.Load()
	code, _, stderr := runCLI(t, args...)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, int64(1), streamedRuns.Load()-n, "within the device's memory, the run streams")
	require.NoError(t, os.Remove(out))

	saved := newGPUBackend
	t.Cleanup(func() { newGPUBackend = saved })
	newGPUBackend = func(ctx context.Context, s gpuSettings, oneCall bool) (ops.Backend, error) {
		return knobs.Open[gpu.Options, *gpu.Backend](testGPUOptions(t, gpu.Options{MaxPoolBytes: -1}), knobs.Knobs{MemoryBudget: 1})
	}
	n = streamedRuns.Load()
	code, _, stderr = runCLI(t, args...)
	assert.Equal(t, 1, code, stderr)
	assert.Regexp(t, `ScatterNDUpdate-15: vulkan: needs \d+ MiB of device memory; the device has 0 MiB free\n$`, stderr)
	assert.Equal(t, int64(0), streamedRuns.Load()-n, "the streamed path declines the run")
	_, err := os.Stat(out)
	require.ErrorIs(t, err, os.ErrNotExist, "no output")
}
