package chart

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/bench"
)

func report() *bench.Report {
	return &bench.Report{Results: []bench.Result{
		{Workload: "SE", Backend: "cpu", Median: time.Millisecond, GBps: 10, MemcpyGBps: 40, Verified: true},
		{Workload: "SE", Backend: "gpu", Median: time.Millisecond, GBps: 30, MemcpyGBps: 40, Verified: true,
			Bytes: 50e6, ResidentTime: time.Millisecond},
		{Workload: "SU1", Backend: "cpu", Skipped: "skipped: needs about 3.6 GB of memory, 1.0 GB available"},
		{Workload: "SU1", Backend: "gpu", Skipped: "skipped: needs about 3.6 GB of memory, 1.0 GB available"},
		{Workload: "SS", Backend: "cpu", GBps: 12, MemcpyGBps: 40, Verified: true},
		{Workload: "SS", Backend: "gpu", Error: "device lost"},
	}}
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
	for y := 0; y < size.Y; y += 4 {
		for x := 0; x < size.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	assert.Greater(t, len(colours), 3)
	for name, c := range map[string][3]uint32{"cpu": {0x1f, 0x77, 0xb4}, "gpu": {0xff, 0x7f, 0x0e}, "gpu resident": {0x2c, 0xa0, 0x2c}} {
		assert.True(t, colours[c], "no bar of the %s series", name)
	}
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
