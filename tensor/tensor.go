package tensor

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/x448/float16"

	"github.com/gpuscatter/gpuscatter/hostmem"
)

// MaxBytes is the largest payload a Tensor may hold (1 TiB). It keeps shape
// arithmetic far from overflow and turns absurd shapes into errors rather
// than allocation failures.
const MaxBytes = 1 << 40

// ErrInvalid is wrapped by every error about a malformed tensor: a bad shape,
// a payload whose length does not match the shape, an unknown dtype.
var ErrInvalid = errors.New("invalid tensor")

// Tensor is a dense row-major array. Fixed-size elements live in Data in
// little-endian order; string elements live in Strings and Data is nil.
// A rank-0 tensor (Shape empty) holds one element.
type Tensor struct {
	DType   DType
	Shape   []int
	Data    []byte
	Strings []string
	// StringFormat is the fixed-width storage a string tensor was read
	// with; the zero value for other tensors and for strings made in Go.
	StringFormat StringFormat
}

// StringFormat is the fixed-width storage of a string tensor in a file:
// NumPy's '<U4' holds 4 code points per element, '|S4' 4 bytes. An
// operator's output keeps its data's StringFormat, and npy writes it as
// it is, so a result has exactly its data's dtype. The zero value leaves
// the width to the writer (the longest string).
type StringFormat struct {
	Bytes bool // 'S' (bytes) rather than 'U' (code points)
	Width int  // in code points, or in bytes when Bytes is set; 0: none
}

// Len returns the length of s in the unit of f: code points, or bytes
// when f.Bytes is set.
func (f StringFormat) Len(s string) int {
	if f.Bytes {
		return len(s)
	}
	return utf8.RuneCountInString(s)
}

// Fits reports whether s fits in an element of f (always, when f has no
// width).
func (f StringFormat) Fits(s string) bool {
	return f.Width == 0 || f.Len(s) <= f.Width
}

// String returns NumPy's descr of f, "<U4" or "|S4", or "" when f has no
// width.
func (f StringFormat) String() string {
	switch {
	case f.Width == 0:
		return ""
	case f.Bytes:
		return "|S" + strconv.Itoa(f.Width)
	}
	return "<U" + strconv.Itoa(f.Width)
}

// NumElements returns the product of shape, 1 for a scalar. It returns an
// error when a dimension is negative or the product overflows MaxBytes.
func NumElements(shape []int) (int, error) {
	n := uint64(1)
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("%w: dimension %d is negative (%d)", ErrInvalid, i, d)
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > MaxBytes {
			return 0, fmt.Errorf("%w: shape %v has more than 2^40 elements", ErrInvalid, shape)
		}
		n = lo
	}
	return int(n), nil
}

// New returns a zeroed tensor of the given type and shape. A tensor that
// would not fit in the memory the process may still use is an error
// wrapping hostmem.ErrNoMemory, not a crash.
func New(dt DType, shape []int) (*Tensor, error) {
	if !dt.Valid() {
		return nil, fmt.Errorf("%w: unknown dtype %v", ErrInvalid, dt)
	}
	n, err := NumElements(shape)
	if err != nil {
		return nil, err
	}
	t := &Tensor{DType: dt, Shape: append([]int{}, shape...)}
	if dt == String {
		if err := hostmem.Check(uint64(n) * uint64(unsafe.Sizeof(""))); err != nil {
			return nil, fmt.Errorf("%v%s: %w", dt, FormatShape(shape), err)
		}
		t.Strings = make([]string, n)
		return t, nil
	}
	if uint64(n)*uint64(dt.Size()) > MaxBytes {
		return nil, fmt.Errorf("%w: shape %v of %v is larger than 1 TiB", ErrInvalid, FormatShape(shape), dt)
	}
	if err := hostmem.Check(uint64(n) * uint64(dt.Size())); err != nil {
		return nil, fmt.Errorf("%v%s: %w", dt, FormatShape(shape), err)
	}
	t.Data = make([]byte, n*dt.Size())
	return t, nil
}

// Len returns the number of elements. It assumes t is valid (see Check).
func (t *Tensor) Len() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Rank returns len(t.Shape).
func (t *Tensor) Rank() int { return len(t.Shape) }

// Check reports whether t is well formed: a known dtype, a valid shape, and a
// payload of exactly the length the shape needs.
func (t *Tensor) Check() error {
	if err := t.CheckShape(); err != nil {
		return err
	}
	n, _ := NumElements(t.Shape)
	if t.DType == String {
		if len(t.Strings) != n {
			return fmt.Errorf("%w: shape %v needs %d strings, have %d", ErrInvalid, t.Shape, n, len(t.Strings))
		}
		return nil
	}
	if want := uint64(n) * uint64(t.DType.Size()); uint64(len(t.Data)) != want {
		return fmt.Errorf("%w: shape %v of %v needs %d bytes, have %d", ErrInvalid, t.Shape, t.DType, want, len(t.Data))
	}
	return nil
}

// CheckShape reports whether t has a known dtype and a valid shape,
// ignoring its payload: the check for a tensor that describes one held
// elsewhere.
func (t *Tensor) CheckShape() error {
	if t == nil {
		return fmt.Errorf("%w: nil tensor", ErrInvalid)
	}
	if !t.DType.Valid() {
		return fmt.Errorf("%w: unknown dtype %v", ErrInvalid, t.DType)
	}
	_, err := NumElements(t.Shape)
	return err
}

// Strides returns the row-major strides of shape, in elements.
func Strides(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// Clone returns a deep copy of t.
func (t *Tensor) Clone() *Tensor {
	c := &Tensor{DType: t.DType, Shape: append([]int{}, t.Shape...), StringFormat: t.StringFormat}
	if t.Data != nil {
		c.Data = append(make([]byte, 0, len(t.Data)), t.Data...)
	}
	if t.Strings != nil {
		c.Strings = append(make([]string, 0, len(t.Strings)), t.Strings...)
	}
	return c
}

// SameShape reports whether a and b have equal shapes.
func SameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Equal reports whether a and b have the same dtype, shape and bytes. Floats
// compare bit for bit, so NaN equals the same NaN and -0 differs from +0.
func Equal(a, b *Tensor) bool {
	if a.DType != b.DType || !SameShape(a.Shape, b.Shape) {
		return false
	}
	if a.DType == String {
		if len(a.Strings) != len(b.Strings) {
			return false
		}
		for i := range a.Strings {
			if a.Strings[i] != b.Strings[i] {
				return false
			}
		}
		return true
	}
	return string(a.Data) == string(b.Data)
}

// BF16 is a bfloat16 value: the upper half of an IEEE float32: 8 exponent bits and 7
// mantissa bits.
type BF16 uint16

// BF16From rounds f to the nearest bfloat16, ties to even. NaN stays NaN.
func BF16From(f float32) BF16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 { // NaN: keep it quiet and non-zero
		return BF16(u>>16 | 0x40)
	}
	u += 0x7fff + (u>>16)&1
	return BF16(u >> 16)
}

// Float32 returns b widened exactly to float32.
func (b BF16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }

// F16 is an IEEE 754 binary16 value (github.com/x448/float16).
type F16 = float16.Float16

// F16From rounds f to the nearest float16, ties to even.
func F16From(f float32) F16 { return float16.Fromfloat32(f) }

// Element is the set of Go types that back the fixed-size dtypes.
type Element interface {
	bool | int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64 |
		F16 | BF16 | float32 | float64 | complex64 | complex128
}

// DTypeOf returns the dtype that the Go type T stands for.
func DTypeOf[T Element]() DType {
	var z T
	switch any(z).(type) {
	case bool:
		return Bool
	case int8:
		return Int8
	case uint8:
		return Uint8
	case int16:
		return Int16
	case uint16:
		return Uint16
	case int32:
		return Int32
	case uint32:
		return Uint32
	case int64:
		return Int64
	case uint64:
		return Uint64
	case F16:
		return Float16
	case BF16:
		return BFloat16
	case float32:
		return Float32
	case float64:
		return Float64
	case complex64:
		return Complex64
	case complex128:
		return Complex128
	}
	return Invalid
}

// View returns the elements of t as a []T sharing t's memory. It returns nil
// when T does not match t.DType or t holds no elements.
func View[T Element](t *Tensor) []T {
	if DTypeOf[T]() != t.DType || len(t.Data) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*T)(unsafe.Pointer(&t.Data[0])), len(t.Data)/int(unsafe.Sizeof(z)))
}

// BytesOf returns the bytes of s, sharing its memory.
func BytesOf[T Element](s []T) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

// FromSlice returns a tensor of shape holding a copy of vals. It fails when
// len(vals) does not match the shape.
func FromSlice[T Element](shape []int, vals []T) (*Tensor, error) {
	t, err := New(DTypeOf[T](), shape)
	if err != nil {
		return nil, err
	}
	if len(vals) != t.Len() {
		return nil, fmt.Errorf("%w: shape %v needs %d values, have %d", ErrInvalid, shape, t.Len(), len(vals))
	}
	copy(t.Data, BytesOf(vals))
	return t, nil
}

// MustFromSlice is FromSlice for literals in tests and examples; it panics on
// a length mismatch.
func MustFromSlice[T Element](shape []int, vals []T) *Tensor {
	t, err := FromSlice(shape, vals)
	if err != nil {
		panic(err)
	}
	return t
}

// FromStrings returns a string tensor of shape holding a copy of vals.
func FromStrings(shape []int, vals []string) (*Tensor, error) {
	t, err := New(String, shape)
	if err != nil {
		return nil, err
	}
	if len(vals) != len(t.Strings) {
		return nil, fmt.Errorf("%w: shape %v needs %d strings, have %d", ErrInvalid, shape, len(t.Strings), len(vals))
	}
	copy(t.Strings, vals)
	return t, nil
}

// Scalar returns a rank-0 int64 tensor holding v.
func Scalar(v int64) *Tensor { return MustFromSlice([]int{}, []int64{v}) }

// Ints returns a 1-D int64 tensor holding vals.
func Ints(vals ...int64) *Tensor { return MustFromSlice([]int{len(vals)}, vals) }

// IntAt returns element i of an integer tensor as an int64. ok is false when
// the element is a uint64 above math.MaxInt64; v is then math.MaxInt64. It
// panics when t is not an integer tensor or i is out of range.
func (t *Tensor) IntAt(i int) (v int64, ok bool) {
	d := t.Data
	switch t.DType {
	case Int8:
		return int64(int8(d[i])), true
	case Uint8:
		return int64(d[i]), true
	case Int16:
		return int64(int16(le16(d[2*i:]))), true
	case Uint16:
		return int64(le16(d[2*i:])), true
	case Int32:
		return int64(int32(le32(d[4*i:]))), true
	case Uint32:
		return int64(le32(d[4*i:])), true
	case Int64:
		return int64(le64(d[8*i:])), true
	case Uint64:
		u := le64(d[8*i:])
		if u > math.MaxInt64 {
			return math.MaxInt64, false
		}
		return int64(u), true
	}
	panic(fmt.Sprintf("tensor: IntAt on %v tensor", t.DType))
}

// FormatAt formats element i of t for messages: integers exactly, floats in
// the shortest form that round-trips.
func (t *Tensor) FormatAt(i int) string {
	d := t.Data
	switch t.DType {
	case Bool:
		return strconv.FormatBool(d[i] != 0)
	case Uint64:
		return strconv.FormatUint(le64(d[8*i:]), 10)
	case Int8, Uint8, Int16, Uint16, Int32, Uint32, Int64:
		v, _ := t.IntAt(i)
		return strconv.FormatInt(v, 10)
	case Float16:
		return strconv.FormatFloat(float64(float16.Frombits(le16(d[2*i:])).Float32()), 'g', -1, 32)
	case BFloat16:
		return strconv.FormatFloat(float64(BF16(le16(d[2*i:])).Float32()), 'g', -1, 32)
	case Float32:
		return strconv.FormatFloat(float64(math.Float32frombits(le32(d[4*i:]))), 'g', -1, 32)
	case Float64:
		return strconv.FormatFloat(math.Float64frombits(le64(d[8*i:])), 'g', -1, 64)
	case Complex64:
		return strconv.FormatComplex(complex128(View[complex64](t)[i]), 'g', -1, 64)
	case Complex128:
		return strconv.FormatComplex(View[complex128](t)[i], 'g', -1, 128)
	case String:
		return strconv.Quote(t.Strings[i])
	}
	return "?"
}

// String renders t as "float32[2,3] [1 2 3 4 5 6]", eliding the middle of
// long tensors.
func (t *Tensor) String() string {
	if err := t.Check(); err != nil {
		return err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%v%s ", t.DType, FormatShape(t.Shape))
	n := t.Len()
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		if n > 24 && i == 10 {
			fmt.Fprintf(&b, " ... (%d more)", n-20)
			i = n - 10
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.FormatAt(i))
	}
	b.WriteByte(']')
	return b.String()
}

// maxShapeDims is how many dimensions FormatShape writes out: a shape read
// from a hostile file may have a hundred thousand, and an error message
// that echoes them all would be a line of megabytes.
const maxShapeDims = 32

// FormatShape renders a shape as "[2,3]"; a scalar is "[]". A shape of
// more than 32 dimensions shows its first 16 and last 16 around
// "...(N dims)...", so the text stays a few hundred characters at most.
func FormatShape(shape []int) string {
	parts := make([]string, 0, min(len(shape), maxShapeDims+1))
	for i, d := range shape {
		if len(shape) > maxShapeDims && i >= maxShapeDims/2 && i < len(shape)-maxShapeDims/2 {
			if i == maxShapeDims/2 {
				parts = append(parts, fmt.Sprintf("...(%d dims)...", len(shape)))
			}
			continue
		}
		parts = append(parts, strconv.Itoa(d))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// Unravel writes the row-major coordinates of flat index i within shape into
// coord (len(coord) == len(shape)).
func Unravel(i int, shape, coord []int) {
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			coord[d] = i % shape[d]
			i /= shape[d]
		}
	}
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }
