package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/bench"
)

// lineHook is stderr for a test: it keeps what is written and calls hook
// with each complete line.
type lineHook struct {
	buf  bytes.Buffer
	hook func(line string)
}

func (w *lineHook) Write(p []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(p), "\n") {
		w.buf.WriteString(line)
		if strings.HasSuffix(line, "\n") && w.hook != nil {
			w.hook(strings.TrimSuffix(line, "\n"))
		}
	}
	return len(p), nil
}

// TestBenchReportsAsItGoes: off a terminal, bench writes a line per
// workload and backend on stderr as soon as it is measured.
func TestBenchReportsAsItGoes(t *testing.T) {
	smallMemcpy(t)
	withBenchGPU(t, &benchGPU{corruptAt: -1})
	var lines []string
	var stdout bytes.Buffer
	stderr := &lineHook{hook: func(line string) {
		lines = append(lines, line)
		assert.Empty(t, stdout.String(), "the line comes before the table")
	}}
	code := Main(context.Background(), []string{"bench", "--quick", "--backend", "gpu", "--workloads", "SND5,SE", "--repeats", "2"}, &stdout, stderr)
	require.Equal(t, exitOK, code, stderr.buf.String())
	require.Len(t, lines, 4, stderr.buf.String())
	for i, want := range []string{"[1/2] SND5 on cpu: median ", "[1/2] SND5 on gpu: median ", "[2/2] SE on cpu: median ", "[2/2] SE on gpu: median "} {
		assert.True(t, strings.HasPrefix(lines[i], prefix+"bench "+want), lines[i])
		assert.True(t, strings.HasSuffix(lines[i], ", verified bit for bit"), lines[i])
	}
	assert.Contains(t, lines[1], "x the cpu")
}

// TestBenchInterruptedKeepsWhatWasMeasured: a signal part-way (here after
// the third result) prints the table of what was measured, writes the
// JSON (marked interrupted) and the chart, and exits with the signal's
// status.
func TestBenchInterruptedKeepsWhatWasMeasured(t *testing.T) {
	smallMemcpy(t)
	withBenchGPU(t, &benchGPU{corruptAt: -1})
	dir := t.TempDir()
	jsonPath, plotPath := filepath.Join(dir, "bench.json"), filepath.Join(dir, "bench.png")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	n := 0
	stderr := &lineHook{hook: func(line string) {
		if n++; n == 3 {
			cancel(&interruptedError{sig: syscall.SIGINT})
		}
	}}
	var stdout bytes.Buffer
	code := Main(ctx, []string{"bench", "--quick", "--backend", "gpu", "--workloads", "SND5,SE,SS", "--repeats", "2",
		"--json", jsonPath, "--plot", plotPath}, &stdout, stderr)
	assert.Equal(t, 130, code)
	assert.True(t, strings.HasSuffix(stderr.buf.String(), "\ngpuscatter: interrupted by SIGINT\n"), stderr.buf.String())

	rows := tableRows(stdout.String())
	require.Len(t, rows, 3, stdout.String())
	assert.Equal(t, []string{"SND5", "SND5", "SE"}, []string{rows[0][0], rows[1][0], rows[2][0]})

	doc := readBenchJSON(t, jsonPath)
	require.Len(t, doc.Results, 3)
	b, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"interrupted": true`)
	f, err := os.Open(plotPath)
	require.NoError(t, err)
	defer f.Close()
	_, err = png.Decode(f)
	require.NoError(t, err)

	// Interrupted before anything was measured: nothing is written.
	ctx, cancel2 := context.WithCancelCause(context.Background())
	cancel2(&interruptedError{sig: syscall.SIGTERM})
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	code = Main(ctx, []string{"bench", "--quick", "--backend", "cpu", "--json", filepath.Join(empty, "b.json")}, &stdout, &bytes.Buffer{})
	assert.Equal(t, 143, code)
	entries, err := os.ReadDir(empty)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// TestMeasuredLineSaysHowItWasVerified: bench's line per result says
// "verified bit for bit" where the output equals the cpu's bit for bit
// (a tolerance allowed or not), "verified within" the tolerance with the
// elements that needed it where some did, and NOT VERIFIED otherwise.
func TestMeasuredLineSaysHowItWasVerified(t *testing.T) {
	base := bench.Result{Workload: "SE-sum-dup", Backend: "gpu", Median: 2 * time.Millisecond, GBps: 1.5}
	exact := base
	exact.Verified, exact.Tolerance = true, bench.DefaultTolerance
	assert.Equal(t, "SE-sum-dup on gpu: median 2 ms, 1.5 GB/s, verified bit for bit", measuredLine(exact, "cpu"))
	tolerated := exact
	tolerated.Comparison.Tolerated = 312
	assert.Equal(t, "SE-sum-dup on gpu: median 2 ms, 1.5 GB/s, verified within 1e-05 of the sum of magnitudes (312 elements needed it)",
		measuredLine(tolerated, "cpu"))
	one := tolerated
	one.Comparison.Tolerated = 1
	assert.True(t, strings.HasSuffix(measuredLine(one, "cpu"), "(1 element needed it)"))
	failed := tolerated
	failed.Verified, failed.Comparison.Mismatches = false, 4
	assert.Equal(t, "SE-sum-dup on gpu: median 2 ms, 1.5 GB/s, NOT VERIFIED", measuredLine(failed, "cpu"))
}
