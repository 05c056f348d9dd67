//go:build cgo

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// typedGPU is a fake Vulkan backend on a device of a given type; it counts
// its runs and closes.
type typedGPU struct {
	ops.Backend
	typ          vk.DeviceType
	runs, closes *int
}

func (g typedGPU) Name() string { return "vulkan: fake " + string(g.typ) }

func (g typedGPU) DeviceInfo() vk.DeviceInfo {
	return vk.DeviceInfo{Name: "fake " + string(g.typ), Type: g.typ}
}

func (g typedGPU) Execute(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error {
	*g.runs++
	return g.Backend.Execute(ctx, p, out)
}

func (g typedGPU) Close() error {
	*g.closes++
	return nil
}

// TestAutoTakesOnlyAGPU fakes the device type: --backend auto runs on
// discrete, integrated and virtual GPUs, and on the CPU with a notice for a
// CPU device (lavapipe) or any other type; --backend gpu runs on every
// type.
func TestAutoTakesOnlyAGPU(t *testing.T) {
	fx := newFixture(t)
	want := f32([]int{5}, 1, 10, 3, 20, 5)
	for _, c := range []struct {
		typ   vk.DeviceType
		onGPU bool
	}{
		{vk.DeviceDiscrete, true}, {vk.DeviceIntegrated, true}, {vk.DeviceVirtual, true},
		{vk.DeviceCPU, false}, {vk.DeviceOther, false},
	} {
		t.Run(string(c.typ), func(t *testing.T) {
			var runs, closes int
			withGPU(t, func(context.Context) (ops.Backend, error) {
				return typedGPU{Backend: cpuref.New(), typ: c.typ, runs: &runs, closes: &closes}, nil
			})
			for _, backend := range []string{"auto", "gpu"} {
				runs, closes = 0, 0
				out := filepath.Join(t.TempDir(), "out.npy")
				code, stdout, stderr := runCLI(t, "run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"),
					"--indices", fx.f("indices"), "--updates", fx.f("updates"), "--out", out, "--backend", backend)
				require.Equal(t, exitOK, code, stderr)
				assert.Empty(t, stdout)
				requireEqualTensor(t, want, readNPY(t, out))
				assert.Equal(t, 1, closes, "the device is closed once")
				if backend == "gpu" || c.onGPU {
					assert.Equal(t, 1, runs, "%s ran on the device", backend)
					assert.Empty(t, stderr)
					continue
				}
				assert.Equal(t, 0, runs, "auto ran on a %s device", c.typ)
				assert.Equal(t, prefix+`--backend auto: the Vulkan device "fake `+string(c.typ)+`" is of type `+string(c.typ)+
					", not a GPU; using the CPU (--backend gpu runs on it)\n", stderr)
			}
		})
	}
}

// TestDeviceSelectorMatchingNothingIsAnError: a --device (or
// GPUSCATTER_DEVICE) that selects none of the devices is one line naming
// it and listing the devices, exit 1, under --backend auto as under gpu,
// in every command that opens a device; auto does not run on the CPU
// instead.
func TestDeviceSelectorMatchingNothingIsAnError(t *testing.T) {
	devs, err := vk.Devices()
	require.NoError(t, err)
	fx := newFixture(t)
	out := filepath.Join(t.TempDir(), "out.npy")
	call := []string{"--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"), "--updates", fx.f("updates")}
	node := writeNodeTest(t)
	commands := [][]string{
		append([]string{"run", "--out", out}, call...),
		append([]string{"run", "--out", out, "--backend", "gpu"}, call...),
		append([]string{"bench", "--repeats", "1"}, call...),
		append([]string{"bench", "--repeats", "1", "--backend", "gpu"}, call...),
		append([]string{"plan"}, call...),
		{"check", "--quick", "--match", "none/default"},
		{"examples", "--match", "ScatterNDUpdate-15"},
		{"examples", "--match", "ScatterNDUpdate-15", "--backend", "gpu"},
		{"onnx-test", node},
	}
	for _, sel := range []struct {
		flag, env, input string
	}{
		{"no-such-device", "", `--device "no-such-device" matches no device name`},
		{fmt.Sprint(len(devs) + 2), "", fmt.Sprintf(`--device "%d": index out of range`, len(devs)+2)},
		{"", "no-such-device", `GPUSCATTER_DEVICE="no-such-device" matches no device name`},
	} {
		t.Setenv(vk.EnvDevice, sel.env)
		for _, args := range commands {
			if sel.flag != "" {
				args = append([]string{args[0], "--device", sel.flag}, args[1:]...)
			}
			code, stdout, stderr := runCLI(t, args...)
			requireInputError(t, code, stdout, stderr, sel.input+" (devices: ")
			for i, d := range devs {
				assert.Contains(t, stderr, fmt.Sprintf("%d %q (%s)", i, d.Name, d.Type), "%v", args)
			}
			assert.NoFileExists(t, out)
		}
	}
}

// writeNodeTest writes a node test (TensorScatter-24's first) into a
// temporary directory and returns its path, so that a test runs outside
// the tree (the kit) too.
func writeNodeTest(t *testing.T) string {
	t.Helper()
	node := t.TempDir()
	nt := tensorScatterNodeTests()[0]
	for rel, b := range nt.files(t) {
		path := filepath.Join(node, nt.name, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
	return filepath.Join(node, nt.name)
}

// TestBadDeviceTimeoutIsAnError: a GPUSCATTER_DEVICE_TIMEOUT that is not
// a positive duration is one line naming the variable, its value and what
// it wants, exit 1, before any work: under --backend auto as under gpu
// (auto does not run on the CPU instead), in every command that opens a
// device, devices included. --backend cpu opens no device and reads it
// no more than GPUSCATTER_DEVICE.
func TestBadDeviceTimeoutIsAnError(t *testing.T) {
	fx := newFixture(t)
	out := filepath.Join(t.TempDir(), "out.npy")
	call := []string{"--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"), "--updates", fx.f("updates")}
	node := writeNodeTest(t)
	commands := [][]string{
		append([]string{"run", "--out", out}, call...),
		append([]string{"run", "--out", out, "--backend", "gpu"}, call...),
		append([]string{"bench", "--repeats", "1"}, call...),
		append([]string{"bench", "--repeats", "1", "--backend", "gpu"}, call...),
		append([]string{"plan"}, call...),
		append([]string{"warm"}, call...),
		{"check", "--quick", "--match", "none/default"},
		{"examples", "--match", "ScatterNDUpdate-15"},
		{"examples", "--match", "ScatterNDUpdate-15", "--backend", "gpu"},
		{"onnx-test", node},
		{"devices"},
		{"devices", "--json"},
	}
	for _, v := range []string{"0", "-1s", "abc", "NaN"} {
		t.Setenv(vk.EnvDeviceTimeout, v)
		for _, args := range commands {
			code, stdout, stderr := runCLI(t, args...)
			requireInputError(t, code, stdout, stderr)
			assert.Equal(t, fmt.Sprintf("%sGPUSCATTER_DEVICE_TIMEOUT=%q: want a positive duration such as 90s or 5m\n", prefix, v), stderr, "%v", args)
			assert.NoFileExists(t, out)
		}
		code, _, stderr := runCLI(t, append([]string{"run", "--out", out, "--backend", "cpu"}, call...)...)
		require.Equal(t, exitOK, code, stderr)
		assert.Empty(t, stderr)
		require.NoError(t, os.Remove(out))
	}
}
