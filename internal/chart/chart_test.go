package chart

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"

	"github.com/gpuscatter/gpuscatter/bench"
)

func report() *bench.Report {
	return &bench.Report{Results: []bench.Result{
		{Workload: "SE", Backend: "cpu", Median: time.Millisecond, GBps: 10, MemcpyGBps: 40, Verified: true},
		{Workload: "SE", Backend: "gpu", Median: time.Millisecond, GBps: 30, MemcpyGBps: 40, Verified: true,
			Bytes: 50e6, ResidentTime: time.Millisecond, ResidentBytes: 20e6},
		{Workload: "SU1", Backend: "cpu", Skipped: "skipped: needs about 3.6 GB of memory, 1.0 GB available"},
		{Workload: "SU1", Backend: "gpu", Skipped: "skipped: needs about 3.6 GB of memory, 1.0 GB available"},
		{Workload: "SS", Backend: "cpu", GBps: 12, MemcpyGBps: 40, Verified: true},
		{Workload: "SS", Backend: "gpu", Error: "device lost"},
	}}
}

// lavapipeReport has the shape of a full run on lavapipe: reductions at a
// few hundred MB/s next to copies at tens of GB/s, and SND5, whose call in
// place on resident inputs takes 2 ms where the copying call takes 106 ms.
func lavapipeReport() *bench.Report {
	r := &bench.Report{CPU: "AMD EPYC", Threads: 2}
	add := func(w string, cpu, gpu float64, resident time.Duration, bytes, residentBytes int64) {
		at := func(gbps float64) time.Duration { return time.Duration(float64(bytes) / gbps) } // ns
		r.Results = append(r.Results,
			bench.Result{Workload: w, Backend: "cpu", Device: "cpu", GBps: cpu, Median: at(cpu), MemcpyGBps: 8, Bytes: bytes, Verified: true},
			bench.Result{Workload: w, Backend: "gpu", Device: "vulkan: llvmpipe (LLVM 15.0.6, 256 bits)", GBps: gpu, Median: at(gpu),
				MemcpyGBps: 8, Bytes: bytes, Verified: true, ResidentTime: resident, ResidentBytes: residentBytes})
	}
	add("SU1", 6.1, 3.2, 600*time.Millisecond, 3_084_000_000, 3_000_000_000)
	add("SND5", 7.5, 2.9, 2*time.Millisecond, 307_462_500, 262_500)
	add("SE", 9.8, 1.1, 12*time.Millisecond, 167_772_160, 67_108_864)
	add("SE-sum-dup", 6.8, 0.31, 300*time.Millisecond, 201_326_592, 201_326_592)
	add("SND-sum-dup", 8.7, 0.57, 300*time.Millisecond, 209_715_200, 142_606_336)
	add("SND-max-i32", 1.7, 0.32, 200*time.Millisecond, 130_023_424, 130_023_424)
	return r
}

func TestRenderDrawsAPNG(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Render(&b, report()))
	img, err := png.Decode(&b)
	require.NoError(t, err)
	size := img.Bounds().Size()
	assert.GreaterOrEqual(t, size.X, 600)
	assert.GreaterOrEqual(t, size.Y, 400)

	// Not a blank image: the bars are coloured.
	colours := map[[3]uint32]bool{}
	for y := 0; y < size.Y; y += 2 {
		for x := 0; x < size.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	assert.Greater(t, len(colours), 3)
	for name, c := range map[string][3]uint32{"cpu": {0x1f, 0x77, 0xb4}, "gpu": {0xff, 0x7f, 0x0e}, "gpu resident": {0x2c, 0xa0, 0x2c}} {
		assert.True(t, colours[c], "no bar of the %s series", name)
	}
}

// TestScaleShowsEveryWorkload: the GB/s axis is logarithmic and spans
// every bar, and the lowest bar is still a good part of the plot's height
// (a tenth, with the four decades from lavapipe's reductions to SND5's
// resident call), where a linear axis up to SND5's bar would leave the
// reductions a few pixels.
func TestScaleShowsEveryWorkload(t *testing.T) {
	for name, r := range map[string]*bench.Report{"small": report(), "lavapipe": lavapipeReport()} {
		t.Run(name, func(t *testing.T) {
			_, g, err := render(r)
			require.NoError(t, err)
			require.True(t, g.log, "the GB/s axis is logarithmic")
			s, err := collect(r)
			require.NoError(t, err)
			n := 0
			for _, v := range flatten(s.gbps) {
				if v > 0 {
					n++
					assert.Greater(t, v, g.min)
					assert.Less(t, v, g.max)
				}
			}
			require.Len(t, g.bars, n, "one bar per value")
			h := g.data.Size().Y
			for i, b := range g.bars {
				assert.GreaterOrEqual(t, b.Size().Y, h/10, "bar %d is %.1f points of %.1f", i, b.Size().Y, h)
				assert.LessOrEqual(t, b.Max.Y, g.data.Max.Y, "bar %d ends above the data area", i)
			}
			// The axis is decades: its ends are powers of ten.
			for _, v := range []float64{g.min, g.max} {
				assert.InDelta(t, math.Round(math.Log10(v)), math.Log10(v), 1e-9)
			}
		})
	}
}

// TestLegendOverlapsNoBar: the legend stands right of the data area, and
// its box meets no bar and lies inside the image.
func TestLegendOverlapsNoBar(t *testing.T) {
	for name, r := range map[string]*bench.Report{"small": report(), "lavapipe": lavapipeReport()} {
		t.Run(name, func(t *testing.T) {
			_, g, err := render(r)
			require.NoError(t, err)
			require.NotEmpty(t, g.bars)
			require.Greater(t, g.legend.Size().X, vg.Length(0))
			for i, b := range g.bars {
				assert.False(t, overlaps(b, g.legend), "the legend %v covers bar %d %v", g.legend, i, b)
			}
			assert.GreaterOrEqual(t, g.legend.Min.X, g.data.Max.X, "the legend is right of the data")
			assert.LessOrEqual(t, g.legend.Max.X, g.size.X)
			assert.LessOrEqual(t, g.legend.Max.Y, g.size.Y)
			assert.GreaterOrEqual(t, g.legend.Min.Y, vg.Length(0))
		})
	}
}

func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// TestBarsOfAWorkloadCompareAsTimes: every bar of a workload is the same
// bytes over its own time, so the bars order as the times do. SND5's
// resident call, the fastest of its group, has the tallest bar (before,
// counted on its own smaller bytes, it looked the slowest).
func TestBarsOfAWorkloadCompareAsTimes(t *testing.T) {
	r := lavapipeReport()
	s, err := collect(r)
	require.NoError(t, err)
	require.Equal(t, []string{"cpu", "gpu", "gpu" + residentSuffix}, s.names)
	for _, x := range r.Results {
		w := slices.Index(s.workloads, x.Workload)
		want := float64(x.Bytes) / x.Median.Seconds() / 1e9
		assert.InEpsilon(t, want, s.gbps[slices.Index(s.names, x.Backend)][w], 1e-6, "%s %s", x.Workload, x.Backend)
		if x.ResidentTime > 0 {
			assert.InEpsilon(t, float64(x.Bytes)/x.ResidentTime.Seconds()/1e9, s.gbps[2][w], 1e-9, x.Workload)
		}
	}
	snd5 := slices.Index(s.workloads, "SND5")
	assert.Greater(t, s.gbps[2][snd5], s.gbps[0][snd5], "SND5's resident call is faster than the cpu's")

	// Without a resident time there is no resident bar.
	for i := range r.Results {
		r.Results[i].ResidentTime = 0
	}
	s, err = collect(r)
	require.NoError(t, err)
	assert.Equal(t, []string{"cpu", "gpu"}, s.names)
}

// TestLabelsStayLegible: the value labels are drawn after the bars and the
// memcpy lines, each on a white box that overlaps no other label.
func TestLabelsStayLegible(t *testing.T) {
	_, g, err := render(lavapipeReport())
	require.NoError(t, err)
	require.Equal(t, []string{"bars", "memcpy", "labels"}, g.layers)
	require.Len(t, g.labels, len(g.bars))
	for i, a := range g.labels {
		for j, b := range g.labels[:i] {
			assert.False(t, overlaps(a, b), "labels %d and %d overlap: %v %v", j, i, b, a)
		}
	}
}

// TestTitleNamesTheMachine: the CPU, its threads and the device.
func TestTitleNamesTheMachine(t *testing.T) {
	assert.Equal(t, "gpuscatter bench on AMD EPYC (2 threads) and vulkan: llvmpipe (LLVM 15.0.6, 256 bits)", title(lavapipeReport()))
}

func TestRenderNeedsResults(t *testing.T) {
	require.Error(t, Render(&bytes.Buffer{}, &bench.Report{}))
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.png")
	require.NoError(t, WriteFile(path, report()))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = png.Decode(f)
	require.NoError(t, err)

	// A failed render leaves nothing behind.
	bad := filepath.Join(dir, "bad.png")
	require.Error(t, WriteFile(bad, &bench.Report{}))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1)
}
