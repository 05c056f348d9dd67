//go:build cgo

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpubench"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/internal/testdevice"
	"github.com/gpuscatter/gpuscatter/internal/vkfault"
	"github.com/gpuscatter/gpuscatter/ops"
)

// TestFaultMatrix (the CLI's cells): `run --out FILE` with FILE already
// there, the device failing mid-call in each way. Under --backend gpu the
// run fails with one line naming the operator and the failure, and FILE
// is untouched; under --backend auto (on a backend that does not say its device's type, which auto takes for a GPU) the
// call runs on the CPU instead, with a notice saying why, and FILE holds
// the right result. Either way the backend's Close left no Vulkan object
// and the validation layer silent.
func TestFaultMatrix(t *testing.T) {
	fx := newFixture(t)
	want := f32([]int{5}, 1, 10, 3, 20, 5)
	faults := []struct {
		name   string
		call   vkfault.Call
		result int32
		says   string
	}{
		{"pipeline/out-of-host-memory", vkfault.Pipeline, vkfault.OutOfHostMemory, "vkCreateComputePipelines: VK_ERROR_OUT_OF_HOST_MEMORY"},
		{"allocate/out-of-device-memory", vkfault.Allocate, vkfault.OutOfDeviceMemory, "vkAllocateMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY"},
		{"map/out-of-host-memory", vkfault.Map, vkfault.OutOfHostMemory, "vkMapMemory: VK_ERROR_OUT_OF_HOST_MEMORY"},
		{"submit/device-lost", vkfault.Submit, vkfault.DeviceLost, "vkQueueSubmit: VK_ERROR_DEVICE_LOST"},
		{"wait/device-lost", vkfault.Wait, vkfault.DeviceLost, "vkWaitForFences: VK_ERROR_DEVICE_LOST"},
		{"wait/never-signals", vkfault.Wait, vkfault.Timeout, "the device stopped answering"},
	}
	for _, f := range faults {
		for _, backend := range []string{backendGPU, backendAuto} {
			t.Run(backend+"/"+f.name, func(t *testing.T) {
				var opened *gpu.Backend
				plan := &vkfault.Plan{Call: f.call}
				withGPU(t, func(context.Context) (ops.Backend, error) {
					opts := gpu.Options{Validation: true, PipelineCacheDir: "off", MaxPoolBytes: -1,
						DeviceTimeout: 300 * time.Millisecond, NoUnifiedMemory: testdevice.Staged(t, false)}
					b, err := knobs.Open[gpu.Options, *gpu.Backend](opts, knobs.Knobs{Faults: plan})
					if err != nil {
						return nil, err
					}
					opened = b
					plan.Arm(1, f.result)
					return asGPU{b}, nil
				})
				dir := t.TempDir()
				out := filepath.Join(dir, "out.npy")
				const old = "previous result, not to be touched"
				require.NoError(t, os.WriteFile(out, []byte(old), 0o600))
				code, stdout, stderr := runCLI(t, "run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"),
					"--indices", fx.f("indices"), "--updates", fx.f("updates"), "--out", out, "--backend", backend)
				require.NotNil(t, opened, "the backend was not opened")
				require.True(t, plan.Fired(), "%v never happened", plan)
				if backend == backendGPU {
					requireInputError(t, code, stdout, stderr, "ScatterNDUpdate-15: ", f.says)
					got, err := os.ReadFile(out)
					require.NoError(t, err)
					assert.Equal(t, old, string(got), "--out changed")
				} else {
					require.Equal(t, exitOK, code, stderr)
					assert.Empty(t, stdout)
					assert.True(t, strings.HasPrefix(stderr, prefix+"--backend auto: ScatterNDUpdate-15: "), stderr)
					assert.Contains(t, stderr, f.says)
					assert.True(t, strings.HasSuffix(stderr, "; ran ScatterNDUpdate-15 on the CPU\n"), stderr)
					assert.Equal(t, 1, strings.Count(stderr, "\n"), "one notice line: %q", stderr)
					requireEqualTensor(t, want, readNPY(t, out))
				}
				assert.Equal(t, []string{"out.npy"}, listDir(t, dir), "files left beside --out")
				assert.Empty(t, opened.ValidationMessages(), "validation messages")
				assert.Empty(t, gpubench.Of(opened).Device().LiveObjects(), "Vulkan objects alive after the run")
			})
		}
	}
}
