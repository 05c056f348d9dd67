//go:build cgo

package gpu

import (
	"context"
	"errors"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// reductionCalls lists every operator that takes reductions with each
// reduction it takes.
func reductionCalls() [][2]string {
	return [][2]string{
		{"ScatterElementsUpdate-12", "sum"}, {"ScatterElementsUpdate-12", "prod"}, {"ScatterElementsUpdate-12", "mean"},
		{"ScatterElementsUpdate-12", "min"}, {"ScatterElementsUpdate-12", "max"},
		{"ScatterNDUpdate-15", "sum"}, {"ScatterNDUpdate-15", "sub"}, {"ScatterNDUpdate-15", "prod"},
		{"ScatterNDUpdate-15", "min"}, {"ScatterNDUpdate-15", "max"},
		{"ScatterElements-18", "add"}, {"ScatterElements-18", "mul"}, {"ScatterElements-18", "min"}, {"ScatterElements-18", "max"},
		{"ScatterND-18", "add"}, {"ScatterND-18", "mul"}, {"ScatterND-18", "min"}, {"ScatterND-18", "max"},
		{"ScatterND-18", ""},
	}
}

// requireFeatureRefusal requires err to be the one-line refusal of op's
// reduction red on dt data for lack of feature.
func requireFeatureRefusal(t *testing.T, err error, feature, op, red string, dt tensor.DType) {
	t.Helper()
	require.ErrorIs(t, err, ops.ErrUnsupported)
	var fe *FeatureError
	require.True(t, errors.As(err, &fe), "%v: no FeatureError", err)
	assert.Equal(t, feature, fe.Feature)
	msg := err.Error()
	assert.NotContains(t, msg, "\n")
	for _, want := range []string{op + ": ", feature, "reduction " + red + " ", dt.String()} {
		assert.Contains(t, msg, want)
	}
}

// TestPlanRefusesFloat64ArithmeticWithoutShaderFloat64: on facts without
// shaderFloat64 exactly float64 sum, sub, prod and mean (ONNX add and mul)
// are refused, with or without updates, in one line naming the feature,
// the operator, the reduction and the dtype; with shaderFloat64 every
// call plans.
func TestPlanRefusesFloat64ArithmeticWithoutShaderFloat64(t *testing.T) {
	seed := int64(31)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for _, c := range reductionCalls() {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32, tensor.Float16, tensor.Int64, tensor.Uint64} {
			for _, perTarget := range []int{0, 3} {
				red := c[1]
				if red == "" {
					red = "none"
				}
				p, err := ops.PrepareShapes(opstest.ContentionRequest(rng, c[0], dt, c[1], 5, perTarget, nil))
				require.NoError(t, err, "%s %s %v", c[0], red, dt)
				for _, f := range []facts{cpuFacts(), gpuFacts()} {
					_, err := f.planCall(p)
					require.NoError(t, err, "with shaderFloat64: %s %s %v", c[0], red, dt)
					f.noFloat64 = true
					_, err = f.planCall(p)
					if dt == tensor.Float64 && red != "none" && red != "min" && red != "max" {
						requireFeatureRefusal(t, err, "shaderFloat64", c[0], red, dt)
						continue
					}
					require.NoError(t, err, "without shaderFloat64: %s %s %v", c[0], red, dt)
				}
			}
		}
	}
}

// TestPlanForRefusesFloat64ArithmeticWithoutShaderFloat64: PlanFor reads
// shaderFloat64 from the device's description.
func TestPlanForRefusesFloat64ArithmeticWithoutShaderFloat64(t *testing.T) {
	info := figureDevices(t)["lavapipe"]
	p, err := ops.PrepareShapes(elementsReq("add", tensor.Float64, []int{16}, []int{40}))
	require.NoError(t, err)
	_, err = PlanFor(info, Options{}, p)
	require.NoError(t, err)
	info.Capabilities.ShaderFloat64 = false
	_, err = PlanFor(info, Options{Deterministic: true}, p)
	requireFeatureRefusal(t, err, "shaderFloat64", "ScatterElements-18", "add", tensor.Float64)
	p, err = ops.PrepareShapes(elementsReq("max", tensor.Float64, []int{16}, []int{40}))
	require.NoError(t, err)
	_, err = PlanFor(info, Options{}, p)
	require.NoError(t, err, "float64 max compares bits: no float64 arithmetic")
}

// TestNoShaderFloat64Knob: the knob makes a device that has shaderFloat64
// refuse float64 arithmetic reductions on every entry point (Execute,
// Needs, ops.Run) before any work, leaving the output as it was,
// and run everything else as before.
func TestNoShaderFloat64Knob(t *testing.T) {
	seed := int64(3164)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	b := openTest(t, Options{}, knobs.Knobs{NoShaderFloat64: true})
	ctx := context.Background()
	for _, c := range reductionCalls() {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			req := opstest.ContentionRequest(rng, c[0], dt, c[1], 6, 4, nil)
			p, err := ops.Prepare(req)
			require.NoError(t, err)
			red := c[1]
			if red == "" {
				got, want := runBoth(t, b, p)
				require.Empty(t, opstest.Diff(got, want), "%s none %v", c[0], dt)
				continue
			}
			if dt != tensor.Float64 || red == "min" || red == "max" {
				got, want := runBoth(t, b, p)
				if red == "min" || red == "max" || exactPath(b.LastStats().Reduction) {
					require.Empty(t, opstest.DiffFor(p.Reduction, got, want), "%s %s %v", c[0], red, dt)
				}
				continue
			}
			out := opstest.SentinelOutput(p)
			before := out.Clone()
			err = b.Execute(ctx, p, out)
			requireFeatureRefusal(t, err, "shaderFloat64", c[0], red, dt)
			assert.True(t, tensor.Equal(out, before), "%s %s: out changed by a refused call", c[0], red)
			_, err = b.Needs(p)
			requireFeatureRefusal(t, err, "shaderFloat64", c[0], red, dt)
			_, err = ops.Run(ctx, b, req)
			require.ErrorIs(t, err, ops.ErrUnsupported)
			assert.True(t, strings.HasPrefix(err.Error(), c[0]+": vulkan: "), err.Error())
		}
	}
}
