//go:build cgo

package gpu

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// cpuFacts are the facts of a CPU device like lavapipe with the backend's
// defaults: no device is needed to plan.
func cpuFacts() facts {
	return facts{
		run: cpuRun, walkMin: cpuWalkMin, copyMin: copyMinRun, maxGroups: [3]uint32{65535, 65535, 65535},
		shift: 30, maxShift: 30, streamShift: 30,
		float32Add: true, int64Atomics: true, orderedMax: orderedSmall,
	}
}

// gpuFacts are those of a GPU: one position per invocation, no copy
// commands, float atomics on both widths.
func gpuFacts() facts {
	f := cpuFacts()
	f.run, f.walkMin, f.copyMin = 1, gpuWalkMin, 0
	f.float64Add = true
	return f
}

// desc is a tensor of dt and shape without values (ops.PrepareShapes).
func desc(dt tensor.DType, shape ...int) *tensor.Tensor {
	return &tensor.Tensor{DType: dt, Shape: shape}
}

// elementsReq is ScatterElements-18 of f32 updates of shape upd into data
// along axis 0.
func elementsReq(red string, dt tensor.DType, data, upd []int) ops.Request {
	return ops.Request{Op: "ScatterElements-18", Reduction: red, Data: desc(dt, data...),
		Indices: desc(tensor.Int64, upd...), Updates: desc(dt, upd...)}
}

// sliceReq is SliceScatter-15 of every other row of a [64, 64] float32
// tensor.
func sliceReq() ops.Request {
	return ops.Request{Op: "SliceScatter-15", Data: desc(tensor.Float32, 64, 64), Updates: desc(tensor.Float32, 32, 64),
		Start: tensor.MustFromSlice([]int{1}, []int64{0}), Stop: tensor.MustFromSlice([]int{1}, []int64{64}),
		Step: tensor.MustFromSlice([]int{1}, []int64{2})}
}

// planOf plans req with facts f.
func planOf(t *testing.T, f facts, req ops.Request) *callPlan {
	t.Helper()
	p, err := ops.PrepareShapes(req)
	require.NoError(t, err)
	pl, err := f.planCall(p)
	require.NoError(t, err)
	return pl
}

// labels returns the labels of pl's timed passes.
func labels(pl *callPlan) []string {
	var out []string
	for _, n := range pl.needs().Passes {
		out = append(out, n.Name)
	}
	return out
}

// planCase is a plan and what its planner must choose.
type planCase struct {
	name   string
	f      func() facts
	req    ops.Request
	path   string
	passes []string
}

func planCases() []planCase {
	f32, i32, f64 := tensor.Float32, tensor.Int32, tensor.Float64
	walk := func() facts { f := cpuFacts(); f.walkMin = 64; return f }
	atomicFloats := func() facts { f := cpuFacts(); f.orderedMax = 0; return f }
	cas := func() facts { f := atomicFloats(); f.forceCAS = true; return f }
	no64 := func() facts { f := cpuFacts(); f.int64Atomics = false; return f }
	nd := func(red string, rows, tuples, inner int) ops.Request {
		return ops.Request{Op: "ScatterNDUpdate-15", Reduction: red, Data: desc(f32, rows, inner),
			Indices: desc(tensor.Int64, tuples, 1), Updates: desc(f32, tuples, inner)}
	}
	meanReq := elementsReq("", i32, []int{5000}, []int{5000})
	meanReq.Op, meanReq.Reduction, meanReq.Axis = "ScatterElementsUpdate-12", "mean", tensor.Scalar(int64(0))
	table := func() facts { f := cpuFacts(); f.table = true; return f }
	execute := func() facts { f := atomicFloats(); f.ownOutput = true; return f }
	int32Indices := elementsReq("add", f32, []int{5000}, []int{5000})
	int32Indices.Indices = desc(tensor.Int32, 5000)
	ordered := []string{"clear", "resolve", "scan", "radix-count", "scan", "radix-scatter", "fold"} // 200 slots: one 8-bit digit
	return []planCase{
		{"few updates look at the later ones", cpuFacts, elementsReq("", f32, []int{100}, []int{10}), "later", []string{"resolve", "scatter"}},
		{"colliding updates resolve in a table", table, elementsReq("", f32, []int{100}, []int{1000}), "table", []string{"resolve", "scatter"}},
		{"more positions than one table takes claim owner words", table, elementsReq("", f32, []int{5000}, []int{tableMax + 1}), "owner", []string{"clear", "resolve", "scatter"}},
		{"gather keeps its owner words", table, nd("", 4, 100, 8), "gather", []string{"clear", "resolve", "scatter"}},
		{"many colliding updates claim owner words", cpuFacts, elementsReq("", f32, []int{100}, []int{1000}), "owner", []string{"clear", "resolve", "scatter"}},
		{"many columns walk", walk, elementsReq("", f32, []int{16, 64}, []int{100, 64}), "walk", []string{"resolve", "scatter"}},
		{"more updates than outputs gather", cpuFacts, nd("", 4, 100, 8), "gather", []string{"clear", "resolve", "scatter"}},
		{"one tuple cannot collide", cpuFacts, nd("", 4, 1, 8), "scatter", []string{"resolve", "scatter"}},
		{"long rows copy on a CPU", cpuFacts, sliceReq(), "copy", []string{"scatter"}},
		{"rows run a shader on a GPU", gpuFacts, sliceReq(), "scatter", []string{"scatter"}},
		{"no updates resolve only", cpuFacts, elementsReq("", f32, []int{4}, []int{0}), "data", nil},
		{"small float sums fold in order", cpuFacts, elementsReq("add", f32, []int{200}, []int{1000}), "ordered", ordered},
		{"float sums use atomics without orderedMax", atomicFloats, elementsReq("add", f32, []int{5000}, []int{5000}), "native+hot", []string{"resolve", "scatter"}},
		{"forced compare-and-swap", cas, elementsReq("add", f32, []int{5000}, []int{5000}), "cas+hot", []string{"resolve", "scatter"}},
		{"hot targets off", func() facts { f := atomicFloats(); f.noHot = true; return f }, elementsReq("add", f32, []int{5000}, []int{5000}), "native", []string{"resolve", "scatter"}},
		{"too few updates for hot targets", atomicFloats, elementsReq("add", f32, []int{5000}, []int{2*groupSize - 1}), "native", []string{"resolve", "scatter"}},
		{"integers pile up in workgroup memory", cpuFacts, elementsReq("add", i32, []int{16}, []int{5000}), "native+private", []string{"resolve", "scatter"}},
		{"the mean prepares and finishes", cpuFacts, meanReq, "native", []string{"clear", "resolve", "prepare", "scatter", "finish"}},
		{"no 64-bit atomics fold in order", no64, elementsReq("max", f64, []int{200}, []int{1000}), "ordered", ordered},
		{"Execute checks the indices in the scatter", execute, elementsReq("add", f32, []int{5000}, []int{5000}), "native+hot", []string{"scatter"}},
		{"Execute of a mean still counts", func() facts { f := cpuFacts(); f.ownOutput = true; return f }, meanReq, "native", []string{"clear", "resolve", "prepare", "scatter", "finish"}},
		{"resident 4-byte indices are checked, then read again", atomicFloats, int32Indices, "native+hot", []string{"resolve", "scatter"}},
		{"deterministic walks", walk, elementsReq("add", f32, []int{16, 64}, []int{100, 64}), "walk", []string{"resolve", "scatter"}},
	}
}

// TestPlanPaths: the planner chooses each shape's path from the device's
// facts alone, and lists its passes in order.
func TestPlanPaths(t *testing.T) {
	for _, c := range planCases() {
		pl := planOf(t, c.f(), c.req)
		assert.Equal(t, c.path, pl.path(), c.name)
		assert.Equal(t, c.passes, labels(pl), "%s:\n%s", c.name, pl)
	}
}

// TestPlanLoopBounds: every pass keeps the kernels' loops within the
// bounds of the shaders' documentation (Loop bounds): runs of at most
// MAX_RUN, walks and folds of at most SEGMENT steps with one position per
// invocation, workgroups within the device's limits, each private
// workgroup given at most max(tile, 16*outputs) updates, the last-writer
// table's one workgroup at most TABLE_RUN positions per invocation; and
// the dispatches cover each pass's positions once.
func TestPlanLoopBounds(t *testing.T) {
	cases := planCases()
	long := func(f func() facts, red string, J int) planCase {
		return planCase{name: fmt.Sprintf("%s chain of %d", red, J), f: f, req: elementsReq(red, tensor.Float32, []int{4, 3}, []int{J, 3})}
	}
	walk := func() facts { f := cpuFacts(); f.walkMin = 1; return f }
	fold := func() facts { f := cpuFacts(); f.walkMin = 1 << 62; f.deterministic = true; return f }
	tiny := func() facts { f := gpuFacts(); f.maxGroups = [3]uint32{3, 2, 2}; return f }
	cases = append(cases, long(walk, "", 3*segment+5), long(walk, "add", 2*segment), long(fold, "add", 70000),
		planCase{name: "tiny grids", f: tiny, req: elementsReq("", tensor.Float32, []int{100}, []int{5000})})
	for _, c := range cases {
		f := c.f()
		pl := planOf(t, f, c.req)
		var walked, folded uint64
		// The further fold passes, as many as the shapes allow.
		for _, ps := range append(append([]pass(nil), pl.passes...), pl.more...) {
			if ps.kind != passDispatch {
				continue
			}
			assert.LessOrEqual(t, ps.run, uint32(maxRun), c.name)
			assert.LessOrEqual(t, ps.chain, uint64(segment), c.name)
			if ps.chain > 0 {
				assert.Equal(t, uint32(1), ps.run, "%s: %s walks one position per invocation", c.name, ps.label)
			}
			switch ps.label {
			case "scatter":
				walked += ps.chain
			case "fold":
				folded += ps.chain
			}
			if r := pl.j.red; r != nil && r.private && ps.label == "scatter" {
				require.Len(t, ps.dispatches, 1)
				g := uint64(ps.dispatches[0].groups[0])
				assert.LessOrEqual(t, g, uint64(f.maxGroups[0]))
				assert.LessOrEqual(t, ceilDiv(pl.j.updates, g), max(groupSize*uint64(f.run), privateShare*pl.j.outputs), c.name)
				continue
			}
			if pl.j.flags&flagTable != 0 && ps.label == "resolve" {
				require.Len(t, ps.dispatches, 1)
				assert.Equal(t, [3]uint32{1, 1, 1}, ps.dispatches[0].groups, c.name)
				assert.LessOrEqual(t, ps.n, uint64(tableRun*groupSize), c.name)
				continue
			}
			var at uint64
			for _, d := range ps.dispatches {
				assert.Equal(t, at, d.base, "%s: %s", c.name, ps.label)
				assert.LessOrEqual(t, d.end-d.base, uint64(maxPerDispatch))
				for i, g := range d.groups {
					assert.LessOrEqual(t, g, f.maxGroups[i], c.name)
				}
				assert.GreaterOrEqual(t, uint64(d.groups[0])*uint64(d.groups[1])*uint64(d.groups[2])*groupSize*uint64(ps.run), d.end-d.base)
				at = d.end
			}
			assert.Equal(t, ps.n, at, "%s: %s covers its positions", c.name, ps.label)
		}
		if pl.j.walk {
			assert.Equal(t, uint64(pl.p.J), walked, "%s: the segments walk the column once", c.name)
		}
		if r := pl.j.red; r != nil && r.ordered {
			assert.Equal(t, r.chain, folded, "%s: the segments fold the longest list once", c.name)
		}
	}
	assert.Len(t, labels(planOf(t, walk(), long(walk, "", 3*segment+5).req)), 1+4, "a walk of 3 segments and 5 takes 4 passes")
	assert.Greater(t, len(planOf(t, tiny(), elementsReq("", tensor.Float32, []int{100}, []int{5000})).passes[1].dispatches), 1,
		"a grid of 12 groups takes several dispatches")
}

// TestPlanMemory: the plan's tensors, parameter buffer and chunk tables
// follow from the shapes and the chunk size: a uint8 output of 2^20
// bytes in chunks of 4 KiB takes 256 chunk addresses and loses the
// one-chunk path, a large output on a streaming backend takes smaller
// chunks, and a parameter buffer over the largest buffer is refused.
func TestPlanMemory(t *testing.T) {
	req := ops.Request{Op: "ScatterNDUpdate-15", Data: desc(tensor.Uint8, 1<<20), Indices: desc(tensor.Int64, 10, 1), Updates: desc(tensor.Uint8, 10)}
	f := cpuFacts()
	pl := planOf(t, f, req)
	n := pl.needs()
	assert.Equal(t, []TensorNeed{{"output", 1 << 20}, {"updates", minBuffer}, {"indices", minBuffer}, {"normalised indices", minBuffer},
		{"parameters", minBuffer}}, n.Tensors)
	assert.Equal(t, uint64(1<<20+4*minBuffer), n.DeviceBytes)
	assert.Equal(t, uint64(2<<20+10+80), n.HostBytes)
	assert.Equal(t, uint64(1<<20), n.DataCopyBytes, "data's upload into the output, which no pass counts")
	for _, ps := range n.Passes {
		assert.Less(t, ps.Read+ps.Written, uint64(1<<20), "%s: no pass copies data", ps.Name)
	}
	assert.NotZero(t, pl.flags&flagOneChunk)

	f.shift = 12
	pl = planOf(t, f, req)
	assert.Zero(t, pl.flags&flagOneChunk)
	assert.Equal(t, 8*uint64(len(pl.j.params)+256+1+1+1)+8, pl.paramBytes(), "the header, 256+1+1+1 chunk addresses and the error word")
	assert.Equal(t, uint64(1<<20), pl.needs().Tensors[0].Bytes)

	f = cpuFacts()
	f.streamMin, f.streamShift = 1<<20, 16
	assert.Equal(t, uint(16), planOf(t, f, req).shift, "a streamed output takes smaller chunks")
	req.Data = desc(tensor.Uint8, 1<<20-1)
	assert.Equal(t, uint(30), planOf(t, f, req).shift)

	f = cpuFacts()
	f.shift, f.maxShift = 4, 10
	p, err := ops.PrepareShapes(req)
	require.NoError(t, err)
	_, err = f.planCall(p)
	require.ErrorIs(t, err, ops.ErrUnsupported)
	assert.Contains(t, err.Error(), "chunk tables need")
}

// TestPlanDescribes: a plan prints its operator, path, tensors and passes.
func TestPlanDescribes(t *testing.T) {
	pl := planOf(t, cpuFacts(), elementsReq("add", tensor.Float32, []int{200}, []int{1000}))
	s := pl.String()
	for _, want := range []string{"ScatterElements-18 float32[200] reduction add: ordered", "owner words 832,",
		"resolve", "radix-scatter", "fold", "segment 0 of at most 1000 steps"} {
		assert.Contains(t, s, want)
	}
	assert.Len(t, labels(pl), len(pl.passes), "every pass is timed")
	// The tensors with the bytes Needs gives them.
	for _, tn := range pl.needs().Tensors {
		assert.Contains(t, s, fmt.Sprintf(" %s %d", tn.Name, tn.Bytes))
	}
	t.Log("\n" + s)
}

// TestOrderedPlanCost: the deterministic plans of the bench's SE-sum-dup
// and SND-sum-dup shapes, at scale 0.25 and 1, on a CPU device's facts
// and a GPU's, take one digit pass of the sort (SE-sum-dup, bucketed) or
// 3 (SND-sum-dup, rows of 16 elements), one fold pass (the further ones
// are the data's to ask for), at most 24 dispatches, and move at most the
// pinned multiple of their one-pass bytes.
func TestOrderedPlanCost(t *testing.T) {
	f32 := tensor.Float32
	for _, scale := range []int{4, 1} { // n/4 and n
		n := (1 << 20) / scale
		se := ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: desc(f32, n),
			Indices: desc(tensor.Int64, 16*n), Updates: desc(f32, 16*n)}
		snd := ops.Request{Op: "ScatterND-18", Reduction: "add", Data: desc(f32, n, 16),
			Indices: desc(tensor.Int64, n, 1), Updates: desc(f32, n, 16)}
		for _, c := range []struct {
			name     string
			req      ops.Request
			passes   int
			maxRatio float64
		}{
			// 3.4: 2.7 under the one-pass bytes before ops.Plan.OnePassBytes
			// (which counted a write per update rather than each element
			// that may change read and written once).
			{"SE-sum-dup", se, 1, 3.4},
			{"SND-sum-dup", snd, 3, 2.2},
		} {
			for _, fc := range []struct {
				name string
				f    func() facts
			}{{"cpu", cpuFacts}, {"gpu", gpuFacts}} {
				f := fc.f()
				f.deterministic = true
				pl := planOf(t, f, c.req)
				name := fmt.Sprintf("%s at 1/%d on a %s", c.name, scale, fc.name)
				require.Equal(t, "ordered", pl.path(), name)
				assert.Equal(t, c.passes, pl.j.red.passes, name)
				dispatches, folds := 0, 0
				for _, ps := range pl.passes {
					dispatches += len(ps.dispatches)
					if ps.label == "fold" {
						folds++
					}
				}
				assert.Equal(t, 1, folds, name)
				assert.LessOrEqual(t, dispatches, 24, name)
				nd := pl.needs()
				ratio := float64(nd.TrafficBytes) / float64(nd.OnePassBytes)
				t.Logf("%s: %d dispatches, traffic %.2fx the one-pass bytes", name, dispatches, ratio)
				assert.LessOrEqual(t, ratio, c.maxRatio, name)
			}
		}
	}
}
