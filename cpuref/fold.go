package cpuref

import (
	"math"

	"github.com/gpuscatter/gpuscatter/tensor"
)

// The folds of the reductions. Each comes in two forms: C folds upd into
// out element by element (a ScatterNDUpdate slice), I folds upd[i] into
// out[tgt[i]] in order of i (ScatterElements; tgt may repeat). Every step
// is computed in the element type (specs/README.md): Go's integer
// arithmetic wraps, and float32 and float64 operations round to their type.

// native is the set of element types Go's operators compute in directly.
type native interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64
}

func sumC[T native](out, upd []T) {
	out = out[:len(upd)]
	for i, u := range upd {
		out[i] += u
	}
}

func sumI[T native, O offset](out []T, tgt []O, upd []T) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		out[t] += upd[i]
	}
}

// subC and subI: ScatterNDUpdate-15 sub is x - y, the update subtracted.
func subC[T native](out, upd []T) {
	out = out[:len(upd)]
	for i, u := range upd {
		out[i] -= u
	}
}

func subI[T native, O offset](out []T, tgt []O, upd []T) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		out[t] -= upd[i]
	}
}

func prodC[T native](out, upd []T) {
	out = out[:len(upd)]
	for i, u := range upd {
		out[i] *= u
	}
}

func prodI[T native, O offset](out []T, tgt []O, upd []T) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		out[t] *= upd[i]
	}
}

// minC, minI, maxC and maxI: the contract's float min and max
// (specs/README.md, "Floats"). A step whose operands are numbers is
// minNum or maxNum; one that meets a NaN is nanOf, out of line so that the
// number steps stay inlined in the loops.

func minC[T native](out, upd []T) {
	out = out[:len(upd)]
	for i, u := range upd {
		if x := out[i]; x == x && u == u {
			out[i] = minNum(x, u)
		} else {
			out[i] = nanOf(x, u)
		}
	}
}

func minI[T native, O offset](out []T, tgt []O, upd []T) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		if x, u := out[t], upd[i]; x == x && u == u {
			out[t] = minNum(x, u)
		} else {
			out[t] = nanOf(x, u)
		}
	}
}

func maxC[T native](out, upd []T) {
	out = out[:len(upd)]
	for i, u := range upd {
		if x := out[i]; x == x && u == u {
			out[i] = maxNum(x, u)
		} else {
			out[i] = nanOf(x, u)
		}
	}
}

func maxI[T native, O offset](out []T, tgt []O, upd []T) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		if x, u := out[t], upd[i]; x == x && u == u {
			out[t] = maxNum(x, u)
		} else {
			out[t] = nanOf(x, u)
		}
	}
}

// integer is the set of native integer types. Their min and max are
// Go's builtins, which compile to conditional moves: the compare-and-branch
// of minNum and maxNum mispredicts about every other update on random data,
// and ties or signs of zero do not arise.
type integer interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64
}

func intMinC[T integer](out, upd []T) {
	out = out[:len(upd)]
	for i, u := range upd {
		out[i] = min(out[i], u)
	}
}

func intMinI[T integer, O offset](out []T, tgt []O, upd []T) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		out[t] = min(out[t], upd[i])
	}
}

func intMaxC[T integer](out, upd []T) {
	out = out[:len(upd)]
	for i, u := range upd {
		out[i] = max(out[i], u)
	}
}

func intMaxI[T integer, O offset](out []T, tgt []O, upd []T) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		out[t] = max(out[t], upd[i])
	}
}

// isNaN reports whether v is a NaN; always false for integers.
func isNaN[T native](v T) bool { return v != v }

// minNum is the min of two numbers (neither a NaN): the lesser, and
// min(-0, +0) = -0 in either order.
func minNum[T native](a, b T) T {
	if b < a || (b == a && b == 0 && math.Signbit(float64(b))) {
		return b
	}
	return a
}

// maxNum is the max of two numbers (neither a NaN): the greater, and
// max(-0, +0) = +0 in either order.
func maxNum[T native](a, b T) T {
	if b > a || (b == a && a == 0 && math.Signbit(float64(a))) {
		return b
	}
	return a
}

// nanOf is the NaN that float min and max give where at least one of a and
// b is a NaN (specs/README.md, "Floats"): the NaN itself where one is, and
// where both are the one whose bits, read as an unsigned integer, are
// greater; bits unchanged. The rule picks the greatest NaN pattern among
// all the operands an element meets whatever the order of the fold, so
// that folds in any order (the GPU's atomics) give the same bits.
//
//go:noinline
func nanOf[T native](a, b T) T {
	switch {
	case !isNaN(a):
		return b
	case !isNaN(b):
		return a
	}
	switch x := any(a).(type) {
	case float32:
		if math.Float32bits(any(b).(float32)) > math.Float32bits(x) {
			return b
		}
	case float64:
		if math.Float64bits(any(b).(float64)) > math.Float64bits(x) {
			return b
		}
	}
	return a
}

// halfFormat converts a 16-bit float format to and from float32. A step on
// float16 or bfloat16 is computed in float32 and rounded to the format:
// float32 has more than twice their precision, so this is the correctly
// rounded result of +, -, * and / (specs/README.md: "a float16 or bfloat16
// step rounds to that type").
type halfFormat interface {
	widen(h uint16) float32
	narrow(f float32) uint16
}

type f16Format struct{}

func (f16Format) widen(h uint16) float32  { return tensor.F16(h).Float32() }
func (f16Format) narrow(f float32) uint16 { return uint16(tensor.F16From(f)) }

type bf16Format struct{}

func (bf16Format) widen(h uint16) float32  { return math.Float32frombits(uint32(h) << 16) }
func (bf16Format) narrow(f float32) uint16 { return uint16(tensor.BF16From(f)) }

// nanStep returns r, the float32 result of a step on the element x and
// the update y, with the NaN that arithmetic in index order gives on
// amd64 whatever operand order the compiler picked for a commutative
// operation: x's NaN first, then y's, quieted; a NaN the step creates
// from numbers (inf - inf, 0 * inf) is the negative quiet NaN with no
// payload (the README's contract, "Floats"). The GPU kernels follow the
// same rule (shaders/src/reduce.glsl, combine). The branch is taken only
// for NaN results.
func nanStep(r, x, y float32) float32 {
	if r == r {
		return r
	}
	const quiet = 1 << 22
	switch {
	case x != x:
		return math.Float32frombits(math.Float32bits(x) | quiet)
	case y != y:
		return math.Float32frombits(math.Float32bits(y) | quiet)
	}
	return math.Float32frombits(0xFFC00000)
}

func halfSumC[F halfFormat](out, upd []uint16) {
	var f F
	out = out[:len(upd)]
	for i, u := range upd {
		x, y := f.widen(out[i]), f.widen(u)
		out[i] = f.narrow(nanStep(x+y, x, y))
	}
}

func halfSumI[F halfFormat, O offset](out []uint16, tgt []O, upd []uint16) {
	var f F
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		x, y := f.widen(out[t]), f.widen(upd[i])
		out[t] = f.narrow(nanStep(x+y, x, y))
	}
}

func halfSubC[F halfFormat](out, upd []uint16) {
	var f F
	out = out[:len(upd)]
	for i, u := range upd {
		x, y := f.widen(out[i]), f.widen(u)
		out[i] = f.narrow(nanStep(x-y, x, y))
	}
}

func halfSubI[F halfFormat, O offset](out []uint16, tgt []O, upd []uint16) {
	var f F
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		x, y := f.widen(out[t]), f.widen(upd[i])
		out[t] = f.narrow(nanStep(x-y, x, y))
	}
}

func halfProdC[F halfFormat](out, upd []uint16) {
	var f F
	out = out[:len(upd)]
	for i, u := range upd {
		x, y := f.widen(out[i]), f.widen(u)
		out[i] = f.narrow(nanStep(x*y, x, y))
	}
}

func halfProdI[F halfFormat, O offset](out []uint16, tgt []O, upd []uint16) {
	var f F
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		x, y := f.widen(out[t]), f.widen(upd[i])
		out[t] = f.narrow(nanStep(x*y, x, y))
	}
}

// The min and max of two 16-bit floats is one of them: compared in float32,
// exactly, and returned unchanged.

func halfMinC[F halfFormat](out, upd []uint16) {
	out = out[:len(upd)]
	for i, u := range upd {
		out[i] = halfMin[F](out[i], u)
	}
}

func halfMinI[F halfFormat, O offset](out []uint16, tgt []O, upd []uint16) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		out[t] = halfMin[F](out[t], upd[i])
	}
}

func halfMaxC[F halfFormat](out, upd []uint16) {
	out = out[:len(upd)]
	for i, u := range upd {
		out[i] = halfMax[F](out[i], u)
	}
}

func halfMaxI[F halfFormat, O offset](out []uint16, tgt []O, upd []uint16) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		out[t] = halfMax[F](out[t], upd[i])
	}
}

func halfMin[F halfFormat](a, b uint16) uint16 {
	var f F
	x, y := f.widen(a), f.widen(b)
	if isNaN(x) || isNaN(y) {
		return halfNaN(a, x, b, y)
	}
	if y < x || (y == x && y == 0 && math.Signbit(float64(y))) {
		return b
	}
	return a
}

func halfMax[F halfFormat](a, b uint16) uint16 {
	var f F
	x, y := f.widen(a), f.widen(b)
	if isNaN(x) || isNaN(y) {
		return halfNaN(a, x, b, y)
	}
	if y > x || (y == x && x == 0 && math.Signbit(float64(x))) {
		return b
	}
	return a
}

// halfNaN is nanOf for 16-bit floats a and b, x and y their values: the
// NaN where one is, the greater bits where both are.
func halfNaN(a uint16, x float32, b uint16, y float32) uint16 {
	if !isNaN(x) || (isNaN(y) && b > a) {
		return b
	}
	return a
}

// Bool reductions (specs/README.md): sum and max are OR, sub is XOR, prod
// and min are AND. Any non-zero byte is true; results are 0 or 1.

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func orC(out, upd []uint8) {
	out = out[:len(upd)]
	for i, u := range upd {
		out[i] = b2u(out[i]|u != 0)
	}
}

func orI[O offset](out []uint8, tgt []O, upd []uint8) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		out[t] = b2u(out[t]|upd[i] != 0)
	}
}

func xorC(out, upd []uint8) {
	out = out[:len(upd)]
	for i, u := range upd {
		out[i] = b2u((out[i] != 0) != (u != 0))
	}
}

func xorI[O offset](out []uint8, tgt []O, upd []uint8) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		out[t] = b2u((out[t] != 0) != (upd[i] != 0))
	}
}

func andC(out, upd []uint8) {
	out = out[:len(upd)]
	for i, u := range upd {
		out[i] = b2u(out[i] != 0 && u != 0)
	}
}

func andI[O offset](out []uint8, tgt []O, upd []uint8) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		out[t] = b2u(out[t] != 0 && upd[i] != 0)
	}
}

// Moves (reduction none) for elements of any type: the last update wins.

func moveI[E any, O offset](out []E, tgt []O, upd []E) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		out[t] = upd[i]
	}
}

func fillI[E any, O offset](out []E, tgt []O, v E) {
	for _, t := range tgt {
		out[t] = v
	}
}

// ScatterElementsUpdate-12 mean (specs/README.md): the sum of the updates,
// and of the original element when use_init_val is true, divided by their
// count. cnt[t] is 0 for an element not reached yet and its count plus one
// afterwards; the accumulation and the division run over the same targets
// (one task owns each), and the division resets cnt[t] to 0 so that a
// target listed several times is divided once.

// intMeanAcc sums in A: int64 for integers of 32 bits or less (exact),
// int64 or uint64, wrapping, for the 64-bit types.
func intMeanAcc[T native, A int64 | uint64, O offset](out []T, acc []A, cnt []int64, tgt []O, upd []T, init bool) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		c := cnt[t]
		if c == 0 {
			c = 1
			acc[t] = 0
			if init {
				c = 2
				acc[t] = A(out[t])
			}
		}
		acc[t] += A(upd[i])
		cnt[t] = c + 1
	}
}

// intMeanEnd divides rounding toward negative infinity (-2.5 -> -3).
func intMeanEnd[T native, A int64 | uint64, O offset](out []T, acc []A, cnt []int64, tgt []O) {
	for _, t := range tgt {
		if c := cnt[t]; c != 0 {
			s, n := acc[t], A(c-1)
			q := s / n
			if s%n != 0 && s < 0 {
				q--
			}
			out[t] = T(q)
			cnt[t] = 0
		}
	}
}

// floatMeanAcc sums in the float type itself, in out.
func floatMeanAcc[T float32 | float64, O offset](out []T, cnt []int64, tgt []O, upd []T, init bool) {
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		c := cnt[t]
		if c == 0 {
			c = 2
			if !init {
				c = 1
				out[t] = 0
			}
		}
		out[t] += upd[i]
		cnt[t] = c + 1
	}
}

// floatMeanEnd divides in float64 and rounds to T: float64 has more than
// twice float32's precision, so the result is the correctly rounded
// quotient.
func floatMeanEnd[T float32 | float64, O offset](out []T, cnt []int64, tgt []O) {
	for _, t := range tgt {
		if c := cnt[t]; c != 0 {
			out[t] = T(float64(out[t]) / float64(c-1))
			cnt[t] = 0
		}
	}
}

func halfMeanAcc[F halfFormat, O offset](out []uint16, cnt []int64, tgt []O, upd []uint16, init bool) {
	var f F
	upd = upd[:len(tgt)]
	for i, t := range tgt {
		c := cnt[t]
		if c == 0 {
			c = 2
			if !init {
				c = 1
				out[t] = 0
			}
		}
		x, y := f.widen(out[t]), f.widen(upd[i])
		out[t] = f.narrow(nanStep(x+y, x, y))
		cnt[t] = c + 1
	}
}

// halfMeanEnd divides in float64 and rounds to float32 and then to the
// format; each rounding is to less than half the precision of the one
// before, so the result is the correctly rounded quotient.
func halfMeanEnd[F halfFormat, O offset](out []uint16, cnt []int64, tgt []O) {
	var f F
	for _, t := range tgt {
		if c := cnt[t]; c != 0 {
			out[t] = f.narrow(float32(float64(f.widen(out[t])) / float64(c-1)))
			cnt[t] = 0
		}
	}
}
