package tensor

import (
	"fmt"
	"strings"
)

// DType is the element type of a tensor.
type DType uint8

// The element types gpuscatter carries. The zero value is Invalid.
const (
	Invalid DType = iota
	Bool
	Int8
	Uint8
	Int16
	Uint16
	Int32
	Uint32
	Int64
	Uint64
	Float16
	BFloat16
	Float32
	Float64
	Complex64
	Complex128
	String
	numDTypes
)

var dtypeInfo = [numDTypes]struct {
	name string
	size int
}{
	Invalid:    {"invalid", 0},
	Bool:       {"bool", 1},
	Int8:       {"int8", 1},
	Uint8:      {"uint8", 1},
	Int16:      {"int16", 2},
	Uint16:     {"uint16", 2},
	Int32:      {"int32", 4},
	Uint32:     {"uint32", 4},
	Int64:      {"int64", 8},
	Uint64:     {"uint64", 8},
	Float16:    {"float16", 2},
	BFloat16:   {"bfloat16", 2},
	Float32:    {"float32", 4},
	Float64:    {"float64", 8},
	Complex64:  {"complex64", 8},
	Complex128: {"complex128", 16},
	// A string element is held as a Go string in Tensor.Strings; its size is
	// that of the handle the GPU moves (an index into Strings).
	String: {"string", 4},
}

// DTypes lists every valid element type, in declaration order.
func DTypes() []DType {
	out := make([]DType, 0, numDTypes-1)
	for d := Bool; d < numDTypes; d++ {
		out = append(out, d)
	}
	return out
}

// String returns the lower-case name of d ("float32"), or "dtype(N)" for an
// unknown value.
func (d DType) String() string {
	if d < numDTypes {
		return dtypeInfo[d].name
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Valid reports whether d is one of the element types above.
func (d DType) Valid() bool { return d > Invalid && d < numDTypes }

// Size returns the size of one element in bytes. For String it is the size
// of the 32-bit handle that stands for the element in device memory.
func (d DType) Size() int {
	if d < numDTypes {
		return dtypeInfo[d].size
	}
	return 0
}

// IsInteger reports whether d is a signed or unsigned integer type (not bool).
func (d DType) IsInteger() bool { return d >= Int8 && d <= Uint64 }

// IsSigned reports whether d is a signed integer type.
func (d DType) IsSigned() bool {
	return d == Int8 || d == Int16 || d == Int32 || d == Int64
}

// IsFloat reports whether d is a real floating-point type.
func (d DType) IsFloat() bool { return d >= Float16 && d <= Float64 }

// IsComplex reports whether d is complex64 or complex128.
func (d DType) IsComplex() bool { return d == Complex64 || d == Complex128 }

// IsNumeric reports whether arithmetic reductions apply to d: bool, the
// integers and the real floats. Complex numbers and strings only move.
func (d DType) IsNumeric() bool { return d >= Bool && d <= Float64 }

// ParseDType returns the DType named s, case-insensitively. It accepts the
// names String returns and the common aliases f16, bf16, f32, f64, i8..i64,
// u8..u64, half, float, double.
func ParseDType(s string) (DType, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	if alias, ok := dtypeAliases[name]; ok {
		return alias, nil
	}
	for d := Bool; d < numDTypes; d++ {
		if dtypeInfo[d].name == name {
			return d, nil
		}
	}
	return Invalid, fmt.Errorf("tensor: unknown dtype %q", s)
}

var dtypeAliases = map[string]DType{
	"f16": Float16, "half": Float16, "bf16": BFloat16, "f32": Float32, "float": Float32,
	"f64": Float64, "double": Float64, "i8": Int8, "i16": Int16, "i32": Int32, "i64": Int64,
	"u8": Uint8, "u16": Uint16, "u32": Uint32, "u64": Uint64, "c64": Complex64, "c128": Complex128,
	"str": String,
}
