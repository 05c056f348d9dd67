package bench

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTableFiguresOfTinyInputs: no figure of the table that is not zero
// prints as zero, however small the inputs (median ms 0.000, MB/pass 0.0,
// 0.00x), and the usual figures keep their decimals.
func TestTableFiguresOfTinyInputs(t *testing.T) {
	rep := &Report{Repeats: 5, Warmups: 1, CPU: "test cpu", Threads: 2, MemcpyBytes: 1 << 20, Results: []Result{
		{Workload: "tiny", Backend: "cpu", Device: "cpu", Median: 40 * time.Microsecond, Min: 30 * time.Microsecond, Max: 90 * time.Microsecond,
			Bytes: 120, GBps: 0.003, MemcpyGBps: 20, FractionOfMemcpy: 0.00016, Verified: true},
		{Workload: "tiny", Backend: "gpu", Device: "fake device", Median: 250 * time.Nanosecond, Min: 200 * time.Nanosecond, Max: 3 * time.Microsecond,
			DeviceTime: 120 * time.Nanosecond, Phases: []Phase{{Name: "scatter", Duration: 80 * time.Nanosecond}},
			DeviceCopyTime: 40 * time.Microsecond, DeviceOverCopy: 0.003, ResidentTime: 90 * time.Nanosecond,
			Planned: true, PlanPasses: 1, PlanDispatches: 1, PlanBytes: 96, PlanMemory: 4096, OnePassBytes: 120,
			Bytes: 120, GBps: 0.48, MemcpyGBps: 20, FractionOfMemcpy: 0.024, Speedup: 160, Verified: true},
		{Workload: "big", Backend: "cpu", Device: "cpu", Median: 1234567 * time.Microsecond, Min: 12345 * time.Microsecond, Max: 2 * time.Second,
			Bytes: 3_200_000_000, GBps: 2.5, MemcpyGBps: 20, FractionOfMemcpy: 0.125, Verified: true},
		{Workload: "big", Backend: "gpu", Device: "fake device", Median: 150 * time.Millisecond, Min: 5 * time.Millisecond, Max: 500 * time.Microsecond,
			Bytes: 3_200_000_000, GBps: 21.33, MemcpyGBps: 20, FractionOfMemcpy: 1.0665, Speedup: 8.23, Verified: true},
	}}
	var b strings.Builder
	require.NoError(t, rep.WriteTable(&b))
	table := b.String()
	t.Log("\n" + table)
	zero := regexp.MustCompile(`(^|[\s(])0\.0+(x|%)?([\s,;]|$)`)
	assert.Empty(t, zero.FindAllString(table, -1), "figures that print as zero")

	row := func(workload, backend string) []string {
		m := regexp.MustCompile(`(?m)^` + workload + ` +` + backend + ` .*$`).FindString(table)
		require.NotEmpty(t, m, "%s on %s", workload, backend)
		return strings.Fields(m)
	}
	// median, min, max, device ms, MB/pass, memcpy ms, GB/s, memcpy GB/s, of memcpy, speedup
	assert.Equal(t, []string{"0.040", "0.030", "0.090", "-", "0.00012", "0.0000060", "0.0030", "20.00", "0.02%", "-"}, row("tiny", "cpu")[2:12])
	assert.Equal(t, []string{"0.00025", "0.00020", "0.0030", "0.00012", "0.00012", "0.0000060", "0.48", "20.00", "2%", "160.00x"}, row("tiny", "gpu")[2:12])
	assert.Equal(t, []string{"1235", "12.35", "2000", "-", "3200.0", "160.0", "2.50", "20.00", "12%", "-"}, row("big", "cpu")[2:12])
	assert.Equal(t, []string{"150.0", "5.000", "0.500", "-", "3200.0", "160.0", "21.33", "20.00", "107%", "8.23x"}, row("big", "gpu")[2:12])
	assert.Contains(t, table, "phases: scatter 0.000080 ms\n")
	assert.Contains(t, table, "device copy of the same traffic: 0.040 ms; device time is 0.0030x that\n")
	assert.Contains(t, table, "in place on inputs resident on the device: 0.000090 ms per call (no host transfers), 444.44x the cpu\n")
	assert.Contains(t, table, "plan: 1 pass reads and writes 0.000096 MB on the device in 1 dispatch, 0.80x the one-pass bytes; 0.0041 MB of device memory\n")
}

func TestFixed(t *testing.T) {
	for _, c := range []struct {
		v           float64
		minDec, sig int
		want        string
	}{
		{0, 1, 2, "0.0"},
		{1234.5, 1, 2, "1234.5"},
		{0.5, 1, 2, "0.50"},
		{0.04, 1, 2, "0.040"},
		{0.000123, 3, 2, "0.00012"},
		{-0.0042, 2, 2, "-0.0042"},
		{0.0004, 0, 1, "0.0004"},
		{12.5, 0, 1, "12"},
	} {
		assert.Equal(t, c.want, fixed(c.v, c.minDec, c.sig), "fixed(%v, %d, %d)", c.v, c.minDec, c.sig)
	}
}

// TestEstimateAgainstMeasured: each GPU row's estimate line gives the
// estimate over the measured median, as a host call and resident, and
// flags a ratio outside [0.5, 2]; the JSON has both ratios and the flag.
func TestEstimateAgainstMeasured(t *testing.T) {
	assert.False(t, EstimateOff(10*time.Millisecond, 20*time.Millisecond), "0.5 is within")
	assert.False(t, EstimateOff(40*time.Millisecond, 20*time.Millisecond), "2 is within")
	assert.True(t, EstimateOff(9*time.Millisecond, 20*time.Millisecond))
	assert.True(t, EstimateOff(41*time.Millisecond, 20*time.Millisecond))
	assert.False(t, EstimateOff(0, 20*time.Millisecond), "no estimate")
	assert.False(t, EstimateOff(10*time.Millisecond, 0), "nothing measured")

	gpu := func(name string, est, med, rest, res time.Duration) Result {
		return Result{Workload: name, Backend: "gpu", Device: "fake device", Median: med, Min: med, Max: med, ResidentTime: res,
			Estimated: true, Estimate: est, CPUEstimate: time.Millisecond, AutoChoice: "cpu", ResidentEstimate: rest, Verified: true}
	}
	rep := &Report{Repeats: 5, Warmups: 1, CPU: "test cpu", Threads: 2, Results: []Result{
		gpu("fair", 8*time.Millisecond, 10*time.Millisecond, 6*time.Millisecond, 4*time.Millisecond),
		gpu("off", 1*time.Millisecond, 10*time.Millisecond, 30*time.Millisecond, 10*time.Millisecond),
	}}
	var b strings.Builder
	require.NoError(t, rep.WriteTable(&b))
	table := b.String()
	t.Log("\n" + table)
	assert.Contains(t, table, "estimate: 8.000 ms on the device (0.80 of the measured), 6.000 ms resident (1.50 of the measured), 1.000 ms on the cpu;")
	assert.Contains(t, table, "estimate: 1.000 ms on the device (0.10 of the measured, OUTSIDE 0.5-2), 30.00 ms resident (3.00 of the measured, OUTSIDE 0.5-2), 1.000 ms on the cpu;")

	js, err := rep.MarshalJSON()
	require.NoError(t, err)
	var got struct {
		Results []struct {
			Workload      string   `json:"workload"`
			Ratio         *float64 `json:"estimate_over_measured"`
			ResidentMS    *float64 `json:"resident_estimate_ms"`
			ResidentRatio *float64 `json:"resident_estimate_over_measured"`
			Off           bool     `json:"estimate_off"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(js, &got))
	require.Len(t, got.Results, 2)
	for i, want := range []struct {
		ratio, resident, residentRatio float64
		off                            bool
	}{{0.8, 6, 1.5, false}, {0.1, 30, 3, true}} {
		r := got.Results[i]
		require.NotNil(t, r.Ratio, r.Workload)
		require.NotNil(t, r.ResidentMS, r.Workload)
		require.NotNil(t, r.ResidentRatio, r.Workload)
		assert.InDelta(t, want.ratio, *r.Ratio, 1e-9, r.Workload)
		assert.InDelta(t, want.resident, *r.ResidentMS, 1e-9, r.Workload)
		assert.InDelta(t, want.residentRatio, *r.ResidentRatio, 1e-9, r.Workload)
		assert.Equal(t, want.off, r.Off, r.Workload)
	}
}

// TestPhaseEstimatesJSON: a row's estimate of each pass label goes into
// the JSON beside the measured phases, and is left out where there is
// none.
func TestPhaseEstimatesJSON(t *testing.T) {
	rep := &Report{Repeats: 1, Results: []Result{
		{Workload: "with", Backend: "gpu", Median: time.Millisecond, Verified: true,
			Phases:         []Phase{{"resolve", 300 * time.Microsecond}, {"scatter", 600 * time.Microsecond}},
			PhaseEstimates: []Phase{{"resolve", 250 * time.Microsecond}, {"scatter", 900 * time.Microsecond}}},
		{Workload: "without", Backend: "gpu", Median: time.Millisecond, Verified: true,
			Phases: []Phase{{"scatter", 600 * time.Microsecond}}},
	}}
	js, err := rep.MarshalJSON()
	require.NoError(t, err)
	var got struct {
		Results []struct {
			Estimates []struct {
				Name string  `json:"name"`
				MS   float64 `json:"ms"`
			} `json:"phase_estimates"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(js, &got))
	require.Len(t, got.Results, 2)
	require.Len(t, got.Results[0].Estimates, 2)
	assert.Equal(t, "resolve", got.Results[0].Estimates[0].Name)
	assert.InDelta(t, 0.25, got.Results[0].Estimates[0].MS, 1e-9)
	assert.Equal(t, "scatter", got.Results[0].Estimates[1].Name)
	assert.InDelta(t, 0.9, got.Results[0].Estimates[1].MS, 1e-9)
	assert.Nil(t, got.Results[1].Estimates)
	assert.NotContains(t, string(js), `"phase_estimates":null`)
}
