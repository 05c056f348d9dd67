package shaders

import (
	"embed"
	"errors"
	"fmt"
	"sync"

	"github.com/gpuscatter/gpuscatter/tensor"
)

//go:generate go run ../internal/shadergen -dir .

//go:embed spv/*.spv
var spvFiles embed.FS

// Family is a kernel family: one GLSL source.
type Family uint8

// The kernel families.
const (
	// Resolve (src/resolve.comp) checks and normalises indices and claims
	// output slots for the last update.
	Resolve Family = iota + 1
	// Scatter (src/scatter.comp) applies updates to the output, one
	// invocation per update.
	Scatter
	// Gather (src/gather.comp) is the output-major form of Scatter for
	// Block plans with more updates than outputs: one invocation per
	// output element finds the update that lands there.
	Gather
	// Reduce (src/reduce.comp) runs the element-wise passes of the
	// reductions: prepare, finish (mean) and the in-order fold.
	Reduce
	// Sort (src/sort.comp) is the stable radix sort by slot of the update
	// elements (or of their positions), and the scan it needs, behind the
	// in-order fold.
	Sort
)

func (f Family) String() string {
	switch f {
	case Resolve:
		return "resolve"
	case Scatter:
		return "scatter"
	case Gather:
		return "gather"
	case Reduce:
		return "reduce"
	case Sort:
		return "sort"
	}
	return fmt.Sprintf("family(%d)", uint8(f))
}

// Kind says how updates map onto the output (KIND_* in the kernels). Its
// constants, Block, Element and Slice, are generated (abi_gen.go).
type Kind uint8

// Reduction is the reduction a Scatter or Reduce variant applies (RED_* in
// the kernels). Its constants (RedNone, RedSum, RedSub, RedProd, RedMin,
// RedMax, RedMean) are generated (abi_gen.go) with the numbers of
// ops.Reduction; ReductionOf converts.
type Reduction uint8

// Atomics says how a Scatter variant with a reduction updates the output.
type Atomics uint8

// The atomic paths.
const (
	// CAS: compare-and-swap loops for every step (32-bit words, and 64-bit
	// for 8-byte elements).
	CAS Atomics = iota + 1
	// Native: the device's atomic add, min and max where they compute the
	// step exactly, CAS loops elsewhere. Native float32 and float64 add
	// need the device's float atomics (vk.Capabilities).
	Native
	// IntMinMax: float32 min and max on 32-bit integer atomics, as Native
	// computes them, in variants that need no float atomics (for devices
	// without float32 atomic add, whose Native variant uses it).
	IntMinMax
)

func (a Atomics) String() string {
	switch a {
	case CAS:
		return "cas"
	case Native:
		return "native"
	case IntMinMax:
		return "int"
	}
	return fmt.Sprintf("atomics(%d)", uint8(a))
}

// Stage is a kernel of the Sort family (STAGE_* in the kernels). Its
// constants, RadixCount, RadixScatter, ScanUp and ScanDown, are generated
// (abi_gen.go).
type Stage uint8

// Key selects a variant. Fields that do not apply to the family stay zero:
// IndexBytes, IndexSigned and Private for Resolve; ElemBytes and Reduction for
// Scatter and Gather; DType, Atomics and Private for Scatter with a
// reduction; ElemBytes, Reduction, DType and Private for Reduce; Stage for
// Sort.
type Key struct {
	Family Family
	Kind   Kind
	// PosBits is 32 or 64, the width of element positions in the kernel.
	PosBits int
	// NoInt64 selects the 32-bit baseline, for devices without
	// shaderInt64: addresses, byte offsets and 64-bit words as pairs of
	// 32-bit words (src/common.glsl, INT64 0). PosBits 32 only.
	NoInt64 bool
	// IndexBytes (1, 2, 4, 8) and IndexSigned give the index dtype.
	IndexBytes  int
	IndexSigned bool
	// ElemBytes (1, 2, 4, 8, 16) is the size of a data element.
	ElemBytes int
	Reduction Reduction
	// DType is the element type reductions compute in.
	DType   tensor.DType
	Atomics Atomics
	// Private selects the workgroup-memory accumulation of Scatter
	// reductions (PrivateWords of workgroup memory), and for Resolve the
	// last-writer table in workgroup memory (FLAG_TABLE; 4*TABLE_WORDS
	// bytes of it, 32-bit positions only), and for Reduce the bucketed
	// fold, with its accumulators in workgroup memory (BUCKET in
	// src/reduce.comp; 32-bit positions only, every reduction but mean).
	Private bool
	Stage   Stage
}

// Variant is one compiled kernel.
type Variant struct {
	Key Key
	// Name is the file name without extension, e.g.
	// "scatter-block-e4-none-p32", followed for variants that share a file
	// by their specialization: "scatter-element-f32-native-p32:sum",
	// "...:sum:private".
	Name string
	// File is the path of the SPIR-V inside the embedded file system.
	File string
	// LocalSize is the workgroup size.
	LocalSize [3]uint32
	// PushConstantSize is the size of the push-constant block in bytes.
	PushConstantSize uint32
	// SharedBytes is the workgroup memory the kernel takes, with its
	// specialization constants (read back from the SPIR-V): a device
	// offers at least 16 KiB (maxComputeSharedMemorySize).
	SharedBytes uint32
	// SpecConstants are the values of specialization constants 0, 1, ...
	// the pipeline is created with (reductions: the reduction, then the
	// workgroup memory in words); several variants share one File.
	SpecConstants []uint32
}

// Specialize returns the specialization constants of a pipeline of v for
// a call with the given flags: v's own, then the flags at FlagsConstant.
func (v Variant) Specialize(flags uint32) []uint32 {
	spec := make([]uint32, FlagsConstant+1)
	copy(spec, v.SpecConstants)
	spec[FlagsConstant] = flags
	return spec
}

// WithPrivateWords returns v specialised to accumulate in words words of
// workgroup memory instead of the PrivateWords it was generated with, its
// SharedBytes changed to match: v must be a Scatter variant with Private
// set (the workgroup-memory scatter; scatter.comp sizes priv by
// SPEC_PRIV_WORDS and bounds every loop by it), and words at least
// PrivateWords (the hot-target census keeps its slots there) and at most
// MaxPrivateWords. Its Name ends in ":words=N" where words is not
// PrivateWords.
func (v Variant) WithPrivateWords(words uint32) (Variant, error) {
	if v.Key.Family != Scatter || !v.Key.Private || len(v.SpecConstants) <= PrivateWordsConstant ||
		v.SpecConstants[PrivateWordsConstant] != PrivateWords {
		return Variant{}, fmt.Errorf("shaders: %s takes no workgroup memory for its outputs", v.Name)
	}
	if words < PrivateWords || words > MaxPrivateWords {
		return Variant{}, fmt.Errorf("shaders: %d words of workgroup memory for %s: want %d to %d", words, v.Name, PrivateWords, MaxPrivateWords)
	}
	v.SpecConstants = append([]uint32(nil), v.SpecConstants...)
	v.SpecConstants[PrivateWordsConstant] = words
	v.SharedBytes += 4 * (words - PrivateWords)
	if words != PrivateWords {
		v.Name += fmt.Sprintf(":words=%d", words)
	}
	return v, nil
}

// privateOther is the workgroup memory the workgroup-memory scatter's
// kernels take besides their copy of the output: the most any Scatter
// variant with Private set takes beyond its PrivateWords words.
var privateOther = sync.OnceValue(func() uint64 {
	var most uint64
	for _, v := range variants {
		if v.Key.Family == Scatter && v.Key.Private {
			most = max(most, uint64(v.SharedBytes)-4*PrivateWords)
		}
	}
	return most
})

// PrivateCapacity returns the most words the workgroup-memory scatter's
// copy of the output may take (WithPrivateWords) on a device that offers
// shared bytes of workgroup memory (maxComputeSharedMemorySize): what its
// kernels' other variables leave, in whole KiB, at least PrivateWords
// (which fit the 16 KiB every device offers) and at most MaxPrivateWords.
// Shared 0 (nothing known) gives PrivateWords.
func PrivateCapacity(shared uint64) uint64 {
	if shared <= privateOther() {
		return PrivateWords
	}
	words := (shared - privateOther()) / 4 &^ 255
	return min(max(words, PrivateWords), MaxPrivateWords)
}

// ErrNoVariant is wrapped by Lookup's error for a key with no kernel.
var ErrNoVariant = errors.New("shaders: no such variant")

// byKey indexes variants.
var byKey = func() map[Key]int {
	m := make(map[Key]int, len(variants))
	for i, v := range variants {
		m[v.Key] = i
	}
	return m
}()

// Lookup returns the variant for k.
func Lookup(k Key) (Variant, error) {
	if i, ok := byKey[k]; ok {
		v := variants[i]
		v.SpecConstants = append([]uint32(nil), v.SpecConstants...)
		return v, nil
	}
	return Variant{}, fmt.Errorf("%w: %+v", ErrNoVariant, k)
}

// All returns every variant, sorted by name.
func All() []Variant { return append([]Variant(nil), variants[:]...) }

// SPIRV returns the variant's SPIR-V module (little-endian words).
func (v Variant) SPIRV() ([]byte, error) {
	return spvFiles.ReadFile(v.File)
}
