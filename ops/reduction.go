package ops

import (
	"fmt"
	"strings"

	"github.com/gpuscatter/gpuscatter/tensor"
)

// The rules of the reductions that every backend, test suite and tool
// needs, stated once here: which element types a reduction takes, whether
// its float fold depends on the order of the updates, the value an element
// starts from when use_init_val is false, and how each operator version
// spells it.

// Accepts reports whether r applies to data of element type dt. None
// applies to every valid dtype (whether the operator moves complex and
// string data is its own rule, Op.AnyDType); sum, sub, prod, min and max
// apply to bool, integers and real floats (tensor.DType.IsNumeric); mean
// to integers and real floats, not bool. An unknown reduction or an
// invalid dtype is never accepted. Prepare rejects a request whose
// reduction does not accept its data with ErrReduction.
func (r Reduction) Accepts(dt tensor.DType) bool {
	if !dt.Valid() {
		return false
	}
	switch r {
	case None:
		return true
	case Sum, Sub, Prod, Min, Max:
		return dt.IsNumeric()
	case Mean:
		return dt.IsNumeric() && dt != tensor.Bool
	}
	return false
}

// OrderSensitive reports whether the result of folding updates into an
// element of dtype dt with r depends on the order of the updates: float
// (float16, bfloat16, float32, float64) sum, sub, prod and mean, which
// round at every step. Integer, bool, min, max and none results do not
// depend on it (float min and max, where NaNs meet, give the greatest
// NaN bit pattern, specs/README.md), so a backend may fold those in any
// order and must match the CPU reference bit for bit, NaNs included; an order-sensitive fold matches it
// bit for bit only when it runs in index order.
func (r Reduction) OrderSensitive(dt tensor.DType) bool {
	switch r {
	case Sum, Sub, Prod, Mean:
		return dt.IsFloat()
	}
	return false
}

// NeutralBits returns the element an output element that receives updates
// starts from when use_init_val is false, as the little-endian bits of one
// element of dtype dt (the low dt.Size() bytes; the rest are zero except
// as noted): sum, sub and mean 0; prod 1; min +inf or the type's maximum;
// max -inf or the type's minimum; for bool, which folds with OR, XOR and
// AND, false for sum, sub and max and true (1) for prod and min. It is 0
// for none, which starts from no neutral value.
//
// It is a pure function of (r, dt), usable to generate constants. Signed
// integer values are not sign-extended (int8 min's neutral is 0x7f and
// max's 0x80), and 64-bit types use all the bits. Reductions other than
// none do not apply to complex or string data (Accepts); for those dtypes
// the value is that of the same formulas and no backend reads it.
func (r Reduction) NeutralBits(dt tensor.DType) uint64 {
	if r == Sum || r == Sub || r == Mean || r == None {
		return 0
	}
	if r == Prod {
		switch dt {
		case tensor.Float16:
			return 0x3c00
		case tensor.BFloat16:
			return 0x3f80
		case tensor.Float32:
			return 0x3f800000
		case tensor.Float64:
			return 0x3ff0000000000000
		}
		return 1 // integers and bool
	}
	isMin := r == Min
	bits := uint(8 * dt.Size())
	switch {
	case dt == tensor.Bool:
		if isMin {
			return 1
		}
		return 0
	case dt.IsSigned():
		if isMin {
			return 1<<(bits-1) - 1
		}
		return 1 << (bits - 1)
	case dt.IsInteger():
		if isMin {
			return 1<<bits - 1 // wraps to all ones for 64 bits
		}
		return 0
	}
	var inf uint64 // +inf; -inf has the sign bit too
	switch dt {
	case tensor.Float16:
		inf = 0x7c00
	case tensor.BFloat16:
		inf = 0x7f80
	case tensor.Float32:
		inf = 0x7f800000
	case tensor.Float64:
		inf = 0x7ff0000000000000
	}
	if isMin {
		return inf
	}
	return inf | 1<<(bits-1)
}

// ParseReduction returns the reduction the operator performs for name,
// matched exactly as the operator's spec spells it (ONNX add, mul, min,
// max, none; OpenVINO sum, sub, prod, min, max, mean, none): attribute
// strings are case-sensitive, as Op.CheckMode matches modes, so "Add" and
// " add" are not add. An empty name is "none" (the attribute is absent).
// ok is false when the operator does not take name; Prepare's error then
// names the spelling meant, where one is.
func (o *Op) ParseReduction(name string) (r Reduction, ok bool) {
	if name == "" {
		name = "none"
	}
	r, ok = o.Reductions[name]
	return r, ok
}

// ReductionName returns r as the operator spells it: "sum" for OpenVINO's
// operators, "add" for ONNX's, and so on. ok is false when the operator
// does not take r.
func (o *Op) ReductionName(r Reduction) (name string, ok bool) {
	for n, x := range o.Reductions {
		if x == r {
			return n, true
		}
	}
	return "", false
}

// ReductionName returns the plan's reduction as its operator spells it:
// "add" for the sum of an ONNX operator, "sum" for OpenVINO's. Whatever
// prints a plan's reduction prints this, the name the call was made with.
func (p *Plan) ReductionName() string {
	if name, ok := p.Op.ReductionName(p.Reduction); ok {
		return name
	}
	return p.Reduction.String()
}

// reductionHint says what a reduction name that op does not take may mean,
// where, in lower case and without surrounding spaces, it is a name some
// operator takes: that name, where op takes it ("did you mean add?" for
// "Add"), else the name op gives the same
// reduction ("did you mean add? ONNX spells sum add"), or else the
// operators that take it: the other versions of op ("ScatterElements-18
// takes max"), else the operators of its kind, else, where one or two
// operators alone take it, those ("ScatterElementsUpdate-12 takes mean").
// It is "" otherwise.
func reductionHint(op *Op, name string) string {
	// Names are matched exactly; one in another case or with spaces
	// around it is read as the name it spells, to say which that is.
	name = strings.ToLower(strings.TrimSpace(name))
	if _, ok := op.Reductions[name]; ok {
		return fmt.Sprintf("did you mean %s? reduction names are matched exactly, as %s's spec spells them", name, op.Source)
	}
	var r Reduction
	known := false
	for _, o := range All() {
		if x, ok := o.Reductions[name]; ok {
			r, known = x, true
			break
		}
	}
	if !known {
		return ""
	}
	if own, ok := op.ReductionName(r); ok {
		return fmt.Sprintf("did you mean %s? %s spells %s %s", own, op.Source, name, own)
	}
	// The operators that take r, each with its name for it.
	type taker struct{ op, as string }
	var family, kind, any []taker
	for _, o := range All() {
		as, ok := o.ReductionName(r)
		if !ok {
			continue
		}
		t := taker{o.Name, as}
		switch {
		case o.Family == op.Family:
			family = append(family, t)
		case o.Kind == op.Kind:
			kind = append(kind, t)
		}
		any = append(any, t)
	}
	takers := family
	if len(takers) == 0 {
		takers = kind
	}
	if len(takers) == 0 && len(any) <= 2 {
		takers = any
	}
	if len(takers) == 1 {
		if t := takers[0]; t.as != name {
			return fmt.Sprintf("%s takes it as %s", t.op, t.as)
		}
		return takers[0].op + " takes " + name
	}
	var names []string
	for _, t := range takers {
		if t.as != name {
			t.op += " (as " + t.as + ")"
		}
		names = append(names, t.op)
	}
	switch n := len(names); {
	case n == 0:
		return ""
	case n <= 3:
		return strings.Join(names[:n-1], ", ") + " and " + names[n-1] + " take " + name
	default:
		return fmt.Sprintf("%s, %s and %d more take %s", names[0], names[1], n-2, name)
	}
}
