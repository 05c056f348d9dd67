package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
)

// planningFake is a fake that is a TrafficPlanner.
type planningFake struct {
	*fake
	planned *int
}

func (f planningFake) PlanTraffic(p *ops.Plan) (int, int, uint64, uint64, string, error) {
	*f.planned++
	return 3, 2, 3_000_000, 5_000_000, "ScatterNDUpdate-15: 3 passes", nil
}

// It plans the call in place too (ResidentPlanner).
func (f planningFake) PlanResidentTraffic(p *ops.Plan) (int, uint64, error) {
	return 1, 51_000, nil
}

// TestPlanTraffic: a backend that works out its passes before running has
// them in its result, in the table against MB/pass and in the JSON.
func TestPlanTraffic(t *testing.T) {
	f := &fake{}
	tgt := gpuTarget(f)
	var planned int
	tgt.Backend = planningFake{f, &planned}
	rep, err := Run(context.Background(), []Target{cpuTarget(), tgt}, quick(t, "SND5"), testOptions())
	require.NoError(t, err)
	assert.Equal(t, 1, planned)
	gpu := rep.Results[1]
	assert.Equal(t, 3, gpu.PlanPasses)
	assert.Equal(t, 2, gpu.PlanDispatches)
	assert.Equal(t, int64(3_000_000), gpu.PlanBytes)
	assert.Equal(t, int64(5_000_000), gpu.PlanMemory)
	assert.Equal(t, "ScatterNDUpdate-15: 3 passes", gpu.Plan)
	assert.Zero(t, rep.Results[0].PlanPasses, "the CPU plans nothing")
	assert.False(t, rep.Results[0].Planned, "the CPU plans nothing")
	var b strings.Builder
	require.NoError(t, rep.WriteTable(&b))
	// SND5 at the quick size: 125 index tuples of 3 int64 and 125x15
	// float32 updates, each landing on its own element: 3000 + 7500 +
	// 2*7500 one-pass bytes.
	assert.Equal(t, int64(25_500), gpu.OnePassBytes)
	assert.Equal(t, []any{true, 1, int64(51_000)}, []any{gpu.ResidentPlanned, gpu.ResidentDispatches, gpu.ResidentPlanBytes})
	assert.Contains(t, b.String(), "plan: 3 passes read and write 3.0 MB on the device in 2 dispatches, 117.65x the one-pass bytes; 5.0 MB of device memory")
	assert.Contains(t, b.String(), "plan in place on resident tensors: 0.051 MB on the device in 1 dispatch, 2.00x the one-pass bytes")
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	assert.Contains(t, string(js), `"plan_passes":3,"dispatches":2,"plan_bytes":3000000,"plan_memory":5000000,"one_pass_bytes":25500,`+
		`"resident_plan_bytes":51000,"resident_dispatches":1,"plan":"ScatterNDUpdate-15: 3 passes"`)
	var rows struct {
		Results []map[string]any `json:"results"`
	}
	require.NoError(t, json.Unmarshal(js, &rows))
	require.Len(t, rows.Results, 2)
	assert.NotContains(t, rows.Results[0], "dispatches", "the CPU row has no plan")
	assert.EqualValues(t, 2, rows.Results[1]["dispatches"])
}

// TestRunSkipsWhatTheDeviceHasNoMemoryFor: a plan the device refuses for
// lack of memory is skipped, not failed.
func TestRunSkipsWhatTheDeviceHasNoMemoryFor(t *testing.T) {
	small := &fake{err: &ops.Error{Op: "ScatterElements-18", Err: ops.ErrOutOfMemory, Msg: "vulkan: needs 9 MiB of device memory; the device has 8 MiB free"}}
	rep, err := Run(context.Background(), []Target{cpuTarget(), gpuTarget(small)}, quick(t, "SE"), testOptions())
	require.NoError(t, err)
	gpu := rep.Results[1]
	assert.Equal(t, "too little device memory: ScatterElements-18: vulkan: needs 9 MiB of device memory; the device has 8 MiB free", gpu.Skipped)
	assert.False(t, gpu.Failed())
}
