package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// tensorScatterBackend is a backend the TensorScatter-24 tests run on:
// its --backend value and what sets it up (the Vulkan one, in a cgo
// build, opens the device with validation and checks it stayed quiet).
type tensorScatterBackend struct {
	name  string
	setup func(t *testing.T)
}

// tensorScatterBackends lists the CPU, and the GPU where the build has one
// (tensorscatter_vulkan_test.go).
var tensorScatterBackends = []tensorScatterBackend{{name: "cpu", setup: func(t *testing.T) { withGPU(t, nil) }}}

// cacheRequest is a TensorScatter-24 call: past_cache [batch, heads,
// maxSeq, dim] of float32 (1, 2, 3, ...), update [batch, heads, seq, dim]
// (-1, -2, ...), write_indices wi (nil: absent), an axis flag ("" for the
// default) and a mode ("" for the default).
func cacheRequest(batch, heads, maxSeq, seq, dim int, wi []int64, axis, mode string) ops.Request {
	data := make([]float32, batch*heads*maxSeq*dim)
	for i := range data {
		data[i] = float32(i + 1)
	}
	upd := make([]float32, batch*heads*seq*dim)
	for i := range upd {
		upd[i] = -float32(i + 1)
	}
	req := ops.Request{Op: "TensorScatter-24", Mode: mode,
		Data:    tensor.MustFromSlice([]int{batch, heads, maxSeq, dim}, data),
		Updates: tensor.MustFromSlice([]int{batch, heads, seq, dim}, upd)}
	if wi != nil {
		req.Indices = tensor.MustFromSlice([]int{len(wi)}, wi)
	}
	if axis != "" {
		a, _ := strconv.ParseInt(axis, 10, 64)
		req.Axis = tensor.Scalar(a)
	}
	return req
}

// cacheArgs writes req's tensors into dir and returns the run arguments.
func cacheArgs(t *testing.T, dir string, req ops.Request, out, backend string) []string {
	args := []string{"run", "--op", req.Op, "--data", writeNPY(t, dir, "past_cache.npy", req.Data),
		"--updates", writeNPY(t, dir, "update.npy", req.Updates), "--out", out, "--backend", backend}
	if req.Indices != nil {
		args = append(args, "--indices", writeNPY(t, dir, "write_indices.npy", req.Indices))
	}
	if req.Axis != nil {
		v, _ := req.Axis.IntAt(0)
		args = append(args, "--axis", strconv.FormatInt(v, 10))
	}
	if req.Mode != "" {
		args = append(args, "--mode", req.Mode)
	}
	return args
}

// TestRunTensorScatter runs each rule of TensorScatter-24 through the run
// command on every backend and compares the output with the naive
// reference (opstest.Naive, which follows the ONNX text: only the
// sequence position wraps).
func TestRunTensorScatter(t *testing.T) {
	tests := []struct {
		name string
		req  ops.Request
	}{
		{"linear, the axis by default", cacheRequest(2, 3, 6, 2, 4, []int64{1, 4}, "", "")},
		{"linear, the axis given positive", cacheRequest(2, 3, 6, 2, 4, []int64{0, 3}, "2", "linear")},
		{"linear, the axis given negative", cacheRequest(2, 3, 6, 2, 4, []int64{2, 1}, "-2", "")},
		{"write_indices absent: zeros", cacheRequest(2, 3, 6, 3, 4, nil, "", "")},
		{"write_indices absent, circular", cacheRequest(2, 1, 5, 5, 2, nil, "", "circular")},
		{"a write that ends exactly at the end", cacheRequest(3, 2, 7, 3, 2, []int64{4, 0, 4}, "", "")},
		{"a sequence as long as the cache", cacheRequest(2, 2, 4, 4, 3, []int64{0, 0}, "", "linear")},
		{"circular, wrapping", cacheRequest(2, 3, 6, 3, 4, []int64{4, 5}, "", "circular")},
		{"circular writes far past the end", cacheRequest(4, 2, 5, 2, 3, []int64{math.MaxInt64, math.MinInt64, 5*1000 + 4, -7}, "2", "circular")},
		{"circular, a batch longer than the sequence axis", cacheRequest(6, 1, 2, 1, 3, []int64{0, 1, 2, 3, -1, 9}, "-2", "circular")},
		{"the heads axis", cacheRequest(2, 5, 2, 3, 2, []int64{2, 0}, "1", "")},
		{"the last axis, circular", cacheRequest(2, 2, 3, 4, 5, []int64{3, -2}, "3", "circular")},
	}
	// The last two change the shapes: the axis picks another dimension.
	negatives := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = -float32(i + 1)
		}
		return v
	}
	tests[10].req.Updates = tensor.MustFromSlice([]int{2, 3, 2, 2}, negatives(24))
	tests[11].req.Updates = tensor.MustFromSlice([]int{2, 2, 3, 4}, negatives(48))
	for _, be := range tensorScatterBackends {
		t.Run(be.name, func(t *testing.T) {
			be.setup(t)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					want, err := opstest.Naive(tt.req)
					require.NoError(t, err)
					dir := t.TempDir()
					out := filepath.Join(dir, "present_cache.npy")
					code, stdout, stderr := runCLI(t, cacheArgs(t, dir, tt.req, out, be.name)...)
					require.Equal(t, exitOK, code, stderr)
					assert.Empty(t, stdout)
					assert.Empty(t, stderr)
					requireEqualTensor(t, want, readNPY(t, out))
				})
			}
		})
	}
}

// TestRunTensorScatterErrors: every bad TensorScatter-24 input is one line
// naming it, exit 1, and --out (an existing file) untouched, on every
// backend.
func TestRunTensorScatterErrors(t *testing.T) {
	const lin = "TensorScatter-24: write_indices[%d] = %s is out of range [0, 4]: in linear mode write_indices[%d] + sequence_length 2 must be at most max_sequence_length 6 (axis 2 of past_cache)"
	const badMode = "TensorScatter-24: mode %q is not accepted by TensorScatter-24%s; it takes linear or circular, matched exactly (ONNX attribute strings are case-sensitive)"
	base := func() ops.Request { return cacheRequest(2, 3, 6, 2, 4, []int64{1, 4}, "", "") }
	rank1 := ops.Request{Op: "TensorScatter-24", Data: tensor.MustFromSlice([]int{4}, make([]float32, 4)),
		Updates: tensor.MustFromSlice([]int{2}, make([]float32, 2))}
	tests := []struct {
		name  string
		req   ops.Request
		extra []string
		line  string
	}{
		{"linear overflow", cacheRequest(2, 3, 6, 2, 4, []int64{1, 5}, "", ""), nil, fmt.Sprintf(lin, 1, "5", 1)},
		{"linear overflow far past the end", cacheRequest(2, 3, 6, 2, 4, []int64{math.MaxInt64, 0}, "", "linear"), nil,
			fmt.Sprintf(lin, 0, "9223372036854775807", 0)},
		{"negative linear index", cacheRequest(2, 3, 6, 2, 4, []int64{0, -1}, "", ""), nil, fmt.Sprintf(lin, 1, "-1", 1)},
		{"axis 0", cacheRequest(2, 3, 6, 2, 4, []int64{0, 0}, "0", ""), nil,
			"TensorScatter-24: axis = 0 is the batch dimension 0; TensorScatter-24 needs an axis in [1, 3] or [-3, -1]"},
		{"axis -4, the batch dimension", cacheRequest(2, 3, 6, 2, 4, []int64{0, 0}, "-4", ""), nil,
			"TensorScatter-24: axis = -4 is the batch dimension 0; TensorScatter-24 needs an axis in [1, 3] or [-3, -1]"},
		{"past_cache of rank 1", rank1, []string{"--axis", "0"},
			"TensorScatter-24: past_cache has rank 1; TensorScatter-24 needs rank >= 2: the batch dimension 0, then the sequence axis (never 0)"},
		{"past_cache of rank 1, the default axis", rank1, nil,
			"TensorScatter-24: past_cache has rank 1; TensorScatter-24 needs rank >= 2: the batch dimension 0, then the sequence axis (never 0)"},
		{"update too long", cacheRequest(2, 3, 6, 7, 4, []int64{0, 0}, "", ""), nil,
			"TensorScatter-24: update has shape [2,3,7,4]: its sequence_length 7 (axis 2) is larger than past_cache's max_sequence_length 6"},
		{"a mismatched dimension", func() ops.Request {
			r := base()
			r.Updates = tensor.MustFromSlice([]int{2, 2, 2, 4}, make([]float32, 32))
			return r
		}(), nil, "TensorScatter-24: update has shape [2,2,2,4] but past_cache has shape [2,3,6,4]: dimension 1 differs (only axis 2 may)"},
		{"write_indices of the wrong length", func() ops.Request {
			r := base()
			r.Indices = tensor.MustFromSlice([]int{3}, []int64{0, 1, 2})
			return r
		}(), nil, "TensorScatter-24: write_indices has shape [3]; it must be [batch] = [2] (past_cache.shape[0])"},
		{"write_indices of the wrong type", func() ops.Request {
			r := base()
			r.Indices = tensor.MustFromSlice([]int{2}, []int32{0, 1})
			return r
		}(), nil, "TensorScatter-24: write_indices has dtype int32; it must be int64"},
		{"write_indices of a float type", func() ops.Request {
			r := base()
			r.Indices = tensor.MustFromSlice([]int{2}, []float64{0, 1})
			return r
		}(), nil, "TensorScatter-24: write_indices has dtype float64; it must be int64"},
		{"an unknown mode", base(), []string{"--mode", "ring"}, fmt.Sprintf(badMode, "ring", "")},
		{"mode strings match exactly", base(), []string{"--mode", "Circular"}, fmt.Sprintf(badMode, "Circular", " (did you mean circular?)")},
		{"an empty mode is not linear", base(), []string{"--mode", ""}, fmt.Sprintf(badMode, "", "")},
		{"an empty mode after =", base(), []string{"--mode="}, fmt.Sprintf(badMode, "", "")},
		{"a reduction", base(), []string{"--reduction", "add"}, `TensorScatter-24: reduction "add" is not accepted by TensorScatter-24; it takes none`},
	}
	for _, be := range tensorScatterBackends {
		t.Run(be.name, func(t *testing.T) {
			be.setup(t)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					dir := t.TempDir()
					out := filepath.Join(dir, "present_cache.npy")
					const old = "an earlier result"
					require.NoError(t, os.WriteFile(out, []byte(old), 0o644))
					args := append(cacheArgs(t, dir, tt.req, out, be.name), tt.extra...)
					code, stdout, stderr := runCLI(t, args...)
					requireInputError(t, code, stdout, stderr)
					assert.Equal(t, prefix+tt.line+"\n", stderr)
					got, err := os.ReadFile(out)
					require.NoError(t, err)
					assert.Equal(t, old, string(got), "--out changed")
				})
			}
		})
	}
}

// TestRunModeOnlyForTensorScatter: --mode is an attribute of
// TensorScatter-24 alone.
func TestRunModeOnlyForTensorScatter(t *testing.T) {
	withGPU(t, nil)
	fx := newFixture(t)
	out := filepath.Join(t.TempDir(), "out.npy")
	code, stdout, stderr := runCLI(t, "run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"),
		"--updates", fx.f("updates"), "--mode", "circular", "--out", out)
	requireInputError(t, code, stdout, stderr, "ScatterNDUpdate-15: mode is not an attribute of ScatterNDUpdate-15")
	assert.NoFileExists(t, out)
}
