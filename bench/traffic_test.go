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
	assert.Regexp(t, `plan: 3 passes read and write 3\.0 MB on the device in 2 dispatches, \d+\.\d\dx MB/pass; 5\.0 MB of device memory`, b.String())
	js, err := json.Marshal(rep)
	require.NoError(t, err)
	assert.Contains(t, string(js), `"plan_passes":3,"dispatches":2,"plan_bytes":3000000,"plan_memory":5000000,"plan":"ScatterNDUpdate-15: 3 passes"`)
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
