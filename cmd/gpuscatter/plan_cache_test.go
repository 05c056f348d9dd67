//go:build cgo

package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/treetests"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/vk"
)

// TestPlanShowsTensorScatterAxisAndMode: the plan of a TensorScatter-24 call shows its
// axis and mode, as text and as JSON, and says, as for every operator,
// that the traffic leaves out data's copy into the output, with its
// bytes.
func TestPlanShowsTensorScatterAxisAndMode(t *testing.T) {
	treetests.Require(t) // the discrete GPU's description in gpu/testdata
	raw, err := os.ReadFile(discreteFacts)
	require.NoError(t, err)
	info, err := vk.ParseDeviceInfo(raw)
	require.NoError(t, err)
	dir := t.TempDir()
	req := cacheRequest(2, 4, 64, 3, 8, []int64{1, 5}, "", "")
	files := []string{"--op", req.Op, "--data", writeNPY(t, dir, "past_cache.npy", req.Data),
		"--updates", writeNPY(t, dir, "update.npy", req.Updates), "--indices", writeNPY(t, dir, "write_indices.npy", req.Indices),
		"--facts", discreteFacts}
	for _, c := range []struct {
		flags      []string
		axis       int
		mode, head string
	}{
		{nil, 2, "linear", "TensorScatter-24 float32[2,4,64,8] axis 2 mode linear on "},
		{[]string{"--mode", "circular"}, 2, "circular", "TensorScatter-24 float32[2,4,64,8] axis 2 mode circular on "},
		{[]string{"--mode", "linear", "--axis", "-2"}, 2, "linear", "TensorScatter-24 float32[2,4,64,8] axis 2 mode linear on "},
	} {
		r := req
		r.Mode = c.mode
		p, err := ops.PrepareShapes(r)
		require.NoError(t, err)
		want, err := gpu.PlanFor(info, gpu.Options{MaxPoolBytes: -1}, p)
		require.NoError(t, err)
		require.Equal(t, uint64(2*4*64*8*4), want.DataCopyBytes, "data's bytes")

		args := append(append([]string{"plan"}, files...), c.flags...)
		code, stdout, stderr := runCLI(t, args...)
		require.Equal(t, exitOK, code, stderr)
		assert.True(t, strings.HasPrefix(stdout, c.head), stdout)
		assert.Contains(t, stdout, "\n  not in the traffic: data's 16384 bytes, uploaded into the output before the passes run (on resident tensors in place, no copy)\n")

		code, stdout, stderr = runCLI(t, append(args, "--json")...)
		require.Equal(t, exitOK, code, stderr)
		got := requirePlanJSON(t, stdout, want, strings.Join(c.flags, " "))
		require.NotNil(t, got.Axis)
		assert.Equal(t, c.axis, *got.Axis)
		assert.Equal(t, c.mode, got.Mode)
		assert.Equal(t, want.DataCopyBytes, got.DataCopyBytes)
	}

	// Another operator names no axis or mode in JSON, but its data copy
	// is left out of the traffic too.
	args, r := planInputs(t, dir, 64, 50)
	p, err := ops.PrepareShapes(r)
	require.NoError(t, err)
	want, err := gpu.PlanFor(info, gpu.Options{MaxPoolBytes: -1}, p)
	require.NoError(t, err)
	code, stdout, stderr := runCLI(t, append(append([]string{"plan"}, args...), "--facts", discreteFacts, "--json")...)
	require.Equal(t, exitOK, code, stderr)
	var keys map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &keys))
	assert.NotContains(t, keys, "axis")
	assert.NotContains(t, keys, "mode")
	assert.Equal(t, float64(64*4), keys["data_copy_bytes"])
	code, stdout, stderr = runCLI(t, append(append([]string{"plan"}, args...), "--facts", discreteFacts)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "\n  not in the traffic: data's 256 bytes, uploaded into the output before the passes run")
	assert.Equal(t, uint64(256), want.DataCopyBytes)
}
