package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// testOptions keeps the runner tests fast: a small memory-copy buffer and
// few repeats.
func testOptions() Options {
	return Options{Repeats: 3, MemcpyMinBytes: 1 << 20, MemoryBudget: -1}
}

func cpuTarget() Target { return Target{Label: "cpu", Backend: cpuref.New()} }

// fake wraps the CPU reference and changes what it does.
type fake struct {
	*cpuref.Backend
	name string
	// after, when set, alters the correct output.
	after func(out *tensor.Tensor)
	// err, when set, is returned instead of running.
	err error
	// lazy returns without writing out at all.
	lazy bool
	// phases, when set, are reported as device timings.
	phases []Phase
}

func (f *fake) Name() string { return f.name }

func (f *fake) Execute(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error {
	if f.err != nil {
		return f.err
	}
	if f.lazy {
		return nil
	}
	if err := f.Backend.Execute(ctx, p, out); err != nil {
		return err
	}
	if f.after != nil {
		f.after(out)
	}
	return nil
}

// timedFake is a fake that is a DeviceTimer.
type timedFake struct{ *fake }

func (f timedFake) LastDeviceTimings() []Phase { return f.phases }

// copyingFake is a DeviceTimer that also times a device copy.
type copyingFake struct {
	timedFake
	copied *uint64
}

func (f copyingFake) CopyTime(_ context.Context, size uint64, _ int) (time.Duration, error) {
	*f.copied = size
	return 2 * time.Millisecond, nil
}

func gpuTarget(f *fake) Target {
	f.Backend = cpuref.New()
	if f.name == "" {
		f.name = "fake device"
	}
	return Target{Label: "gpu", Backend: f}
}

func quick(t *testing.T, names ...string) []*Workload {
	t.Helper()
	ws, err := Select(names, QuickScale, 1)
	require.NoError(t, err)
	return ws
}

func TestBuiltinShapesAtFullSize(t *testing.T) {
	for _, c := range []struct {
		name               string
		data, idx, updates []int
		op, reduction      string
		dt                 tensor.DType
	}{
		{"SU1", []int{1000, 256, 10, 15}, []int{125, 20}, []int{1000, 125, 20, 10, 15}, "ScatterUpdate-3", "none", tensor.Float32},
		{"SND5", []int{1000, 256, 10, 15}, []int{25, 125, 3}, []int{25, 125, 15}, "ScatterNDUpdate-15", "none", tensor.Float32},
		{"SE", []int{4096, 4096}, []int{1024, 4096}, []int{1024, 4096}, "ScatterElements-18", "none", tensor.Float32},
		{"SE-sum-dup", []int{1 << 20}, []int{16 << 20}, []int{16 << 20}, "ScatterElements-18", "add", tensor.Float32},
		{"SE-zipf", []int{1 << 20}, []int{16 << 20}, []int{16 << 20}, "ScatterElements-18", "add", tensor.Float32},
		{"SND-sum-dup", []int{1 << 20, 16}, []int{1 << 20, 1}, []int{1 << 20, 16}, "ScatterND-18", "add", tensor.Float32},
		{"SS", []int{8192, 8192}, nil, []int{4096, 4096}, "SliceScatter-15", "none", tensor.Float32},
		{"SND-max-i32", []int{4 << 20}, []int{8 << 20, 1}, []int{8 << 20}, "ScatterND-18", "max", tensor.Int32},
		{"SND-1000", []int{4096, 16}, []int{16, 1}, []int{16, 16}, "ScatterND-18", "none", tensor.Float32},
		{"SND5-f16", []int{1000, 256, 10, 15}, []int{25, 125, 3}, []int{25, 125, 15}, "ScatterNDUpdate-15", "none", tensor.Float16},
		{"SND5-i64", []int{1000, 256, 10, 15}, []int{25, 125, 3}, []int{25, 125, 15}, "ScatterNDUpdate-15", "none", tensor.Int64},
		{"SE-f16", []int{4096, 4096}, []int{1024, 4096}, []int{1024, 4096}, "ScatterElements-18", "none", tensor.Float16},
		{"SE-i64", []int{4096, 4096}, []int{1024, 4096}, []int{1024, 4096}, "ScatterElements-18", "none", tensor.Int64},
		{"KV-decode", []int{8, 32, 4096, 128}, []int{8}, []int{8, 32, 1, 128}, "TensorScatter-24", "none", tensor.Float16},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := Builtin(strings.ToLower(c.name), 1, 1)
			require.NoError(t, err)
			assert.Equal(t, c.name, w.Name)
			assert.Equal(t, c.data, w.DataShape)
			assert.Equal(t, c.idx, w.IndicesShape)
			assert.Equal(t, c.updates, w.UpdatesShape)
			assert.Equal(t, c.op, w.Op)
			assert.Equal(t, c.reduction, w.Reduction)
			assert.Equal(t, c.dt, w.DType)
			n := func(s []int) int64 {
				v, err := tensor.NumElements(s)
				require.NoError(t, err)
				return int64(v)
			}
			size := int64(c.dt.Size())
			want := 2*n(c.data)*size + n(c.updates)*size
			if c.idx != nil {
				want += 8 * n(c.idx)
			}
			switch c.name {
			case "SND-1000":
				want *= 1000 // every call moves as much
				assert.Equal(t, 1000, w.Calls)
			case "KV-decode":
				// 1000 steps in place, each the one-pass bytes
				// (ops.Plan.OnePassBytes): each token read, the element
				// it lands on read and written, and the write indices
				// read; the cache is not copied.
				want = 1000 * (3*n(c.updates)*size + 8*n(c.idx))
				assert.Equal(t, 1000, w.Calls)
				assert.True(t, w.Decode)
			default:
				assert.Equal(t, 1, w.Calls)
			}
			assert.Equal(t, want, w.Traffic())
		})
	}
	assert.Len(t, Names(), 14)
}

func TestEveryQuickWorkloadIsAValidRequest(t *testing.T) {
	for _, w := range quick(t) {
		req, err := w.Request()
		require.NoError(t, err, w.Name)
		p, err := ops.Prepare(req)
		require.NoError(t, err, w.Name)
		assert.Equal(t, w.DataShape, p.Shape, w.Name)
		assert.Equal(t, w.DataBytes, tensorBytes(req.Data), w.Name)
		assert.Equal(t, w.UpdatesBytes, tensorBytes(req.Updates), w.Name)
	}
}

// TestShapesPlanAsTheInputs: a workload's call without payloads
// (Shapes) prepares into the plan its inputs prepare into, for the
// built-in workloads and a Custom one.
func TestShapesPlanAsTheInputs(t *testing.T) {
	ws := quick(t)
	req, err := ws[0].Request()
	require.NoError(t, err)
	custom, err := Custom("custom", req)
	require.NoError(t, err)
	for _, w := range append(ws, custom) {
		req, err := w.Request()
		require.NoError(t, err, w.Name)
		full, err := ops.Prepare(req)
		require.NoError(t, err, w.Name)
		shapes := w.Shapes()
		for _, x := range []*tensor.Tensor{shapes.Data, shapes.Indices, shapes.Updates} {
			if x != nil {
				assert.Nil(t, x.Data, "%s: no payload", w.Name)
			}
		}
		p, err := ops.PrepareShapes(shapes)
		require.NoError(t, err, w.Name)
		assert.Equal(t, full.Op, p.Op, w.Name)
		assert.Equal(t, full.Kind, p.Kind, w.Name)
		assert.Equal(t, full.DType, p.DType, w.Name)
		assert.Equal(t, full.Shape, p.Shape, w.Name)
		assert.Equal(t, full.Reduction, p.Reduction, w.Name)
		assert.Equal(t, full.J, p.J, w.Name)
		assert.Equal(t, full.NumUpdates(), p.NumUpdates(), w.Name)
		assert.Equal(t, full.NumIndices(), p.NumIndices(), w.Name)
	}
}

func TestSelect(t *testing.T) {
	ws, err := Select([]string{"se", " SS ", "SE"}, QuickScale, 1)
	require.NoError(t, err)
	require.Len(t, ws, 2)
	assert.Equal(t, "SE", ws[0].Name)
	assert.Equal(t, "SS", ws[1].Name)

	_, err = Select([]string{"SE", "nope"}, 1, 1)
	require.ErrorIs(t, err, ErrUnknownWorkload)
	assert.Contains(t, err.Error(), `"nope"`)
	assert.Contains(t, err.Error(), "SND-max-i32")

	_, err = Builtin("SE", 0, 1)
	require.Error(t, err)
	_, err = Builtin("SE", math.Inf(1), 1)
	require.Error(t, err)
}

// TestInputsAreDeterministic: the same seed gives the same inputs whatever
// the number of threads; another seed gives others.
func TestInputsAreDeterministic(t *testing.T) {
	build := func(seed uint64, procs int, name ...string) ops.Request {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		w, err := Builtin(append(name, "SND5")[0], QuickScale, seed)
		require.NoError(t, err)
		req, err := w.Request()
		require.NoError(t, err)
		return req
	}
	a, b, c := build(7, 1), build(7, 4), build(8, 4)
	for _, pair := range [][2]*tensor.Tensor{{a.Data, b.Data}, {a.Indices, b.Indices}, {a.Updates, b.Updates}} {
		assert.True(t, tensor.Equal(pair[0], pair[1]))
	}
	assert.False(t, tensor.Equal(a.Data, c.Data))
	assert.False(t, tensor.Equal(a.Indices, c.Indices))

	// Values are spread: floats in [-1, 1) with both signs, indices over
	// their whole range.
	v := tensor.View[float32](a.Data)
	lo, hi := float32(0), float32(0)
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	assert.Less(t, lo, float32(-0.9))
	assert.Greater(t, hi, float32(0.9))
	assert.GreaterOrEqual(t, lo, float32(-1))
	assert.Less(t, hi, float32(1))
	seen := map[int64]bool{}
	for i, x := range tensor.View[int64](a.Indices) {
		if i%3 == 1 {
			seen[x] = true
			assert.Less(t, x, int64(256))
		}
	}
	assert.Greater(t, len(seen), 100) // component 1 of 125 tuples, in [0, 256)
	su1 := build(1, 2, "SU1")
	seen = map[int64]bool{}
	for _, x := range tensor.View[int64](su1.Indices) {
		seen[x] = true
	}
	assert.Len(t, seen, 256, "2500 indices in [0, 256) reach every slice")
}

func TestCompare(t *testing.T) {
	nan1 := math.Float32frombits(0x7fc00001)
	nan2 := math.Float32frombits(0xffc00002)
	want := tensor.MustFromSlice([]int{5}, []float32{1, nan1, 0, 4, 5})

	c, err := Compare(want, tensor.MustFromSlice([]int{5}, []float32{1, nan2, 0, 4, 5}), nil)
	require.NoError(t, err)
	assert.Equal(t, Comparison{First: -1}, c, "any NaN equals any NaN")

	c, err = Compare(want, tensor.MustFromSlice([]int{5}, []float32{1, nan1, float32(math.Copysign(0, -1)), 4, 5.5}), nil)
	require.NoError(t, err)
	assert.Equal(t, int64(2), c.Mismatches, "-0 differs from +0 bit for bit")
	assert.Equal(t, 2, c.First)
	assert.Equal(t, 0.5, c.MaxAbsDiff)

	c, err = Compare(want, tensor.MustFromSlice([]int{5}, []float32{1, 2, 0, 4, 5}), nil)
	require.NoError(t, err)
	assert.Equal(t, int64(1), c.Mismatches)
	assert.True(t, math.IsInf(c.MaxAbsDiff, 1), "NaN against a number")

	// Within a bound.
	c, err = Compare(want, tensor.MustFromSlice([]int{5}, []float32{1, nan1, 0, 4.001, 5.5}), []float64{0, 0, 0, 0.01, 0.1})
	require.NoError(t, err)
	assert.Equal(t, int64(1), c.Mismatches)
	assert.Equal(t, 4, c.First)

	// Integers: exact differences, even far apart.
	c, err = Compare(tensor.MustFromSlice([]int{2}, []int64{math.MinInt64, 3}), tensor.MustFromSlice([]int{2}, []int64{math.MaxInt64, 3}), nil)
	require.NoError(t, err)
	assert.Equal(t, int64(1), c.Mismatches)
	assert.Equal(t, math.Ldexp(1, 64), c.MaxAbsDiff)

	// Large tensors: chunks compare in parallel; the first mismatch is
	// the earliest.
	big := make([]int32, 1<<20)
	other := append([]int32(nil), big...)
	other[900_000], other[70_000] = 5, -2
	c, err = Compare(tensor.MustFromSlice([]int{len(big)}, big), tensor.MustFromSlice([]int{len(big)}, other), nil)
	require.NoError(t, err)
	assert.Equal(t, Comparison{Mismatches: 2, First: 70_000, MaxAbsDiff: 5}, c)

	_, err = Compare(want, tensor.MustFromSlice([]int{5}, []int32{1, 2, 3, 4, 5}), nil)
	require.Error(t, err)
}

func TestPoisonMakesEveryElementDiffer(t *testing.T) {
	ref := tensor.MustFromSlice([]int{4}, []float32{0, float32(math.NaN()), float32(math.Inf(1)), -1})
	out, err := tensor.New(tensor.Float32, []int{4})
	require.NoError(t, err)
	poison(out, ref)
	c, err := Compare(ref, out, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(4), c.Mismatches)
}

func TestRunVerifiesEveryWorkloadOnTheCPU(t *testing.T) {
	var stages []Progress
	opt := testOptions()
	opt.Progress = func(p Progress) { stages = append(stages, p) }
	rep, err := Run(context.Background(), []Target{cpuTarget()}, quick(t), opt)
	require.NoError(t, err)
	require.Len(t, rep.Results, len(Names()))
	for i, r := range rep.Results {
		assert.Equal(t, Names()[i], r.Workload)
		assert.True(t, r.Verified, r.Workload)
		assert.Empty(t, r.Skipped)
		assert.Len(t, r.Times, 3)
		assert.True(t, r.Min <= r.Median && r.Median <= r.Max)
		assert.Positive(t, r.GBps)
		assert.Positive(t, r.MemcpyGBps)
		assert.InDelta(t, r.GBps/r.MemcpyGBps, r.FractionOfMemcpy, 1e-9)
		assert.Zero(t, r.Speedup)
		assert.Zero(t, r.DeviceTime)
	}
	assert.Empty(t, rep.Failures())
	require.NotEmpty(t, stages)
	n := len(Names())
	assert.Equal(t, Progress{Workload: "SU1", Index: 1, Count: n, Stage: "inputs", Repeats: 3}, stages[0])
	assert.Contains(t, stages, Progress{Workload: "SE-i64", Index: n - 1, Count: n, Backend: "cpu", Stage: "timing", Repeat: 3, Repeats: 3})
	assert.Contains(t, stages, Progress{Workload: "KV-decode", Index: n, Count: n, Backend: "cpu", Stage: "timing", Repeat: 3, Repeats: 3})
}

func TestRunCatchesAWrongBackend(t *testing.T) {
	corrupt := &fake{after: func(out *tensor.Tensor) { tensor.View[float32](out)[17] += 1 }}
	rep, err := Run(context.Background(), []Target{cpuTarget(), gpuTarget(corrupt)}, quick(t, "SE"), testOptions())
	require.NoError(t, err)
	require.Len(t, rep.Results, 2)
	cpu, gpu := rep.Results[0], rep.Results[1]
	assert.True(t, cpu.Verified)
	assert.False(t, gpu.Verified)
	assert.Equal(t, "fake device", gpu.Device)
	assert.Equal(t, Comparison{Mismatches: 1, First: 17, MaxAbsDiff: 1}, gpu.Comparison)
	assert.Positive(t, gpu.Speedup)
	assert.Equal(t, []Result{gpu}, rep.Failures())
}

// TestRunCatchesUnwrittenOutput: a backend that writes nothing cannot pass
// on the strength of what an earlier run left in the output.
func TestRunCatchesUnwrittenOutput(t *testing.T) {
	rep, err := Run(context.Background(), []Target{cpuTarget(), gpuTarget(&fake{lazy: true})}, quick(t, "SS"), testOptions())
	require.NoError(t, err)
	gpu := rep.Results[1]
	assert.False(t, gpu.Verified)
	assert.Equal(t, int64(8192/256*8192), gpu.Comparison.Mismatches)
}

func TestRunSkipsUnsupportedAndRecordsErrors(t *testing.T) {
	unsupported := &fake{err: &ops.Error{Op: "ScatterND-18", Err: ops.ErrUnsupported, Msg: "vulkan: reduction \"max\" has no kernels"}}
	rep, err := Run(context.Background(), []Target{cpuTarget(), gpuTarget(unsupported)}, quick(t, "SND-max-i32"), testOptions())
	require.NoError(t, err)
	gpu := rep.Results[1]
	assert.Equal(t, `unsupported: ScatterND-18: vulkan: reduction "max" has no kernels`, gpu.Skipped)
	assert.False(t, gpu.Failed())
	assert.Empty(t, rep.Failures())

	lost := &fake{err: fmt.Errorf("vulkan: vkQueueSubmit: %w", ops.ErrDeviceLost)}
	rep, err = Run(context.Background(), []Target{cpuTarget(), gpuTarget(lost)}, quick(t, "SE"), testOptions())
	require.NoError(t, err)
	gpu = rep.Results[1]
	assert.Equal(t, "vulkan: vkQueueSubmit: device lost", gpu.Error)
	assert.True(t, gpu.Failed())
	assert.Len(t, rep.Failures(), 1)
}

func TestRunReturnsTheReferenceError(t *testing.T) {
	req := ops.Request{
		Op:      "ScatterNDUpdate-15",
		Data:    tensor.MustFromSlice([]int{4}, []float32{1, 2, 3, 4}),
		Indices: tensor.MustFromSlice([]int{1, 1}, []int64{9}),
		Updates: tensor.MustFromSlice([]int{1}, []float32{5}),
	}
	w, err := Custom("bad", req)
	require.NoError(t, err)
	_, err = Run(context.Background(), []Target{cpuTarget()}, []*Workload{w}, testOptions())
	var re *RunError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "bad", re.Workload)
	require.ErrorIs(t, err, ops.ErrIndexRange)
	assert.Equal(t, "bad on cpu: ScatterNDUpdate-15: indices[0,0] = 9 is out of range [-4, 3] for axis 0 of data", err.Error())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Run(ctx, []Target{cpuTarget()}, quick(t, "SE"), testOptions())
	require.ErrorIs(t, err, context.Canceled)
}

func TestRunSkipsWhatDoesNotFit(t *testing.T) {
	opt := testOptions()
	opt.MemoryBudget = 1 << 10
	rep, err := Run(context.Background(), []Target{cpuTarget(), gpuTarget(&fake{})}, quick(t, "SE", "SS"), opt)
	require.NoError(t, err)
	require.Len(t, rep.Results, 4)
	for _, r := range rep.Results {
		assert.Regexp(t, `^skipped: needs about [0-9.]+ MB of memory, over the budget of 1.0 kB$`, r.Skipped)
		assert.False(t, r.Verified)
		assert.False(t, r.Failed())
	}
	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	assert.Equal(t, 2, strings.Count(table.String(), "skipped: needs about"), "one line per workload:\n%s", table.String())

	// The estimate grows with the backends and the inputs.
	w := quick(t, "SU1")[0]
	assert.Greater(t, w.footprint(1, false), w.footprint(0, false))
	assert.Greater(t, w.footprint(0, false), w.DataBytes+w.UpdatesBytes)
	full, err := Builtin("SU1", 1, 1)
	require.NoError(t, err)
	assert.Greater(t, full.footprint(0, false), int64(1800e6), "SU1 needs its 1.5 GB of updates, data and two outputs")
}

func TestAvailableMemory(t *testing.T) {
	n, ok := AvailableMemory()
	if runtime.GOOS != "linux" {
		t.Skip("AvailableMemory reads /proc")
	}
	require.True(t, ok)
	assert.Greater(t, n, int64(16<<20))
}

// TestRunToleratesRoundingInFloatSums: another backend's float sums may
// differ by rounding, within the bound; beyond it, or in deterministic
// mode, they fail.
func TestRunToleratesRoundingInFloatSums(t *testing.T) {
	nudge := func(by float32) func(out *tensor.Tensor) {
		return func(out *tensor.Tensor) {
			v := tensor.View[float32](out)
			for i := 0; i < len(v); i += 7 {
				v[i] += by * float32(math.Abs(float64(v[i])))
			}
		}
	}
	ws := quick(t, "SE-sum-dup")
	run := func(f *fake, opt Options) Result {
		rep, err := Run(context.Background(), []Target{cpuTarget(), gpuTarget(f)}, ws, opt)
		require.NoError(t, err)
		return rep.Results[1]
	}
	r := run(&fake{after: nudge(1e-7)}, testOptions())
	assert.True(t, r.Verified)
	assert.Equal(t, DefaultTolerance, r.Tolerance)
	assert.Positive(t, r.Comparison.MaxAbsDiff)

	r = run(&fake{after: nudge(1e-3)}, testOptions())
	assert.False(t, r.Verified)

	opt := testOptions()
	opt.Deterministic = true
	r = run(&fake{after: nudge(1e-7)}, opt)
	assert.False(t, r.Verified)
	assert.Zero(t, r.Tolerance)

	// Reductions without rounding freedom stay bit for bit.
	rep, err := Run(context.Background(), []Target{cpuTarget(), gpuTarget(&fake{after: func(out *tensor.Tensor) {
		tensor.View[int32](out)[3]++
	}})}, quick(t, "SND-max-i32"), testOptions())
	require.NoError(t, err)
	assert.False(t, rep.Results[1].Verified)
	assert.Zero(t, rep.Results[1].Tolerance)
}

// TestVerifiedWordsSayHowTheRowMatched: a row that a tolerance applies
// to says "verified bit for bit" where its output equals the reference's
// bit for bit, "verified within" the tolerance, with the elements that
// needed it, where some did, and "checked within" it where it failed;
// the JSON says the same in tolerated and bit_for_bit.
func TestVerifiedWordsSayHowTheRowMatched(t *testing.T) {
	nudge := func(by float32) func(out *tensor.Tensor) {
		return func(out *tensor.Tensor) {
			v := tensor.View[float32](out)
			for i := 0; i < len(v); i += 7 {
				v[i] += by * float32(math.Abs(float64(v[i])))
			}
		}
	}
	ws := quick(t, "SE-sum-dup")
	run := func(f *fake, opt Options) (*Report, string, map[string]any) {
		rep, err := Run(context.Background(), []Target{cpuTarget(), gpuTarget(f)}, ws, opt)
		require.NoError(t, err)
		var table bytes.Buffer
		require.NoError(t, rep.WriteTable(&table))
		rows, _, ok := strings.Cut(table.String(), "\n\nMB/pass:") // the rows and their notes, not the footer
		require.True(t, ok, table.String())
		js, err := rep.MarshalJSON()
		require.NoError(t, err)
		var doc struct {
			Results []map[string]any `json:"results"`
		}
		require.NoError(t, json.Unmarshal(js, &doc))
		require.Len(t, doc.Results, 2)
		return rep, rows + "\n", doc.Results[1]
	}

	rep, table, js := run(&fake{}, testOptions())
	r := rep.Results[1]
	require.True(t, r.Verified)
	assert.True(t, r.BitForBit())
	assert.Equal(t, DefaultTolerance, r.Tolerance, "the tolerance was allowed")
	assert.Zero(t, r.Comparison.Tolerated)
	assert.Contains(t, table, "verified bit for bit\n")
	assert.NotContains(t, table, "checked within")
	assert.NotContains(t, table, "verified within")
	assert.Equal(t, true, js["bit_for_bit"])
	assert.Equal(t, 0.0, js["tolerated"])

	rep, table, js = run(&fake{after: nudge(1e-7)}, testOptions())
	r = rep.Results[1]
	require.True(t, r.Verified)
	assert.False(t, r.BitForBit())
	n := r.Comparison.Tolerated
	assert.Positive(t, n)
	elems := 1
	for _, d := range ws[0].DataShape {
		elems *= d
	}
	assert.LessOrEqual(t, n, int64((elems+6)/7), "at most the nudged elements")
	assert.Contains(t, table, fmt.Sprintf("verified within 1e-05 of the sum of magnitudes: %d elements differ from the cpu's bits\n", n))
	assert.NotContains(t, table, "verified bit for bit")
	assert.Equal(t, false, js["bit_for_bit"])
	assert.Equal(t, float64(n), js["tolerated"])
	assert.Equal(t, DefaultTolerance, js["tolerance"])

	rep, table, js = run(&fake{after: nudge(1e-3)}, testOptions())
	require.False(t, rep.Results[1].Verified)
	assert.Contains(t, table, "checked within 1e-05 of the sum of magnitudes\n")
	assert.NotContains(t, table, "verified within")
	assert.Equal(t, false, js["bit_for_bit"])

	// Deterministic: no tolerance, so no note; bit for bit all the same.
	opt := testOptions()
	opt.Deterministic = true
	rep, table, js = run(&fake{}, opt)
	assert.True(t, rep.Results[1].BitForBit())
	assert.Zero(t, rep.Results[1].Tolerance)
	assert.NotContains(t, table, "within")
	assert.Equal(t, true, js["bit_for_bit"])
}

func TestBoundsFollowTheReduction(t *testing.T) {
	req := ops.Request{
		Op:      "ScatterElementsUpdate-12",
		Data:    tensor.MustFromSlice([]int{3}, []float32{1, -2, 4}),
		Indices: tensor.MustFromSlice([]int{3}, []int64{0, 0, 2}),
		Updates: tensor.MustFromSlice([]int{3}, []float32{-3, 5, 0.5}),
		Axis:    tensor.Scalar(0),
	}
	for red, want := range map[string][]float64{
		"sum":  {9, 2, 4.5},
		"prod": {15, 2, 2},
		"mean": {3, 2, 2.25},
	} {
		req.Reduction = red
		b, err := bounds(context.Background(), req, 2)
		require.NoError(t, err)
		for i := range want {
			want[i] *= 2
		}
		assert.Equal(t, want, b, red)
	}
	// sub's bound is sum's (|a - b| <= |a| + |b|); sub is spelled as the
	// spec spells it.
	nd := ops.Request{
		Op:      "ScatterNDUpdate-15",
		Data:    tensor.MustFromSlice([]int{3}, []float32{1, -2, 4}),
		Indices: tensor.MustFromSlice([]int{3, 1}, []int64{0, 0, 2}),
		Updates: tensor.MustFromSlice([]int{3}, []float32{-3, 5, 0.5}),
	}
	nd.Reduction = "sub"
	b, err := bounds(context.Background(), nd, 2)
	require.NoError(t, err)
	assert.Equal(t, []float64{18, 4, 9}, b)
	assert.Equal(t, 8*math.Ldexp(1, -10), effectiveTolerance(tensor.Float16, 1e-5))
	assert.Equal(t, 1e-5, effectiveTolerance(tensor.Float32, 1e-5))
}

// A custom workload names its reduction as its operator spells it, and
// tolerates rounding exactly where the fold depends on order.
func TestCustomWorkloadReduction(t *testing.T) {
	req := func(dt tensor.DType, red string) ops.Request {
		data, _ := tensor.New(dt, []int{4})
		upd, _ := tensor.New(dt, []int{2})
		return ops.Request{Op: "ScatterND-18", Reduction: red, Data: data, Updates: upd,
			Indices: tensor.MustFromSlice([]int{2, 1}, []int64{1, 1})}
	}
	for _, c := range []struct {
		dt       tensor.DType
		red      string
		name     string
		tolerant bool
	}{
		{tensor.Float32, "add", "add", true},
		{tensor.Float16, "mul", "mul", true},
		{tensor.Float32, "max", "max", false},
		{tensor.Int32, "add", "add", false},
		{tensor.Float64, "", "none", false},
	} {
		w, err := Custom("c", req(c.dt, c.red))
		require.NoError(t, err)
		assert.Equal(t, c.name, w.Reduction, "%v %q", c.dt, c.red)
		r := &runner{w: w, opt: Options{Tolerance: DefaultTolerance}}
		assert.Equal(t, c.tolerant, r.tolerant(), "%v %q", c.dt, c.red)
		r.opt.Tolerance = 0
		assert.False(t, r.tolerant(), "%v %q with no tolerance", c.dt, c.red)
	}
	// Names are matched exactly, as the spec spells them.
	_, err := Custom("c", req(tensor.Float32, " ADD"))
	require.ErrorIs(t, err, ops.ErrReduction)
	assert.Contains(t, err.Error(), "did you mean add?")
}

func TestDeviceTimings(t *testing.T) {
	f := &fake{phases: []Phase{{"upload", 2 * time.Millisecond}, {"scatter", 5 * time.Millisecond}}}
	tgt := gpuTarget(f)
	tgt.Backend = timedFake{f}
	rep, err := Run(context.Background(), []Target{cpuTarget(), tgt}, quick(t, "SND5"), testOptions())
	require.NoError(t, err)
	gpu := rep.Results[1]
	assert.True(t, gpu.Verified)
	assert.Equal(t, 7*time.Millisecond, gpu.DeviceTime)
	assert.Equal(t, f.phases, gpu.Phases)

	total, phases := summarisePhases([][]Phase{
		{{"a", 1}, {"b", 10}}, {{"a", 3}, {"b", 30}}, nil, {{"a", 2}, {"b", 20}, {"c", 7}},
	})
	assert.Equal(t, time.Duration(29), total) // the sums are 11, 33 and 29
	assert.Equal(t, []Phase{{"a", 2}, {"b", 20}, {"c", 7}}, phases)
	assert.Equal(t, time.Duration(5), median([]time.Duration{9, 1, 4, 6}))
}

func TestDeviceCopyYardstick(t *testing.T) {
	f := &fake{phases: []Phase{{"scatter", 5 * time.Millisecond}}}
	tgt := gpuTarget(f)
	var copied uint64
	tgt.Backend = copyingFake{timedFake{f}, &copied}
	rep, err := Run(context.Background(), []Target{cpuTarget(), tgt}, quick(t, "SND5"), testOptions())
	require.NoError(t, err)
	gpu := rep.Results[1]
	assert.Equal(t, uint64(gpu.Bytes/2), copied, "the copy moves as many bytes, read plus written, as the traffic counts")
	assert.Equal(t, 2*time.Millisecond, gpu.DeviceCopyTime)
	assert.InDelta(t, 2.5, gpu.DeviceOverCopy, 1e-9)
	assert.Zero(t, rep.Results[0].DeviceCopyTime, "the CPU has no device copy")
	var b strings.Builder
	require.NoError(t, rep.WriteTable(&b))
	assert.Contains(t, b.String(), "device copy of the same traffic: 2.000 ms; device time is 2.50x that")
	// The footer explains every column of the header.
	for _, col := range []string{"MB/pass:", "memcpy ms:", "GB/s:", "memcpy:", "verified:", "device ms:", "speedup:", "max diff:"} {
		assert.Contains(t, b.String(), col)
	}
	assert.Contains(t, b.String(), "relative to the sum of the magnitudes")
}

// residentFake is a fake that is a ResidentRunner: it runs the request on
// the CPU reference, then alters the output as fake.after says, or fails
// with err.
type residentFake struct {
	*fake
	err   error
	calls *int
}

// fakeTimes returns the times a fake runner reports for repeats runs:
// 1 ms, 2 ms, ...
func fakeTimes(repeats int) []time.Duration {
	times := make([]time.Duration, repeats)
	for i := range times {
		times[i] = time.Duration(i+1) * time.Millisecond
	}
	return times
}

func (f residentFake) RunResident(ctx context.Context, req ops.Request, repeats int, out *tensor.Tensor) ([]time.Duration, error) {
	*f.calls++
	if f.err != nil {
		return nil, f.err
	}
	p, err := ops.Prepare(req)
	if err != nil {
		return nil, err
	}
	if err := f.fake.Execute(ctx, p, out); err != nil {
		return nil, err
	}
	times := fakeTimes(repeats)
	return times, nil
}

// TestResidentTimes: a ResidentRunner's time is reported and its output
// verified; a wrong output fails the result, ErrUnsupported leaves no time.
func TestResidentTimes(t *testing.T) {
	calls := 0
	f := &fake{}
	tgt := gpuTarget(f)
	tgt.Backend = residentFake{fake: f, calls: &calls}
	rep, err := Run(context.Background(), []Target{cpuTarget(), tgt}, quick(t, "SE"), testOptions())
	require.NoError(t, err)
	assert.Equal(t, 1, calls, "the reference is not asked")
	gpu := rep.Results[1]
	assert.Equal(t, 2*time.Millisecond, gpu.ResidentTime, "the median of 1, 2 and 3 ms")
	assert.True(t, gpu.Verified)
	var b strings.Builder
	require.NoError(t, rep.WriteTable(&b))
	assert.Contains(t, b.String(), "inputs resident on the device: 2.000 ms per call (no host transfers)")
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	assert.Contains(t, string(js), `"resident_ms":2`)

	// The resident output is checked like the others: one wrong element
	// fails the result.
	calls = 0
	wrongAfter := 0
	f2 := &fake{}
	tgt = gpuTarget(f2)
	tgt.Backend = residentFake{fake: f2, calls: &calls}
	f2.after = func(out *tensor.Tensor) {
		if calls > 0 { // only the resident run
			wrongAfter++
			tensor.View[float32](out)[5]++
		}
	}
	rep, err = Run(context.Background(), []Target{cpuTarget(), tgt}, quick(t, "SE"), testOptions())
	require.NoError(t, err)
	assert.Equal(t, 1, wrongAfter)
	assert.False(t, rep.Results[1].Verified)
	assert.Equal(t, int64(1), rep.Results[1].Comparison.Mismatches)

	// Unsupported: no resident time, still verified; another error fails.
	tgt.Backend = residentFake{fake: &fake{Backend: cpuref.New(), name: "x"}, calls: &calls, err: ops.ErrUnsupported}
	rep, err = Run(context.Background(), []Target{cpuTarget(), tgt}, quick(t, "SE"), testOptions())
	require.NoError(t, err)
	assert.Zero(t, rep.Results[1].ResidentTime)
	assert.True(t, rep.Results[1].Verified)
	tgt.Backend = residentFake{fake: &fake{Backend: cpuref.New(), name: "x"}, calls: &calls, err: errors.New("boom")}
	rep, err = Run(context.Background(), []Target{cpuTarget(), tgt}, quick(t, "SE"), testOptions())
	require.NoError(t, err)
	assert.True(t, rep.Results[1].Failed())
	assert.Equal(t, "resident inputs: boom", rep.Results[1].Error)
}

func TestReportJSONAndTable(t *testing.T) {
	f := &fake{after: func(out *tensor.Tensor) { tensor.View[float32](out)[0] = float32(math.NaN()) }}
	rep, err := Run(context.Background(), []Target{cpuTarget(), gpuTarget(f)}, quick(t, "SE"), testOptions())
	require.NoError(t, err)
	rep.Command, rep.Scale, rep.Seed = "gpuscatter bench --quick", QuickScale, 1

	path := filepath.Join(t.TempDir(), "r.json")
	require.NoError(t, rep.WriteJSON(path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc struct {
		Command string           `json:"command"`
		Results []map[string]any `json:"results"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, "gpuscatter bench --quick", doc.Command)
	require.Len(t, doc.Results, 2)
	gpu := doc.Results[1]
	assert.Equal(t, "gpu", gpu["backend"])
	assert.Equal(t, false, gpu["verified"])
	assert.Nil(t, gpu["max_abs_diff"], "an infinite difference is null")
	assert.Contains(t, gpu, "speedup")
	assert.NotContains(t, doc.Results[0], "speedup")
	assert.Equal(t, 0.0, doc.Results[0]["max_abs_diff"])

	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	assert.Contains(t, table.String(), "gpu: fake device")
	assert.Regexp(t, `\nSE +gpu +[0-9.]+ .* NO: 1 differ +inf\n`, table.String())
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	err := WriteFileAtomic(path, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return errors.New("disk full")
	})
	require.EqualError(t, err, "disk full")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left")

	require.NoError(t, WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write([]byte("new"))
		return err
	}))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))
}

// TestRunKeepsWhatWasMeasured: each result is reported to Measured as soon
// as it is complete, and a run whose ctx is done part-way returns ctx's
// error with a report of every result completed by then.
func TestRunKeepsWhatWasMeasured(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen []string
	opt := testOptions()
	opt.Measured = func(r Result) {
		seen = append(seen, r.Workload+" "+r.Backend)
		if r.Workload == "SE" && r.Backend == "gpu" {
			cancel() // as a signal would, after the 4th result
		}
	}
	rep, err := Run(ctx, []Target{cpuTarget(), gpuTarget(&fake{})}, quick(t, "SND5", "SE", "SS"), opt)
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, rep)
	assert.True(t, rep.Interrupted)
	assert.Equal(t, []string{"SND5 cpu", "SND5 gpu", "SE cpu", "SE gpu"}, seen)
	require.Len(t, rep.Results, 4)
	for i, r := range rep.Results {
		assert.Equal(t, seen[i], r.Workload+" "+r.Backend)
		assert.True(t, r.Verified, seen[i])
	}
	b, err := rep.MarshalJSON()
	require.NoError(t, err)
	assert.Contains(t, string(b), `"interrupted": true`)
}

// TestZipfIndices: SE-zipf's indices follow the bounded Zipf law: every
// one in range, the hottest target taking its rank's share (1/H(n, 1.1),
// about 16% of 64K updates over 4096 targets) and the next rank its share
// over 2^1.1, the same for a seed and placed elsewhere for another.
func TestZipfIndices(t *testing.T) {
	const n, u = 4096, 16 * 4096
	count := func(seed uint64) (map[int64]int, []int64) {
		idx, err := zipfIndices([]int{u}, n, 1.1, seed)
		require.NoError(t, err)
		c := map[int64]int{}
		for _, v := range tensor.View[int64](idx) {
			require.True(t, v >= 0 && v < n, "index %d", v)
			c[v]++
		}
		return c, tensor.View[int64](idx)
	}
	c, first := count(1)
	var h float64
	for r := 1; r <= n; r++ {
		h += math.Pow(float64(r), -1.1)
	}
	var counts []int
	hottest := int64(-1)
	for v, k := range c {
		counts = append(counts, k)
		if hottest < 0 || k > c[hottest] {
			hottest = v
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(counts)))
	assert.InEpsilon(t, u/h, float64(counts[0]), 0.03, "the hottest target's updates")
	assert.InEpsilon(t, u/h/math.Pow(2, 1.1), float64(counts[1]), 0.05, "the second's")
	again, same := count(1)
	assert.Equal(t, c, again)
	assert.Equal(t, first, same, "a pure function of the seed")
	other, _ := count(2)
	hot2 := int64(-1)
	for v, k := range other {
		if hot2 < 0 || k > other[hot2] {
			hot2 = v
		}
	}
	assert.NotEqual(t, hottest, hot2, "another seed places the ranks elsewhere")
	_, err := zipfIndices([]int{4}, 0, 1.1, 1)
	assert.Error(t, err)
}

// TestHottestUpdates: the most updates that meet one output element, where
// every index names one target (1-D ScatterElements, ScatterND of one
// index component, each element of a row target counting its row's);
// 0 where an index alone does not name the target.
func TestHottestUpdates(t *testing.T) {
	f32 := func(shape ...int) *tensor.Tensor {
		x, err := tensor.New(tensor.Float32, shape)
		require.NoError(t, err)
		return x
	}
	i64 := func(shape []int, v ...int64) *tensor.Tensor { return tensor.MustFromSlice(shape, v) }
	for _, c := range []struct {
		name string
		req  ops.Request
		want int64
	}{
		{"elements 1-D", ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: f32(5), Indices: i64([]int{6}, 1, 3, 1, -4, 0, 2), Updates: f32(6)}, 3},
		{"elements 2-D", ops.Request{Op: "ScatterElements-18", Data: f32(2, 3), Indices: i64([]int{1, 3}, 1, 1, 1), Updates: f32(1, 3)}, 0},
		{"nd rows", ops.Request{Op: "ScatterND-18", Reduction: "max", Data: f32(4, 2), Indices: i64([]int{3, 1}, 2, 2, 0), Updates: f32(3, 2)}, 2},
		{"nd tuples of two", ops.Request{Op: "ScatterND-18", Data: f32(4, 2), Indices: i64([]int{2, 2}, 0, 0, 0, 0), Updates: f32(2)}, 0},
		{"slice", ops.Request{Op: "SliceScatter-15", Data: f32(4), Updates: f32(2), Start: tensor.Ints(0), Stop: tensor.Ints(4), Step: tensor.Ints(2)}, 0},
	} {
		p, err := ops.Prepare(c.req)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, hottestUpdates(p), c.name)
	}
}
