package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/examples"
)

// exampleBlocks splits the examples report into one block per example,
// keyed by name.
func exampleBlocks(t *testing.T, stdout string) map[string]string {
	t.Helper()
	blocks := map[string]string{}
	for _, b := range strings.Split(stdout, "=== ")[1:] {
		name, _, _ := strings.Cut(b, "\n")
		blocks[name] = b
	}
	return blocks
}

func TestExamplesCommand(t *testing.T) {
	code, stdout, stderr := runCLI(t, "examples", "--backend", "cpu")
	require.Equal(t, exitOK, code, "stderr: %s\nstdout: %s", stderr, stdout)
	assert.Empty(t, stderr)
	all := examples.All()
	blocks := exampleBlocks(t, stdout)
	require.Len(t, blocks, len(all))
	for _, ex := range all {
		b, ok := blocks[ex.Name]
		require.True(t, ok, "no report for %s", ex.Name)
		assert.Contains(t, b, "  op         "+ex.Request.Op, ex.Name)
		assert.Contains(t, b, "  data       "+ex.Request.Data.String()+"\n", ex.Name)
		assert.Contains(t, b, "  updates    "+ex.Request.Updates.String()+"\n", ex.Name)
		if ex.Request.Indices != nil {
			assert.Contains(t, b, "  indices    "+ex.Request.Indices.String()+"\n", ex.Name)
		}
		assert.Contains(t, b, "  output     "+ex.Want.String()+"\n", ex.Name)
		assert.Contains(t, b, "  ok         matches the spec\n", ex.Name)
		assert.NotContains(t, b, "MISMATCH", ex.Name)
	}
	assert.Contains(t, stdout, "examples on backend cpu: ")
	assert.True(t, strings.HasSuffix(stdout, " do not\n"), stdout)
	assert.Contains(t, stdout, ": "+strconv.Itoa(len(all))+" match, 0 do not\n")
}

func TestExamplesAutoNotice(t *testing.T) {
	withGPU(t, nil) // a build without a GPU backend
	code, stdout, stderr := runCLI(t, "examples", "--match", "SliceScatter")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, prefix+"--backend auto: this build has no Vulkan (built with CGO_ENABLED=0; the gpu backend needs cgo); using the CPU\n", stderr)
	assert.Len(t, exampleBlocks(t, stdout), 3)
	assert.Contains(t, stdout, "3 examples on backend cpu: 3 match, 0 do not\n")
}

func TestExamplesMatch(t *testing.T) {
	code, stdout, _ := runCLI(t, "examples", "--backend", "cpu", "--match", "scatterndupdate-15/XML-2")
	require.Equal(t, exitOK, code)
	assert.Len(t, exampleBlocks(t, stdout), 1)
	assert.Contains(t, stdout, "1 example on backend cpu: 1 match, 0 do not\n")

	code, stdout, stderr := runCLI(t, "examples", "--backend", "cpu", "--match", "no such example")
	requireInputError(t, code, stdout, stderr, `--match "no such example": no example name contains it`)
}

func TestExamplesGPUUnavailable(t *testing.T) {
	withGPU(t, nil) // a build without a GPU backend
	code, stdout, stderr := runCLI(t, "examples", "--backend", "gpu")
	requireInputError(t, code, stdout, stderr)
	assert.Equal(t, prefix+"--backend gpu: this build has no Vulkan (built with CGO_ENABLED=0; the gpu backend needs cgo)\n", stderr)
}

// TestExamplesReportMismatches: a backend that gets results wrong makes
// the examples command print MISMATCH and exit 1.
func TestExamplesReportMismatches(t *testing.T) {
	calls := 0
	withGPU(t, func(context.Context) (ops.Backend, error) {
		return fakeGPU{Backend: cpuref.New(), calls: &calls, corrupt: true}, nil
	})
	code, stdout, stderr := runCLI(t, "examples", "--match", "SliceScatter-15/xml-")
	require.Equal(t, exitError, code)
	assert.Equal(t, 3, calls)
	assert.Equal(t, 3, strings.Count(stdout, "MISMATCH"))
	assert.Contains(t, stdout, "  want       ")
	assert.Contains(t, stdout, "3 examples on backend gpu: 0 match, 3 do not\n")
	assert.Equal(t, prefix+"examples: 3 of 3 examples failed: SliceScatter-15/xml-1, SliceScatter-15/xml-2, SliceScatter-15/xml-3\n", stderr)
}

// TestExamplesReportRunFailures: a run that fails is reported with its
// error and counts as a failure.
func TestExamplesReportRunFailures(t *testing.T) {
	withGPU(t, func(context.Context) (ops.Backend, error) { return failingBackend{}, nil })
	code, stdout, stderr := runCLI(t, "examples", "--backend", "gpu", "--match", "ScatterUpdate-3/")
	require.Equal(t, exitError, code)
	assert.Contains(t, stdout, "  FAIL       run exited with status 1: ScatterUpdate-3: device lost while scattering; run the command again, which opens the device afresh, or run it with --backend cpu\n")
	assert.Equal(t, prefix+"examples: 1 of 1 example failed: ScatterUpdate-3/xml-2\n", stderr)
}
