//go:build cgo

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
)

// TestCheckPasses runs two paths of check at the quick size on the default
// device, with validation: every case passes, the header names the device
// and the reduction paths, and --json holds the same rows.
func TestCheckPasses(t *testing.T) {
	out := filepath.Join(t.TempDir(), "check.json")
	code, stdout, stderr := runCLI(t, "check", "--quick", "--match", "resident", "--validate", "--json", out)
	require.Equal(t, exitOK, code, "%s\n%s", stdout, stderr)
	assert.Contains(t, stdout, "device:")
	assert.Contains(t, stdout, "float32 sum")
	assert.Contains(t, stdout, "resident/chunks4KiB")
	assert.Contains(t, stdout, "PASS: ")
	var res checkResult
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	assert.NotEmpty(t, res.Device.Name)
	assert.NotEmpty(t, res.Rows)
	assert.Zero(t, res.Failed)
	assert.Positive(t, res.Cases)
	assert.Contains(t, []string{"on", "not installed"}, res.Validation)
	for _, row := range res.Rows {
		assert.Equal(t, row.Cases, row.Passed, "%+v", row)
	}
}

// TestCheckCatchesBrokenPaths forces two broken paths (knobs.Knobs.Fault)
// and requires check to fail with exit status 1 and show the first
// mismatch: one bit flipped in the last element of every result, and min
// reductions run as max.
func TestCheckCatchesBrokenPaths(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault knobs.Fault
		match string
		want  []string
	}{
		{"flipLast", knobs.FlipLast, "none/default", []string{"first mismatch: op ", "path none/default"}},
		{"minAsMax", knobs.MinAsMax, "random/deterministic", []string{"first mismatch: op ", "reduction min", "path random/deterministic"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkFault = c.fault
			t.Cleanup(func() { checkFault = knobs.NoFault })
			out := filepath.Join(t.TempDir(), "check.json")
			code, stdout, stderr := runCLI(t, "check", "--quick", "--match", c.match, "--json", out)
			t.Logf("check with %s:\n%s%s", c.name, stdout, stderr)
			require.Equal(t, exitError, code)
			for _, w := range c.want {
				assert.Contains(t, stdout, w)
			}
			assert.Contains(t, stderr, "cases failed")
			var res checkResult
			data, err := os.ReadFile(out)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &res))
			assert.Positive(t, res.Failed)
			var first bool
			for _, row := range res.Rows {
				if row.First != nil {
					first = true
					assert.NotEqual(t, row.First.Want, row.First.Got)
				}
			}
			assert.True(t, first, "a row records its first mismatch")
		})
	}
}

func TestCheckUsage(t *testing.T) {
	code, stdout, stderr := runCLI(t, "check", "--quick", "--full")
	requireUsageError(t, code, stdout, stderr, "--quick and --full exclude each other")
	code, stdout, stderr = runCLI(t, "check", "--match", "no such path")
	requireUsageError(t, code, stdout, stderr, "selects no path")
	code, stdout, stderr = runCLI(t, "check", "--seed", "x")
	assert.Equal(t, exitUsage, code, stdout+stderr)
	code, stdout, _ = runCLI(t, "help", "check")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "--validate")
}

// TestCheckRowsNameRealOperators: a row's operator is one gpuscatter runs,
// or "-" for the checks of a path as a whole; the validation table's
// requests with an unknown or missing operator count under "-".
func TestCheckRowsNameRealOperators(t *testing.T) {
	out := filepath.Join(t.TempDir(), "check.json")
	code, stdout, stderr := runCLI(t, "check", "--quick", "--match", "deterministic", "--json", out)
	require.Equal(t, exitOK, code, "%s\n%s", stdout, stderr)
	var res checkResult
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	dash := false
	for _, row := range res.Rows {
		if row.Op == "-" {
			dash = true
			continue
		}
		op, err := ops.Lookup(row.Op)
		if assert.NoError(t, err, "row %s %s", row.Path, row.Op) {
			assert.Equal(t, op.Name, row.Op)
		}
	}
	assert.True(t, dash, "a row of the operator -")
	assert.NotContains(t, stdout, "(no operator)")
}
