package ops

import (
	"sort"
	"strconv"
	"strings"

	"github.com/gpuscatter/gpuscatter/internal/suggest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Kind says how an operator maps update positions to output elements.
type Kind uint8

const (
	// KindAxis: ScatterUpdate. Whole slices of data along one axis are replaced:
	// data[..., indices[j...], ...] = updates[..., j..., ...].
	KindAxis Kind = iota + 1
	// KindND: ScatterNDUpdate and ScatterND. Each index tuple in the last
	// dimension of indices addresses an element or a slice of data.
	KindND
	// KindElements: ScatterElementsUpdate, Scatter and ScatterElements. Each
	// element of indices replaces the axis coordinate of its own position.
	KindElements
	// KindSlice: SliceScatter. updates fills a strided slice of data.
	KindSlice
	// KindCache: TensorScatter. Each prefix of the dimensions before the
	// axis writes its sequence_length rows of updates at consecutive
	// positions along the axis, from the write index of its batch entry
	// (the prefix's first coordinate); in circular mode the position wraps.
	KindCache
)

func (k Kind) String() string {
	switch k {
	case KindAxis:
		return "axis"
	case KindND:
		return "nd"
	case KindElements:
		return "elements"
	case KindSlice:
		return "slice"
	case KindCache:
		return "cache"
	}
	return "kind?"
}

// Reduction is how an update combines with the element it lands on.
type Reduction uint8

// The reductions. None overwrites; the others fold the update in.
const (
	None Reduction = iota
	Sum
	Sub
	Prod
	Min
	Max
	Mean
)

var reductionNames = [...]string{None: "none", Sum: "sum", Sub: "sub", Prod: "prod", Min: "min", Max: "max", Mean: "mean"}

func (r Reduction) String() string {
	if int(r) < len(reductionNames) {
		return reductionNames[r]
	}
	return "reduction?"
}

// Inputs the operators take besides data and updates.
const (
	inIndices = 1 << iota
	inAxis
	inSlice // start, stop, step, optional axes
	inUseInitVal
	inMode // TensorScatter's mode attribute
)

// Op describes one operator version: everything validation needs to know.
type Op struct {
	Name    string // "ScatterNDUpdate-15"
	Family  string // "ScatterNDUpdate"
	Version int
	Source  string // "OpenVINO" or "ONNX"
	Kind    Kind
	// Reductions maps each reduction name this version accepts ("add" in
	// ONNX, "sum" in OpenVINO) to the reduction it performs.
	Reductions map[string]Reduction
	// NegativeIndices: indices may count from the end, in [-s, s-1].
	NegativeIndices bool
	// AxisRequired: the axis is a required input (OpenVINO); otherwise it
	// is an attribute that defaults to 0 (ONNX).
	AxisRequired bool
	// AxisDefault is the axis an ONNX operator uses when the attribute is
	// absent: 0, or -2 for TensorScatter-24.
	AxisDefault int
	// IndicesOptional: indices may be absent (TensorScatter-24's
	// write_indices, zeros when absent).
	IndicesOptional bool
	// IndicesDType, when not tensor.Invalid, is the one dtype indices may
	// have (TensorScatter-24's write_indices: int64); otherwise any
	// integer type.
	IndicesDType tensor.DType
	// AnyDType: complex and string data are accepted (ONNX); otherwise only
	// bool, integers and real floats (OpenVINO's T_NUMERIC).
	AnyDType bool
	inputs   int
	// names maps "data", "indices" and "updates" to the operator's own
	// names for them, where they differ (TensorScatter-24).
	names map[string]string
}

// InputName returns the operator's own name for the Request input field
// ("data", "indices" or "updates"): TensorScatter-24 calls them
// past_cache, write_indices and update, and its errors name them so.
// Any other name is returned as it is.
func (o *Op) InputName(field string) string {
	if n, ok := o.names[field]; ok {
		return n
	}
	return field
}

// TensorScatter-24's modes, spelled as ONNX spells them.
const (
	ModeLinear   = "linear"
	ModeCircular = "circular"
)

// CheckMode checks a mode attribute that was given: Request.Mode when it
// is not "", or a mode from a command line or a model's node, where an
// empty string is a value and not the attribute's absence. Only
// TensorScatter-24 takes one (else ErrUnexpectedInput), and the mode must
// be ModeLinear or ModeCircular exactly, as ONNX attribute strings are
// case-sensitive (else ErrMode, listing both).
func (o *Op) CheckMode(mode string) error {
	if !o.TakesMode() {
		return newError(o.Name, "mode", ErrUnexpectedInput, "mode is not an attribute of %s", o.Name)
	}
	if mode == ModeLinear || mode == ModeCircular {
		return nil
	}
	modes := []string{ModeLinear, ModeCircular}
	hint := suggest.DidYouMean(mode, modes, "")
	if hint != "" {
		hint = " (" + hint + ")"
	}
	return newError(o.Name, "mode", ErrMode, "mode %q is not accepted by %s%s; it takes %s or %s, matched exactly (ONNX attribute strings are case-sensitive)",
		mode, o.Name, hint, ModeLinear, ModeCircular)
}

// TakesAxis reports whether the operator has an axis input or attribute.
func (o *Op) TakesAxis() bool { return o.inputs&inAxis != 0 }

// TakesIndices reports whether the operator has an indices input.
func (o *Op) TakesIndices() bool { return o.inputs&inIndices != 0 }

// TakesSlice reports whether the operator takes start, stop, step and axes.
func (o *Op) TakesSlice() bool { return o.inputs&inSlice != 0 }

// TakesMode reports whether the operator has the mode attribute (linear or
// circular).
func (o *Op) TakesMode() bool { return o.inputs&inMode != 0 }

// TakesUseInitVal reports whether the operator has the use_init_val attribute.
func (o *Op) TakesUseInitVal() bool { return o.inputs&inUseInitVal != 0 }

// ReductionNames returns the reduction names the operator accepts, sorted.
func (o *Op) ReductionNames() []string {
	names := make([]string, 0, len(o.Reductions))
	for n := range o.Reductions {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return o.Reductions[names[i]] < o.Reductions[names[j]] })
	return names
}

// SpecInput is one input or attribute of an operator as its spec names it
// ("past_cache"), with the Request field that carries it ("Data").
type SpecInput struct {
	Name, Field string
}

// SpecInputs returns the operator's inputs, in the spec's order, then its
// attributes, as the spec names them, each with its Request field: data,
// indices, updates and axis (OpenVINO's axis is an input, ONNX's an
// attribute), start, stop, step and axes for SliceScatter-15, reduction,
// use_init_val; and TensorScatter-24's past_cache, update and
// write_indices, which are data, updates and indices, with its axis and
// mode.
func (o *Op) SpecInputs() []SpecInput {
	if o.Kind == KindCache {
		return []SpecInput{{"past_cache", "Data"}, {"update", "Updates"}, {"write_indices", "Indices"}, {"axis", "Axis"}, {"mode", "Mode"}}
	}
	in := []SpecInput{{"data", "Data"}}
	if o.TakesIndices() {
		in = append(in, SpecInput{"indices", "Indices"})
	}
	in = append(in, SpecInput{"updates", "Updates"})
	if o.TakesAxis() {
		in = append(in, SpecInput{"axis", "Axis"})
	}
	if o.TakesSlice() {
		in = append(in, SpecInput{"start", "Start"}, SpecInput{"stop", "Stop"}, SpecInput{"step", "Step"}, SpecInput{"axes", "Axes"})
	}
	if len(o.Reductions) > 1 {
		in = append(in, SpecInput{"reduction", "Reduction"})
	}
	if o.TakesUseInitVal() {
		in = append(in, SpecInput{"use_init_val", "UseInitVal"})
	}
	return in
}

var (
	onlyNone   = map[string]Reduction{"none": None}
	ovND15     = map[string]Reduction{"none": None, "sum": Sum, "sub": Sub, "prod": Prod, "min": Min, "max": Max}
	ovElems12  = map[string]Reduction{"none": None, "sum": Sum, "prod": Prod, "min": Min, "max": Max, "mean": Mean}
	onnxRed16  = map[string]Reduction{"none": None, "add": Sum, "mul": Prod}
	onnxRed18  = map[string]Reduction{"none": None, "add": Sum, "mul": Prod, "max": Max, "min": Min}
	operatorDB = buildOps()
)

func buildOps() []*Op {
	ovAxis := inIndices | inAxis
	list := []*Op{
		{Name: "ScatterUpdate-3", Kind: KindAxis, Reductions: onlyNone, AxisRequired: true, inputs: ovAxis},
		{Name: "ScatterNDUpdate-3", Kind: KindND, Reductions: onlyNone, inputs: inIndices},
		{Name: "ScatterNDUpdate-15", Kind: KindND, Reductions: ovND15, NegativeIndices: true, inputs: inIndices},
		{Name: "ScatterElementsUpdate-3", Kind: KindElements, Reductions: onlyNone, AxisRequired: true, inputs: ovAxis},
		{Name: "ScatterElementsUpdate-12", Kind: KindElements, Reductions: ovElems12, NegativeIndices: true, AxisRequired: true, inputs: ovAxis | inUseInitVal},
		{Name: "SliceScatter-15", Kind: KindSlice, Reductions: onlyNone, inputs: inSlice},
		{Name: "Scatter-9", Kind: KindElements, Reductions: onlyNone, AnyDType: true, inputs: ovAxis},
		{Name: "Scatter-11", Kind: KindElements, Reductions: onlyNone, NegativeIndices: true, AnyDType: true, inputs: ovAxis},
	}
	for _, v := range []int{11, 13, 16, 18} {
		red := onlyNone
		switch v {
		case 16:
			red = onnxRed16
		case 18:
			red = onnxRed18
		}
		list = append(list,
			&Op{Name: "ScatterElements-" + strconv.Itoa(v), Kind: KindElements, Reductions: red, NegativeIndices: true, AnyDType: true, inputs: ovAxis},
			&Op{Name: "ScatterND-" + strconv.Itoa(v), Kind: KindND, Reductions: red, NegativeIndices: true, AnyDType: true, inputs: inIndices})
	}
	// TensorScatter-24: the key/value-cache update. write_indices are
	// start positions along the axis (checked against the linear range, or
	// taken modulo the axis in circular mode), not coordinates of data.
	list = append(list, &Op{Name: "TensorScatter-24", Kind: KindCache, Reductions: onlyNone, AxisDefault: -2,
		IndicesOptional: true, IndicesDType: tensor.Int64, AnyDType: true, inputs: inIndices | inAxis | inMode,
		names: map[string]string{"data": "past_cache", "indices": "write_indices", "updates": "update"}})
	for _, o := range list {
		dash := strings.LastIndexByte(o.Name, '-')
		o.Family = o.Name[:dash]
		o.Version, _ = strconv.Atoi(o.Name[dash+1:])
		o.Source = "OpenVINO"
		if o.AnyDType {
			o.Source = "ONNX"
		}
	}
	return list
}

// All returns every operator version gpuscatter accepts, in a fixed order.
func All() []*Op { return append([]*Op(nil), operatorDB...) }

// Lookup returns the operator version called name, matched
// case-insensitively ("scatterndupdate-15").
func Lookup(name string) (*Op, error) {
	for _, o := range operatorDB {
		if strings.EqualFold(o.Name, strings.TrimSpace(name)) {
			return o, nil
		}
	}
	names := make([]string, len(operatorDB))
	for i, o := range operatorDB {
		names[i] = o.Name
	}
	return nil, newError("", "op", ErrUnknownOp, "op %q is not an operator gpuscatter runs; choose one of %s", name, strings.Join(names, ", "))
}
