//go:build cgo

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/bench"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpubench"
	"github.com/gpuscatter/gpuscatter/ops"
)

// TestBenchDeterministicIsBitForBit: with --deterministic the GPU's float
// sums fold in index order, so bench allows them no tolerance: the rows
// are verified bit for bit, and say so.
func TestBenchDeterministicIsBitForBit(t *testing.T) {
	smallMemcpy(t)
	// The device as --deterministic opens it, with validation layers on.
	var opened []*gpu.Backend
	withGPU(t, func(context.Context) (ops.Backend, error) {
		b, err := gpu.Open(testGPUOptions(t, gpu.Options{Validation: true, PipelineCacheDir: "off", Deterministic: true}))
		if err == nil {
			opened = append(opened, b)
		}
		return b, err
	})
	jsonPath := filepath.Join(t.TempDir(), "bench.json")
	code, stdout, stderr := runCLI(t, "bench", "--quick", "--backend", "gpu", "--deterministic", "--workloads", "SE-sum-dup,SND-sum-dup",
		"--repeats", "1", "--json", jsonPath)
	require.Equal(t, exitOK, code, "stderr: %s\n%s", stderr, stdout)
	require.Len(t, opened, 1)
	assert.Empty(t, opened[0].ValidationMessages(), "validation messages")
	assert.NotContains(t, stdout, "within 1e-05", "no tolerance applied")
	assert.Equal(t, 4, strings.Count(stderr, ", verified bit for bit\n"), stderr)
	doc := readBenchJSON(t, jsonPath)
	require.Len(t, doc.Results, 4)
	for _, r := range doc.Results {
		assert.Equal(t, true, r["verified"], "%v", r)
		assert.Equal(t, true, r["bit_for_bit"], "%v", r)
		assert.Equal(t, 0.0, r["tolerance"], "%v", r)
		assert.Equal(t, 0.0, r["tolerated"], "%v", r)
	}
}

// TestBenchQuickGPU runs the whole quick benchmark on the Vulkan device
// (lavapipe in CI), with validation layers on: every workload verified on
// both backends, device phases, the device-copy yardstick and the
// resident-input time reported, and nothing left of the device after the
// command. A missing device fails the test.
func TestBenchQuickGPU(t *testing.T) {
	smallMemcpy(t)
	opened := validatedGPU(t)
	jsonPath := filepath.Join(t.TempDir(), "bench.json")
	code, stdout, stderr := runCLI(t, "bench", "--quick", "--backend", "gpu", "--repeats", "3", "--json", jsonPath)
	require.Equal(t, exitOK, code, "stderr: %s\n%s", stderr, stdout)
	b := opened()
	assert.Empty(t, b.ValidationMessages(), "validation messages")
	assert.Empty(t, gpubench.Of(b).Device().LiveObjects(), "Vulkan objects alive after the command")

	rows := tableRows(stdout)
	require.Len(t, rows, 2*len(bench.Names()), stdout)
	for i, row := range rows {
		assert.Equal(t, bench.Names()[i/2], row[0])
		assert.Equal(t, []string{"cpu", "gpu"}[i%2], row[1])
		assert.Equal(t, "yes", row[len(row)-2], "verified: %v", row)
	}
	assert.Equal(t, len(bench.Names()), strings.Count(stdout, "inputs resident on the device: "), stdout)

	doc := readBenchJSON(t, jsonPath)
	require.Len(t, doc.Results, 2*len(bench.Names()))
	for _, r := range doc.Results {
		assert.Equal(t, true, r["verified"], "%v", r)
		if r["backend"] != "gpu" {
			continue
		}
		assert.Contains(t, r["device"], "vulkan: ")
		// KV-decode's steps run as one resident batch alone: its time is
		// the batch's wall time, without device phases.
		decode := r["workload"] == "KV-decode"
		for _, f := range []string{"median_ms", "device_ms", "device_copy_ms", "resident_ms", "speedup"} {
			if f == "device_ms" && decode {
				assert.Zero(t, r[f])
				continue
			}
			if f == "device_copy_ms" && r["calls"] != nil {
				assert.Nil(t, r[f], "no device copy for a workload of several calls")
				continue
			}
			assert.Positive(t, r[f], "%s of %s", f, r["workload"])
		}
		if r["calls"] != nil {
			// One resident batch: one submission and one wait on unified
			// memory, one more of each per transfer piece with staging.
			assert.Positive(t, r["submits"], r["workload"])
			assert.Positive(t, r["waits"], r["workload"])
			assert.Positive(t, r["transfer_pieces"], r["workload"])
		}
		if !decode {
			assert.NotEmpty(t, r["phases"], r["workload"])
		}
	}
}

// TestBenchKVDecodeGPU runs KV-decode on the Vulkan device (lavapipe in
// CI) with validation: the GPU row is one resident batch of the 1000
// steps, verified against the CPU's 1000 calls, with one submit and one
// wait, and a plan whose traffic per step is at most 2.2 times the token
// plus its write indices (read once, written once).
func TestBenchKVDecodeGPU(t *testing.T) {
	smallMemcpy(t)
	opened := validatedGPU(t)
	jsonPath := filepath.Join(t.TempDir(), "bench.json")
	code, stdout, stderr := runCLI(t, "bench", "--workloads", "KV-decode", "--quick", "--backend", "gpu", "--repeats", "3", "--json", jsonPath)
	require.Equal(t, exitOK, code, "stderr: %s\n%s", stderr, stdout)
	b := opened()
	assert.Empty(t, b.ValidationMessages(), "validation messages")
	assert.Contains(t, stdout, "1000 calls in one batch")
	assert.Contains(t, stdout, "host round trips per batch: 1 submits, 1 waits")
	doc := readBenchJSON(t, jsonPath)
	require.Len(t, doc.Results, 2)
	cpu, gpuRow := doc.Results[0], doc.Results[1]
	assert.Equal(t, "cpu", cpu["backend"])
	assert.Equal(t, true, cpu["verified"])
	assert.Positive(t, cpu["per_call_ms"])
	assert.Equal(t, "gpu", gpuRow["backend"])
	assert.Equal(t, true, gpuRow["verified"])
	assert.Equal(t, 1000.0, gpuRow["calls"])
	assert.Positive(t, gpuRow["resident_per_call_ms"])
	assert.Equal(t, gpuRow["per_call_ms"], gpuRow["resident_per_call_ms"])
	assert.Equal(t, 1.0, gpuRow["submits"])
	assert.Equal(t, 1.0, gpuRow["waits"])
	assert.Equal(t, 1.0, gpuRow["plan_passes"])
	const token, writeIndices = 1 * 32 * 1 * 128 * 2, 1 * 8 // --quick: a batch of one sequence
	assert.LessOrEqual(t, gpuRow["plan_bytes"], 2.2*token+writeIndices)
	assert.GreaterOrEqual(t, gpuRow["plan_bytes"], 2.0*token)
	t.Logf("KV-decode per step: cpu %v ms, gpu resident %v ms, plan %v bytes", cpu["per_call_ms"], gpuRow["resident_per_call_ms"], gpuRow["plan_bytes"])
}

// validatedGPU makes the commands t runs open the Vulkan backend with
// validation on and no pipeline cache; the function it returns gives the
// one backend a command opened.
func validatedGPU(t *testing.T) func() *gpu.Backend {
	var opened []*gpu.Backend
	withGPU(t, func(context.Context) (ops.Backend, error) {
		b, err := gpu.Open(testGPUOptions(t, gpu.Options{Validation: true, PipelineCacheDir: "off"}))
		if err == nil {
			opened = append(opened, b)
		}
		return b, err
	})
	return func() *gpu.Backend {
		require.Len(t, opened, 1)
		return opened[0]
	}
}
