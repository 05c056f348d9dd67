//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestPlanForIsNeeds: planning from the device's description (PlanFor)
// gives what Needs gives on the device itself, for every path, with and
// without Deterministic, and with a one-call backend whose large output
// streams back in smaller chunks.
func TestPlanForIsNeeds(t *testing.T) {
	large := elementsReq("", tensor.Float32, []int{1 << 27}, []int{10})
	for _, opts := range []Options{{}, {Deterministic: true}, {MaxPoolBytes: -1}} {
		b := openTest(t, opts)
		info := b.device().Info()
		reqs := []ops.Request{large}
		for _, c := range planCases() {
			reqs = append(reqs, c.req)
		}
		for i, req := range reqs {
			p, err := ops.PrepareShapes(req)
			require.NoError(t, err)
			want, err := b.Needs(p)
			require.NoError(t, err)
			got, err := PlanFor(info, opts, p)
			require.NoError(t, err)
			assert.Equal(t, want, got, "%+v, request %d (%s)", opts, i, req.Op)
		}
	}
}

// TestPlanForRefusesWhatOpenRefuses: a device without buffer device
// addresses, or with workgroups of fewer than 256 invocations, cannot run
// any kernel, so PlanFor fails as Open would, with ops.ErrUnsupported.
func TestPlanForRefusesWhatOpenRefuses(t *testing.T) {
	info := openTest(t, Options{}).device().Info()
	p, err := ops.PrepareShapes(elementsReq("", tensor.Float32, []int{16}, []int{4}))
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		drop func()
	}{
		{"bufferDeviceAddress", func() { info.Capabilities.BufferDeviceAddress = false }},
		{"maxComputeWorkGroupInvocations 128", func() { info.Capabilities.MaxComputeWorkGroupInvocations = 128 }},
		{"maxComputeWorkGroupSize.x 128", func() { info.Capabilities.MaxComputeWorkGroupSize[0] = 128 }},
	} {
		saved := info
		c.drop()
		_, err := PlanFor(info, Options{}, p)
		require.ErrorIs(t, err, ops.ErrUnsupported, c.name)
		assert.Contains(t, err.Error(), c.name)
		info = saved
	}
}

// TestCheckFitsIsExecutes: a call that needs more device memory than the
// device has free is refused by Execute before any work with the error
// CheckFits gives for its Needs, and CheckFitsFor gives the same on the
// device's description where the device holds nothing; a call that fits
// passes both.
func TestCheckFitsIsExecutes(t *testing.T) {
	b := openTest(t, Options{MaxPoolBytes: -1}, knobs.Knobs{MemoryBudget: 1 << 20})
	info := b.device().Info()
	// ScatterElements-18 of 4 updates into m elements, every index 0.
	req := func(m int) ops.Request {
		data, err := tensor.New(tensor.Float32, []int{m})
		require.NoError(t, err)
		return ops.Request{Op: "ScatterElements-18", Data: data, Indices: tensor.MustFromSlice([]int{4}, make([]int64, 4)),
			Updates: tensor.MustFromSlice([]int{4}, make([]float32, 4))}
	}
	small, large := req(16), req(1<<19)
	for _, c := range []struct {
		req  ops.Request
		fits bool
	}{{small, true}, {large, false}} {
		p, err := ops.Prepare(c.req)
		require.NoError(t, err)
		n, err := b.Needs(p)
		require.NoError(t, err)
		refused := b.CheckFits(p, n)
		out, err := tensor.New(p.DType, p.Shape)
		require.NoError(t, err)
		err = b.Execute(context.Background(), p, out)
		if c.fits {
			require.NoError(t, refused)
			require.NoError(t, err)
			require.NoError(t, CheckFitsFor(info, p, n))
			continue
		}
		require.ErrorIs(t, refused, ops.ErrOutOfMemory)
		require.ErrorIs(t, err, ops.ErrOutOfMemory)
		assert.Equal(t, refused.Error(), err.Error())
		assert.Contains(t, refused.Error(), "needs 3 MiB of device memory; the device has 1 MiB free")
		// The description's whole heap is free: a heap of the budget's size.
		info.DeviceLocalMemory = 1 << 20
		assert.Equal(t, refused, CheckFitsFor(info, p, n))
	}
}

// TestFoldChargesTheSlotsItFolds: a deterministic sum whose targets may
// hold several segments of updates folds in one pass per segment; the
// first is charged for every update, each later one only for the slots
// the list can name and the updates they can still hold, so the charges
// fall segment by segment, and the fold in all moves a few times the
// updates rather than once per segment.
func TestFoldChargesTheSlotsItFolds(t *testing.T) {
	const items = 100_000
	f := cpuFacts()
	f.deterministic = true
	f.noBuckets = true // the slot-by-slot fold; TestBucketedFoldCharges has the other
	pl := planOf(t, f, elementsReq("add", tensor.Float32, []int{1024}, []int{items}))
	require.Equal(t, "ordered", pl.path())
	// The first fold pass is recorded with the call; the further ones
	// wait in pl.more for the chains the first finds.
	var folds []*pass
	for _, list := range [][]pass{pl.passes, pl.more} {
		for i := range list {
			if list[i].label == "fold" {
				folds = append(folds, &list[i])
			}
		}
	}
	require.Len(t, folds, int(ceilDiv(items, segment)))
	perUpdate := uint64(4 + 4) // the element and its sorted position
	if pl.j.red.carry {
		perUpdate = 4 * pl.j.red.vwords // the value carried through the sort
	}
	var total uint64
	for s, ps := range folds {
		assert.Equal(t, uint32(s), ps.seg, "fold %d names its segment", s)
		total += ps.read + ps.written
		if s == 0 {
			assert.GreaterOrEqual(t, ps.read, items*perUpdate, "segment 0 folds every update")
			continue
		}
		assert.LessOrEqual(t, ps.read, folds[s-1].read, "fold %d reads no more than fold %d", s, s-1)
		assert.LessOrEqual(t, ps.read, (items-uint64(s)*segment)*perUpdate+pl.j.red.listWords*16,
			"fold %d folds at most the updates the earlier segments left", s)
	}
	assert.Less(t, folds[len(folds)-1].read, folds[0].read/10, "the last fold reads a fraction of the first")
	assert.Less(t, total, uint64(len(folds))*items*perUpdate/2, "far below one charge of every update per segment")
}

// TestPassInvocations: each pass counts the invocations that have
// positions to handle, however its positions are split into dispatches,
// and the plan text gives them.
func TestPassInvocations(t *testing.T) {
	small := cpuFacts()
	small.maxGroups = [3]uint32{3, 2, 2} // several dispatches per pass
	for _, f := range []facts{cpuFacts(), gpuFacts(), small} {
		pl := planOf(t, f, elementsReq("", tensor.Float32, []int{100}, []int{100_000}))
		for i := range pl.passes {
			ps := &pl.passes[i]
			if ps.kind != passDispatch {
				assert.Zero(t, ps.invocations(), ps.label)
				continue
			}
			assert.Equal(t, ceilDiv(ps.n, uint64(ps.run)), ps.invocations(), "%s with run %d", ps.label, ps.run)
			assert.Contains(t, pl.String(), fmt.Sprintf("%d invocations", ps.invocations()))
		}
		n := pl.needs()
		dispatches := 0
		for _, ps := range n.Passes {
			dispatches += ps.Dispatches
		}
		assert.Equal(t, dispatches, n.Dispatches)
		if f.maxGroups[0] == 3 {
			assert.Greater(t, n.Dispatches, len(n.Passes), "tight limits split passes")
		}
	}
	// A workgroup-memory scatter strides: its invocations are those it
	// launches.
	pl := planOf(t, cpuFacts(), elementsReq("add", tensor.Int32, []int{16}, []int{5000}))
	require.Equal(t, "native+private", pl.path())
	sc := &pl.passes[len(pl.passes)-1]
	assert.Equal(t, uint64(pl.j.red.groups)*uint64(sc.local), sc.invocations())
}

// TestBaselineWithoutShaderInt64: on a device without shaderInt64 every
// kernel pass of a move or a reduction runs a 32-bit baseline variant (8-byte
// reductions fold in order: no 64-bit atomics), and the plan says so;
// PlanFor gives what Needs gives on a backend forced to the baseline;
// what the baseline cannot take is refused with ops.ErrUnsupported
// naming shaderInt64.
func TestBaselineWithoutShaderInt64(t *testing.T) {
	b := openTest(t, Options{}, knobs.Knobs{NoShaderInt64: true})
	info := b.device().Info()
	info.Capabilities.ShaderInt64 = false
	f := cpuFacts()
	f.noInt64, f.copyMin = true, 0 // copyMin: the slice runs a kernel too
	block := ops.Request{Op: "ScatterNDUpdate-15", Data: desc(tensor.Int8, 64, 3), Indices: desc(tensor.Int64, 40, 1), Updates: desc(tensor.Int8, 40, 3)}
	for _, c := range []struct {
		name string
		req  ops.Request
	}{
		{"element", elementsReq("", tensor.Float64, []int{16}, []int{40})},
		{"block", block},
		{"slice", sliceReq()},
		{"cache", cacheReq(tensor.Float32, 2, 3, 16, 3, 4, "linear", true)},
		{"int64 sum, in order", elementsReq("add", tensor.Int64, []int{16}, []int{40})},
		{"float64 max, in order", elementsReq("max", tensor.Float64, []int{16}, []int{40})},
		{"int8 sum, atomics", elementsReq("add", tensor.Int8, []int{16}, []int{40})},
		{"float32 prod", elementsReq("mul", tensor.Float32, []int{16}, []int{40})},
	} {
		pl := planOf(t, f, c.req)
		kernels := 0
		for _, ps := range pl.passes {
			if ps.kind == passDispatch {
				kernels++
				assert.True(t, ps.key.NoInt64, "%s: pass %s runs %s", c.name, ps.label, variantName(&ps))
				assert.Contains(t, variantName(&ps), "-noi64", c.name)
			}
		}
		assert.Positive(t, kernels, c.name)
		if pl.j.red != nil && c.req.Data.DType.Size() == 8 {
			assert.Equal(t, "ordered", pl.path(), "%s: no 64-bit atomics without shaderInt64", c.name)
		}
		assert.Contains(t, pl.String(), "32-bit baseline (no shaderInt64)", c.name)
		p, err := ops.PrepareShapes(c.req)
		require.NoError(t, err)
		want, err := b.Needs(p)
		require.NoError(t, err, c.name)
		got, err := PlanFor(info, Options{}, p)
		require.NoError(t, err, c.name)
		assert.Equal(t, want, got, c.name)
	}
	wide := f
	wide.forceWide = true
	for _, c := range []struct {
		name string
		f    facts
		req  ops.Request
		part string
	}{
		{"64-bit positions", wide, elementsReq("", tensor.Float32, []int{16}, []int{40}), "more than 2^31 elements"},
		{"float64 sum", f, elementsReq("add", tensor.Float64, []int{16}, []int{40}), "reduction add on float64 data"},
	} {
		p, err := ops.PrepareShapes(c.req)
		require.NoError(t, err)
		_, err = c.f.planCall(p)
		require.ErrorIs(t, err, ops.ErrUnsupported, c.name)
		assert.Contains(t, err.Error(), "shaderInt64", c.name)
		assert.Contains(t, err.Error(), c.part, c.name)
	}
}

// TestPlansFitWorkgroupMemory: a kernel that takes more workgroup memory
// than the device offers is refused at planning, naming the limit: the
// in-order fold's sort (27712 bytes) on a device with the 16 KiB Vulkan
// guarantees; the plan passes with SwiftShader's and lavapipe's 32 KiB.
func TestPlansFitWorkgroupMemory(t *testing.T) {
	f := cpuFacts()
	f.deterministic = true
	req := elementsReq("add", tensor.Float32, []int{1024}, []int{5000})
	for _, c := range []struct {
		shared uint64
		ok     bool
	}{{0, true}, {32 << 10, true}, {27712, true}, {27708, false}, {16 << 10, false}} {
		f.sharedMax = c.shared
		p, err := ops.PrepareShapes(req)
		require.NoError(t, err)
		pl, err := f.planCall(p)
		if c.ok {
			require.NoError(t, err, "%d bytes", c.shared)
			assert.Equal(t, "ordered", pl.path())
			continue
		}
		require.ErrorIs(t, err, ops.ErrUnsupported, "%d bytes", c.shared)
		assert.Contains(t, err.Error(), "maxComputeSharedMemorySize")
		assert.Contains(t, err.Error(), "27712 bytes")
	}
}

// vec is a 1-D tensor of xs.
func vec[T tensor.Element](xs ...T) *tensor.Tensor {
	return tensor.MustFromSlice([]int{len(xs)}, xs)
}

// TestBaseline64BitReductions runs the reductions of 8-byte elements
// through the 32-bit baseline (word pairs, the in-order fold) on the edges
// of their ranges, use_init_val both ways, and of 1-byte integers and
// float32 (the means' 64-bit sums as pairs, divRound on pairs), and
// compares every result with the CPU reference bit for bit: the carries,
// the wrapping multiply, signed and unsigned compares, the neutral
// values, NaN and signed zeros.
func TestBaseline64BitReductions(t *testing.T) {
	b := openTest(t, Options{}, knobs.Knobs{NoShaderInt64: true})
	ref := cpuref.New()
	nan, negZero := math.NaN(), math.Copysign(0, -1)
	no := false
	cases := []struct {
		reds    []string
		data    *tensor.Tensor
		updates []*tensor.Tensor
	}{
		{[]string{"sum", "prod", "min", "max", "mean"}, vec[int64](-4350893529854316974), []*tensor.Tensor{
			vec[int64](-4, math.MinInt64, -4, -1), vec[int64](math.MaxInt64, 1), vec[int64](-1),
			vec[int64](0xFFFFFFFF, 0x1_0000_0001, -7), vec[int64](3, -3, math.MinInt64), vec[int64](-7, 2)}},
		{[]string{"sum", "prod", "min", "max", "mean"}, vec[uint64](1 << 63), []*tensor.Tensor{
			vec[uint64](math.MaxUint64, 1), vec[uint64](0xFFFFFFFF, 0xFFFFFFFF), vec[uint64](1<<63, 1<<32, 5)}},
		{[]string{"min", "max"}, vec(1.5), []*tensor.Tensor{
			vec(negZero, 0.0), vec(0.0, negZero), vec(nan, -1.0), vec(-1.0, nan), vec(math.Inf(-1), math.Inf(1)), vec(5e-324, -5e-324)}},
		{[]string{"sum", "prod", "min", "max", "mean"}, vec[int8](-128), []*tensor.Tensor{
			vec[int8](-128, 127, -1), vec[int8](100, 100, 100), vec[int8](-7, 2)}},
		{[]string{"sum", "min", "max", "mean"}, vec[float32](1), []*tensor.Tensor{
			vec[float32](1, 2, 4), vec[float32](1e-45, 3e-45), vec(float32(negZero), 0), vec[float32](1, 1, 1, 1, 1, 1, 1e-7)}},
	}
	for _, c := range cases {
		for _, red := range c.reds {
			for _, init := range []*bool{nil, &no} {
				for _, upd := range c.updates {
					n := upd.Shape[0]
					req := ops.Request{Op: "ScatterElementsUpdate-12", Reduction: red, UseInitVal: init, Data: c.data,
						Indices: tensor.MustFromSlice([]int{n}, make([]int32, n)), Updates: upd, Axis: tensor.Scalar(0)}
					name := fmt.Sprintf("%v %s use_init_val %v updates %s", c.data.DType, red, init == nil, opstest.Describe(req))
					p, err := ops.Prepare(req)
					require.NoError(t, err, name)
					got, want := opstest.SentinelOutput(p), opstest.SentinelOutput(p)
					require.NoError(t, ref.Execute(context.Background(), p, want), name)
					require.NoError(t, b.Execute(context.Background(), p, got), name)
					assert.Empty(t, opstest.DiffExact(got, want), "%s on %s", name, b.LastStats().Reduction)
				}
			}
		}
	}
}
