package opstest

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Same reports whether got and want have the same dtype, shape and elements,
// bit for bit, except that for float and complex dtypes a NaN matches any
// NaN (where a fold may run out of index order, the contract fixes where
// NaNs appear, not their payloads: see DiffFor).
func Same(got, want *tensor.Tensor) bool { return Diff(got, want) == "" }

// DiffFor is the comparison of results of reduction r that the contract
// makes whatever the order in which a backend folds the updates:
// DiffExact for min and max, whose NaN (the greatest bit pattern among
// those an element meets) the contract fixes bit for bit in any order,
// and Diff for the others (float sum, sub, prod and mean on the GPU's
// atomics fold in the device's order and may give any NaN).
func DiffFor(r ops.Reduction, got, want *tensor.Tensor) string {
	if r == ops.Min || r == ops.Max {
		return DiffExact(got, want)
	}
	return Diff(got, want)
}

// ReductionOf returns the reduction req asks for as its operator parses
// it; ops.None where the operator or the name is unknown.
func ReductionOf(req ops.Request) ops.Reduction {
	op, err := ops.Lookup(req.Op)
	if err != nil {
		return ops.None
	}
	r, ok := op.ParseReduction(req.Reduction)
	if !ok {
		return ops.None
	}
	return r
}

// Diff returns "" when Same(got, want), else a readable account of the
// differences: dtype or shape, or up to ten differing elements with their
// coordinates and bits.
func Diff(got, want *tensor.Tensor) string {
	return diff(got, want, true)
}

// DiffExact is Diff without the NaN allowance: it returns "" exactly when
// tensor.Equal(got, want).
func DiffExact(got, want *tensor.Tensor) string {
	return diff(got, want, false)
}

func diff(got, want *tensor.Tensor, nanEqual bool) string {
	switch {
	case got == nil || want == nil:
		if got == want {
			return ""
		}
		return fmt.Sprintf("got %v, want %v", got, want)
	case got.DType != want.DType || !tensor.SameShape(got.Shape, want.Shape):
		return fmt.Sprintf("got %v%s, want %v%s", got.DType, tensor.FormatShape(got.Shape), want.DType, tensor.FormatShape(want.Shape))
	}
	if err := got.Check(); err != nil {
		return "got a malformed tensor: " + err.Error()
	}
	var b strings.Builder
	bad := 0
	for i := 0; i < want.Len(); i++ {
		if elemEqual(got, want, i, nanEqual) {
			continue
		}
		bad++
		if bad <= 10 {
			fmt.Fprintf(&b, "\n  at %s: got %s, want %s", tensor.FormatShape(unravel(i, want.Shape)), formatElem(got, i), formatElem(want, i))
		}
	}
	if bad == 0 {
		return ""
	}
	if bad > 10 {
		fmt.Fprintf(&b, "\n  ... %d more", bad-10)
	}
	return fmt.Sprintf("%d of %d elements differ:%s", bad, want.Len(), b.String())
}

func elemEqual(a, b *tensor.Tensor, i int, nanEqual bool) bool {
	if a.DType == tensor.String {
		return a.Strings[i] == b.Strings[i]
	}
	if nanEqual && isNaNAt(a, i) && isNaNAt(b, i) {
		if !a.DType.IsComplex() {
			return true
		}
	}
	sz := a.DType.Size()
	if string(a.Data[i*sz:(i+1)*sz]) == string(b.Data[i*sz:(i+1)*sz]) {
		return true
	}
	if nanEqual && a.DType.IsComplex() {
		// Each part on its own: equal bits, or both NaN.
		half := sz / 2
		for p := 0; p < 2; p++ {
			x, y := a.Data[i*sz+p*half:i*sz+(p+1)*half], b.Data[i*sz+p*half:i*sz+(p+1)*half]
			if string(x) == string(y) {
				continue
			}
			if !partNaN(x) || !partNaN(y) {
				return false
			}
		}
		return true
	}
	return false
}

func partNaN(b []byte) bool {
	if len(b) == 4 {
		return math.IsNaN(float64(math.Float32frombits(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)))
	}
	var u uint64
	for i := 7; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	return math.IsNaN(math.Float64frombits(u))
}

// formatElem formats element i with its bits for floats, so that -0 and +0
// or two NaNs can be told apart.
func formatElem(t *tensor.Tensor, i int) string {
	s := t.FormatAt(i)
	if t.DType.IsFloat() || t.DType.IsComplex() {
		sz := t.DType.Size()
		var bits strings.Builder
		for j := sz - 1; j >= 0; j-- {
			fmt.Fprintf(&bits, "%02x", t.Data[i*sz+j])
		}
		s += " (0x" + bits.String() + ")"
	}
	return s
}

// FormatTensor renders every element of t, for reproducing a failure; a
// tensor of more than 512 elements is elided (tensor.String), since its
// seed reproduces it anyway.
func FormatTensor(t *tensor.Tensor) string {
	if t == nil {
		return "nil"
	}
	if err := t.Check(); err != nil {
		return "malformed: " + err.Error()
	}
	if t.Len() > 512 {
		return t.String()
	}
	parts := make([]string, t.Len())
	for i := range parts {
		parts[i] = t.FormatAt(i)
	}
	return fmt.Sprintf("%v%s [%s]", t.DType, tensor.FormatShape(t.Shape), strings.Join(parts, " "))
}

// Describe renders req in full: operator, attributes and every element of
// every input.
func Describe(req ops.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "op=%q reduction=%q", req.Op, req.Reduction)
	if req.UseInitVal != nil {
		fmt.Fprintf(&b, " use_init_val=%v", *req.UseInitVal)
	}
	for _, in := range inputsOf(req) {
		fmt.Fprintf(&b, "\n  %s: %s", in.name, FormatTensor(in.t))
	}
	return b.String()
}

type namedTensor struct {
	name string
	t    *tensor.Tensor
}

// inputsOf lists the non-nil inputs of req.
func inputsOf(req ops.Request) []namedTensor {
	all := []namedTensor{{"data", req.Data}, {"indices", req.Indices}, {"updates", req.Updates}, {"axis", req.Axis},
		{"start", req.Start}, {"stop", req.Stop}, {"step", req.Step}, {"axes", req.Axes}}
	var out []namedTensor
	for _, x := range all {
		if x.t != nil {
			out = append(out, x)
		}
	}
	return out
}

// cloneRequest deep-copies every input of req.
func cloneRequest(req ops.Request) ops.Request {
	c := req
	for _, p := range []**tensor.Tensor{&c.Data, &c.Indices, &c.Updates, &c.Axis, &c.Start, &c.Stop, &c.Step, &c.Axes} {
		if *p != nil {
			*p = (*p).Clone()
		}
	}
	if req.UseInitVal != nil {
		v := *req.UseInitVal
		c.UseInitVal = &v
	}
	return c
}
