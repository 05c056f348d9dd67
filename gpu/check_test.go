//go:build cgo

package gpu_test

import (
	"flag"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpucheck"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestCheck runs the suite of `gpuscatter check` (package gpucheck) on the
// default device at the Quick size, with validation: the shared
// conformance suite and the differential tests against cpuref, through
// every execution path. Its seed (CheckSeed) differs from check's, so that
// make test, which runs `gpuscatter check --quick` too (make qualify),
// compares two samples of random requests rather than one twice; the
// larger sizes are `gpuscatter check` and `check --full`. -seed changes
// the random requests. On a device without shaderFloat64 the float64 sum,
// sub, prod and mean calls are refused, and only those
// (gpucheck.Refusal).
func TestCheck(t *testing.T) {
	seed := int64(CheckSeed)
	if f := flag.Lookup("seed"); f != nil {
		if v, err := strconv.ParseInt(f.Value.String(), 10, 64); err == nil && v != 0 {
			seed = v
		}
	}
	t.Logf("seed %d (reproduce with -seed %d, or gpuscatter check --quick --seed %d)", seed, seed, seed)
	gpucheck.Run(gpucheck.Refusing(opstest.WrapT(t)), gpucheck.Config{
		Base: gpu.Options{Validation: true, PipelineCacheDir: "off"},
		Size: gpucheck.Quick,
		Seed: seed,
	})
}

// CheckSeed is TestCheck's base seed, one past gpuscatter check's default
// (20240701).
const CheckSeed = 20240702

// TestCheckWithoutShaderFloat64 runs one path of each suite of check at
// the Quick size as on a device without shaderFloat64: nothing fails,
// the float64 sum, sub, prod and mean cases count as refused, naming the
// feature, and every other case passes.
func TestCheckWithoutShaderFloat64(t *testing.T) {
	// Seed 8 puts float64 sum, sub, prod or mean among the quick sample
	// of every path below.
	seed := int64(8)
	t.Logf("seed %d", seed)
	for _, match := range []string{"deterministic", "random/default", "reduce/cas", "contention/native-global", "scale/cas", "resident/default"} {
		t.Run(match, func(t *testing.T) {
			rep := gpucheck.NewReport()
			cfg := gpucheck.Config{Base: gpu.Options{Validation: true, PipelineCacheDir: "off"}, Size: gpucheck.Quick,
				Seed: seed, NoShaderFloat64: true}
			var path gpucheck.Path
			for _, p := range gpucheck.Paths() {
				if p.Name == match {
					path = p
				}
			}
			require.Equal(t, match, path.Name)
			rep.Root().Run(path.Name, func(t opstest.T) { gpucheck.RunPath(t, cfg, path) })
			cases, failed, refused := rep.Totals()
			for _, row := range rep.Rows() {
				if row.Failed > 0 {
					t.Errorf("%s %s: %d of %d failed: %s", row.Path, row.Op, row.Failed, row.Cases, row.FirstError)
				}
				if row.Refused > 0 {
					assert.Equal(t, "shaderFloat64", row.RefusedFor, "%+v", row)
				}
			}
			assert.Zero(t, failed)
			assert.Positive(t, refused, "no float64 sum, sub, prod or mean among %d cases", cases)
			assert.Greater(t, cases, refused)
		})
	}
}

// TestRefusal: check takes as a refusal only a FeatureError, and one for
// shaderFloat64 only where the call computes in float64.
func TestRefusal(t *testing.T) {
	req := func(dt tensor.DType, red string) ops.Request {
		return ops.Request{Op: "ScatterElements-18", Reduction: red, Data: &tensor.Tensor{DType: dt, Shape: []int{4}},
			Indices: &tensor.Tensor{DType: tensor.Int64, Shape: []int{2}}, Updates: &tensor.Tensor{DType: dt, Shape: []int{2}}}
	}
	lacks := func(feature string) error {
		return &ops.Error{Op: "ScatterElements-18", Input: "reduction", Err: &gpu.FeatureError{Feature: feature}, Msg: "vulkan: ..."}
	}
	for _, c := range []struct {
		name    string
		req     ops.Request
		err     error
		feature string
		ok      bool
	}{
		{"float64 add", req(tensor.Float64, "add"), lacks("shaderFloat64"), "shaderFloat64", true},
		{"float64 mul", req(tensor.Float64, "mul"), lacks("shaderFloat64"), "shaderFloat64", true},
		{"float64 max", req(tensor.Float64, "max"), lacks("shaderFloat64"), "shaderFloat64", false},
		{"float32 add", req(tensor.Float32, "add"), lacks("shaderFloat64"), "shaderFloat64", false},
		{"float64 none", req(tensor.Float64, ""), lacks("shaderFloat64"), "shaderFloat64", false},
		{"workgroup memory", req(tensor.Float32, "add"), lacks("27712 bytes of workgroup memory"), "27712 bytes of workgroup memory", true},
		{"plain unsupported", req(tensor.Float64, "add"), &ops.Error{Op: "ScatterElements-18", Err: ops.ErrUnsupported, Msg: "x"}, "", false},
		{"nil", req(tensor.Float64, "add"), nil, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			feature, ok := gpucheck.Refusal(c.req, c.err)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.feature, feature)
			if c.err != nil {
				assert.ErrorIs(t, c.err, ops.ErrUnsupported)
			}
		})
	}
}
