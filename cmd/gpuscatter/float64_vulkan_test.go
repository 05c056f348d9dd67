//go:build cgo

package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// asGPU is a Vulkan backend that does not say what its device is, which
// --backend auto takes as a GPU: so that auto keeps lavapipe instead of
// going to the CPU for the device's type.
type asGPU struct{ ops.Backend }

// TestFloat64ArithmeticWithoutShaderFloat64: on a device without
// shaderFloat64 (the knob, on the default device), a float64 sum fails
// --backend gpu in one line naming the feature, leaving no output, and
// runs on the CPU under --backend auto with the one-line notice; a
// float64 max, which needs no float64 arithmetic, runs on the device
// without a notice.
func TestFloat64ArithmeticWithoutShaderFloat64(t *testing.T) {
	dir := t.TempDir()
	data := writeNPY(t, dir, "data.npy", tensor.MustFromSlice([]int{4, 2}, []float64{1, 2, 3, 4, 5, 6, 7, 8}))
	indices := writeNPY(t, dir, "indices.npy", tensor.MustFromSlice([]int{3, 1}, []int64{1, 3, 1}))
	updates := writeNPY(t, dir, "updates.npy", tensor.MustFromSlice([]int{3, 2}, []float64{0.5, -1, 1e300, 2, -0.25, 3}))
	open := func(wrap bool) func(context.Context) (ops.Backend, error) {
		return func(context.Context) (ops.Backend, error) {
			b, err := knobs.Open[gpu.Options, *gpu.Backend](testGPUOptions(t, gpu.Options{Validation: true, PipelineCacheDir: "off"}),
				knobs.Knobs{NoShaderFloat64: true})
			if err != nil || !wrap {
				return b, err
			}
			return asGPU{b}, nil
		}
	}
	run := func(red, backend string) (code int, stdout, stderr, out string) {
		out = filepath.Join(t.TempDir(), "out.npy")
		code, stdout, stderr = runCLI(t, "run", "--op", "ScatterNDUpdate-15", "--reduction", red, "--data", data,
			"--indices", indices, "--updates", updates, "--out", out, "--backend", backend)
		return code, stdout, stderr, out
	}
	want := func(red string) *tensor.Tensor {
		w, err := cpuref.Run(ops.Request{Op: "ScatterNDUpdate-15", Reduction: red, Data: readNPY(t, data),
			Indices: readNPY(t, indices), Updates: readNPY(t, updates)})
		require.NoError(t, err)
		return w
	}
	const refusal = "ScatterNDUpdate-15: vulkan: reduction sum on float64 data needs shaderFloat64 (float64 arithmetic in shaders), which the device lacks"

	withGPU(t, open(false))
	code, stdout, stderr, out := run("sum", "gpu")
	requireInputError(t, code, stdout, stderr, prefix+refusal+"\n")
	assert.NoFileExists(t, out)

	withGPU(t, open(true))
	code, _, stderr, out = run("sum", "auto")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, prefix+"--backend auto: "+refusal+"; ran ScatterNDUpdate-15 on the CPU\n", stderr)
	requireEqualTensor(t, want("sum"), readNPY(t, out))

	code, _, stderr, out = run("max", "auto")
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr, "float64 max needs no float64 arithmetic: no fallback")
	requireEqualTensor(t, want("max"), readNPY(t, out))
}
