//go:build cgo

package gpu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// floatBits returns random bits of a float of ebits exponent and fbits
// fraction bits, drawn so that subnormals, the smallest normals, values
// near 1 (whose products with those leave the normal range) and
// cancelling pairs are common, with a few zeros, infinities and NaN. like,
// when not 0, is a value the result should nearly cancel.
func floatBits(r *rand.Rand, ebits, fbits uint, like uint64) uint64 {
	emax := uint64(1)<<ebits - 1
	bias := emax / 2
	sign := uint64(r.Intn(2)) << (ebits + fbits)
	frac := r.Uint64() & (1<<fbits - 1)
	switch r.Intn(4) {
	case 0:
		frac &= 0xF
	case 1:
		frac |= (1<<fbits - 1) &^ 0xF
	}
	var exp uint64
	switch k := r.Intn(50); {
	case k == 0:
		return sign // a zero
	case k == 1:
		return sign | emax<<fbits // an infinity
	case k == 2:
		return sign | emax<<fbits | frac | 1 // a NaN
	case k < 8 && like != 0:
		// -like, a few units of the last place away.
		return (like ^ 1<<(ebits+fbits)) + uint64(r.Intn(5)) - 2
	case k < 22:
		exp = 0
	case k < 26:
		exp = 1
	case k < 29:
		exp = 2
	case k < 34:
		exp = uint64(r.Intn(int(fbits) + 8))
	case k < 44:
		exp = bias - 40 + uint64(r.Intn(80))
	default:
		exp = uint64(r.Int63n(int64(emax)))
	}
	return sign | exp<<fbits | frac
}

// newTensor returns a zeroed tensor of n elements of dt.
func newTensor(dt tensor.DType, n int) *tensor.Tensor {
	t, err := tensor.New(dt, []int{n})
	if err != nil {
		panic(err)
	}
	return t
}

// setBits and getBits write and read element i of a 2-, 4- or 8-byte
// tensor as bits.
func setBits(t *tensor.Tensor, i int, v uint64) {
	switch t.DType.Size() {
	case 2:
		binary.LittleEndian.PutUint16(t.Data[2*i:], uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(t.Data[4*i:], uint32(v))
	default:
		binary.LittleEndian.PutUint64(t.Data[8*i:], v)
	}
}

func getBits(t *tensor.Tensor, i int) uint64 {
	switch t.DType.Size() {
	case 2:
		return uint64(binary.LittleEndian.Uint16(t.Data[2*i:]))
	case 4:
		return uint64(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return binary.LittleEndian.Uint64(t.Data[8*i:])
}

// floatPairs returns n operands a and n operands b of dtype dt (float32,
// bfloat16 or float64) from floatBits, each b drawn against its a.
func floatPairs(r *rand.Rand, dt tensor.DType, n int) (a, b *tensor.Tensor) {
	a, b = newTensor(dt, n), newTensor(dt, n)
	for i := 0; i < n; i++ {
		switch dt {
		case tensor.Float32, tensor.BFloat16:
			x := floatBits(r, 8, 23, 0)
			y := floatBits(r, 8, 23, x)
			if dt == tensor.BFloat16 {
				setBits(a, i, x>>16)
				setBits(b, i, y>>16)
			} else {
				setBits(a, i, x)
				setBits(b, i, y)
			}
		default:
			x := floatBits(r, 11, 52, 0)
			setBits(a, i, x)
			setBits(b, i, floatBits(r, 11, 52, x))
		}
	}
	return a, b
}

// matchesReference runs req on b and on the CPU reference and requires
// the same bits; a float64 call the device refuses (the 32-bit baseline
// needs shaderInt64 for float64 arithmetic) passes.
func matchesReference(t *testing.T, b *Backend, req ops.Request, name string) {
	t.Helper()
	p, err := ops.Prepare(req)
	require.NoError(t, err, name)
	got, want := opstest.SentinelOutput(p), opstest.SentinelOutput(p)
	require.NoError(t, cpuref.New().Execute(context.Background(), p, want), name)
	if err := b.Execute(context.Background(), p, got); err != nil {
		require.True(t, errors.Is(err, ops.ErrUnsupported) && p.DType == tensor.Float64, "%s: %v", name, err)
		return
	}
	assert.Empty(t, opstest.DiffExact(got, want), "%s on the %s path", name, b.LastStats().Reduction)
}

// TestSubnormalSteps compares float sum, prod and mean steps on operands
// that are often subnormal, or whose results are, with the CPU
// reference's IEEE arithmetic, bit for bit: one update per element, so
// that every path (atomics, the in-order fold, the 32-bit baseline)
// computes exactly one step per element. On lavapipe, whose float
// atomics take every update (Backend.exactAtomics is off on CPU devices),
// the atomics configuration checks that they keep subnormals. A device
// that does not promise
// to keep subnormals (shaderDenormPreserveFloat32; lavapipe and
// SwiftShader promise nothing) computes such steps in integer arithmetic
// (FLAG_SOFT_FLOATS); knobs.SoftFloats computes every step so, which the
// random operands of every magnitude check against the CPU's.
func TestSubnormalSteps(t *testing.T) {
	n := 6000
	if testing.Short() {
		n = 1500
	}
	configs := []struct {
		name string
		opts Options
		k    knobs.Knobs
	}{
		{"atomics", Options{}, knobs.Knobs{NoOrderedSmall: true}},
		{"atomics, exact float atomics", Options{}, knobs.Knobs{NoOrderedSmall: true, ExactAtomics: true}},
		{"atomics, every step in integer arithmetic", Options{}, knobs.Knobs{NoOrderedSmall: true, SoftFloats: true}},
		{"in order", Options{Deterministic: true}, knobs.Knobs{}},
		{"in order, every step in integer arithmetic", Options{Deterministic: true}, knobs.Knobs{SoftFloats: true}},
		{"32-bit baseline", Options{}, knobs.Knobs{NoOrderedSmall: true, NoShaderInt64: true}},
		{"32-bit baseline, every step in integer arithmetic", Options{}, knobs.Knobs{NoOrderedSmall: true, NoShaderInt64: true, SoftFloats: true}},
	}
	for ci, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			b := openTest(t, c.opts, c.k)
			for di, dt := range []tensor.DType{tensor.Float32, tensor.BFloat16, tensor.Float64} {
				r := rand.New(rand.NewSource(int64(100*ci + di)))
				data, upd := floatPairs(r, dt, n)
				idx := make([]int32, n)
				for i, v := range r.Perm(n) {
					idx[i] = int32(v)
				}
				// Each element i gets update u with idx[u] == i: permute
				// the updates so that the pairs stay (data[i], upd[i]).
				perm := newTensor(dt, n)
				for u, i := range idx {
					setBits(perm, u, getBits(upd, int(i)))
				}
				for _, red := range []string{"sum", "prod", "mean"} {
					req := ops.Request{Op: "ScatterElementsUpdate-12", Reduction: red, Data: data,
						Indices: tensor.MustFromSlice([]int{n}, idx), Updates: perm, Axis: tensor.Scalar(0)}
					matchesReference(t, b, req, fmt.Sprintf("%v %s", dt, red))
				}
			}
		})
	}
}

// TestSubnormalSums folds many subnormal updates into few elements, on
// atomics with workgroup accumulation and without, and in order: every
// partial sum is a multiple of the smallest subnormal below 2^-125, so
// each is exact in any order and the results must be the CPU reference's
// bit for bit. A device that flushed subnormals would leave zeros.
func TestSubnormalSums(t *testing.T) {
	const outputs, updates = 64, 8192
	r := rand.New(rand.NewSource(7))
	data := make([]float32, outputs)
	for i := range data {
		data[i] = math.Float32frombits(uint32(r.Intn(1<<16)) | uint32(r.Intn(2))<<31)
	}
	upd, upd64 := make([]float32, updates), make([]float64, updates)
	idx := make([]int32, updates)
	for i := range upd {
		upd[i] = math.Float32frombits(uint32(r.Intn(1<<16)) | uint32(r.Intn(2))<<31)
		upd64[i] = math.Float64frombits(uint64(r.Int63n(1<<40)) | uint64(r.Intn(2))<<63)
		idx[i] = int32(r.Intn(outputs))
	}
	data64 := make([]float64, outputs)
	for i := range data64 {
		data64[i] = math.Float64frombits(uint64(r.Int63n(1 << 40)))
	}
	for _, c := range []struct {
		name string
		opts Options
		k    knobs.Knobs
	}{
		{"atomics", Options{}, knobs.Knobs{NoOrderedSmall: true}},
		{"atomics, exact float atomics", Options{}, knobs.Knobs{NoOrderedSmall: true, ExactAtomics: true}},
		{"atomics without workgroup accumulation", Options{}, knobs.Knobs{NoOrderedSmall: true, NoWorkgroupAccumulation: true}},
		{"in order", Options{Deterministic: true}, knobs.Knobs{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := openTest(t, c.opts, c.k)
			for _, in := range [][2]*tensor.Tensor{
				{tensor.MustFromSlice([]int{outputs}, data), tensor.MustFromSlice([]int{updates}, upd)},
				{tensor.MustFromSlice([]int{outputs}, data64), tensor.MustFromSlice([]int{updates}, upd64)},
			} {
				for _, red := range []string{"sum", "mean"} {
					req := ops.Request{Op: "ScatterElementsUpdate-12", Reduction: red, Data: in[0],
						Indices: tensor.MustFromSlice([]int{updates}, idx), Updates: in[1], Axis: tensor.Scalar(0)}
					matchesReference(t, b, req, fmt.Sprintf("%v %s", in[0].DType, red))
				}
			}
		})
	}
}

// TestAtomicExactThreshold checks the claim behind atomicExact
// (shaders/src/reduce.glsl): a float add of an update x whose exponent
// field is at least precision+3 (27 for float32, 56 for float64) to any
// element gives the IEEE sum even on a device that flushes subnormal
// operands and results to zero, whether it detects tininess before or
// after rounding: the exact sum is zero, or at least twice the smallest
// normal, or the element is too small to move x.
func TestAtomicExactThreshold(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, f := range []struct {
		ebits, fbits uint
		minExp       uint64
	}{{8, 23, 27}, {11, 52, 56}} {
		emax := uint64(1)<<f.ebits - 1
		smallestNormal := new(big.Float).SetMantExp(big.NewFloat(1), 2-int(emax/2)-1) // 2^(1-bias)
		twice := new(big.Float).Mul(smallestNormal, big.NewFloat(2))
		toBig := func(bits uint64) *big.Float {
			if f.ebits == 8 {
				return big.NewFloat(float64(math.Float32frombits(uint32(bits))))
			}
			return big.NewFloat(math.Float64frombits(bits))
		}
		for i := 0; i < 200000; i++ {
			old := floatBits(r, f.ebits, f.fbits, 0)
			x := floatBits(r, f.ebits, f.fbits, old)
			e := x >> f.fbits & emax
			if e < f.minExp || e == emax || old>>f.fbits&emax == emax {
				continue // atomicExact takes x with the loop; infinities, NaN
			}
			a, b := toBig(old), toBig(x)
			sum := new(big.Float).SetPrec(0).Add(a, b) // exact
			if sum.Sign() == 0 || new(big.Float).Abs(sum).Cmp(twice) >= 0 {
				// No result near the subnormals; a subnormal element then
				// must not move x, so that taking it for zero is exact.
				if old>>f.fbits&emax == 0 && old&^(1<<(f.ebits+f.fbits)) != 0 {
					var rounded *big.Float
					if f.ebits == 8 {
						v, _ := sum.Float32()
						rounded = big.NewFloat(float64(v))
					} else {
						v, _ := sum.Float64()
						rounded = big.NewFloat(v)
					}
					require.Zero(t, rounded.Cmp(b), "a subnormal element %#x moves the update %#x", old, x)
				}
				continue
			}
			t.Fatalf("the sum of %#x and %#x is %v, below twice the smallest normal", old, x, sum)
		}
	}
}
