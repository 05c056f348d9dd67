//go:build cgo

package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/bench"
	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpubench"
	"github.com/gpuscatter/gpuscatter/internal/treetests"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// TestAutoChoiceOnTheDiscreteProfile: with the H100 profile's documented
// figures (gpu/testdata/facts/discrete.json, "measured"), at full bench
// size, --backend auto runs the host calls of the data-movement workloads
// (SU1, SS, SND5 and their like, whose transfers over PCIe alone outlast
// the CPU's whole call) on the CPU, the host calls whose estimate says the
// GPU wins on the GPU, and a resident batch on the GPU where its tensors
// are; the table of estimates is printed.
func TestAutoChoiceOnTheDiscreteProfile(t *testing.T) {
	info := discreteInfo(t)
	require.NotNil(t, info.Measured, "the profile's figure set")
	require.True(t, info.Measured.Complete(), "the profile's figure set is complete")
	ws, err := bench.Select(nil, 1, 1)
	require.NoError(t, err)
	// Every bench workload as a host call: the upload of its int64
	// indices and its updates at 25 GB/s outlasts a 16-thread CPU's
	// whole call, reductions included (the in-place column is what a
	// resident call costs instead).
	want := map[string]string{}
	for _, w := range ws {
		want[w.Name] = "cpu"
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-12s %12s %12s %6s %16s\n", "workload", "gpu ms", "cpu ms", "auto", "in place gpu ms")
	for _, w := range ws {
		p, err := ops.PrepareShapes(w.Shapes())
		require.NoError(t, err, w.Name)
		opts := gpu.Options{MaxPoolBytes: -1}
		host, err := gpu.PlanFor(info, opts, p)
		require.NoError(t, err, w.Name)
		dev, cpu, choice := planEstimates(p, info, false, host, gpu.CompileWork{})
		require.True(t, dev.Known() && cpu.Known(), w.Name)
		assert.Equal(t, gpubench.Choice(dev, cpu), choice, w.Name)
		assert.Equal(t, want[w.Name], choice, "%s: gpu %v, cpu %v", w.Name, dev, cpu)
		in, err := gpu.PlanInPlaceFor(info, opts, p)
		require.NoError(t, err, w.Name)
		resident, _, residentChoice := planEstimates(p, info, true, in, gpu.CompileWork{})
		assert.Equal(t, "gpu", residentChoice, "%s: a resident call stays on the device", w.Name)
		assert.Less(t, resident.Ms, dev.Ms, "%s: in place, no transfers", w.Name)
		fmt.Fprintf(&table, "%-12s %12.4g %12.4g %6s %16.4g\n", w.Name, dev.Ms, cpu.Ms, choice, resident.Ms)
	}
	t.Logf("estimates for %s, host calls at full size:\n%s", info.Name, table.String())

	// A resident batch of SND-1000's 1000 calls, one submission: the
	// batch's estimate against the same calls on host tensors.
	w, err := bench.Select([]string{"SND-1000"}, 1, 1)
	require.NoError(t, err)
	p, err := ops.PrepareShapes(w[0].Shapes())
	require.NoError(t, err)
	in, err := gpu.PlanInPlaceFor(info, gpu.Options{}, p)
	require.NoError(t, err)
	batch, _ := gpubench.Estimates(info.Measured, in.Work(), p, 1000, true)
	host, err := gpu.PlanFor(info, gpu.Options{}, p)
	require.NoError(t, err)
	hostDev, hostCPU := gpubench.Estimates(info.Measured, host.Work(), p, 1000, false)
	t.Logf("SND-1000 as a resident batch: %v; as host calls: gpu %v, cpu %v", batch, hostDev, hostCPU)
	assert.Less(t, batch.Ms, hostCPU.Ms, "the resident batch beats the CPU's host calls")
	assert.Less(t, batch.Ms, hostDev.Ms, "one submission instead of 1000, no transfers")

	// A host call the GPU wins: a float16 sum with int32 indices moves 6
	// bytes over PCIe per update, less than the CPU's fold of it takes.
	req := ops.Request{Op: "ScatterNDUpdate-15", Reduction: "sum", Data: shape(tensor.Float16, 1<<20),
		Indices: shape(tensor.Int32, 16<<20, 1), Updates: shape(tensor.Float16, 16<<20)}
	p, err = ops.PrepareShapes(req)
	require.NoError(t, err)
	n, err := gpu.PlanFor(info, gpu.Options{}, p)
	require.NoError(t, err)
	dev, cpu, choice := planEstimates(p, info, false, n, gpu.CompileWork{})
	t.Logf("ScatterNDUpdate-15 sum float16[1M], int32 indices [16M,1]: gpu %v, cpu %v: %s", dev, cpu, choice)
	assert.Equal(t, "gpu", choice)
}

// shape returns a tensor of dt and shape without a payload, as plan
// reads the inputs' headers.
func shape(dt tensor.DType, dims ...int) *tensor.Tensor {
	return &tensor.Tensor{DType: dt, Shape: dims}
}

// TestEstimateArithmetic: an estimate's parts are the plan's work at the
// figures' rates (the cost package's arithmetic, fed by gpu.PlanNeeds.Work
// and cpuref.WorkOf): a ScatterElements add on the profile.
func TestEstimateArithmetic(t *testing.T) {
	info := discreteInfo(t)
	m := info.Measured
	w, err := bench.Select([]string{"SE-sum-dup"}, 1, 1)
	require.NoError(t, err)
	p, err := ops.PrepareShapes(w[0].Shapes())
	require.NoError(t, err)
	n, err := gpu.PlanFor(info, gpu.Options{}, p)
	require.NoError(t, err)
	dev, cpu := gpubench.Estimates(m, n.Work(), p, 1, false)
	up := float64(n.HostBytes-n.DownloadBytes) / (m.UploadGBps * 1e9) * 1e3
	down := float64(n.DownloadBytes) / (m.DownloadGBps * 1e9) * 1e3
	var passes float64
	for _, ps := range n.Passes {
		mem := float64(ps.Read+ps.Written) / (m.CopyGBps * 1e9)
		work := (float64(ps.Positions)*m.ElementNs + float64(ps.Atomics)*m.AtomicNs) * 1e-9
		passes += max(mem, work) * 1e3
	}
	want := up + down + passes + float64(n.Dispatches)*m.DispatchUs/1e3 + float64(n.Submits)*m.SubmitWaitUs/1e3
	assert.InDelta(t, want, dev.Ms, want*1e-12)
	assert.Equal(t, []cost.Part{{Name: "upload", Ms: up}, {Name: "download", Ms: down}, {Name: "passes", Ms: passes},
		{Name: "dispatches", Ms: float64(n.Dispatches) * m.DispatchUs / 1e3}, {Name: "submits", Ms: m.SubmitWaitUs / 1e3}}, dev.Parts)
	// The CPU folds every update and copies data into the output.
	wantCPU := float64(2*p.Data.Len()*4)/(m.CPU.CopyGBps*1e9)*1e3 + float64(p.NumUpdates())*m.CPU.ReduceNs/1e6
	assert.InDelta(t, wantCPU, cpu.Ms, wantCPU*1e-9)
}

// discreteInfo reads the discrete GPU's description in gpu/testdata.
func discreteInfo(t *testing.T) vk.DeviceInfo {
	t.Helper()
	treetests.Require(t)
	raw, err := os.ReadFile(discreteFacts)
	require.NoError(t, err)
	info, err := vk.ParseDeviceInfo(raw)
	require.NoError(t, err)
	return info
}
