//go:build cgo

package gpu

import (
	"context"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// specShape is one of the two shapes the specs call out.
type specShape struct {
	name  string
	large bool
	req   func(rng *rand.Rand) ops.Request
}

func randomFloats(rng *rand.Rand, shape []int) *tensor.Tensor {
	t, err := tensor.New(tensor.Float32, shape)
	if err != nil {
		panic(err)
	}
	v := tensor.View[float32](t)
	for i := range v {
		v[i] = float32(rng.Intn(1<<20)) / 16
	}
	return t
}

var specShapes = []specShape{{
	// ScatterNDUpdate-15: data [1000,256,10,15] f32, indices [25,125,3],
	// updates [25,125,15].
	name: "ScatterNDUpdate-15",
	req: func(rng *rand.Rand) ops.Request {
		idx, _ := tensor.New(tensor.Int64, []int{25, 125, 3})
		v := tensor.View[int64](idx)
		for i := 0; i < len(v); i += 3 {
			v[i], v[i+1], v[i+2] = int64(rng.Intn(1000)), int64(rng.Intn(256)), int64(rng.Intn(10))
		}
		return ops.Request{Op: "ScatterNDUpdate-15", Data: randomFloats(rng, []int{1000, 256, 10, 15}),
			Indices: idx, Updates: randomFloats(rng, []int{25, 125, 15})}
	},
}, {
	// ScatterUpdate-3: data [1000,256,10,15], indices [125,20], updates
	// [1000,125,20,10,15] (1.5 GB of float32), axis 1.
	name:  "ScatterUpdate-3",
	large: true,
	req: func(rng *rand.Rand) ops.Request {
		idx, _ := tensor.New(tensor.Int32, []int{125, 20})
		for i, v := 0, tensor.View[int32](idx); i < len(v); i++ {
			v[i] = int32(rng.Intn(256))
		}
		return ops.Request{Op: "ScatterUpdate-3", Data: randomFloats(rng, []int{1000, 256, 10, 15}),
			Indices: idx, Updates: randomFloats(rng, []int{1000, 125, 20, 10, 15}), Axis: tensor.Scalar(1)}
	},
}}

// TestSpecShapes runs the two shapes the specs name on the GPU and on the
// CPU reference and requires identical results. It logs end-to-end times,
// on-device times from timestamps and the CPU reference's time (start-up
// in fresh processes is TestStartup's). The 1.5 GB ScatterUpdate-3 shape
// needs about 4 GB of memory; -short skips both.
func TestSpecShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the spec shapes move hundreds of megabytes")
	}
	ctx := context.Background()
	for _, s := range specShapes {
		t.Run(s.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(1))
			req := s.req(rng)
			p, err := ops.Prepare(req)
			require.NoError(t, err)

			// The CPU reference, once: the times below are a log, not a
			// benchmark (gpuscatter bench and go test -bench time these
			// shapes over repeats).
			want, _ := tensor.New(p.DType, p.Shape)
			start := time.Now()
			require.NoError(t, cpuref.New().Execute(ctx, p, want))
			cpu := time.Since(start)

			// One backend, with the validation layer, which must stay
			// silent (openTest): its first call (fresh buffers, new
			// pipelines), then a steady call into the output the first
			// call wrote (cleared). Start-up with the caches, in fresh
			// processes, is TestStartup's.
			start = time.Now()
			b := openTest(t, Options{})
			opened := time.Since(start)
			got, _ := tensor.New(p.DType, p.Shape)
			start = time.Now()
			require.NoError(t, b.Execute(ctx, p, got))
			first := time.Since(start)
			require.True(t, tensor.Equal(got, want), "GPU and CPU reference differ")
			st := b.LastStats()
			t.Logf("%s: Open %v, first Execute %v (pipelines %v, upload %v, submit %v, device %v %v, download %v)",
				s.name, opened.Round(time.Millisecond), first.Round(time.Millisecond), st.Pipelines.Round(time.Millisecond),
				st.Upload.Round(time.Millisecond), st.Submit.Round(time.Millisecond), st.Device.Round(time.Microsecond), st.Passes,
				st.Download.Round(time.Millisecond))
			clear(got.Data)
			start = time.Now()
			require.NoError(t, b.Execute(ctx, p, got))
			total := time.Since(start)
			require.True(t, tensor.Equal(got, want), "GPU and CPU reference differ")
			st = b.LastStats()
			t.Logf("%s, steady run: end-to-end %v (upload %v, submit %v, device %v %v, download %v); cpuref %v",
				s.name, total.Round(time.Millisecond), st.Upload.Round(time.Millisecond), st.Submit.Round(time.Millisecond),
				st.Device.Round(time.Microsecond), st.Passes, st.Download.Round(time.Millisecond), cpu.Round(time.Millisecond))
		})
	}
}

// EnvStartupChild marks the processes TestStartup starts, each measuring one
// start; its value is the pipeline cache directory.
const EnvStartupChild = "GPUSCATTER_STARTUP_CHILD"

// TestStartup measures start-up in fresh processes: Open plus the first
// Execute of the ScatterNDUpdate-15 spec shape (pipeline creation and the
// driver's compilation included), first with an empty pipeline cache
// directory and an empty Mesa shader cache, then with the pipeline cache
// file the first process saved but an empty Mesa cache, then with both.
func TestStartup(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts three processes")
	}
	pipeDir, mesaDir := t.TempDir(), t.TempDir()
	for i, phase := range []string{"empty caches", "pipeline cache only", "pipeline and Mesa caches"} {
		mesa := mesaDir
		if i < 2 {
			mesa = t.TempDir()
		}
		if i == 2 { // fill the Mesa cache first
			cmd := exec.Command(os.Args[0], "-test.run=^TestStartupChild$")
			cmd.Env = append(os.Environ(), EnvStartupChild+"="+pipeDir, "MESA_SHADER_CACHE_DIR="+mesa)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestStartupChild$", "-test.v")
		cmd.Env = append(os.Environ(), EnvStartupChild+"="+pipeDir, "MESA_SHADER_CACHE_DIR="+mesa)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		line := ""
		for _, l := range strings.Split(string(out), "\n") {
			if i := strings.Index(l, "startup:"); i >= 0 {
				line = l[i:]
			}
		}
		require.NotEmpty(t, line, "%s", out)
		t.Logf("%s: %s", phase, line)
	}
}

// TestStartupChild is the process TestStartup starts; it does nothing
// otherwise.
func TestStartupChild(t *testing.T) {
	dir := os.Getenv(EnvStartupChild)
	if dir == "" {
		t.Skip("started by TestStartup only")
	}
	req := specShapes[0].req(rand.New(rand.NewSource(1)))
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	out, _ := tensor.New(p.DType, p.Shape)
	start := time.Now()
	b, err := Open(Options{PipelineCacheDir: dir})
	require.NoError(t, err)
	opened := time.Since(start)
	require.NoError(t, b.Execute(context.Background(), p, out))
	first := time.Since(start) - opened
	st := b.LastStats()
	second := time.Now()
	require.NoError(t, b.Execute(context.Background(), p, out))
	again := time.Since(second)
	require.NoError(t, b.Close())
	t.Logf("startup: Open %v, first Execute %v (pipelines %v, device %v), second Execute %v, cache file %s",
		opened.Round(time.Millisecond), first.Round(time.Millisecond), st.Pipelines.Round(time.Millisecond),
		st.Device.Round(time.Microsecond), again.Round(time.Millisecond), filepath.Base(b.device().PipelineCachePath()))
}
