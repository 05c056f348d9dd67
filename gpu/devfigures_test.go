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
	// Measured (an older version's figures have none); the small probes'
	// pass figures may come out unmeasured under load (a pass shorter
	// than its launch), so what they are is TestFitPass's and the bench's.
	assert.GreaterOrEqual(t, m.ConcurrentGroups, 1.0, "the workgroups the device runs at once")
	require.NotNil(t, m.Passes)

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
	older := fresh
	older.ConcurrentGroups = 0
	js, err = json.Marshal(older)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(files[0], js, 0o644))
	fresh, err = b.Figures(ctx, false, more)
	require.NoError(t, err)
	assert.Positive(t, fresh.ConcurrentGroups)
	assert.Equal(t, 3, calls, "figures without the occupancy one (an older version's) are measured again")

	assert.Positive(t, m.CompileMs, "a new cache folder: the probe's pipelines are compiled first")
	re, err := b.Figures(ctx, true, more)
	require.NoError(t, err)
	assert.Equal(t, 4, calls, "remeasure measures")
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

// TestPassKindsAndGroups: the plan names the kinds of pass with figures
// of their own (the last-writer table's resolve, the other resolves, the
// hot-target census's scatter) and counts each pass's workgroups with
// work; a call in place on resident tensors is planned as a Batch plans
// it, from the shapes alone, so that a call whose indices on the host
// look uniform takes the census there (a Batch cannot read them) and not
// as a host call.
func TestPassKindsAndGroups(t *testing.T) {
	b := openTest(t, Options{})
	kinds := func(n PlanNeeds) map[string]cost.PassKind {
		k := map[string]cost.PassKind{}
		for _, ps := range n.Passes {
			k[ps.Name] = ps.Kind
			wantGroups := (ps.Invocations + groupSize - 1) / groupSize
			if ps.Dispatches == 0 {
				wantGroups = 0
			}
			assert.Equal(t, wantGroups, ps.Groups, "%s: a workgroup per %d invocations with work", ps.Name, groupSize)
		}
		return k
	}

	// 128 rows patched (more than the later-writer scan takes): the
	// table, then the indexed scatter.
	data, _ := tensor.New(tensor.Float32, []int{8192, 16})
	rowIdx := make([]int64, 128)
	for i := range rowIdx {
		rowIdx[i] = int64(i * 61 % 8192)
	}
	rowIdx[127] = rowIdx[0]
	idx := tensor.MustFromSlice([]int{128, 1}, rowIdx)
	upd, _ := tensor.New(tensor.Float32, []int{128, 16})
	p, err := ops.Prepare(ops.Request{Op: "ScatterNDUpdate-15", Data: data, Indices: idx, Updates: upd})
	require.NoError(t, err)
	n, err := b.Needs(p)
	require.NoError(t, err)
	assert.Contains(t, n.Plan, "table")
	assert.Equal(t, cost.PassTable, kinds(n)["resolve"], n.Plan)
	assert.Equal(t, cost.PassIndexed, kinds(n)["scatter"], n.Plan)

	// Elements of reduction none: a resolve of its own kind.
	p, err = ops.Prepare(dupRequest("ScatterElements-18", "none", tensor.Float32, 16384))
	require.NoError(t, err)
	n, err = b.NeedsInPlace(p)
	require.NoError(t, err)
	assert.Equal(t, cost.PassResolve, kinds(n)["resolve"], n.Plan)

	// A uniform add: no census as a host call, the census in place.
	req := dupRequest("ScatterElements-18", "add", tensor.Int32, 1<<17)
	p, err = ops.Prepare(req)
	require.NoError(t, err)
	n, err = b.Needs(p)
	require.NoError(t, err)
	assert.Equal(t, cost.PassPlain, kinds(n)["scatter"], n.Plan)
	in, err := b.NeedsInPlace(p)
	require.NoError(t, err)
	assert.Equal(t, cost.PassHot, kinds(in)["scatter"], in.Plan)
	ctx := context.Background()
	c := CallOf(req)
	for _, x := range []struct {
		host *tensor.Tensor
		dev  **Tensor
	}{{req.Data, &c.Data}, {req.Indices, &c.Indices}, {req.Updates, &c.Updates}} {
		*x.dev, err = b.Upload(ctx, x.host)
		require.NoError(t, err)
		defer (*x.dev).Close()
	}
	c.Out = c.Data
	require.NoError(t, b.Run(ctx, c))
	assert.Equal(t, in.Plan, b.LastStats().Plan(), "NeedsInPlace plans what the resident call ran")
	for _, ps := range in.Passes {
		assert.Zero(t, ps.Hottest, "%s: in place, the index values are not known", ps.Name)
		assert.Zero(t, ps.Checks, "%s: in place, a resolve pass checks the indices", ps.Name)
	}

	// A skewed add on the host: the census, with its hottest target's
	// updates from the sample (a quarter of them on target 0).
	skew := dupRequest("ScatterElements-18", "add", tensor.Int32, 1<<17)
	for i := range skew.Indices.Len() {
		if i%4 == 0 {
			tensor.View[int64](skew.Indices)[i] = 0
		}
	}
	p, err = ops.Prepare(skew)
	require.NoError(t, err)
	n, err = b.Needs(p)
	require.NoError(t, err)
	require.Equal(t, cost.PassHot, kinds(n)["scatter"], n.Plan)
	require.Contains(t, n.Plan, "indices checked by the scatter")
	for _, ps := range n.Passes {
		if ps.Name == "scatter" {
			assert.InDelta(t, float64(p.NumUpdates())/4, float64(ps.Hottest), float64(p.NumUpdates())/16)
			assert.Equal(t, uint64(p.NumIndices()), ps.Checks, "no resolve pass: the scatter checks every index")
		}
	}

	// Rows of reduction none: the indexed scatter.
	rows, _ := tensor.New(tensor.Float32, []int{8192, 16})
	many := make([]int64, 4096)
	for i := range many {
		many[i] = int64(2 * i)
	}
	manyUpd, _ := tensor.New(tensor.Float32, []int{4096, 16})
	p, err = ops.Prepare(ops.Request{Op: "ScatterND-18", Data: rows, Indices: tensor.MustFromSlice([]int{4096, 1}, many), Updates: manyUpd})
	require.NoError(t, err)
	n, err = b.NeedsInPlace(p)
	require.NoError(t, err)
	assert.Equal(t, cost.PassIndexed, kinds(n)["scatter"], n.Plan)
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

// TestFitPass: two points of a kind give its figures exactly, per
// invocation or, with perDispatch, per dispatch (the table's fixed
// cost); points whose counts keep one ratio, or a negative fit, leave
// the positions alone to carry the time; no points, no figure.
func TestFitPass(t *testing.T) {
	pts := []passPoint{{inv: 100, pos: 1000, ns: 100*50 + 1000*10}, {inv: 200, pos: 8000, ns: 200*50 + 8000*10}}
	f := fitPass(pts, false)
	assert.InDelta(t, 50, f.InvocationNs, 1e-6)
	assert.InDelta(t, 10, f.PositionNs, 1e-6)
	assert.Zero(t, f.DispatchNs)

	table := []passPoint{{pos: 128, dispatches: 1, ns: 4.5e5 + 128*100}, {pos: 2048, dispatches: 1, ns: 4.5e5 + 2048*100}}
	f = fitPass(table, true)
	assert.InDelta(t, 4.5e5, f.DispatchNs, 1e-3)
	assert.InDelta(t, 100, f.PositionNs, 1e-6)
	assert.Zero(t, f.InvocationNs)

	same := []passPoint{{inv: 10, pos: 100, ns: 1000}, {inv: 20, pos: 200, ns: 3000}}
	f = fitPass(same, false)
	assert.Zero(t, f.InvocationNs, "one ratio: no invocation figure")
	assert.InDelta(t, 4000.0/300, f.PositionNs, 1e-9)
	assert.Equal(t, cost.PassFigure{}, fitPass(nil, true))
}

// TestCompileTimesKept: the first call of pipelines this Backend compiled
// and a later call of the same plan keep each pipeline's compile time
// (its creation and its first passes' extra time) with the device; a
// later process whose driver compiles them again estimates their
// compilation at those times, and a plan of other pipelines of the same
// kinds at their kinds'; where the driver keeps them, there is nothing
// to compile.
func TestCompileTimesKept(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	b := openTest(t, Options{PipelineCacheDir: dir, Deterministic: true})
	req := dupRequest("ScatterElements-18", "add", tensor.Float32, 1024)
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	n, err := b.Needs(p)
	require.NoError(t, err)
	require.NotEmpty(t, n.keys)
	first := b.CompileWork(n)
	assert.Equal(t, CompileWork{Pipelines: len(n.keys)}, first, "nothing compiled, no time kept")
	out, _ := tensor.New(tensor.Float32, []int{1024})
	for range 2 {
		require.NoError(t, b.Execute(ctx, p, out))
	}
	var kept float64
	for _, k := range n.keys {
		spec, _, err := pipelineSpec(k)
		require.NoError(t, err)
		ms, own, ok := b.dev.CompileTime(spec, compileClass(k))
		if !b.dev.Capabilities().Timestamps {
			continue // no pass times: the creation alone, where it took 1 µs or more
		}
		assert.True(t, ok && own, "%s: its own time", compileClass(k))
		kept += ms
	}
	assert.Zero(t, b.CompileWork(n), "compiled: nothing to wait for")
	require.NoError(t, b.Close())

	if b.dev.Capabilities().Timestamps {
		t.Setenv("MESA_SHADER_CACHE_DISABLE", "true")
		again := openTest(t, Options{PipelineCacheDir: dir, Deterministic: true})
		if again.dev.DriverCacheOff() != "" {
			w := again.CompileWork(n)
			assert.Zero(t, w.Pipelines)
			assert.InDelta(t, kept, w.KeptMs, 1e-6*kept, "the kept times")
			// int32 indices: other pipelines of the same kinds.
			other := req
			idx := make([]int32, req.Indices.Len())
			for i := range idx {
				idx[i] = int32(tensor.View[int64](req.Indices)[i])
			}
			other.Indices = tensor.MustFromSlice(req.Indices.Shape, idx)
			q, err := ops.Prepare(other)
			require.NoError(t, err)
			m, err := again.Needs(q)
			require.NoError(t, err)
			assert.Positive(t, again.CompileWork(m).KeptMs, "their kinds' times")
		} else {
			// The driver keeps compiled code: the index knows them all.
			assert.Zero(t, again.CompileWork(n), "kept by the driver: nothing to compile")
		}
	}
}
