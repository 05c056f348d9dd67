package ops

import (
	"math"
	"strconv"
	"strings"

	"github.com/gpuscatter/gpuscatter/internal/suggest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Request is one operator call: the operator's name, its inputs and its
// attributes. Inputs an operator does not take must be nil.
type Request struct {
	// Op is the operator and version, e.g. "ScatterNDUpdate-15"; see All.
	Op string
	// Data, Indices and Updates are the operator's data, indices and
	// updates; TensorScatter-24 calls them past_cache, write_indices and
	// update (Op.InputName), and its errors name them so. Indices are
	// required by every operator but SliceScatter-15, which takes none,
	// and TensorScatter-24, whose write_indices are optional (nil means
	// zeros) and must be int64 (Op.IndicesDType); any integer type
	// otherwise.
	Data    *tensor.Tensor
	Indices *tensor.Tensor
	Updates *tensor.Tensor
	// Axis is the axis input of ScatterUpdate-3 and ScatterElementsUpdate
	// (required), or the axis attribute of the ONNX operators: nil means
	// the operator's default (Op.AxisDefault), 0, or -2 for
	// TensorScatter-24. An integer scalar or 1-element 1-D tensor;
	// tensor.Scalar builds one.
	Axis *tensor.Tensor
	// Start, Stop, Step and the optional Axes are SliceScatter-15's 1-D
	// integer inputs.
	Start, Stop, Step, Axes *tensor.Tensor
	// Reduction names the reduction; "" means "none". Which names are valid
	// depends on the operator version (Op.Reductions), each matched
	// exactly as the operator's spec spells it (Op.ParseReduction): "Add"
	// is not add.
	Reduction string
	// UseInitVal is ScatterElementsUpdate-12's use_init_val; nil means true.
	UseInitVal *bool
	// Mode is TensorScatter-24's mode attribute, ModeLinear or
	// ModeCircular, spelled exactly (ONNX attribute strings are
	// case-sensitive); "" means the attribute is absent: linear.
	Mode string
	// SkipBadIndices is an opt-in for callers whose indices come from their
	// own code and are expected to be in range. By default an index out of
	// range fails the call before anything is written (out keeps what it
	// held, or a copy of data). With SkipBadIndices a bad index is skipped
	// instead: the updates it addresses (an element's, an index's slice, an
	// index tuple's slice, or a TensorScatter batch entry's rows in linear
	// mode) are left out, every other update is applied exactly as if they
	// were absent (later writers, reductions, mean's counts, use_init_val),
	// and the call still returns the error the first bad index gives
	// (Plan.IndexAt, wrapping ErrIndexRange) once out holds that result. No
	// backend writes outside out either way. It lets a device backend run an
	// in-place call without a pass that checks the indices first.
	SkipBadIndices bool
}

// Plan is a validated operator call in the normalised form every backend
// executes. Prepare builds it; a Plan never needs to be re-validated except
// for the index values, which IndexAt checks one by one (backends may check
// them in bulk, but must report the error IndexAt gives).
//
// Every update is one element of Updates. Its flat row-major position u
// decomposes as u = (o*J + j)*Inner + k with o < Outer, j < J, k < Inner.
// Two updates can land on the same output element only when they differ in
// j alone, and they are applied in increasing j (the contract's order).
type Plan struct {
	Op         *Op
	Kind       Kind
	Reduction  Reduction
	UseInitVal bool
	DType      tensor.DType // of data, updates and the output

	Data, Indices, Updates *tensor.Tensor

	Shape   []int // of data and the output
	Strides []int // row-major strides of Shape, in elements

	Outer, J, Inner int

	// Axis is the normalised axis of KindAxis and KindElements.
	Axis int
	// TupleLen is indices.shape[-1] for KindND: the number of leading data
	// dimensions one index tuple addresses. The tuple j sits at flat
	// positions j*TupleLen ... j*TupleLen+TupleLen-1 of Indices, and
	// component c indexes data dimension c.
	TupleLen int
	// IndicesShape is the shape of Indices (KindElements: also of Updates).
	IndicesShape []int
	// Circular is TensorScatter-24's mode circular: a write position wraps
	// modulo the axis (max_sequence_length). KindCache plans have Axis >= 1,
	// J = sequence_length (updates' length along the axis), Outer the
	// product of the dimensions before the axis and Inner of those after
	// it; update (o, j, k) lands on element (o*Shape[Axis] + position)*Inner
	// + k, the position being CacheStart(o / CacheRowsPerBatch()) + j,
	// modulo Shape[Axis] when Circular.
	Circular bool
	// SkipBadIndices is the request's opt-in: a bad index skips its updates
	// and the call reports it after applying the rest (Request).
	SkipBadIndices bool
	// SliceStart, SliceStep and SliceCount give, for every data dimension of
	// KindSlice, the first coordinate written, the step between coordinates
	// and how many there are; updates element c lands at coordinate
	// SliceStart[d] + c[d]*SliceStep[d] in each dimension d.
	SliceStart, SliceStep, SliceCount []int
}

// OnePassBytes is the least traffic any implementation of the call moves
// in memory, the one definition that gpuscatter plan, the bench and the
// plan figures use: the indices and the updates read once, and each
// output element the call may change (at most one per update, at most
// the whole output) read and written once. It leaves out the output's
// starting copy of data, which a call in place does not make.
func (p *Plan) OnePassBytes() uint64 {
	elem := uint64(p.DType.Size())
	upd := uint64(p.NumUpdates())
	out, _ := tensor.NumElements(p.Shape) // a plan's shape is valid
	changed := min(upd, uint64(out))
	var idx uint64
	if p.Indices != nil {
		idx = uint64(p.Indices.Len()) * uint64(p.Indices.DType.Size())
	}
	return idx + upd*elem + 2*changed*elem
}

// NumUpdates returns the number of update elements, Outer*J*Inner.
func (p *Plan) NumUpdates() int { return p.Outer * p.J * p.Inner }

// NumIndices returns the number of elements of Indices (0 for KindSlice).
func (p *Plan) NumIndices() int {
	if p.Indices == nil {
		return 0
	}
	return p.Indices.Len()
}

// IndexDim returns the data dimension that the index at flat position pos
// of Indices addresses.
func (p *Plan) IndexDim(pos int) int {
	if p.Kind == KindND {
		return pos % p.TupleLen
	}
	return p.Axis
}

// IndexRange returns the inclusive range [lo, hi] that an index into data
// dimension dim may take in this operator version.
func (p *Plan) IndexRange(dim int) (lo, hi int64) {
	s := int64(p.Shape[dim])
	if p.Kind == KindCache {
		if p.Circular {
			return math.MinInt64, math.MaxInt64
		}
		// TensorScatter-24, linear: 0 <= w and w + sequence_length <= s.
		return 0, s - int64(p.J)
	}
	if p.Op.NegativeIndices {
		return -s, s - 1
	}
	return 0, s - 1
}

// IndexAt reads the index at flat position pos of Indices, checks it against
// the range its version allows and returns it normalised to [0, s-1]. The
// error wraps ErrIndexRange and names the position and the value:
//
//	indices[1,0] = 7 is out of range [-5, 4] for axis 2 of data
func (p *Plan) IndexAt(pos int) (int, error) {
	v, exact := p.Indices.IntAt(pos)
	dim := p.IndexDim(pos)
	lo, hi := p.IndexRange(dim)
	if p.Kind == KindCache && p.Circular {
		// TensorScatter-24, circular: only the sequence position wraps,
		// to a non-negative result for any int64 index.
		s := int64(p.Shape[dim])
		if s == 0 {
			return 0, nil
		}
		return int(((v % s) + s) % s), nil
	}
	if exact && v >= lo && v <= hi {
		if v < 0 {
			v += int64(p.Shape[dim])
		}
		return int(v), nil
	}
	return 0, p.indexError(pos, dim, lo, hi)
}

func (p *Plan) indexError(pos, dim int, lo, hi int64) error {
	name := "indices" // a rank-0 indices tensor has no position to print
	if len(p.IndicesShape) > 0 {
		coord := make([]int, len(p.IndicesShape))
		tensor.Unravel(pos, p.IndicesShape, coord)
		parts := make([]string, len(coord))
		for i, c := range coord {
			parts[i] = strconv.Itoa(c)
		}
		name = "indices[" + strings.Join(parts, ",") + "]"
	}
	val := p.Indices.FormatAt(pos)
	if p.Kind == KindCache {
		name = p.Op.InputName("indices") + "[" + strconv.Itoa(pos) + "]"
		return newError(p.Op.Name, "indices", ErrIndexRange,
			"%s = %s is out of range [0, %d]: in linear mode %s + sequence_length %d must be at most max_sequence_length %d (axis %d of %s)",
			name, val, hi, name, p.J, p.Shape[dim], dim, p.Op.InputName("data"))
	}
	if hi < lo {
		return newError(p.Op.Name, "indices", ErrIndexRange,
			"%s = %s is out of range: axis %d of data has size 0", name, val, dim)
	}
	return newError(p.Op.Name, "indices", ErrIndexRange,
		"%s = %s is out of range [%d, %d] for axis %d of data", name, val, lo, hi, dim)
}

// Prepare validates req against its operator's rules and returns the plan
// that every backend executes. It reads the small parameter tensors (axis,
// start, stop, step, axes) but not the indices: index values are checked as
// they are used (Plan.IndexAt). Errors are *Error values wrapping one of the
// package's sentinels.
func Prepare(req Request) (*Plan, error) {
	return prepare(req, false)
}

// PrepareShapes validates req like Prepare for tensors whose payloads live
// elsewhere (on a device): of Data, Indices and Updates it reads only the
// dtype and shape, and their payloads may be empty. The parameter tensors
// (axis, start, stop, step, axes) are read as Prepare reads them. The plan
// describes the call like Prepare's, but its Data, Indices and Updates
// carry no values: Plan.IndexAt must not be called on it, and it cannot be
// executed by a backend that reads host memory.
func PrepareShapes(req Request) (*Plan, error) {
	return prepare(req, true)
}

func prepare(req Request, shapesOnly bool) (*Plan, error) {
	op, err := Lookup(req.Op)
	if err != nil {
		return nil, err
	}
	v := validator{op: op, shapesOnly: shapesOnly}
	if err := v.inputs(req); err != nil {
		return nil, err
	}
	p := &Plan{Op: op, Kind: op.Kind, DType: req.Data.DType, Data: req.Data, Indices: req.Indices, Updates: req.Updates,
		Shape: append([]int(nil), req.Data.Shape...), Strides: tensor.Strides(req.Data.Shape), UseInitVal: true,
		SkipBadIndices: req.SkipBadIndices}
	if req.UseInitVal != nil {
		p.UseInitVal = *req.UseInitVal
	}
	if p.Reduction, err = v.reduction(req.Reduction, p.DType); err != nil {
		return nil, err
	}
	if req.Indices != nil {
		p.IndicesShape = append([]int(nil), req.Indices.Shape...)
	}
	switch op.Kind {
	case KindAxis:
		err = v.planAxis(p, req)
	case KindND:
		err = v.planND(p)
	case KindElements:
		err = v.planElements(p, req)
	case KindSlice:
		err = v.planSlice(p, req)
	case KindCache:
		err = v.planCache(p, req)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// MaxRank is the largest rank of any input, for every operator and backend
// (NumPy's limit too). Kernels walk a tensor's dimensions (an index
// tuple's components, the coordinates of a position) in loops that this
// bounds.
const MaxRank = 64

type validator struct {
	op *Op
	// shapesOnly: data, indices and updates are descriptions without
	// payloads (PrepareShapes).
	shapesOnly bool
}

func (v validator) errorf(input string, sentinel error, format string, args ...any) error {
	return newError(v.op.Name, input, sentinel, format, args...)
}

// inputs checks presence, well-formedness and element types of every input.
func (v validator) inputs(req Request) error {
	type in struct {
		name  string
		t     *tensor.Tensor
		takes bool
		need  bool
	}
	list := []in{
		{"data", req.Data, true, true},
		{"indices", req.Indices, v.op.TakesIndices(), v.op.TakesIndices() && !v.op.IndicesOptional},
		{"updates", req.Updates, true, true},
		{"axis", req.Axis, v.op.TakesAxis(), v.op.AxisRequired},
		{"start", req.Start, v.op.TakesSlice(), v.op.TakesSlice()},
		{"stop", req.Stop, v.op.TakesSlice(), v.op.TakesSlice()},
		{"step", req.Step, v.op.TakesSlice(), v.op.TakesSlice()},
		{"axes", req.Axes, v.op.TakesSlice(), false},
	}
	for _, x := range list {
		name := v.op.InputName(x.name) // TensorScatter-24: past_cache, write_indices, update
		switch {
		case x.t == nil && x.need:
			return v.errorf(x.name, ErrMissingInput, "%s is required", name)
		case x.t == nil:
			continue
		case !x.takes:
			return v.errorf(x.name, ErrUnexpectedInput, "%s is not an input of %s", name, v.op.Name)
		}
		check := x.t.Check
		if v.shapesOnly && (x.name == "data" || x.name == "indices" || x.name == "updates") {
			check = x.t.CheckShape
		}
		if err := check(); err != nil {
			return &Error{Op: v.op.Name, Input: x.name, Err: ErrInvalidTensor, Msg: name + ": " + strings.TrimPrefix(err.Error(), tensor.ErrInvalid.Error()+": ")}
		}
		if r := x.t.Rank(); r > MaxRank {
			return v.errorf(x.name, ErrShape, "%s has rank %d; at most %d dimensions are supported", name, r, MaxRank)
		}
		if x.name == "indices" && v.op.IndicesDType != tensor.Invalid && x.t.DType != v.op.IndicesDType {
			return v.errorf(x.name, ErrDType, "%s has dtype %v; it must be %v", name, x.t.DType, v.op.IndicesDType)
		}
		if x.name != "data" && x.name != "updates" && !x.t.DType.IsInteger() {
			return v.errorf(x.name, ErrDType, "%s has dtype %v; it must be an integer type (int8 ... uint64)", name, x.t.DType)
		}
	}
	if req.UseInitVal != nil && !v.op.TakesUseInitVal() {
		return v.errorf("use_init_val", ErrUnexpectedInput, "use_init_val is not an attribute of %s", v.op.Name)
	}
	if req.Mode != "" {
		if err := v.op.CheckMode(req.Mode); err != nil {
			return err
		}
	}
	dt := req.Data.DType
	data, updates := v.op.InputName("data"), v.op.InputName("updates")
	if !v.op.AnyDType && !dt.IsNumeric() {
		return v.errorf("data", ErrDType, "data has dtype %v; %s takes bool, integer and real floating-point types", dt, v.op.Name)
	}
	if req.Updates.DType != dt {
		return v.errorf("updates", ErrDType, "%s has dtype %v but %s has %v; they must match", updates, req.Updates.DType, data, dt)
	}
	if req.Data.Rank() < 1 && v.op.Kind != KindCache { // planCache asks for rank >= 2
		return v.errorf("data", ErrShape, "data has rank 0; %s needs rank >= 1", v.op.Name)
	}
	return nil
}

func (v validator) reduction(name string, dt tensor.DType) (Reduction, error) {
	r, ok := v.op.ParseReduction(name)
	if !ok {
		names := v.op.ReductionNames()
		hint := reductionHint(v.op, name)
		if hint == "" {
			hint = suggest.DidYouMean(strings.TrimSpace(name), names, "")
		}
		if hint != "" {
			hint = " (" + hint + ")"
		}
		return 0, v.errorf("reduction", ErrReduction, "reduction %q is not accepted by %s%s; it takes %s",
			name, v.op.Name, hint, strings.Join(names, ", "))
	}
	if !r.Accepts(dt) {
		key, _ := v.op.ReductionName(r)
		if !dt.IsNumeric() {
			return 0, v.errorf("reduction", ErrReduction, "reduction %q does not apply to %v data; only none does", key, dt)
		}
		return 0, v.errorf("reduction", ErrReduction, "reduction %q does not apply to %v data", key, dt)
	}
	return r, nil
}

// scalarParam reads an integer input that must be a scalar or a 1-element
// 1-D tensor.
func (v validator) scalarParam(name string, t *tensor.Tensor) (int64, bool, error) {
	if t.Rank() > 1 || t.Len() != 1 {
		return 0, false, v.errorf(name, ErrShape, "%s has shape %s; it must be a scalar or a 1-element 1-D tensor", name, tensor.FormatShape(t.Shape))
	}
	val, exact := t.IntAt(0)
	return val, exact, nil
}

// axis normalises the axis input against rank r; nil means 0.
func (v validator) axis(t *tensor.Tensor, r int) (int, error) {
	if t == nil {
		return 0, nil
	}
	a, exact, err := v.scalarParam("axis", t)
	if err != nil {
		return 0, err
	}
	if !exact || a < int64(-r) || a >= int64(r) {
		return 0, v.errorf("axis", ErrAxis, "axis = %s is out of range [%d, %d] for %s of rank %d", t.FormatAt(0), -r, r-1, v.op.InputName("data"), r)
	}
	if a < 0 {
		a += int64(r)
	}
	return int(a), nil
}

func prod(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

func concat(parts ...[]int) []int {
	var out []int
	for _, p := range parts {
		out = append(out, p...)
	}
	if out == nil {
		out = []int{}
	}
	return out
}

// planAxis: ScatterUpdate-3. updates.shape must be
// data.shape[:axis] + indices.shape + data.shape[axis+1:].
func (v validator) planAxis(p *Plan, req Request) error {
	axis, err := v.axis(req.Axis, len(p.Shape))
	if err != nil {
		return err
	}
	p.Axis = axis
	want := concat(p.Shape[:axis], p.IndicesShape, p.Shape[axis+1:])
	if !tensor.SameShape(req.Updates.Shape, want) {
		return v.errorf("updates", ErrShape, "updates has shape %s, want %s (data.shape[:%d] + indices.shape + data.shape[%d:])",
			tensor.FormatShape(req.Updates.Shape), tensor.FormatShape(want), axis, axis+1)
	}
	p.Outer, p.J, p.Inner = prod(p.Shape[:axis]), req.Indices.Len(), prod(p.Shape[axis+1:])
	return nil
}

// planND: ScatterNDUpdate-3/15 and ScatterND. indices has rank q >= 1 and
// k = indices.shape[-1] <= rank(data); updates.shape must be
// indices.shape[:-1] + data.shape[k:] (a single-element tensor where that is
// rank 0).
func (v validator) planND(p *Plan) error {
	is, r := p.IndicesShape, len(p.Shape)
	if len(is) < 1 {
		return v.errorf("indices", ErrShape, "indices has rank 0; %s needs rank >= 1", v.op.Name)
	}
	k := is[len(is)-1]
	if k > r {
		return v.errorf("indices", ErrShape, "indices has shape %s: its last dimension %d is larger than the rank of data (%d)",
			tensor.FormatShape(is), k, r)
	}
	want := concat(is[:len(is)-1], p.Shape[k:])
	got := p.Updates.Shape
	scalarOK := len(want) == 0 && len(got) == 1 && got[0] == 1
	if !tensor.SameShape(got, want) && !scalarOK {
		return v.errorf("updates", ErrShape, "updates has shape %s, want %s (indices.shape[:-1] + data.shape[%d:])",
			tensor.FormatShape(got), tensor.FormatShape(want), k)
	}
	p.TupleLen = k
	p.Outer, p.J, p.Inner = 1, prod(is[:len(is)-1]), prod(p.Shape[k:])
	return nil
}

// planElements: ScatterElementsUpdate, Scatter, ScatterElements. indices has
// the rank of data and updates the shape of indices; outside the axis no
// indices dimension may exceed data's.
func (v validator) planElements(p *Plan, req Request) error {
	r := len(p.Shape)
	axis, err := v.axis(req.Axis, r)
	if err != nil {
		return err
	}
	p.Axis = axis
	is := p.IndicesShape
	if len(is) != r {
		return v.errorf("indices", ErrShape, "indices has rank %d but data has rank %d; they must match", len(is), r)
	}
	if !tensor.SameShape(req.Updates.Shape, is) {
		return v.errorf("updates", ErrShape, "updates has shape %s but indices has shape %s; they must match",
			tensor.FormatShape(req.Updates.Shape), tensor.FormatShape(is))
	}
	for d := range is {
		if d != axis && is[d] > p.Shape[d] {
			return v.errorf("indices", ErrShape, "indices has shape %s: dimension %d (%d) is larger than data's (%d, shape %s)",
				tensor.FormatShape(is), d, is[d], p.Shape[d], tensor.FormatShape(p.Shape))
		}
	}
	p.Outer, p.J, p.Inner = prod(is[:axis]), is[axis], prod(is[axis+1:])
	return nil
}

// planSlice: SliceScatter-15. start, stop and step (and axes, when given)
// are 1-D with equal lengths no larger than rank(data); they select a
// Python-style slice per axis, and updates must have the slice's shape.
func (v validator) planSlice(p *Plan, req Request) error {
	r := len(p.Shape)
	params := []struct {
		name string
		t    *tensor.Tensor
	}{{"start", req.Start}, {"stop", req.Stop}, {"step", req.Step}, {"axes", req.Axes}}
	n := -1
	for _, x := range params {
		if x.t == nil {
			continue
		}
		if x.t.Rank() != 1 {
			return v.errorf(x.name, ErrShape, "%s has shape %s; it must be 1-D", x.name, tensor.FormatShape(x.t.Shape))
		}
		if n < 0 {
			n = x.t.Len()
		} else if x.t.Len() != n {
			return v.errorf(x.name, ErrShape, "%s has %d elements but start has %d; start, stop, step and axes must have equal lengths", x.name, x.t.Len(), n)
		}
	}
	if n > r {
		return v.errorf("start", ErrShape, "start has %d elements but data has rank %d", n, r)
	}
	p.SliceStart, p.SliceStep, p.SliceCount = make([]int, r), make([]int, r), append([]int(nil), p.Shape...)
	for d := range p.SliceStep {
		p.SliceStep[d] = 1
	}
	seen := make([]bool, r)
	for i := 0; i < n; i++ {
		axis := i
		if req.Axes != nil {
			a, exact := req.Axes.IntAt(i)
			if !exact || a < int64(-r) || a >= int64(r) {
				return v.errorf("axes", ErrAxis, "axes[%d] = %s is out of range [%d, %d] for data of rank %d", i, req.Axes.FormatAt(i), -r, r-1, r)
			}
			if a < 0 {
				a += int64(r)
			}
			axis = int(a)
		}
		if seen[axis] {
			return v.errorf("axes", ErrAxis, "axes[%d] names axis %d again; axes must be unique", i, axis)
		}
		seen[axis] = true
		start, _ := req.Start.IntAt(i) // uint64 above MaxInt64 saturates: "to the end"
		stop, _ := req.Stop.IntAt(i)
		step, _ := req.Step.IntAt(i)
		if step == 0 {
			return v.errorf("step", ErrSlice, "step[%d] is 0; a step must be non-zero", i)
		}
		first, count := SliceRange(start, stop, step, p.Shape[axis])
		p.SliceStart[axis], p.SliceCount[axis] = first, count
		if count > 1 { // then |step| < n; with one coordinate the step never applies
			p.SliceStep[axis] = int(step)
		}
	}
	if !tensor.SameShape(req.Updates.Shape, p.SliceCount) {
		return v.errorf("updates", ErrShape, "updates has shape %s, want the slice's shape %s",
			tensor.FormatShape(req.Updates.Shape), tensor.FormatShape(p.SliceCount))
	}
	p.Outer, p.J, p.Inner = req.Updates.Len(), 1, 1
	return nil
}

// planCache: TensorScatter-24 (ONNX opset 24). past_cache (data) has rank
// >= 2, since the axis may not be the batch dimension 0; update has its rank
// and its dimensions except along the axis (default -2), where update's
// length (sequence_length) is at most past_cache's (max_sequence_length);
// write_indices, when given, is int64 of shape [batch] (past_cache.shape[0];
// its dtype is checked with the other inputs'). The mode was checked with
// the inputs (Op.CheckMode).
func (v validator) planCache(p *Plan, req Request) error {
	r := len(p.Shape)
	p.Circular = req.Mode == ModeCircular
	if r < 2 {
		return v.errorf("data", ErrShape, "past_cache has rank %d; %s needs rank >= 2: the batch dimension 0, then the sequence axis (never 0)",
			r, v.op.Name)
	}
	axisT := req.Axis
	if axisT == nil {
		axisT = tensor.Scalar(int64(v.op.AxisDefault))
	}
	axis, err := v.axis(axisT, r)
	if err != nil {
		return err
	}
	if axis == 0 {
		return v.errorf("axis", ErrAxis, "axis = %s is the batch dimension 0; %s needs an axis in [1, %d] or [%d, -1]",
			axisT.FormatAt(0), v.op.Name, r-1, 1-r)
	}
	p.Axis = axis
	us := req.Updates.Shape
	if len(us) != r {
		return v.errorf("updates", ErrShape, "update has rank %d but past_cache has rank %d; they must match", len(us), r)
	}
	for d := range us {
		if d == axis {
			if us[d] > p.Shape[d] {
				return v.errorf("updates", ErrShape, "update has shape %s: its sequence_length %d (axis %d) is larger than past_cache's max_sequence_length %d",
					tensor.FormatShape(us), us[d], d, p.Shape[d])
			}
			continue
		}
		if us[d] != p.Shape[d] {
			return v.errorf("updates", ErrShape, "update has shape %s but past_cache has shape %s: dimension %d differs (only axis %d may)",
				tensor.FormatShape(us), tensor.FormatShape(p.Shape), d, axis)
		}
	}
	if req.Indices != nil {
		is := req.Indices.Shape
		if len(is) != 1 || is[0] != p.Shape[0] {
			return v.errorf("indices", ErrShape, "write_indices has shape %s; it must be [batch] = [%d] (past_cache.shape[0])",
				tensor.FormatShape(is), p.Shape[0])
		}
	}
	p.Outer, p.J, p.Inner = prod(p.Shape[:axis]), us[axis], prod(p.Shape[axis+1:])
	return nil
}

// CacheStart returns, for a KindCache plan, the normalised write index of
// batch entry b: IndexAt(b), or 0 when write_indices is absent.
func (p *Plan) CacheStart(b int) (int, error) {
	if p.Indices == nil {
		return 0, nil
	}
	return p.IndexAt(b)
}

// CacheRowsPerBatch returns, for a KindCache plan, how many consecutive
// values of o share one batch entry (one write index): the product of the
// dimensions between the batch dimension and the axis.
func (p *Plan) CacheRowsPerBatch() int { return prod(p.Shape[1:p.Axis]) }

// SliceRange applies Python slice rules to one dimension of size n: start
// and stop count from the end when negative, then clamp; step is non-zero.
// It returns the first coordinate and the number of coordinates selected.
func SliceRange(start, stop, step int64, n int) (first, count int) {
	size := int64(n)
	clamp := func(x, lo, hi int64) int64 {
		if x < 0 {
			x += size // no overflow: size >= 0 and x < 0
		}
		return max(lo, min(x, hi))
	}
	var lo, hi int64
	if step > 0 {
		lo, hi = clamp(start, 0, size), clamp(stop, 0, size)
		if hi <= lo {
			return 0, 0
		}
		return int(lo), int(1 + uint64(hi-lo-1)/uint64(step))
	}
	lo, hi = clamp(start, -1, size-1), clamp(stop, -1, size-1)
	if lo <= hi {
		return 0, 0
	}
	mag := uint64(-(step + 1)) + 1 // |step| without overflow at MinInt64
	return int(lo), int(1 + uint64(lo-hi-1)/mag)
}
