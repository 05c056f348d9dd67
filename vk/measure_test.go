//go:build cgo

package vk

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cost"
)

// TestMeasure: the figures are positive and plausible, taken once and
// kept beside the pipeline cache under the device's and driver's name,
// read back by the next device, measured again on request or when the
// file is unusable, and not kept with the cache file off.
func TestMeasure(t *testing.T) {
	dir := t.TempDir()
	d := openTest(t, Options{PipelineCacheDir: dir})
	ctx := context.Background()
	m, err := d.MeasuredFigures(ctx, false, nil)
	require.NoError(t, err)
	assert.NoError(t, m.Check(), "%+v", m)
	assert.Less(t, m.SubmitWaitUs, 1e6, "a trivial submission took a second")
	assert.Equal(t, uint64(probeBytes), m.ProbeBytes)
	t.Logf("%s: %+v", d.Info().Name, m)

	path := filepath.Join(dir, measuredFile(d.Info()))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var kept Measured
	require.NoError(t, json.Unmarshal(b, &kept))
	assert.Equal(t, m, kept)

	// Read back, not measured again: a doctored file shows it.
	doctored := m
	doctored.CopyGBps = 12345
	b, err = json.Marshal(doctored)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	got, err := d.MeasuredFigures(ctx, false, nil)
	require.NoError(t, err)
	assert.Equal(t, doctored, got)
	again, err := d.MeasuredFigures(ctx, true, nil)
	require.NoError(t, err)
	assert.NotEqual(t, 12345.0, again.CopyGBps, "remeasure")

	// An invalid file is measured around.
	require.NoError(t, os.WriteFile(path, []byte(`{"upload_gbps": -1}`), 0o644))
	got, err = d.MeasuredFigures(ctx, false, nil)
	require.NoError(t, err)
	assert.NoError(t, got.Check())

	off := openTest(t, Options{PipelineCacheDir: "off"})
	_, err = off.MeasuredFigures(ctx, false, nil)
	require.NoError(t, err)
}

// TestMeasuredFiguresBounds: kept figures that no device can have (an
// element time of 1e300 ns, a CPU copy of 1e-9 GB/s) are measured again,
// not used.
func TestMeasuredFiguresBounds(t *testing.T) {
	dir := t.TempDir()
	d := openTest(t, Options{PipelineCacheDir: dir})
	ctx := context.Background()
	m, err := d.MeasuredFigures(ctx, false, nil)
	require.NoError(t, err)
	path := filepath.Join(dir, measuredFile(d.Info()))
	for _, edit := range []func(*Measured){
		func(m *Measured) { m.ElementNs = 1e300 },
		func(m *Measured) {
			m.CPU = &cost.CPU{Threads: 2, CopyGBps: 1e-9, MoveGBps: 1, ElementNs: 1, ReduceNs: 1}
		},
	} {
		bad := m
		edit(&bad)
		b, err := json.Marshal(bad)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o644))
		got, err := d.MeasuredFigures(ctx, false, nil)
		require.NoError(t, err)
		assert.NoError(t, got.Check(), "%+v", got)
		assert.NotEqual(t, bad, got, "measured again")
	}
}
