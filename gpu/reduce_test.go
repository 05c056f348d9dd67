//go:build cgo

package gpu

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// reductionConfigs are the device configurations the reduction tests run
// in: native atomics and compare-and-swap loops, each with and without
// the workgroup-memory accumulation, deterministic mode, and every Element
// plan walking its columns (walkMin 1).
var reductionConfigs = []struct {
	name      string
	opts      config
	noPrivate bool
	walk      bool
}{
	{"native", config{}, false, false},
	{"native-global", config{}, true, false},
	{"cas", config{Knobs: knobs.Knobs{ForceCAS: true}}, false, false},
	{"cas-global", config{Knobs: knobs.Knobs{ForceCAS: true}}, true, false},
	{"no-float-atomics", config{Knobs: knobs.Knobs{NoFloatAtomics: true}}, false, false},
	{"no-float-atomics-global", config{Knobs: knobs.Knobs{NoFloatAtomics: true}}, true, false},
	{"deterministic", config{Options: Options{Deterministic: true}}, false, false},
	{"walk", config{}, false, true},
}

// openReduction opens a backend in a configuration of reductionConfigs.
func openReduction(t *testing.T, opts config, noPrivate, walk bool) *Backend {
	b := openTest(t, opts.Options, opts.Knobs)
	b.noPrivate = noPrivate
	if walk {
		b.walkMin = 1
	}
	return b
}

// exactPath reports whether a reduction path must give the CPU
// reference's bits for float sum, sub, prod and mean: the in-order fold,
// the column walk (also in index order), and reduction none ("").
func exactPath(path string) bool {
	return path == "ordered" || path == "walk" || path == ""
}

// runBoth runs p on b (into an output filled with a pattern) and on the
// CPU reference and returns both results.
func runBoth(t *testing.T, b *Backend, p *ops.Plan) (got, want *tensor.Tensor) {
	t.Helper()
	want, _ = tensor.New(p.DType, p.Shape)
	require.NoError(t, cpuref.New().Execute(context.Background(), p, want))
	got = opstest.SentinelOutput(p)
	require.NoError(t, b.Execute(context.Background(), p, got))
	return got, want
}

// f16s and bf16s build 16-bit float tensors.
func f16s(shape []int, vals ...float32) *tensor.Tensor {
	h := make([]tensor.F16, len(vals))
	for i, v := range vals {
		h[i] = tensor.F16From(v)
	}
	return tensor.MustFromSlice(shape, h)
}

func bf16s(shape []int, vals ...float32) *tensor.Tensor {
	h := make([]tensor.BF16, len(vals))
	for i, v := range vals {
		h[i] = tensor.BF16From(v)
	}
	return tensor.MustFromSlice(shape, h)
}

// TestReductionTable checks the contract's rules (specs/README.md) case by
// case in every configuration, with small plans on the atomics too:
// integer wrap-around, bool reductions, NaN and signed zeros in min and
// max, float16 rounding, use_init_val = false, and the mean's rounding.
// Each result must be the CPU reference's bit for bit and, where given,
// the value worked out by hand.
func TestReductionTable(t *testing.T) {
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	// NaNs of both signs, with payloads, in data and updates.
	negNaN, posNaN := math.Float32frombits(0xFFC00001), math.Float32frombits(0x7FC00002)
	no := false
	elems := func(red string, data, upd *tensor.Tensor, idx []int64, useInit *bool) ops.Request {
		return ops.Request{Op: "ScatterElementsUpdate-12", Reduction: red, Data: data, Updates: upd,
			Indices: tensor.MustFromSlice([]int{len(idx)}, idx), Axis: tensor.Scalar(0), UseInitVal: useInit}
	}
	nd := func(red string, data, upd *tensor.Tensor, idx []int64) ops.Request {
		return ops.Request{Op: "ScatterNDUpdate-15", Reduction: red, Data: data, Updates: upd,
			Indices: tensor.MustFromSlice([]int{len(idx), 1}, idx)}
	}
	cases := []struct {
		name string
		req  ops.Request
		want *tensor.Tensor // nil: the CPU reference's only
	}{
		{"int8 sum wraps", elems("sum", tensor.MustFromSlice([]int{2}, []int8{100, 1}), tensor.MustFromSlice([]int{3}, []int8{100, 27, 1}), []int64{0, 0, 0}, nil),
			tensor.MustFromSlice([]int{2}, []int8{-28, 1})},
		{"int8 prod wraps", nd("prod", tensor.MustFromSlice([]int{2}, []int8{16, -128}), tensor.MustFromSlice([]int{3}, []int8{16, 3, -1}), []int64{0, 1, 1}),
			tensor.MustFromSlice([]int{2}, []int8{0, -128})},
		{"uint64 sum wraps", elems("sum", tensor.MustFromSlice([]int{1}, []uint64{math.MaxUint64 - 1}), tensor.MustFromSlice([]int{3}, []uint64{1, 2, 3}), []int64{0, 0, 0}, nil),
			tensor.MustFromSlice([]int{1}, []uint64{4})},
		{"uint64 prod wraps", nd("prod", tensor.MustFromSlice([]int{2}, []uint64{1 << 32, math.MaxUint64}), tensor.MustFromSlice([]int{2}, []uint64{1 << 32, math.MaxUint64}), []int64{0, 1}),
			tensor.MustFromSlice([]int{2}, []uint64{0, 1})},
		{"int32 sub wraps", nd("sub", tensor.MustFromSlice([]int{1}, []int32{math.MinInt32}), tensor.MustFromSlice([]int{1}, []int32{1}), []int64{0}),
			tensor.MustFromSlice([]int{1}, []int32{math.MaxInt32})},
		{"int64 min max", elems("min", tensor.MustFromSlice([]int{2}, []int64{5, math.MinInt64}), tensor.MustFromSlice([]int{3}, []int64{-7, math.MaxInt64, 3}), []int64{0, 1, 0}, nil),
			tensor.MustFromSlice([]int{2}, []int64{-7, math.MinInt64})},
		{"uint16 max", nd("max", tensor.MustFromSlice([]int{3}, []uint16{1, 65535, 7}), tensor.MustFromSlice([]int{3}, []uint16{65534, 3, 9}), []int64{0, 1, 0}),
			tensor.MustFromSlice([]int{3}, []uint16{65534, 65535, 7})},
		{"bool sum is OR", nd("sum", tensor.MustFromSlice([]int{3}, []bool{false, false, true}), tensor.MustFromSlice([]int{3}, []bool{false, true, false}), []int64{0, 1, 2}),
			tensor.MustFromSlice([]int{3}, []bool{false, true, true})},
		{"bool sub is XOR", nd("sub", tensor.MustFromSlice([]int{2}, []bool{true, false}), tensor.MustFromSlice([]int{3}, []bool{true, true, true}), []int64{0, 1, 1}),
			tensor.MustFromSlice([]int{2}, []bool{false, false})},
		{"bool prod and min are AND", elems("min", tensor.MustFromSlice([]int{2}, []bool{true, true}), tensor.MustFromSlice([]int{2}, []bool{true, false}), []int64{0, 1}, nil),
			tensor.MustFromSlice([]int{2}, []bool{true, false})},
		{"float32 min propagates NaN", elems("min", tensor.MustFromSlice([]int{3}, []float32{1, nan, 5}), tensor.MustFromSlice([]int{4}, []float32{nan, 3, 2, -1}), []int64{0, 1, 2, 0}, nil), nil},
		{"float32 max keeps NaNs of either sign", elems("max", tensor.MustFromSlice([]int{7}, []float32{negNaN, posNaN, negZero, 0, 1, float32(math.Inf(-1)), -5}),
			tensor.MustFromSlice([]int{9}, []float32{5, -3, 0, negZero, negNaN, 7, -2, -3, posNaN}), []int64{0, 1, 2, 3, 4, 4, 5, 6, 6}, nil), nil},
		{"float32 min keeps NaNs of either sign", elems("min", tensor.MustFromSlice([]int{7}, []float32{negNaN, posNaN, negZero, 0, 1, float32(math.Inf(1)), 5}),
			tensor.MustFromSlice([]int{9}, []float32{5, -3, 0, negZero, posNaN, -7, 2, 3, negNaN}), []int64{0, 1, 2, 3, 4, 4, 5, 6, 6}, nil), nil},
		{"float32 max and min of signed zeros and infinities", elems("max", tensor.MustFromSlice([]int{4}, []float32{negZero, 0, float32(math.Inf(-1)), float32(math.Inf(1))}),
			tensor.MustFromSlice([]int{6}, []float32{negZero, 0, negZero, float32(math.Inf(-1)), -1e-45, float32(math.Inf(-1))}), []int64{0, 0, 1, 2, 2, 3}, nil),
			tensor.MustFromSlice([]int{4}, []float32{0, 0, -1e-45, float32(math.Inf(1))})},
		{"float64 max propagates NaN", elems("max", tensor.MustFromSlice([]int{2}, []float64{1, 2}), tensor.MustFromSlice([]int{3}, []float64{3, math.NaN(), 9}), []int64{0, 0, 1}, nil), nil},
		{"float16 min propagates NaN", nd("min", f16s([]int{2}, 1, 2), f16s([]int{3}, nan, -4, 0), []int64{0, 0, 1}), nil},
		{"bfloat16 max propagates NaN", nd("max", bf16s([]int{2}, nan, 2), bf16s([]int{2}, 5, 3), []int64{0, 1}), nil},
		{"float32 min of zeros is -0", elems("min", tensor.MustFromSlice([]int{2}, []float32{0, negZero}), tensor.MustFromSlice([]int{2}, []float32{negZero, 0}), []int64{0, 1}, nil),
			tensor.MustFromSlice([]int{2}, []float32{negZero, negZero})},
		{"float32 max of zeros is +0", elems("max", tensor.MustFromSlice([]int{2}, []float32{0, negZero}), tensor.MustFromSlice([]int{2}, []float32{negZero, 0}), []int64{0, 1}, nil),
			tensor.MustFromSlice([]int{2}, []float32{0, 0})},
		{"float16 zeros", nd("min", f16s([]int{2}, 0, negZero), f16s([]int{2}, negZero, 0), []int64{0, 1}), f16s([]int{2}, negZero, negZero)},
		{"float64 zeros", nd("max", tensor.MustFromSlice([]int{2}, []float64{0, math.Copysign(0, -1)}), tensor.MustFromSlice([]int{2}, []float64{math.Copysign(0, -1), 0}), []int64{0, 1}),
			tensor.MustFromSlice([]int{2}, []float64{0, 0})},
		{"float16 sum rounds to even each step", elems("sum", f16s([]int{1}, 2048), f16s([]int{3}, 1, 1, 1), []int64{0, 0, 0}, nil), f16s([]int{1}, 2048)},
		{"bfloat16 sum rounds each step", elems("sum", bf16s([]int{1}, 256), bf16s([]int{2}, 1, 1), []int64{0, 0}, nil), bf16s([]int{1}, 256)},
		{"float16 overflow", nd("sum", f16s([]int{1}, 60000), f16s([]int{1}, 10000), []int64{0}), f16s([]int{1}, float32(math.Inf(1)))},
		{"use_init_val false sum", elems("sum", tensor.MustFromSlice([]int{3}, []float32{10, 20, 30}), tensor.MustFromSlice([]int{3}, []float32{1, 2, negZero}), []int64{0, 0, 2}, &no),
			tensor.MustFromSlice([]int{3}, []float32{3, 20, 0})},
		{"use_init_val false prod", elems("prod", tensor.MustFromSlice([]int{3}, []int32{10, 20, 30}), tensor.MustFromSlice([]int{3}, []int32{1, 2, 5}), []int64{0, 0, 2}, &no),
			tensor.MustFromSlice([]int{3}, []int32{2, 20, 5})},
		{"use_init_val false min", elems("min", tensor.MustFromSlice([]int{3}, []uint8{1, 20, 30}), tensor.MustFromSlice([]int{3}, []uint8{200, 250, 5}), []int64{0, 0, 2}, &no),
			tensor.MustFromSlice([]int{3}, []uint8{200, 20, 5})},
		{"use_init_val false max", elems("max", tensor.MustFromSlice([]int{3}, []float64{100, 20, 30}), tensor.MustFromSlice([]int{3}, []float64{-1, -2, 5}), []int64{0, 0, 2}, &no),
			tensor.MustFromSlice([]int{3}, []float64{-1, 20, 5})},
		{"use_init_val false bool prod", elems("prod", tensor.MustFromSlice([]int{2}, []bool{false, true}), tensor.MustFromSlice([]int{1}, []bool{true}), []int64{0}, &no),
			tensor.MustFromSlice([]int{2}, []bool{true, true})},
		{"use_init_val false mean", elems("mean", tensor.MustFromSlice([]int{3}, []float32{10, 20, 30}), tensor.MustFromSlice([]int{3}, []float32{1, 2, 5}), []int64{0, 0, 2}, &no),
			tensor.MustFromSlice([]int{3}, []float32{1.5, 20, 5})},
		{"mean floors toward -inf", elems("mean", tensor.MustFromSlice([]int{2}, []int32{0, 300}), tensor.MustFromSlice([]int{3}, []int32{-2, -3, 307}), []int64{0, 0, 1}, &no),
			tensor.MustFromSlice([]int{2}, []int32{-3, 307})},
		{"mean counts the original", elems("mean", tensor.MustFromSlice([]int{2}, []int32{0, 300}), tensor.MustFromSlice([]int{3}, []int32{-2, -3, 307}), []int64{0, 0, 1}, nil),
			tensor.MustFromSlice([]int{2}, []int32{-2, 303})},
		{"int8 mean sums without wrapping", elems("mean", tensor.MustFromSlice([]int{1}, []int8{127}), tensor.MustFromSlice([]int{3}, []int8{127, 127, 126}), []int64{0, 0, 0}, nil),
			tensor.MustFromSlice([]int{1}, []int8{126})},
		{"uint32 mean sums in 64 bits", elems("mean", tensor.MustFromSlice([]int{1}, []uint32{math.MaxUint32}), tensor.MustFromSlice([]int{1}, []uint32{math.MaxUint32 - 2}), []int64{0}, nil),
			tensor.MustFromSlice([]int{1}, []uint32{math.MaxUint32 - 1})},
		{"int64 mean wraps in its own type", elems("mean", tensor.MustFromSlice([]int{1}, []int64{math.MaxInt64}), tensor.MustFromSlice([]int{1}, []int64{3}), []int64{0}, nil), nil},
		{"float32 mean of subnormals ties to even", elems("mean", tensor.MustFromSlice([]int{1}, []float32{math.Float32frombits(3)}), tensor.MustFromSlice([]int{0}, []float32{}), []int64{}, nil), nil},
		{"float32 mean subnormal tie", elems("mean", tensor.MustFromSlice([]int{1}, []float32{math.Float32frombits(2)}), tensor.MustFromSlice([]int{1}, []float32{math.Float32frombits(1)}), []int64{0}, nil),
			tensor.MustFromSlice([]int{1}, []float32{math.Float32frombits(2)})},
		{"float16 mean", elems("mean", f16s([]int{2}, 1, 7), f16s([]int{4}, 2, 2, 1, 0.1), []int64{0, 0, 1, 1}, nil), nil},
		{"bfloat16 mean by 3", elems("mean", bf16s([]int{1}, 1), bf16s([]int{2}, 1, 2), []int64{0, 0}, &no), nil},
		{"float64 mean by 7", elems("mean", tensor.MustFromSlice([]int{1}, []float64{1}), tensor.MustFromSlice([]int{6}, []float64{1, 1, 1, 1, 1, 1.5}), []int64{0, 0, 0, 0, 0, 0}, nil), nil},
	}
	ref := cpuref.New()
	for _, cfg := range reductionConfigs {
		t.Run(cfg.name, func(t *testing.T) {
			b := openReduction(t, cfg.opts, cfg.noPrivate, cfg.walk)
			if !cfg.opts.Deterministic {
				b.orderedMax = 0
			}
			for _, c := range cases {
				got, err := ops.Run(context.Background(), b, c.req)
				require.NoError(t, err, c.name)
				want, err := ops.Run(context.Background(), ref, c.req)
				require.NoError(t, err, c.name)
				if d := opstest.DiffFor(opstest.ReductionOf(c.req), got, want); d != "" {
					t.Errorf("%s on %s: %s", c.name, b.LastStats().Reduction, d)
				}
				if c.want != nil {
					assert.Empty(t, opstest.DiffExact(want, c.want), "%s: the CPU reference", c.name)
				}
			}
		})
	}
}

// TestReductionIndexErrors: an out-of-range index in a reduction plan is
// reported as the CPU reference reports it, whatever the path, and out is
// left untouched.
func TestReductionIndexErrors(t *testing.T) {
	ref := cpuref.New()
	for _, cfg := range reductionConfigs {
		t.Run(cfg.name, func(t *testing.T) {
			b := openReduction(t, cfg.opts, cfg.noPrivate, cfg.walk)
			rng := rand.New(rand.NewSource(5))
			for _, c := range []struct {
				op, red string
				dt      tensor.DType
			}{
				{"ScatterElementsUpdate-12", "sum", tensor.Float32},
				{"ScatterElementsUpdate-12", "mean", tensor.Int16},
				{"ScatterElementsUpdate-12", "max", tensor.Float64},
				{"ScatterNDUpdate-15", "prod", tensor.BFloat16},
				{"ScatterNDUpdate-15", "sub", tensor.Int64},
			} {
				no := false
				req := opstest.ContentionRequest(rng, c.op, c.dt, c.red, 8, 600, &no)
				if c.op == "ScatterNDUpdate-15" {
					req.UseInitVal = nil
				}
				tensor.View[int64](req.Indices)[3001] = 8 // first bad
				tensor.View[int64](req.Indices)[4000] = -9
				p, err := ops.Prepare(req)
				require.NoError(t, err)
				want, _ := tensor.New(p.DType, p.Shape)
				werr := ref.Execute(context.Background(), p, want)
				require.ErrorIs(t, werr, ops.ErrIndexRange)
				out := opstest.SentinelOutput(p)
				before := out.Clone()
				gerr := b.Execute(context.Background(), p, out)
				require.ErrorIs(t, gerr, ops.ErrIndexRange, "%s %s", c.op, c.red)
				assert.Equal(t, werr.Error(), gerr.Error())
				assert.True(t, tensor.Equal(out, before), "out untouched")
			}
		})
	}
}

// TestReductionPaths checks which path each kind of plan takes (Stats).
func TestReductionPaths(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	big := func(dt tensor.DType, red string, targets int) *ops.Plan {
		p, err := ops.Prepare(opstest.ContentionRequest(rng, "ScatterElementsUpdate-12", dt, red, targets, max(8192/targets, 4), nil))
		require.NoError(t, err)
		return p
	}
	// skewed: Zipf targets, which the hot-target fold takes; big's many
	// targets are hit evenly, which it leaves to the plain loop.
	skewed := func(dt tensor.DType, red string, targets int) *ops.Plan {
		p, err := ops.Prepare(opstest.SkewedRequest(rng, "ScatterElementsUpdate-12", dt, red, targets, 4*targets, 1.1, nil))
		require.NoError(t, err)
		return p
	}
	small, err := ops.Prepare(opstest.ContentionRequest(rng, "ScatterElementsUpdate-12", tensor.Float32, "sum", 4, 4, nil))
	require.NoError(t, err)
	caps := openTest(t, Options{}).device().Capabilities()
	native := "cas"
	if caps.Float32AtomicAdd {
		native = "native"
	}
	// many targets: more than the workgroup-memory scatter holds on this
	// device at every element size; wide: more than shaders.PrivateWords
	// words of float32, which the device holds (with wideKnobs).
	capacity := shaders.PrivateCapacity(uint64(caps.MaxComputeSharedMemorySize))
	require.Greater(t, capacity, uint64(shaders.PrivateWords+1000), "lavapipe and SwiftShader offer 32 KiB of workgroup memory")
	many, wide := int(4*capacity)+1000, shaders.PrivateWords+1000
	// CPU devices keep outputs of more than shaders.PrivateWords words on
	// the global atomics (Backend.widePrivate) unless a knob says.
	wideKnobs := knobs.Knobs{WideWorkgroupAccumulation: true}
	for _, c := range []struct {
		name string
		opts config
		p    *ops.Plan
		want string
	}{
		{"float32 sum, many targets", config{}, skewed(tensor.Float32, "sum", many), native + "+hot"},
		{"float32 sum, few targets", config{}, big(tensor.Float32, "sum", 4), native + "+private"},
		{"float32 sum, CAS", config{Knobs: knobs.Knobs{ForceCAS: true}}, skewed(tensor.Float32, "sum", many), "cas+hot"},
		{"float32 sum, deterministic", config{Options: Options{Deterministic: true}}, big(tensor.Float32, "sum", 4), "ordered"},
		{"float32 sum, small plan", config{}, small, "ordered"},
		{"float32 max, deterministic", config{Options: Options{Deterministic: true}}, skewed(tensor.Float32, "max", many), native + "+hot"},
		{"float32 min, few targets", config{}, big(tensor.Float32, "min", 4), native + "+private"},
		{"float32 sum, device floats", config{Knobs: knobs.Knobs{DeviceFloats: true}}, skewed(tensor.Float32, "sum", many), native + "+hot"},
		{"float32 sum, every step in integer arithmetic", config{Knobs: knobs.Knobs{SoftFloats: true}}, skewed(tensor.Float32, "sum", many), "cas+hot"},
		{"float32 max, CAS", config{Knobs: knobs.Knobs{ForceCAS: true}}, skewed(tensor.Float32, "max", many), "cas+hot"},
		{"float32 max, no float atomics", config{Knobs: knobs.Knobs{NoFloatAtomics: true}}, skewed(tensor.Float32, "max", many), "int+hot"},
		{"float32 min, no float atomics, few targets", config{Knobs: knobs.Knobs{NoFloatAtomics: true}}, big(tensor.Float32, "min", 4), "int+private"},
		{"float32 sum, no float atomics", config{Knobs: knobs.Knobs{NoFloatAtomics: true}}, skewed(tensor.Float32, "sum", many), "cas+hot"},
		{"int32 sum, deterministic", config{Options: Options{Deterministic: true}}, skewed(tensor.Int32, "sum", many), "native+hot"},
		{"int32 sum, CAS", config{Knobs: knobs.Knobs{ForceCAS: true}}, skewed(tensor.Int32, "sum", many), "cas+hot"},
		{"int32 sum, no hot targets", config{Knobs: knobs.Knobs{NoHotKeys: true}}, skewed(tensor.Int32, "sum", many), "native"},
		{"float32 sum, many targets hit evenly", config{}, big(tensor.Float32, "sum", many), native},
		{"int16 mean", config{}, big(tensor.Int16, "mean", many), "native"},
		{"float16 prod", config{}, skewed(tensor.Float16, "prod", many), "cas+hot"},
		{"float16 prod, few targets", config{}, big(tensor.Float16, "prod", 3000), "cas+private"},
		{"float32 sum, more than 2048 words, on a CPU device", config{}, skewed(tensor.Float32, "sum", wide), native + "+hot"},
		{"float32 sum, more than 2048 words", config{Knobs: wideKnobs}, skewed(tensor.Float32, "sum", wide), native + "+private"},
		{"int8 max, a device's workgroup memory full", config{Knobs: wideKnobs}, big(tensor.Int8, "max", 4*int(capacity)), "cas+private"},
		{"int8 max, past a device's workgroup memory", config{Knobs: wideKnobs}, big(tensor.Int8, "max", 4*int(capacity)+1), "cas"},
		{"bool max, few targets", config{}, big(tensor.Bool, "max", 4), "cas"},
	} {
		b := openTest(t, c.opts.Options, c.opts.Knobs)
		out, _ := tensor.New(c.p.DType, c.p.Shape)
		require.NoError(t, b.Execute(context.Background(), c.p, out))
		assert.Equal(t, c.want, b.LastStats().Reduction, c.name)
	}
}

// TestOrderedManySlots folds in order with more slots than two levels of
// scan blocks hold (scan runs of 1: blocks of 256 words), so that the
// scans take three levels, and checks the CPU reference's bits.
func TestOrderedManySlots(t *testing.T) {
	b := openTest(t, Options{Deterministic: true})
	b.run, b.scanRun = 1, 1
	rng := rand.New(rand.NewSource(3))
	size, n := 70000, 150000
	if testing.Short() {
		size, n = 66000, 70000
	}
	idx, _ := tensor.New(tensor.Int32, []int{n})
	for i, v := 0, tensor.View[int32](idx); i < len(v); i++ {
		v[i] = int32(rng.Intn(size))
	}
	data, upd := randomFloats(rng, []int{size}), randomFloats(rng, []int{n})
	for i, v := 0, tensor.View[float32](upd); i < len(v); i++ {
		v[i] *= float32(rng.NormFloat64()) // inexact sums
	}
	p, err := ops.Prepare(ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "sum", Data: data, Indices: idx, Updates: upd, Axis: tensor.Scalar(0)})
	require.NoError(t, err)
	got, want := runBoth(t, b, p)
	require.Equal(t, "ordered", b.LastStats().Reduction)
	require.Empty(t, opstest.DiffExact(got, want))
}

// TestOrderedWithout64BitAtomics runs every reduction on 8-byte elements as
// on a device without 64-bit atomics, where they fold in order, and
// requires the CPU reference's bits.
func TestOrderedWithout64BitAtomics(t *testing.T) {
	b := openTest(t, Options{})
	b.noInt64Atomics = true
	rng := rand.New(rand.NewSource(12))
	no := false
	for _, dt := range []tensor.DType{tensor.Int64, tensor.Uint64, tensor.Float64} {
		for _, c := range []struct {
			op, red string
			useInit *bool
		}{
			{"ScatterElementsUpdate-12", "sum", nil}, {"ScatterElementsUpdate-12", "prod", &no},
			{"ScatterElementsUpdate-12", "min", nil}, {"ScatterElementsUpdate-12", "max", &no},
			{"ScatterElementsUpdate-12", "mean", nil}, {"ScatterElementsUpdate-12", "mean", &no},
			{"ScatterNDUpdate-15", "sub", nil}, {"ScatterNDUpdate-15", "max", nil},
		} {
			p, err := ops.Prepare(opstest.ContentionRequest(rng, c.op, dt, c.red, 6, 300, c.useInit))
			require.NoError(t, err)
			got, want := runBoth(t, b, p)
			require.Equal(t, "ordered", b.LastStats().Reduction)
			require.Empty(t, opstest.DiffFor(p.Reduction, got, want), "%s %s %v", c.op, c.red, dt)
		}
	}
}

// TestSegmentsFollowTheLongestChain: the column walk and the in-order fold
// take one pass per segment of the longest chain a plan can have (J for an
// Element target or column, every index tuple for a row), and the fold
// lists as many long slots as can exist; a plan whose chains fit one
// segment takes no extra pass and no list.
func TestSegmentsFollowTheLongestChain(t *testing.T) {
	b := openTest(t, Options{Deterministic: true})
	b.walkMin = 1
	for _, c := range []struct{ n, segs int }{
		{1, 1}, {segment - 1, 1}, {segment, 1}, {segment + 1, 2}, {1<<16 - 1, 4}, {1 << 16, 4}, {1<<16 + 1, 5},
	} {
		elems, err := ops.PrepareShapes(ops.Request{Op: "ScatterElements-18", Reduction: "add",
			Data: &tensor.Tensor{DType: tensor.Float32, Shape: []int{4}}, Indices: &tensor.Tensor{DType: tensor.Int32, Shape: []int{c.n}},
			Updates: &tensor.Tensor{DType: tensor.Float32, Shape: []int{c.n}}})
		require.NoError(t, err)
		b.walkMin = 1 << 62 // the fold, not the walk
		j, err := b.jobFor(elems)
		require.NoError(t, err)
		require.True(t, j.red.ordered)
		assert.Equal(t, uint64(c.segs), j.red.segments, "fold of %d updates", c.n)
		wantList := uint64(0)
		if c.segs > 1 {
			wantList = 1 + uint64(c.n)/(segment+1)
		}
		assert.Equal(t, wantList, j.red.listWords, "list of %d updates", c.n)
		assert.Equal(t, 4*wantList, j.red.tensorSizes()[tList-tAcc])

		// A [n, 3] column walk: n rows in every column.
		cols, err := ops.PrepareShapes(ops.Request{Op: "ScatterElements-18",
			Data: &tensor.Tensor{DType: tensor.Float32, Shape: []int{c.n, 3}}, Indices: &tensor.Tensor{DType: tensor.Int32, Shape: []int{c.n, 3}},
			Updates: &tensor.Tensor{DType: tensor.Float32, Shape: []int{c.n, 3}}})
		require.NoError(t, err)
		b.walkMin = 1
		j, err = b.jobFor(cols)
		require.NoError(t, err)
		if c.n > 1 {
			require.True(t, j.walk)
			assert.Equal(t, uint64(c.segs), j.walkSegments(), "walk of %d rows", c.n)
		}
	}
	// A row of ScatterNDUpdate can receive every tuple: 70000 tuples into
	// 2 rows take 5 fold passes and list up to 4 long rows.
	nd, err := ops.PrepareShapes(ops.Request{Op: "ScatterNDUpdate-15", Reduction: "sum",
		Data: &tensor.Tensor{DType: tensor.Float32, Shape: []int{2, 3}}, Indices: &tensor.Tensor{DType: tensor.Int64, Shape: []int{70000, 1}},
		Updates: &tensor.Tensor{DType: tensor.Float32, Shape: []int{70000, 3}}})
	require.NoError(t, err)
	j, err := b.jobFor(nd)
	require.NoError(t, err)
	assert.Equal(t, uint64(5), j.red.segments)
	assert.Equal(t, uint64(1+70000/(segment+1)), j.red.listWords)
}

// TestSkewedIndices: the host sample that gates the hot-target census
// takes Zipf targets for skewed and evenly hit ones for spread, counts -1
// and s-1 as one target, reads ScatterND tuples' first components, and
// takes indices that are not on the host (resident calls) for skewed.
func TestSkewedIndices(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	prep := func(req ops.Request) *ops.Plan {
		p, err := ops.Prepare(req)
		require.NoError(t, err)
		return p
	}
	even := prep(opstest.ContentionRequest(rng, "ScatterElementsUpdate-12", tensor.Float32, "sum", 100000, 16, nil))
	assert.False(t, skewedIndices(even), "100000 targets hit evenly")
	assert.True(t, skewedIndices(prep(opstest.SkewedRequest(rng, "ScatterElementsUpdate-12", tensor.Float32, "sum", 100000, 1<<20, 1.1, nil))), "Zipf targets")
	assert.True(t, skewedIndices(prep(opstest.ContentionRequest(rng, "ScatterElementsUpdate-12", tensor.Float32, "sum", 64, 64, nil))), "64 targets")

	// 1000 targets, each written once by its positive index; target 7 is
	// also written 7 times as -993 (ScatterElements-18 takes negative
	// indices): 8 in all, neither form alone reaching hotSampled.
	idx := make([]int64, 0, 1007)
	for i := range 1000 {
		idx = append(idx, int64(i))
	}
	for range 7 {
		idx = append(idx, -993)
	}
	req := ops.Request{Op: "ScatterElements-18", Reduction: "add",
		Data:    tensor.MustFromSlice([]int{1000}, make([]float32, 1000)),
		Indices: tensor.MustFromSlice([]int{len(idx)}, idx), Updates: tensor.MustFromSlice([]int{len(idx)}, make([]float32, len(idx)))}
	assert.True(t, skewedIndices(prep(req)), "-993 and 7 are one target, written 8 times")
	idx[1000] = 8
	for i := 1001; i < len(idx); i++ {
		idx[i] = int64(9 + i - 1001)
	}
	req.Indices = tensor.MustFromSlice([]int{len(idx)}, idx)
	assert.False(t, skewedIndices(prep(req)), "no target written more than twice")

	// ScatterND: the tuple's first component is the row.
	tuples := make([]int64, 0, 2*600)
	for i := range 600 {
		tuples = append(tuples, int64(i%3), int64(i%500))
	}
	nd := ops.Request{Op: "ScatterND-18", Reduction: "add",
		Data:    tensor.MustFromSlice([]int{3, 500}, make([]float32, 1500)),
		Indices: tensor.MustFromSlice([]int{600, 2}, tuples), Updates: tensor.MustFromSlice([]int{600}, make([]float32, 600))}
	assert.True(t, skewedIndices(prep(nd)), "three rows take every update")

	resident := *even
	resident.Indices = &tensor.Tensor{DType: even.Indices.DType, Shape: even.Indices.Shape}
	assert.True(t, skewedIndices(&resident), "indices not on the host: the device's census decides")
}

// TestHottestUpdates: the sample's share of its most frequent target
// times the updates, where an index value names one target; 0 for
// indices not on the host and for ScatterND of rows (the first component
// names a row of many targets).
func TestHottestUpdates(t *testing.T) {
	prep := func(req ops.Request) *ops.Plan {
		p, err := ops.Prepare(req)
		require.NoError(t, err)
		return p
	}
	// 4096 updates, every fourth on target 0, the others spread over 3000.
	const n = 4096
	idx := make([]int64, n)
	for i := range idx {
		if i%4 != 0 {
			idx[i] = int64(1 + i%3000)
		}
	}
	req := ops.Request{Op: "ScatterElements-18", Reduction: "add",
		Data:    tensor.MustFromSlice([]int{3001}, make([]float32, 3001)),
		Indices: tensor.MustFromSlice([]int{n}, idx), Updates: tensor.MustFromSlice([]int{n}, make([]float32, n))}
	p := prep(req)
	assert.InDelta(t, n/4, float64(hottestUpdates(p)), n/16, "a quarter of the updates, as the sample sees it")
	resident := *p
	resident.Indices = &tensor.Tensor{DType: p.Indices.DType, Shape: p.Indices.Shape}
	assert.Zero(t, hottestUpdates(&resident), "indices not on the host")

	// The same targets as ScatterND of single elements, and as rows.
	nd := ops.Request{Op: "ScatterND-18", Reduction: "add", Data: req.Data,
		Indices: tensor.MustFromSlice([]int{n, 1}, idx), Updates: req.Updates}
	assert.InDelta(t, n/4, float64(hottestUpdates(prep(nd))), n/16)
	nd.Data = tensor.MustFromSlice([]int{3001, 2}, make([]float32, 6002))
	nd.Updates = tensor.MustFromSlice([]int{n, 2}, make([]float32, 2*n))
	assert.Zero(t, hottestUpdates(prep(nd)), "rows: an index value names several targets")
}
