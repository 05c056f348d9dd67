package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// smallDeviceGPU is a GPU backend whose device has too little memory for
// any plan: it refuses each before any work, as gpu.Backend does.
type smallDeviceGPU struct{ runs *int }

func (g smallDeviceGPU) Name() string { return "vulkan: fake small device" }

func (g smallDeviceGPU) Execute(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error {
	*g.runs++
	return &ops.Error{Op: p.Op.Name, Input: "data", Err: ops.ErrOutOfMemory,
		Msg: "vulkan: needs 3 MiB of device memory; the device has 2 MiB free"}
}

func (g smallDeviceGPU) Close() error { return nil }

// TestAutoRunsOnTheCPUWhenThePlanDoesNotFit: a plan the device has no
// memory for fails --backend gpu with the device's message, and runs on
// the CPU under --backend auto with a one-line notice.
func TestAutoRunsOnTheCPUWhenThePlanDoesNotFit(t *testing.T) {
	var runs int
	withGPU(t, func(context.Context) (ops.Backend, error) { return smallDeviceGPU{&runs}, nil })
	fx := newFixture(t)
	args := func(out, backend string) []string {
		return []string{"run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"),
			"--updates", fx.f("updates"), "--out", out, "--backend", backend}
	}
	out := filepath.Join(t.TempDir(), "out.npy")
	code, _, stderr := runCLI(t, args(out, "auto")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, 1, runs, "the device was asked first")
	assert.Equal(t, prefix+"--backend auto: ScatterNDUpdate-15: vulkan: needs 3 MiB of device memory; the device has 2 MiB free; ran ScatterNDUpdate-15 on the CPU\n", stderr)
	want, err := cpuref.Run(ops.Request{Op: "ScatterNDUpdate-15", Data: readNPY(t, fx.f("data")),
		Indices: readNPY(t, fx.f("indices")), Updates: readNPY(t, fx.f("updates"))})
	require.NoError(t, err)
	requireEqualTensor(t, want, readNPY(t, out))

	out = filepath.Join(t.TempDir(), "out.npy")
	code, _, stderr = runCLI(t, args(out, "gpu")...)
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "needs 3 MiB of device memory; the device has 2 MiB free")
	assert.NotContains(t, stderr, "unsupported")
	assert.NoFileExists(t, out)
}

// lostAtCloseGPU is a GPU backend that cannot run any plan and finds its
// device lost when it closes.
type lostAtCloseGPU struct{}

func (lostAtCloseGPU) Name() string { return "vulkan: fake device lost at close" }

func (lostAtCloseGPU) Execute(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error {
	return &ops.Error{Op: p.Op.Name, Input: "data", Err: ops.ErrUnsupported, Msg: "vulkan: fake: no kernel"}
}

func (lostAtCloseGPU) Close() error {
	return fmt.Errorf("%w: vk: device lost", ops.ErrDeviceLost)
}

// TestAutoDeviceLostAtCloseAfterTheCPURan: once --backend auto has run
// the call on the CPU, a device found lost as it closes fails nothing:
// exit 0, --out written, and the one notice line adds the loss.
func TestAutoDeviceLostAtCloseAfterTheCPURan(t *testing.T) {
	withGPU(t, func(context.Context) (ops.Backend, error) { return lostAtCloseGPU{}, nil })
	fx := newFixture(t)
	out := filepath.Join(t.TempDir(), "out.npy")
	code, _, stderr := runCLI(t, "run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"),
		"--updates", fx.f("updates"), "--out", out, "--backend", "auto")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, prefix+"--backend auto: ScatterNDUpdate-15: vulkan: fake: no kernel; ran ScatterNDUpdate-15 on the CPU; "+
		"then closing the device found it lost (device lost: vk: device lost)\n", stderr)
	requireEqualTensor(t, f32([]int{5}, 1, 10, 3, 20, 5), readNPY(t, out))
}
