//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// fewUpdatesPlan is ScatterNDUpdate-15 of ten uint8 updates into n
// elements, the shape of a large tensor patched in a few places.
func fewUpdatesPlan(t *testing.T, n int) *ops.Plan {
	t.Helper()
	d, err := tensor.New(tensor.Uint8, []int{n})
	require.NoError(t, err)
	for i := range d.Data {
		d.Data[i] = byte(i)
	}
	idx, err := tensor.FromSlice([]int{10, 1}, []int64{5, 1, 5, 7, 0, int64(n - 1), 7, 3, 2, 5})
	require.NoError(t, err)
	u, err := tensor.FromSlice([]int{10}, []uint8{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	require.NoError(t, err)
	p, err := ops.Prepare(ops.Request{Op: "ScatterNDUpdate-15", Data: d, Indices: idx, Updates: u})
	require.NoError(t, err)
	return p
}

// TestNeedsIsWhatExecuteAllocates: the device memory Needs predicts is
// what an Execute of the plan allocates, buffer for buffer.
func TestNeedsIsWhatExecuteAllocates(t *testing.T) {
	b := openTest(t, Options{})
	p := fewUpdatesPlan(t, 1<<20)
	n, err := b.Needs(p)
	require.NoError(t, err)
	var sum uint64
	for _, tn := range n.Tensors {
		sum += tn.Bytes
	}
	assert.Equal(t, sum, n.DeviceBytes)
	assert.GreaterOrEqual(t, n.DeviceBytes, uint64(1<<20), "the output is on the device")
	require.NotEmpty(t, n.Passes)
	assert.Equal(t, "scatter", n.Passes[len(n.Passes)-1].Name)
	assert.GreaterOrEqual(t, n.TrafficBytes, n.OnePassBytes)

	warmUp(t, b)
	held := b.device().Memory().Held
	out, err := tensor.New(p.DType, p.Shape)
	require.NoError(t, err)
	require.NoError(t, b.Execute(context.Background(), p, out))
	assert.Equal(t, n.DeviceBytes, b.device().Memory().Held-held, "bytes allocated by Execute")
	want, err := tensor.New(p.DType, p.Shape)
	require.NoError(t, err)
	require.NoError(t, cpuref.New().Execute(context.Background(), p, want))
	assert.Equal(t, want.Data, out.Data)
}

// TestExecuteRefusesAPlanOverTheBudget lowers the device memory a call may
// take below what the plan needs: Execute fails before any work with
// ops.ErrOutOfMemory, never ErrUnsupported, allocates nothing and leaves
// out alone; with the budget at the plan's needs it runs.
func TestExecuteRefusesAPlanOverTheBudget(t *testing.T) {
	b := openTest(t, Options{})
	p := fewUpdatesPlan(t, 3<<20)
	n, err := b.Needs(p)
	require.NoError(t, err)
	b.budget = n.DeviceBytes - 1
	held := b.device().Memory().Held
	out, err := tensor.New(p.DType, p.Shape)
	require.NoError(t, err)
	err = b.Execute(context.Background(), p, out)
	require.ErrorIs(t, err, ops.ErrOutOfMemory)
	assert.NotErrorIs(t, err, ops.ErrUnsupported)
	assert.Regexp(t, `^ScatterNDUpdate-15: vulkan: needs \d+ MiB of device memory; the device has \d+ MiB free$`, err.Error())
	assert.Equal(t, held, b.device().Memory().Held, "nothing allocated")
	assert.Equal(t, make([]byte, len(out.Data)), out.Data, "out untouched")

	b.budget = n.DeviceBytes
	require.NoError(t, b.Execute(context.Background(), p, out))
}

// TestRefusalNamesTheBufferRounding: a resident tensor whose buffer is
// rounded up to its size class takes the device's last free memory (on
// lavapipe, 1921 MiB of data in a 2048 MiB buffer, sized in steps of 128
// MiB): a call of 1 MiB is refused with the memory free (0 MiB) and what
// the rounding holds beyond the data, with the step. Where a budget
// decides instead, the refusal says nothing of the rounding; once the
// tensor is closed the call fits.
func TestRefusalNamesTheBufferRounding(t *testing.T) {
	b := openTest(t, Options{})
	free := b.device().Memory().Free()
	step := sizeStep(free - 1)
	size := free - step + 1<<20 // rounded up to free
	if free > 1<<b.shift || free%step != 0 || allocSize(size, b.shift) != free {
		t.Skipf("the device's %d free bytes are not one rounded buffer (chunk %d bytes)", free, uint64(1)<<b.shift)
	}
	b.mu.Lock()
	x, err := b.newResident(tensor.Uint8, []int{int(size)}) // not zeroed: nothing touches its pages
	b.mu.Unlock()
	require.NoError(t, err)
	p := fewUpdatesPlan(t, 1<<20)
	n, err := b.Needs(p)
	require.NoError(t, err)
	err = b.CheckFits(p, n)
	require.ErrorIs(t, err, ops.ErrOutOfMemory)
	assert.Equal(t, fmt.Sprintf("ScatterNDUpdate-15: vulkan: needs %d MiB of device memory; the device has 0 MiB free: "+
		"its resident tensors' %d MiB of data take %d MiB, as buffers are sized in steps of up to %d MiB; "+
		"the %d MiB they hold beyond the data is not free for a call",
		ceilDiv(n.DeviceBytes, 1<<20), size>>20, free>>20, step>>20, (step-1<<20)>>20), err.Error())

	b.budget = n.DeviceBytes - 1
	err = b.CheckFits(p, n)
	require.ErrorIs(t, err, ops.ErrOutOfMemory)
	assert.Regexp(t, `^ScatterNDUpdate-15: vulkan: needs \d+ MiB of device memory; the device has 0 MiB free$`, err.Error())
	b.budget = 0

	require.NoError(t, x.Close())
	require.NoError(t, b.CheckFits(p, n))
}

// TestNeedsMatchesEveryPath: Needs predicts the allocations of the
// reduction paths (in order, atomics), strings and SliceScatter too.
func TestNeedsMatchesEveryPath(t *testing.T) {
	b := openTest(t, Options{})
	warmUp(t, b)
	f32 := func(shape []int) *tensor.Tensor {
		x, err := tensor.New(tensor.Float32, shape)
		require.NoError(t, err)
		return x
	}
	i64 := func(shape []int, v ...int64) *tensor.Tensor {
		x, err := tensor.FromSlice(shape, v)
		require.NoError(t, err)
		return x
	}
	strs, err := tensor.FromStrings([]int{4}, []string{"a", "b", "c", "d"})
	require.NoError(t, err)
	upd, err := tensor.FromStrings([]int{2}, []string{"x", "y"})
	require.NoError(t, err)
	for name, req := range map[string]ops.Request{
		"ordered add": {Op: "ScatterElements-18", Data: f32([]int{64, 8}), Indices: i64([]int{2, 8}, make([]int64, 16)...),
			Updates: f32([]int{2, 8}), Reduction: "add"},
		"atomic max": {Op: "ScatterElements-18", Data: f32([]int{5000}), Indices: i64([]int{5000}, make([]int64, 5000)...),
			Updates: f32([]int{5000}), Reduction: "max"},
		"strings": {Op: "ScatterND-18", Data: strs, Indices: i64([]int{2, 1}, 3, 3), Updates: upd},
		"slice":   {Op: "SliceScatter-15", Data: f32([]int{64, 64}), Updates: f32([]int{32, 64}), Start: i64([]int{1}, 0), Stop: i64([]int{1}, 64), Step: i64([]int{1}, 2)},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := ops.Prepare(req)
			require.NoError(t, err)
			n, err := b.Needs(p)
			require.NoError(t, err)
			b.device().TrimPool()
			held := b.device().Memory().Held
			out, err := tensor.New(p.DType, p.Shape)
			require.NoError(t, err)
			require.NoError(t, b.Execute(context.Background(), p, out))
			assert.Equal(t, n.DeviceBytes, b.device().Memory().Held-held, "bytes allocated by Execute")
			var names []string
			for _, ps := range n.Passes {
				names = append(names, ps.Name)
			}
			var ran []string
			for _, tm := range b.LastStats().Passes {
				ran = append(ran, tm.Label)
			}
			t.Logf("passes %v, recorded %v", names, ran)
			if len(ran) > 0 {
				assert.Equal(t, ran, names, "the passes Execute recorded")
			}
		})
	}
}

// TestLargeOutputsStreamBack: on unified memory, a backend that pools no
// buffers (a one-call caller's) reads an output of at least streamMin
// bytes back chunk by chunk, each chunk freed once read, and the result is
// cpuref's; a pooling backend keeps the chunks for the next call. Without
// unified memory (a discrete GPU, GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1) the
// output comes back through the staging ring and no chunk is freed early;
// the backend that pools nothing still keeps nothing after the call.
func TestLargeOutputsStreamBack(t *testing.T) {
	b := openTest(t, Options{MaxPoolBytes: -1}, knobs.Knobs{ChunkBytes: testChunk})
	unified := b.device().UnifiedMemory()
	require.Equal(t, wantUnified(t, b, Options{}), unified)
	b.streamMin = 1
	p := fewUpdatesPlan(t, 20*testChunk+5)
	held := b.device().Memory().Held
	out, err := tensor.New(p.DType, p.Shape)
	require.NoError(t, err)
	require.NoError(t, b.Execute(context.Background(), p, out))
	freed := 0
	if unified {
		freed = 21
	}
	assert.Equal(t, freed, b.freedEarly, "the output's chunks are freed as they are read, on unified memory")
	assert.Equal(t, held, b.device().Memory().Held, "nothing is kept")

	pooling := openTest(t, Options{}, knobs.Knobs{ChunkBytes: testChunk})
	pooling.streamMin = 1
	n, err := pooling.Needs(p)
	require.NoError(t, err)
	warmUp(t, pooling)
	held = pooling.device().Memory().Held
	require.NoError(t, pooling.Execute(context.Background(), p, out))
	assert.Zero(t, pooling.freedEarly)
	assert.Equal(t, n.DeviceBytes, pooling.device().Memory().Held-held, "every buffer stays pooled")

	want, err := tensor.New(p.DType, p.Shape)
	require.NoError(t, err)
	require.NoError(t, cpuref.New().Execute(context.Background(), p, want))
	assert.Equal(t, want.Data, out.Data)
	require.NoError(t, b.Execute(context.Background(), p, out), "a second call after the pool lost buffers")
	assert.Equal(t, want.Data, out.Data)
}

// filled gives a shape-only request of planCases values: random data and
// updates, and indices within the axis (Element plans, axis 0) or the
// rows (ND plans).
func filled(t *testing.T, rng *rand.Rand, req ops.Request) ops.Request {
	t.Helper()
	fill := func(d *tensor.Tensor) *tensor.Tensor {
		// Small integers: sums stay exact in any order.
		x, err := tensor.New(d.DType, d.Shape)
		require.NoError(t, err)
		if d.DType == tensor.Float32 {
			for i, v := range tensor.View[float32](x) {
				tensor.View[float32](x)[i] = v + float32(rng.Intn(8))
			}
			return x
		}
		for i := range x.Data {
			x.Data[i] = byte(rng.Intn(8))
		}
		return x
	}
	req.Data, req.Updates = fill(req.Data), fill(req.Updates)
	if req.Indices != nil {
		idx, err := tensor.New(req.Indices.DType, req.Indices.Shape)
		require.NoError(t, err)
		for i := 0; i < idx.Len(); i++ {
			setRaw(idx, i, uint64(rng.Intn(req.Data.Shape[0])))
		}
		req.Indices = idx
	}
	return req
}

// TestExecuteRecordsThePlan: what Needs reports and what Execute records
// are one plan: for every path of planCases, on backends that change the
// facts (walks, atomics for small float sums, one position per
// invocation with tiny grids), Needs is the plan's, and Execute records
// its passes (labels), its dispatches and its kernels, allocates its
// memory, reports its reduction path and its description, and returns
// the CPU reference's result.
func TestExecuteRecordsThePlan(t *testing.T) {
	rng := rand.New(rand.NewSource(testSeed(t, 1)))
	for name, k := range map[string]knobs.Knobs{
		"defaults": {}, "walks": {WalkMinColumns: 64}, "atomics": {NoOrderedSmall: true},
		"tiny grids": {Run: 1, MaxWorkGroups: [3]uint32{3, 2, 2}},
	} {
		b := openTest(t, Options{}, k)
		warmUp(t, b)
		cases := planCases()
		cases = append(cases, planCase{name: "long walk", req: elementsReq("", tensor.Float32, []int{4, 3}, []int{segment + 5, 3})})
		for _, c := range cases {
			p, err := ops.Prepare(filled(t, rng, c.req))
			require.NoError(t, err)
			f := b.facts(true)
			pl, err := f.planCall(p)
			require.NoError(t, err)
			n, err := b.Needs(p)
			require.NoError(t, err)
			require.Equal(t, pl.needs(), n, "%s %s", name, c.name)

			// Owner words kept clear by an earlier case would be taken
			// instead of allocated and cleared.
			b.mu.Lock()
			b.dropClearOwners()
			b.mu.Unlock()
			b.device().TrimPool()
			held := b.device().Memory().Held
			got, want := runBoth(t, b, p)
			require.Empty(t, opstest.DiffFor(p.Reduction, got, want), "%s %s", name, c.name)
			if pl.hostOnly() {
				continue
			}
			st := b.LastStats()
			assert.Equal(t, n.DeviceBytes, b.device().Memory().Held-held, "%s %s: bytes allocated", name, c.name)
			var ran []string
			for _, tm := range st.Passes {
				ran = append(ran, tm.Label)
			}
			var recorded []string // the plan's passes, its clear of new owner words too
			for _, ps := range pl.passes {
				if ps.label != "" {
					recorded = append(recorded, ps.label)
				}
			}
			assert.Equal(t, recorded, ran, "%s %s: passes", name, c.name)
			dispatches := 0
			for _, ps := range pl.passes {
				dispatches += len(ps.dispatches)
			}
			assert.Equal(t, dispatches, st.Dispatches, "%s %s: dispatches", name, c.name)
			assert.Equal(t, pl.reduction, st.Reduction, "%s %s", name, c.name)
			assert.Equal(t, pl.String(), st.Plan(), "%s %s", name, c.name)
		}
	}
}

// warmUp runs a small call on b, so that the memory a backend keeps for
// its submissions (a sequence and its host areas, not part of any call's
// plan) exists before a test measures what a call allocates; the call's
// own buffers are then trimmed.
func warmUp(t *testing.T, b *Backend) {
	t.Helper()
	p := fewUpdatesPlan(t, 64)
	out, err := tensor.New(p.DType, p.Shape)
	require.NoError(t, err)
	require.NoError(t, b.Execute(context.Background(), p, out))
	b.device().TrimPool()
}
