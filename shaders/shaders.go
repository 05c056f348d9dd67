package shaders

import (
	"embed"
	"errors"
	"fmt"
)

//go:generate go run ./gen -dir .

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
)

func (f Family) String() string {
	switch f {
	case Resolve:
		return "resolve"
	case Scatter:
		return "scatter"
	case Gather:
		return "gather"
	}
	return fmt.Sprintf("family(%d)", uint8(f))
}

// Kind says how updates map onto the output (KIND_* in src/common.glsl).
type Kind uint8

// The kinds.
const (
	// Block: an index, or an index tuple, picks a block of contiguous
	// output elements (ScatterUpdate, ScatterNDUpdate, ScatterND).
	Block Kind = iota + 1
	// Element: every index picks one element along the axis
	// (ScatterElementsUpdate, Scatter, ScatterElements).
	Element
	// Slice: updates fill a strided slice (SliceScatter); no indices.
	Slice
)

func (k Kind) String() string {
	switch k {
	case Block:
		return "block"
	case Element:
		return "element"
	case Slice:
		return "slice"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Reduction is the reduction a scatter variant applies (RED_* in
// src/common.glsl). Only RedNone has kernels so far.
type Reduction uint8

// The reductions with kernels.
const (
	RedNone Reduction = iota
)

func (r Reduction) String() string {
	if r == RedNone {
		return "none"
	}
	return fmt.Sprintf("reduction(%d)", uint8(r))
}

// Key selects a variant. Fields that do not apply to the family stay zero:
// IndexBytes and IndexSigned for Resolve, ElemBytes and Reduction for
// Scatter and Gather.
type Key struct {
	Family Family
	Kind   Kind
	// PosBits is 32 or 64, the width of element positions in the kernel.
	PosBits int
	// IndexBytes (1, 2, 4, 8) and IndexSigned give the index dtype.
	IndexBytes  int
	IndexSigned bool
	// ElemBytes (1, 2, 4, 8, 16) is the size of a data element.
	ElemBytes int
	Reduction Reduction
}

// Variant is one compiled kernel.
type Variant struct {
	Key Key
	// Name is the file name without extension, e.g.
	// "scatter-block-e4-none-p32".
	Name string
	// File is the path of the SPIR-V inside the embedded file system.
	File string
	// LocalSize is the workgroup size.
	LocalSize [3]uint32
	// PushConstantSize is the size of the push-constant block in bytes.
	PushConstantSize uint32
}

// ErrNoVariant is wrapped by Lookup's error for a key with no kernel.
var ErrNoVariant = errors.New("shaders: no such variant")

// Lookup returns the variant for k.
func Lookup(k Key) (Variant, error) {
	for _, v := range variants {
		if v.Key == k {
			return v, nil
		}
	}
	return Variant{}, fmt.Errorf("%w: %+v", ErrNoVariant, k)
}

// All returns every variant, sorted by name.
func All() []Variant { return append([]Variant(nil), variants[:]...) }

// SPIRV returns the variant's SPIR-V module (little-endian words).
func (v Variant) SPIRV() ([]byte, error) {
	return spvFiles.ReadFile(v.File)
}
