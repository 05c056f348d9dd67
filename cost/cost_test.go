package cost

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func device() *Device {
	return &Device{UploadGBps: 10, DownloadGBps: 20, CopyGBps: 100, SubmitWaitUs: 50, DispatchUs: 5, ExecuteUs: 100, ElementNs: 2, AtomicNs: 8, RunAtomicNs: 4, ProbeBytes: 1,
		CPU: &CPU{Threads: 2, CopyGBps: 40, MoveGBps: 20, ElementNs: 3, ReduceNs: 6}}
}

// TestDeviceEstimate: transfers at their rates, each pass the longer of
// its bytes at the copy rate and its positions and atomics at theirs,
// dispatches and submissions at theirs; the parts add up to the total.
func TestDeviceEstimate(t *testing.T) {
	d := device()
	e := d.Estimate(GPUWork{
		UploadBytes: 10e6, DownloadBytes: 4e6, Submits: 1, Dispatches: 3,
		Passes: []Pass{
			{Bytes: 200e6},                             // memory-bound: 2 ms
			{Bytes: 1e6, Positions: 1e6},               // element-bound: 2 ms against 0.01
			{Bytes: 1e6, Positions: 1e6, Atomics: 1e6}, // 2 + 8 ms
		},
	})
	want := []Part{{"upload", 1}, {"download", 0.2}, {"passes", 14}, {"dispatches", 0.015}, {"submits", 0.05}}
	require.Len(t, e.Parts, len(want))
	var sum float64
	for i, p := range e.Parts {
		assert.Equal(t, want[i].Name, p.Name)
		assert.InDelta(t, want[i].Ms, p.Ms, 1e-9, p.Name)
		sum += p.Ms
	}
	assert.InDelta(t, 15.265, e.Ms, 1e-9)
	assert.InDelta(t, sum, e.Ms, 1e-12)
	assert.Equal(t, "15.3 ms (upload 1, download 0.2, passes 14, dispatches 0.015, submits 0.05)", e.String())
	assert.True(t, e.Known())

	// Pipelines to compile first, at CompileMs each; Repeat compiles them
	// once.
	d.CompileMs = 40
	e = d.Estimate(GPUWork{Compiles: 3}.Repeat(5, false))
	assert.Equal(t, []Part{{"compile", 120}}, e.Parts)

	// Without the kernel figures a pass is its bytes alone.
	d.ElementNs, d.AtomicNs, d.DispatchUs = 0, 0, 0
	e = d.Estimate(GPUWork{Passes: []Pass{{Bytes: 100e6, Positions: 1e9, Atomics: 1e9}}, Dispatches: 7})
	assert.InDelta(t, 1.0, e.Ms, 1e-9)
	assert.False(t, Estimate{}.Known())
	assert.Equal(t, "no estimate", Estimate{}.String())
	assert.True(t, d.Estimate(GPUWork{}).Known(), "an empty call is estimated: nothing to do")
}

// TestCPUEstimate: the copy, rows, elements and folds at their rates.
func TestCPUEstimate(t *testing.T) {
	c := device().CPU
	e := c.Estimate(CPUWork{CopyBytes: 80e6, MoveBytes: 20e6, Elements: 1e6, Reduced: 1e6})
	assert.InDelta(t, 2+1+3+6, e.Ms, 1e-9)
	assert.Equal(t, []string{"copy", "move", "elements", "reduce"}, names(e))
	e = c.Estimate(CPUWork{Reduced: 500})
	assert.Equal(t, []string{"reduce"}, names(e), "zero parts are left out")
	assert.InDelta(t, 0.003, e.Ms, 1e-12)
}

func names(e Estimate) []string {
	var n []string
	for _, p := range e.Parts {
		n = append(n, p.Name)
	}
	return n
}

// TestRepeat: n calls are n times the work; a batch submits once.
func TestRepeat(t *testing.T) {
	w := GPUWork{UploadBytes: 3, DownloadBytes: 2, Submits: 1, Dispatches: 2, Passes: []Pass{{Bytes: 5, Positions: 7, Atomics: 1}}}
	assert.Equal(t, GPUWork{UploadBytes: 30, DownloadBytes: 20, Submits: 10, Dispatches: 20, Passes: []Pass{{Bytes: 50, Positions: 70, Atomics: 10}}}, w.Repeat(10, false))
	assert.Equal(t, 1, w.Repeat(10, true).Submits)
	assert.Equal(t, CPUWork{CopyBytes: 4, MoveBytes: 6, Elements: 8, Reduced: 10}, CPUWork{CopyBytes: 2, MoveBytes: 3, Elements: 4, Reduced: 5}.Repeat(2))
	// A fold's updates and elements repeat; the out it is read at does not.
	assert.Equal(t, CPUWork{Reduced: 20, FoldUpdates: 20, FoldOutLen: 6, FoldOutBytes: 12},
		CPUWork{Reduced: 10, FoldUpdates: 10, FoldOutLen: 3, FoldOutBytes: 12}.Repeat(2))
}

// TestCPUEstimateFold: the updates of a fold chosen by the figures take
// the faster fold's time from CPU.FoldMs in place of ReduceNs; the other
// reduced elements (a mean's second visit) stay at ReduceNs; where the
// figures do not speak for out's size, or are absent, all of them are
// reduced elements.
func TestCPUEstimateFold(t *testing.T) {
	c := CPU{Threads: 2, CopyGBps: 10, MoveGBps: 5, ElementNs: 2, ReduceNs: 4,
		Fold: []FoldPoint{{OutBytes: 1 << 20, SerialNs: 1, SerialOutNs: 2, BinnedNs: 3, BinnedOutNs: 4},
			{OutBytes: 4 << 20, SerialNs: 5, SerialOutNs: 6, BinnedNs: 2, BinnedOutNs: 2}}}
	// 1M updates onto 256K elements of 1 MiB (the first point): serial
	// 1M x 1 + 256K x 2 ns = 1.572864 ms, binned 1M x 3 + 256K x 4 =
	// 4.194304 ms; the copy of 2 MiB at 10 GB/s is 0.2097152 ms.
	w := CPUWork{CopyBytes: 2 << 20, Reduced: 1 << 20, FoldUpdates: 1 << 20, FoldOutLen: 1 << 18, FoldOutBytes: 1 << 20}
	e := c.Estimate(w)
	require.Len(t, e.Parts, 2)
	assert.Equal(t, "copy", e.Parts[0].Name)
	assert.InDelta(t, 0.2097152, e.Parts[0].Ms, 1e-12)
	assert.Equal(t, Part{"fold serial", 1.572864}, e.Parts[1])
	// At 2 MiB, halfway in the logarithm between the points: serial 3 +
	// 4 ns, binned 2.5 + 3 ns; binned is faster.
	w = CPUWork{Reduced: 2 << 20, FoldUpdates: 1 << 20, FoldOutLen: 1 << 19, FoldOutBytes: 2 << 20}
	e = c.Estimate(w)
	require.Len(t, e.Parts, 2)
	assert.Equal(t, "fold binned", e.Parts[0].Name)
	assert.InDelta(t, (float64(1<<20)*2.5+float64(1<<19)*3)/1e6, e.Parts[0].Ms, 1e-9)
	assert.Equal(t, Part{"reduce", float64(1<<20) * 4 / 1e6}, e.Parts[1], "the mean's second visit at ReduceNs")
	// Above the largest point, and without fold figures: ReduceNs.
	for _, c := range []CPU{c, {Threads: 2, CopyGBps: 10, MoveGBps: 5, ElementNs: 2, ReduceNs: 4}} {
		e = c.Estimate(CPUWork{Reduced: 1000, FoldUpdates: 1000, FoldOutLen: 1 << 21, FoldOutBytes: 8 << 20})
		assert.Equal(t, []Part{{"reduce", 1000 * 4 / 1e6}}, e.Parts)
	}
}

// TestCheck: every figure a measurement cannot give, not finite or
// outside its physical bounds, is an error naming its JSON field; the
// kernel figures may be absent, the CPU's may not.
func TestCheck(t *testing.T) {
	require.NoError(t, device().Check())
	assert.True(t, device().Complete())
	for _, c := range []struct {
		edit func(*Device)
		want string
	}{
		{func(d *Device) { d.UploadGBps = 0 }, "upload_gbps is 0; want a positive figure"},
		{func(d *Device) { d.CopyGBps = math.Inf(1) }, "copy_gbps is +Inf"},
		{func(d *Device) { d.SubmitWaitUs = math.NaN() }, "submit_wait_us is NaN"},
		{func(d *Device) { d.AtomicNs = -1 }, "atomic_ns is -1"},
		{func(d *Device) { d.ProbeBytes = 0 }, "probe_bytes is 0"},
		{func(d *Device) { d.CPU.Threads = 0 }, "cpu.threads is 0"},
		{func(d *Device) { d.CPU.ReduceNs = 0 }, "cpu.reduce_ns is 0"},
		// Outside the physical bounds.
		{func(d *Device) { d.ElementNs = 1e300 }, "element_ns is 1e+300; want 0.0001 to 1e+06, what a measurement can give"},
		{func(d *Device) { d.AtomicNs = 1e-9 }, "atomic_ns is 1e-09; want 0.0001 to 1e+06"},
		{func(d *Device) { d.UploadGBps = 2e5 }, "upload_gbps is 200000; want 0.001 to 100000"},
		{func(d *Device) { d.DownloadGBps = 1e-4 }, "download_gbps is 0.0001; want 0.001 to 100000"},
		{func(d *Device) { d.CopyGBps = 1e300 }, "copy_gbps is 1e+300"},
		{func(d *Device) { d.SubmitWaitUs = 1e-5 }, "submit_wait_us is 1e-05; want 0.001 to 1e+07"},
		{func(d *Device) { d.DispatchUs = 1e8 }, "dispatch_us is 1e+08"},
		{func(d *Device) { d.CompileMs = 1e6 }, "compile_ms is 1e+06; want 0.001 to 300000"},
		{func(d *Device) { d.ProbeBytes = 1 << 41 }, "probe_bytes is 2199023255552; want 1 to 1099511627776"},
		{func(d *Device) { d.CPU.Threads = 1 << 20 }, "cpu.threads is 1048576; want 1 to 65536"},
		{func(d *Device) { d.CPU.CopyGBps = 1e-9 }, "cpu.copy_gbps is 1e-09; want 0.001 to 100000"},
		{func(d *Device) { d.CPU.MoveGBps = 1e9 }, "cpu.move_gbps is 1e+09"},
		{func(d *Device) { d.CPU.ElementNs = 1e7 }, "cpu.element_ns is 1e+07"},
		{func(d *Device) { d.CPU.ReduceNs = 1e-5 }, "cpu.reduce_ns is 1e-05"},
	} {
		d := device()
		c.edit(d)
		err := d.Check()
		require.ErrorIs(t, err, ErrFigures, c.want)
		assert.Contains(t, err.Error(), c.want)
	}
	d := device()
	d.DispatchUs, d.ElementNs, d.AtomicNs, d.CPU = 0, 0, 0, nil
	require.NoError(t, d.Check(), "an older measurement")
	assert.False(t, d.Complete())
	d = device()
	d.RunAtomicNs, d.ExecuteUs = 0, 0
	assert.True(t, d.Complete(), "without the figures that default to nothing (a documented profile)")

	// The bounds themselves are figures a measurement can give.
	d = &Device{UploadGBps: MinGBps, DownloadGBps: MaxGBps, CopyGBps: MaxGBps, SubmitWaitUs: MinUs, DispatchUs: MaxUs,
		ElementNs: MinElementNs, AtomicNs: MaxElementNs, CompileMs: MaxCompileMs, ProbeBytes: MaxProbeBytes,
		CPU: &CPU{Threads: MaxThreads, CopyGBps: MinGBps, MoveGBps: MaxGBps, ElementNs: MaxElementNs, ReduceNs: MinElementNs}}
	require.NoError(t, d.Check())
}

// TestJSON: the figures' names in a devices --json "measured" object.
func TestJSON(t *testing.T) {
	b, err := json.Marshal(device())
	require.NoError(t, err)
	assert.JSONEq(t, `{"upload_gbps":10,"download_gbps":20,"copy_gbps":100,"submit_wait_us":50,"dispatch_us":5,"execute_us":100,"element_ns":2,"atomic_ns":8,"run_atomic_ns":4,"probe_bytes":1,
		"cpu":{"threads":2,"copy_gbps":40,"move_gbps":20,"element_ns":3,"reduce_ns":6}}`, string(b))
}

// TestPassKindFigures: a pass of a kind with a figure of its own takes
// its positions and invocations at that figure, not at ElementNs and
// AtomicNs; a kind without one (or a plain pass) keeps those; Repeat keeps
// the kind and scales the invocations; Check bounds each kind's figures.
func TestPassKindFigures(t *testing.T) {
	d := device()
	d.Passes = &PassFigures{Fold: PassFigure{PositionNs: 100, InvocationNs: 50}}
	w := GPUWork{Passes: []Pass{
		{Positions: 1e6, Invocations: 1e4, Atomics: 1e6, Kind: PassFold}, // 100 ms + 0.5 ms
		{Positions: 1e6, Invocations: 1e4, Kind: PassBucket},             // no figure: 2 ms at ElementNs
		{Positions: 1e6, Atomics: 1e6},                                   // plain: 2 + 8 ms
	}}
	assert.InDelta(t, 100.5+2+10, d.Estimate(w).Ms, 1e-9)
	r := w.Repeat(3, true)
	assert.Equal(t, PassFold, r.Passes[0].Kind)
	assert.Equal(t, uint64(3e4), r.Passes[0].Invocations)
	assert.InDelta(t, 3*(100.5+2+10), d.Estimate(r).Ms, 1e-9)

	require.NoError(t, d.Check())
	for _, bad := range []PassFigures{
		{Radix: PassFigure{PositionNs: math.NaN()}},
		{Fold: PassFigure{InvocationNs: -1}},
		{Bucket: PassFigure{PositionNs: 1e300}},
		{Resolve: PassFigure{PositionNs: -1}},
		{Table: PassFigure{InvocationNs: math.Inf(1)}},
		{Hot: PassFigure{PositionNs: 1e7}},
	} {
		d.Passes = &bad
		assert.ErrorIs(t, d.Check(), ErrFigures, "%+v", bad)
	}
}

// TestFoldMs: each fold's time is its part per update times the updates
// plus its part per element of out, interpolated in the logarithm of
// out's size between the points around it, the first point's below them
// all; none above the last point or without points.
func TestFoldMs(t *testing.T) {
	c := &CPU{Threads: 2, Fold: []FoldPoint{
		{OutBytes: 1 << 20, SerialNs: 1, SerialOutNs: 2, BinnedNs: 4, BinnedOutNs: 1},
		{OutBytes: 4 << 20, SerialNs: 3, SerialOutNs: 4, BinnedNs: 2},
	}}
	s, b, ok := c.FoldMs(1<<20, 1e6, 1e6)
	require.True(t, ok)
	assert.InDelta(t, 1+2, s, 1e-9)
	assert.InDelta(t, 4+1, b, 1e-9)
	s, b, ok = c.FoldMs(4<<20, 1e6, 2e6)
	require.True(t, ok)
	assert.InDelta(t, 6+4, s, 1e-9)
	assert.InDelta(t, 4, b, 1e-9)
	// 2 MiB is halfway between 1 and 4 MiB in the logarithm.
	s, b, ok = c.FoldMs(2<<20, 1e6, 1e6)
	require.True(t, ok)
	assert.InDelta(t, 2+3, s, 1e-9)
	assert.InDelta(t, 3+0.5, b, 1e-9)
	s, b, ok = c.FoldMs(1<<10, 1e3, 1e6)
	require.True(t, ok, "below the first point: the first point's")
	assert.InDelta(t, 1+0.002, s, 1e-9)
	assert.InDelta(t, 4+0.001, b, 1e-9)
	_, _, ok = c.FoldMs(4<<20+1, 1e6, 1e6)
	assert.False(t, ok, "above the last point")
	_, _, ok = (&CPU{Threads: 2}).FoldMs(1<<20, 1e6, 1e6)
	assert.False(t, ok, "no points")
	one := &CPU{Fold: c.Fold[:1]}
	s, _, ok = one.FoldMs(1<<19, 1e6, 1e6)
	require.True(t, ok)
	assert.InDelta(t, 3, s, 1e-9)
}

// TestCPUFoldCheck: the fold figures' bounds, each named by its field.
func TestCPUFoldCheck(t *testing.T) {
	good := func() *CPU {
		c := *device().CPU
		c.Fold = []FoldPoint{{OutBytes: 2 << 20, SerialNs: 2, SerialOutNs: 1, BinnedNs: 3}, {OutBytes: 8 << 20, SerialNs: 6, BinnedNs: 3, BinnedOutNs: 0.5}}
		return &c
	}
	require.NoError(t, good().Check())
	assert.True(t, good().Complete())
	c := good()
	c.Fold = nil
	require.NoError(t, c.Check(), "an older measurement, without fold figures")
	assert.False(t, c.Complete())
	assert.True(t, device().Complete(), "a device's figures without the CPU's fold figures (the CPU backend measures its own)")
	for _, bad := range []struct {
		field string
		set   func(c *CPU)
	}{
		{"cpu.fold[0].serial_ns", func(c *CPU) { c.Fold[0].SerialNs = 0 }},
		{"cpu.fold[0].serial_ns", func(c *CPU) { c.Fold[0].SerialNs = math.NaN() }},
		{"cpu.fold[1].binned_ns", func(c *CPU) { c.Fold[1].BinnedNs = 2e6 }},
		{"cpu.fold[1].binned_ns", func(c *CPU) { c.Fold[1].BinnedNs = math.Inf(1) }},
		{"cpu.fold[0].serial_out_ns", func(c *CPU) { c.Fold[0].SerialOutNs = -1 }},
		{"cpu.fold[1].binned_out_ns", func(c *CPU) { c.Fold[1].BinnedOutNs = 1e-5 }},
		{"cpu.fold[0].out_bytes", func(c *CPU) { c.Fold[0].OutBytes = 0 }},
		{"cpu.fold[1].out_bytes", func(c *CPU) { c.Fold[1].OutBytes = 2 << 20 }},
		{"cpu.fold[1].out_bytes", func(c *CPU) { c.Fold[1].OutBytes = MaxProbeBytes + 1 }},
		{"cpu.fold has 17 points", func(c *CPU) {
			for len(c.Fold) <= MaxFoldPoints {
				f := c.Fold[len(c.Fold)-1]
				f.OutBytes *= 2
				c.Fold = append(c.Fold, f)
			}
		}},
	} {
		c := good()
		bad.set(c)
		err := c.Check()
		require.ErrorIs(t, err, ErrFigures, bad.field)
		assert.Contains(t, err.Error(), bad.field)
		d := device()
		d.CPU = c
		require.ErrorIs(t, d.Check(), ErrFigures, "device: %s", bad.field)
	}
	// They travel in JSON under "fold".
	b, err := json.Marshal(good())
	require.NoError(t, err)
	assert.Contains(t, string(b), `"fold":[{"out_bytes":2097152,"serial_ns":2,"serial_out_ns":1,"binned_ns":3}`)
	var back CPU
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, *good(), back)
}

// TestDeviceClone: a clone shares no memory with its original.
func TestDeviceClone(t *testing.T) {
	d := device()
	d.Passes = &PassFigures{Fold: PassFigure{PositionNs: 1}}
	d.CPU.Fold = []FoldPoint{{OutBytes: 1 << 20, SerialNs: 2, BinnedNs: 3}}
	c := d.Clone()
	assert.Equal(t, *d, c)
	c.Passes.Fold.PositionNs = 5
	c.CPU.Fold[0].SerialNs = 7
	c.CPU.Threads++
	assert.Equal(t, 1.0, d.Passes.Fold.PositionNs)
	assert.Equal(t, 2.0, d.CPU.Fold[0].SerialNs)
	assert.NotEqual(t, d.CPU.Threads, c.CPU.Threads)
	assert.Equal(t, Device{}, Device{}.Clone())
}

// TestRunAtomicsAndHostCalls: a pass's atomics along rows take
// RunAtomicNs and the rest AtomicNs (both AtomicNs where RunAtomicNs was
// not measured); each host call adds ExecuteUs; PassMs is one pass of
// the "passes" part; Repeat scales both counts.
func TestRunAtomicsAndHostCalls(t *testing.T) {
	d := device()
	d.RunAtomicNs, d.ExecuteUs = 1, 150
	p := Pass{Positions: 1e6, Atomics: 1e6, RunAtomics: 6e5}
	assert.InDelta(t, 2+0.4*8+0.6*1, d.PassMs(p), 1e-9)
	w := GPUWork{HostCalls: 1, Passes: []Pass{p}}
	e := d.Estimate(w)
	require.Len(t, e.Parts, 2)
	assert.Equal(t, "passes", e.Parts[0].Name)
	assert.InDelta(t, 2+3.2+0.6, e.Parts[0].Ms, 1e-9)
	assert.Equal(t, Part{"host calls", 0.15}, e.Parts[1])
	r := w.Repeat(4, false)
	assert.Equal(t, 4, r.HostCalls)
	assert.Equal(t, uint64(24e5), r.Passes[0].RunAtomics)
	assert.InDelta(t, 4*(5.8+0.15), d.Estimate(r).Ms, 1e-9)

	// Not measured: every atomic at AtomicNs.
	d.RunAtomicNs = 0
	assert.InDelta(t, 2+8, d.PassMs(p), 1e-9)
	// More run atomics than atomics (a malformed pass) count no more
	// than the atomics.
	d.RunAtomicNs = 1
	assert.InDelta(t, 2+1, d.PassMs(Pass{Positions: 1e6, Atomics: 1e6, RunAtomics: 5e6}), 1e-9)

	d.ExecuteUs = math.Inf(1)
	assert.ErrorIs(t, d.Check(), ErrFigures)
	d.ExecuteUs, d.RunAtomicNs = 150, -1
	assert.ErrorIs(t, d.Check(), ErrFigures)
}

// TestPassKindsOfTheirOwn: the resolve, table and hot kinds each take
// their own figure where it is measured, and the plain figures where it
// is not (an older measurement).
func TestPassKindsOfTheirOwn(t *testing.T) {
	d := device()
	ps := []Pass{
		{Positions: 1e6, Invocations: 1e4, Kind: PassResolve},
		{Positions: 1e3, Invocations: 256, Kind: PassTable},
		{Positions: 1e6, Invocations: 1e4, Atomics: 1e6, Kind: PassHot},
	}
	plain := []float64{2, 2e-3, 10} // ElementNs 2, AtomicNs 8
	d.Passes = &PassFigures{}
	for i, p := range ps {
		assert.InDelta(t, plain[i], d.PassMs(p), 1e-9, "kind %d without a figure", p.Kind)
	}
	d.Passes = &PassFigures{Resolve: PassFigure{PositionNs: 5}, Table: PassFigure{PositionNs: 40, InvocationNs: 400},
		Hot: PassFigure{PositionNs: 30}}
	for i, want := range []float64{5, 0.04 + 0.1024, 30} {
		assert.InDelta(t, want, d.PassMs(ps[i]), 1e-9, "kind %d", ps[i].Kind)
	}

	// The table's fixed cost per dispatch, and the hottest target's
	// updates at KeyNs; Repeat scales both.
	d.Passes.Table.DispatchNs = 4e5
	d.Passes.Hot.KeyNs = 100
	table := Pass{Positions: 1e3, Invocations: 256, Dispatches: 1, Kind: PassTable}
	assert.InDelta(t, 0.04+0.1024+0.4, d.PassMs(table), 1e-9)
	hot := Pass{Positions: 1e6, Atomics: 1e6, Hottest: 1e5, Kind: PassHot}
	assert.InDelta(t, 30+10, d.PassMs(hot), 1e-9)
	r := GPUWork{Passes: []Pass{hot}}.Repeat(2, false)
	assert.Equal(t, uint64(2e5), r.Passes[0].Hottest)
	d.Passes = &PassFigures{Indexed: PassFigure{PositionNs: 7}}
	assert.InDelta(t, 7, d.PassMs(Pass{Positions: 1e6, Kind: PassIndexed}), 1e-9)
	// A scatter that checks its own indices pays the resolve's figure
	// for each, plain or of a kind; without a resolve figure, nothing.
	d.Passes = &PassFigures{Resolve: PassFigure{PositionNs: 3}, Hot: PassFigure{PositionNs: 30}}
	assert.InDelta(t, 2+8+3, d.PassMs(Pass{Positions: 1e6, Atomics: 1e6, Checks: 1e6}), 1e-9)
	assert.InDelta(t, 30+3, d.PassMs(Pass{Positions: 1e6, Checks: 1e6, Kind: PassHot}), 1e-9)
	assert.Equal(t, uint64(4e6), GPUWork{Passes: []Pass{{Checks: 1e6}}}.Repeat(4, false).Passes[0].Checks)
	d.Passes = &PassFigures{}
	assert.InDelta(t, 2+8, d.PassMs(Pass{Positions: 1e6, Atomics: 1e6, Checks: 1e6}), 1e-9)
	d.Passes = &PassFigures{Table: PassFigure{DispatchNs: -1}}
	assert.ErrorIs(t, d.Check(), ErrFigures)
	d.Passes = &PassFigures{Hot: PassFigure{KeyNs: math.NaN()}}
	assert.ErrorIs(t, d.Check(), ErrFigures)
}

// TestOccupancy: a pass whose dispatches hold fewer workgroups each
// than the device runs at once takes its work that many times longer
// (ConcurrentGroups over its workgroups per dispatch), its launches
// aside; a full device, an unknown count of workgroups or an unmeasured
// figure leave it alone; Repeat scales the workgroups with the
// dispatches; Check bounds the figure.
func TestOccupancy(t *testing.T) {
	d := device()
	d.LaunchUs = 100
	p := Pass{Positions: 1e6, Groups: 2, Dispatches: 1} // 2 ms of work
	assert.Equal(t, 1.0, d.Occupancy(p), "not measured")
	d.ConcurrentGroups = 8
	assert.Equal(t, 4.0, d.Occupancy(p))
	assert.InDelta(t, 8.1, d.PassMs(p), 1e-9)
	p.Groups, p.Dispatches = 4, 2
	assert.Equal(t, 4.0, d.Occupancy(p), "two workgroups per dispatch")
	p.Groups = 64
	assert.Equal(t, 1.0, d.Occupancy(p), "a full device")
	p.Groups = 0
	assert.Equal(t, 1.0, d.Occupancy(p), "workgroups not known")
	r := Pass{Positions: 10, Groups: 3, Dispatches: 1}
	w := GPUWork{Passes: []Pass{r}}.Repeat(4, true)
	assert.Equal(t, uint64(12), w.Passes[0].Groups)
	assert.Equal(t, d.Occupancy(r), d.Occupancy(w.Passes[0]), "each call's dispatches as sparse as one's")
	require.NoError(t, d.Check())
	for _, bad := range []float64{0.5, -1, math.NaN(), 1 << 21} {
		d.ConcurrentGroups = bad
		assert.ErrorIs(t, d.Check(), ErrFigures, "%v", bad)
	}
}

// TestCompileKept: the compile part is the pipelines without a kept time
// at CompileMs each plus the kept times; Repeat compiles once.
func TestCompileKept(t *testing.T) {
	d := device()
	d.CompileMs = 50
	w := GPUWork{Submits: 1, Compiles: 2, CompileKeptMs: 3000}
	e := d.Estimate(w)
	assert.InDelta(t, 3100+0.05, e.Ms, 1e-9)
	r := w.Repeat(5, false)
	assert.Equal(t, 2, r.Compiles)
	assert.Equal(t, 3000.0, r.CompileKeptMs)
}

// TestLaunch: each dispatch of a pass adds LaunchUs to the pass's time
// (PassMs, and Estimate's "passes" part), on top of its work; Repeat
// scales the dispatches.
func TestLaunch(t *testing.T) {
	d := device()
	d.LaunchUs = 100
	p := Pass{Positions: 1e6, Dispatches: 3} // 2 ms of work
	assert.InDelta(t, 2.3, d.PassMs(p), 1e-9)
	w := GPUWork{Submits: 1, Dispatches: 3, Passes: []Pass{p}}.Repeat(2, true)
	assert.Equal(t, 6, w.Passes[0].Dispatches)
	e := d.Estimate(w)
	require.Len(t, e.Parts, 3)
	assert.Equal(t, "passes", e.Parts[0].Name)
	assert.InDelta(t, 4.6, e.Parts[0].Ms, 1e-9)
	assert.InDelta(t, 4.6+6*0.005+0.05, e.Ms, 1e-9)
	d.LaunchUs = -1
	assert.ErrorIs(t, d.Check(), ErrFigures)
}
