//go:build cgo

package gpu

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestFigures: Figures measures every figure of the device with the
// backend's kernels, adds what more gives, keeps them beside the pipeline
// cache and reads them back without measuring; kept figures without the
// kernel figures (an older file) are measured again.
func TestFigures(t *testing.T) {
	dir := t.TempDir()
	// Small probes (knobs.QuickFigures): the test is of how figures are
	// kept, found and remeasured, not of what they are.
	b := openTest(t, Options{PipelineCacheDir: dir}, knobs.Knobs{QuickFigures: true})
	ctx := context.Background()
	cpu := &cost.CPU{Threads: 1, CopyGBps: 1, MoveGBps: 2, ElementNs: 3, ReduceNs: 4}
	calls := 0
	more := func(m *cost.Device) error {
		calls++
		m.CPU = cpu
		return nil
	}
	m, err := b.Figures(ctx, false, more)
	require.NoError(t, err)
	require.NoError(t, m.Check())
	assert.True(t, m.Complete(), "%+v", m)
	assert.Equal(t, 1, calls)
	t.Logf("figures: %+v", m)

	again, err := b.Figures(ctx, false, more)
	require.NoError(t, err)
	assert.Equal(t, m, again, "kept figures read back")
	assert.Equal(t, 1, calls, "kept figures are not measured again")

	files, err := filepath.Glob(filepath.Join(dir, "measured-*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	old := m
	old.DispatchUs, old.ElementNs, old.AtomicNs, old.CPU = 0, 0, 0, nil
	js, err := json.Marshal(old)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(files[0], js, 0o644))
	fresh, err := b.Figures(ctx, false, more)
	require.NoError(t, err)
	assert.True(t, fresh.Complete())
	assert.Equal(t, 2, calls, "figures without the kernel ones are measured again")

	assert.Positive(t, m.CompileMs, "a new cache folder: the probe's pipelines are compiled first")
	re, err := b.Figures(ctx, true, more)
	require.NoError(t, err)
	assert.Equal(t, 3, calls, "remeasure measures")
	assert.Equal(t, fresh.CompileMs, re.CompileMs, "pipelines compiled before: the kept compile figure stays")

	require.NoError(t, b.Close())
	_, err = b.Figures(ctx, false, nil)
	assert.ErrorIs(t, err, ErrClosed)
}

// TestFiguresWithoutCacheFolder: with no cache folder the Backend keeps
// its figures itself: a second call measures nothing and gives the same
// figures, a copy of them, as does one asking for less; remeasure
// measures again.
func TestFiguresWithoutCacheFolder(t *testing.T) {
	b := openTest(t, Options{PipelineCacheDir: "off"}, knobs.Knobs{QuickFigures: true})
	ctx := context.Background()
	calls := 0
	more := func(m *cost.Device) error {
		calls++
		m.CPU = &cost.CPU{Threads: 1, CopyGBps: 1, MoveGBps: 2, ElementNs: 3, ReduceNs: 4}
		return nil
	}
	m, err := b.Figures(ctx, false, more)
	require.NoError(t, err)
	assert.Equal(t, 1, calls)
	m.CPU.Threads = 99 // the caller's copy
	again, err := b.Figures(ctx, false, more)
	require.NoError(t, err)
	assert.Equal(t, 1, calls, "kept by the Backend")
	assert.Equal(t, 1, again.CPU.Threads)
	lesser, err := b.Figures(ctx, false, nil)
	require.NoError(t, err)
	assert.Equal(t, again, lesser)
	_, err = b.Figures(ctx, true, more)
	require.NoError(t, err)
	assert.Equal(t, 2, calls, "remeasure measures")
	require.NoError(t, b.Close())
	_, err = b.Figures(ctx, false, nil)
	assert.ErrorIs(t, err, ErrClosed)
}

// TestEstimateWork: the work an estimate reads is the plan's: its
// transfers split into upload and download, its submission, dispatches,
// and each pass's bytes, positions and atomics (an atomic reduction's
// scatter one atomic per update; a resident call in place moves nothing
// between host and device).
func TestEstimateWork(t *testing.T) {
	b := openTest(t, Options{})
	req := dupRequest("ScatterElements-18", "add", tensor.Float32, 3000)
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	n, err := b.Needs(p)
	require.NoError(t, err)
	w := n.Work()
	assert.Equal(t, n.HostBytes, w.UploadBytes+w.DownloadBytes)
	assert.Equal(t, uint64(req.Data.Len()*4), w.DownloadBytes, "the output comes back")
	assert.Equal(t, 1, w.Submits)
	assert.Equal(t, n.Dispatches, w.Dispatches)
	require.Len(t, w.Passes, len(n.Passes))
	var atomics uint64
	for i, ps := range n.Passes {
		assert.Equal(t, ps.Read+ps.Written, w.Passes[i].Bytes)
		atomics += w.Passes[i].Atomics
		if ps.Name == "scatter" {
			assert.Equal(t, uint64(p.NumUpdates()), ps.Positions, "one position per update")
		}
	}
	if n.Path == "native" || n.Path == "cas" {
		assert.Equal(t, uint64(p.NumUpdates()), atomics, "one atomic per update")
	}
	in, err := b.NeedsInPlace(p)
	require.NoError(t, err)
	wi := in.Work()
	assert.Zero(t, wi.UploadBytes+wi.DownloadBytes, "in place: no host transfers")
}

// TestRunAtomicsWork: the atomics of a ScatterND scatter over rows of
// several units fall along the rows (cost.Pass.RunAtomics), those of rows
// of one unit and of a ScatterElements scatter do not; a host call counts
// one host call, a call in place on resident tensors none.
func TestRunAtomicsWork(t *testing.T) {
	b := openTest(t, Options{})
	rows := func(width int) ops.Request {
		// The bench's SND-sum-dup: 64K updates into 4096 rows, large
		// enough for the atomics rather than the in-order fold.
		const n, m = 4096, 65536
		shape := []int{n}
		if width > 1 {
			shape = []int{n, width}
		}
		data, _ := tensor.New(tensor.Float32, shape)
		count := m / width
		updShape := append([]int{count}, shape[1:]...)
		upd, _ := tensor.New(tensor.Float32, updShape)
		idx, _ := tensor.New(tensor.Int64, []int{count, 1})
		for i := range count {
			tensor.View[int64](idx)[i] = int64(i*7919) % n
		}
		return ops.Request{Op: "ScatterND-18", Reduction: "add", Data: data, Indices: idx, Updates: upd}
	}
	for _, c := range []struct {
		name string
		req  ops.Request
		runs bool
	}{
		{"ScatterND rows of 16", rows(16), true},
		{"ScatterND rows of 1", rows(1), false},
		{"ScatterElements", dupRequest("ScatterElements-18", "add", tensor.Float32, 16384), false},
	} {
		p, err := ops.Prepare(c.req)
		require.NoError(t, err, c.name)
		n, err := b.Needs(p)
		require.NoError(t, err, c.name)
		w := n.Work()
		assert.Equal(t, 1, w.HostCalls, c.name)
		var atomics, runs uint64
		for _, ps := range w.Passes {
			atomics += ps.Atomics
			runs += ps.RunAtomics
		}
		t.Logf("%s: path %s, %d atomics, %d along rows", c.name, n.Path, atomics, runs)
		require.Contains(t, []string{"native", "cas"}, n.Path, "%s: the atomics' path (native float add, or compare-and-swap)", c.name)
		require.Equal(t, uint64(p.NumUpdates()), atomics, c.name)
		if c.runs {
			assert.Equal(t, atomics, runs, c.name)
		} else {
			assert.Zero(t, runs, c.name)
		}
		in, err := b.NeedsInPlace(p)
		require.NoError(t, err, c.name)
		assert.Zero(t, in.Work().HostCalls, c.name)
	}
}

// TestUncompiledPipelines: a plan's pipelines count as uncompiled until
// a call (or Warm) creates them, in this process or in an earlier one
// that kept the pipeline cache; the estimate's work carries them.
func TestUncompiledPipelines(t *testing.T) {
	dir := t.TempDir()
	req := dupRequest("ScatterElements-18", "add", tensor.Float32, 3000)
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	b := openTest(t, Options{PipelineCacheDir: dir})
	n, err := b.Needs(p)
	require.NoError(t, err)
	require.Positive(t, n.Pipelines)
	assert.Equal(t, n.Pipelines, b.Uncompiled(n), "nothing compiled yet")
	w, err := b.Work(p)
	require.NoError(t, err)
	want := n.Work()
	want.Compiles = n.Pipelines
	assert.Equal(t, want, w, "Work is Needs' work with its compiles, without the plan's text")
	_, err = b.Warm(context.Background(), p)
	require.NoError(t, err)
	n, err = b.Needs(p)
	require.NoError(t, err)
	assert.Zero(t, b.Uncompiled(n), "warmed")
	w, err = b.Work(p)
	require.NoError(t, err)
	assert.Zero(t, w.Compiles)
	require.NoError(t, b.Close())

	later := openTest(t, Options{PipelineCacheDir: dir})
	n, err = later.Needs(p)
	require.NoError(t, err)
	assert.Zero(t, later.Uncompiled(n), "compiled by an earlier backend that kept the cache")
	in, err := later.NeedsInPlace(p)
	require.NoError(t, err)
	assert.Zero(t, later.Uncompiled(in), "Warm compiles the resident call's pipelines too")
}
