package opstest

import (
	"encoding/binary"
	"math"

	"github.com/gpuscatter/gpuscatter/tensor"
)

// num is one element of a bool, integer or real float tensor. Integers keep
// their two's complement bits in u, sign-extended for signed types; floats
// are held exactly in f (every float16, bfloat16 and float32 is a float64),
// and a NaN read from a tensor also keeps its bits, of the element's width,
// in nan (a float64 NaN need not carry a narrower one's bits: converting a
// signalling float32 NaN quiets it), which setNum writes back unchanged.
type num struct {
	b   bool
	u   uint64
	f   float64
	nan uint64
}

// width returns the number of bits of an integer dtype.
func width(dt tensor.DType) uint { return uint(dt.Size()) * 8 }

// wrap truncates u to the width of dt and sign-extends it for signed types.
func wrap(dt tensor.DType, u uint64) uint64 {
	w := width(dt)
	if w == 64 {
		return u
	}
	u &= 1<<w - 1
	if dt.IsSigned() && u>>(w-1) != 0 {
		u |= ^uint64(0) << w
	}
	return u
}

func getNum(t *tensor.Tensor, i int) num {
	d := t.Data
	switch t.DType {
	case tensor.Bool:
		return num{b: d[i] != 0}
	case tensor.Int8, tensor.Uint8:
		return num{u: wrap(t.DType, uint64(d[i]))}
	case tensor.Int16, tensor.Uint16:
		return num{u: wrap(t.DType, uint64(binary.LittleEndian.Uint16(d[2*i:])))}
	case tensor.Int32, tensor.Uint32:
		return num{u: wrap(t.DType, uint64(binary.LittleEndian.Uint32(d[4*i:])))}
	case tensor.Int64, tensor.Uint64:
		return num{u: binary.LittleEndian.Uint64(d[8*i:])}
	case tensor.Float16:
		h := binary.LittleEndian.Uint16(d[2*i:])
		return floatNum(float64(tensor.F16(h).Float32()), uint64(h))
	case tensor.BFloat16:
		h := binary.LittleEndian.Uint16(d[2*i:])
		return floatNum(float64(tensor.BF16(h).Float32()), uint64(h))
	case tensor.Float32:
		w := binary.LittleEndian.Uint32(d[4*i:])
		return floatNum(float64(math.Float32frombits(w)), uint64(w))
	case tensor.Float64:
		w := binary.LittleEndian.Uint64(d[8*i:])
		return floatNum(math.Float64frombits(w), w)
	}
	panic("opstest: no numeric access to " + t.DType.String())
}

// floatNum is the num of a float element of value f and bits bits.
func floatNum(f float64, bits uint64) num {
	if math.IsNaN(f) {
		return num{f: f, nan: bits}
	}
	return num{f: f}
}

// setNum stores v at element i. Floats are rounded to the dtype: callers
// pass values already exact in it, or float32 values for float16 and
// bfloat16 (rounding a float32 to them is a single rounding).
func setNum(t *tensor.Tensor, i int, v num) {
	d := t.Data
	switch t.DType {
	case tensor.Bool:
		d[i] = 0
		if v.b {
			d[i] = 1
		}
	case tensor.Int8, tensor.Uint8:
		d[i] = byte(v.u)
	case tensor.Int16, tensor.Uint16:
		binary.LittleEndian.PutUint16(d[2*i:], uint16(v.u))
	case tensor.Int32, tensor.Uint32:
		binary.LittleEndian.PutUint32(d[4*i:], uint32(v.u))
	case tensor.Int64, tensor.Uint64:
		binary.LittleEndian.PutUint64(d[8*i:], v.u)
	case tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64:
		setFloat(t.DType, d, i, v)
	default:
		panic("opstest: no numeric access to " + t.DType.String())
	}
}

// setFloat is setNum for float dtypes: a NaN that carries its bits (nan,
// read by getNum from a tensor of the same dtype) is written with them.
func setFloat(dt tensor.DType, d []byte, i int, v num) {
	keep := v.nan != 0 && math.IsNaN(v.f)
	switch dt {
	case tensor.Float16:
		h := tensor.F16From(float32(v.f)).Bits()
		if keep {
			h = uint16(v.nan)
		}
		binary.LittleEndian.PutUint16(d[2*i:], h)
	case tensor.BFloat16:
		h := uint16(tensor.BF16From(float32(v.f)))
		if keep {
			h = uint16(v.nan)
		}
		binary.LittleEndian.PutUint16(d[2*i:], h)
	case tensor.Float32:
		w := math.Float32bits(float32(v.f))
		if keep {
			w = uint32(v.nan)
		}
		binary.LittleEndian.PutUint32(d[4*i:], w)
	default:
		w := math.Float64bits(v.f)
		if keep {
			w = v.nan
		}
		binary.LittleEndian.PutUint64(d[8*i:], w)
	}
}

// copyElem copies element src of from into element dst of to, raw bytes or
// string, whatever the dtype.
func copyElem(to *tensor.Tensor, dst int, from *tensor.Tensor, src int) {
	if to.DType == tensor.String {
		to.Strings[dst] = from.Strings[src]
		return
	}
	sz := to.DType.Size()
	copy(to.Data[dst*sz:(dst+1)*sz], from.Data[src*sz:(src+1)*sz])
}

// readIndex reads element i of an integer tensor. ok is false for a uint64
// above math.MaxInt64, which no dimension can reach.
func readIndex(t *tensor.Tensor, i int) (v int64, ok bool) {
	n := getNum(t, i)
	if t.DType == tensor.Uint64 && n.u > math.MaxInt64 {
		return 0, false
	}
	return int64(n.u), true
}

// isNaNAt reports whether element i of a float or complex tensor is a NaN
// (for complex: either part).
func isNaNAt(t *tensor.Tensor, i int) bool {
	switch t.DType {
	case tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64:
		return math.IsNaN(getNum(t, i).f)
	case tensor.Complex64:
		c := tensor.View[complex64](t)[i]
		return math.IsNaN(float64(real(c))) || math.IsNaN(float64(imag(c)))
	case tensor.Complex128:
		c := tensor.View[complex128](t)[i]
		return math.IsNaN(real(c)) || math.IsNaN(imag(c))
	}
	return false
}

// unravel returns the row-major coordinates of flat position i in shape.
func unravel(i int, shape []int) []int {
	c := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		c[d] = i % shape[d]
		i /= shape[d]
	}
	return c
}

// ravel returns the flat row-major position of coordinates c in shape.
func ravel(c, shape []int) int {
	i := 0
	for d := range shape {
		i = i*shape[d] + c[d]
	}
	return i
}

func numElements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}
