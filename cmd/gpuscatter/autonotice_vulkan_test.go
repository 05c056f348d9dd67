//go:build cgo

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpubench"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/internal/testdevice"
	"github.com/gpuscatter/gpuscatter/internal/vkfault"
	"github.com/gpuscatter/gpuscatter/ops"
)

// withEstimates makes --backend auto weigh each call by est instead of
// the device's figures.
func withEstimates(t *testing.T, est func(b ops.Backend) estimator) {
	t.Helper()
	saved := estimatorFor
	estimatorFor = est
	t.Cleanup(func() { estimatorFor = saved })
}

// fixedEstimates estimates every call at dev ms on the device and cpu ms
// on the CPU.
func fixedEstimates(dev, cpu float64) func(ops.Backend) estimator {
	return func(ops.Backend) estimator {
		return func(context.Context, *ops.Plan) (cost.Estimate, cost.Estimate, error) {
			return cost.Estimate{Ms: dev, Parts: []cost.Part{}}, cost.Estimate{Ms: cpu, Parts: []cost.Part{}}, nil
		}
	}
}

// faultyGPU opens the Vulkan backend for a test with plan's faults, and
// a short device timeout where the plan's fault is a wait that never
// ends; *opened is the backend.
func faultyGPU(t *testing.T, plan *vkfault.Plan, opened **gpu.Backend) {
	t.Helper()
	// The short timeout only where the plan makes a fence never signal:
	// real work on a loaded machine may take longer than that.
	var timeout time.Duration
	if plan != nil && plan.Call == vkfault.Wait {
		timeout = 100 * time.Millisecond
	}
	withGPU(t, func(context.Context) (ops.Backend, error) {
		opts := gpu.Options{Validation: true, PipelineCacheDir: "off", MaxPoolBytes: -1,
			DeviceTimeout: timeout, NoUnifiedMemory: testdevice.Staged(t, false)}
		b, err := knobs.Open[gpu.Options, *gpu.Backend](opts, knobs.Knobs{Faults: plan})
		*opened = b
		return b, err
	})
}

// TestAutoNoticeOnEveryPath: --backend auto prints one notice line with
// both estimates and its choice wherever the call runs: on the device with
// .npy inputs read straight into device memory (the streamed path), on
// the device through host tensors (a .pb output), and on the CPU.
func TestAutoNoticeOnEveryPath(t *testing.T) {
	var opened *gpu.Backend
	faultyGPU(t, nil, &opened)
	fx := newFixture(t)
	want := f32([]int{5}, 1, 10, 3, 20, 5)
	for _, c := range []struct {
		name, out string
		dev, cpu  float64
		streamed  bool
		where     string
	}{
		{"device/streamed", "out.npy", 1, 2, true, "device %q"},
		{"device/host", "out.pb", 1, 2, false, "device %q"},
		{"cpu", "out.npy", 2, 1, false, "CPU"},
	} {
		t.Run(c.name, func(t *testing.T) {
			withEstimates(t, fixedEstimates(c.dev, c.cpu))
			out := filepath.Join(t.TempDir(), c.out)
			streamed := streamedRuns.Load()
			code, stdout, stderr := runCLI(t, "run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"),
				"--indices", fx.f("indices"), "--updates", fx.f("updates"), "--out", out, "--backend", "auto")
			require.Equal(t, exitOK, code, stderr)
			assert.Empty(t, stdout)
			where := c.where
			if strings.Contains(where, "%q") {
				where = fmt.Sprintf(where, gpubench.Of(opened).Device().Info().Name)
			}
			assert.Equal(t, fmt.Sprintf("%s--backend auto: ran ScatterNDUpdate-15 on the %s: estimated %s on the CPU, %s on the device\n",
				prefix, where, fmtMs(c.cpu), fmtMs(c.dev)), stderr)
			assert.Equal(t, c.streamed, streamedRuns.Load() > streamed, "streamed")
			got, err := readTensorFile(out)
			require.NoError(t, err)
			requireEqualTensor(t, want, got)
		})
	}
}

// TestAutoAfterTheDeviceIsLost: under --backend auto, a device lost while
// auto weighs the call (measuring it), or during the call on the streamed
// path, or one that stops answering, sends the call to the CPU: exit 0,
// --out holds the CPU's result, and stderr is one notice line saying why,
// in the command line's words (no advice to a program about its resident
// tensors, the variable that sets the timeout rather than the library's
// option); the device's loss at Close is no error. Under --backend gpu
// the same failure is one line saying what the user can do, and --out is
// left as it was.
func TestAutoAfterTheDeviceIsLost(t *testing.T) {
	fx := newFixture(t)
	want := f32([]int{5}, 1, 10, 3, 20, 5)
	// measuring loses the device: the estimator runs a call that fails.
	measuring := func(b ops.Backend) estimator {
		return func(ctx context.Context, p *ops.Plan) (cost.Estimate, cost.Estimate, error) {
			req := ops.Request{Op: "ScatterNDUpdate-15", Data: f32([]int{5}, 1, 2, 3, 4, 5),
				Indices: i64([]int{2, 1}, 1, 3), Updates: f32([]int{2}, 10, 20)}
			_, err := ops.Run(ctx, b, req)
			require.Error(t, err)
			return cost.Estimate{}, cost.Estimate{}, fmt.Errorf("measuring the device: %w", err)
		}
	}
	for _, c := range []struct {
		name   string
		call   vkfault.Call
		result int32
		est    func(ops.Backend) estimator
		says   string
	}{
		{"measuring/device-lost", vkfault.Submit, vkfault.DeviceLost, measuring, "vkQueueSubmit: VK_ERROR_DEVICE_LOST"},
		{"streamed/device-lost", vkfault.Submit, vkfault.DeviceLost, fixedEstimates(1, 2), "vkQueueSubmit: VK_ERROR_DEVICE_LOST"},
		{"streamed/never-signals", vkfault.Wait, vkfault.Timeout, fixedEstimates(1, 2),
			"vk: the device stopped answering: submitted work made no progress for 100ms (GPUSCATTER_DEVICE_TIMEOUT)"},
	} {
		for _, backend := range []string{backendAuto, backendGPU} {
			if backend == backendGPU && c.name == "measuring/device-lost" {
				continue // --backend gpu weighs nothing
			}
			t.Run(backend+"/"+c.name, func(t *testing.T) {
				var opened *gpu.Backend
				plan := &vkfault.Plan{Call: c.call}
				plan.Arm(1, c.result)
				faultyGPU(t, plan, &opened)
				withEstimates(t, c.est)
				dir := t.TempDir()
				out := filepath.Join(dir, "out.npy")
				// --out is there before the run, but for one case, where
				// a failed run must not create it.
				const old = "previous result, not to be touched"
				there := backend == backendAuto || c.result != vkfault.Timeout
				if there {
					require.NoError(t, os.WriteFile(out, []byte(old), 0o600))
				}
				code, stdout, stderr := runCLI(t, "run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"),
					"--indices", fx.f("indices"), "--updates", fx.f("updates"), "--out", out, "--backend", backend)
				require.True(t, plan.Fired(), "%v never happened", plan)
				assert.NotContains(t, stderr, "Backend")
				assert.NotContains(t, stderr, "Options.")
				if backend == backendGPU {
					requireInputError(t, code, stdout, stderr, "ScatterNDUpdate-15: device lost: ", c.says)
					advice := "; run the command again, which opens the device afresh, or run it with --backend cpu\n"
					if c.result == vkfault.Timeout {
						advice = "; if the device is only slow, set GPUSCATTER_DEVICE_TIMEOUT above 100ms (a duration such as 5m) " +
							"and run the command again, or run it with --backend cpu\n"
					}
					assert.True(t, strings.HasSuffix(stderr, advice), stderr)
					if !there {
						assert.Empty(t, listDir(t, dir), "files left after a failed run")
						return
					}
					got, err := os.ReadFile(out)
					require.NoError(t, err)
					assert.Equal(t, old, string(got), "--out changed")
				} else {
					require.Equal(t, exitOK, code, stderr)
					assert.Empty(t, stdout)
					assert.Equal(t, 1, strings.Count(stderr, "\n"), "one notice line: %q", stderr)
					assert.True(t, strings.HasPrefix(stderr, prefix+"--backend auto: ScatterNDUpdate-15: "), stderr)
					assert.Contains(t, stderr, c.says)
					assert.True(t, strings.HasSuffix(stderr, "ran it on the CPU\n") || strings.HasSuffix(stderr, "; ran ScatterNDUpdate-15 on the CPU\n"), stderr)
					requireEqualTensor(t, want, readNPY(t, out))
				}
				assert.Equal(t, []string{"out.npy"}, listDir(t, dir), "files left beside --out")
				assert.Empty(t, opened.ValidationMessages(), "validation messages")
				assert.Empty(t, gpubench.Of(opened).Device().LiveObjects(), "Vulkan objects alive after the run")
			})
		}
	}
}
