//go:build cgo

package gpu

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// narrowLimit is the largest count for which kernels use 32-bit positions:
// with every count at most 2^31, position arithmetic, including the slack of
// a rounded-up dispatch grid, stays below 2^32.
const narrowLimit = 1 << 31

// maxOwner bounds J: owner words hold j+1 in 32 bits, and 0 means "none".
const maxOwner = 1<<32 - 2

// dim is one dimension of an affine map from a row-major index space onto
// output positions: coordinate * stride, summed over dimensions.
type dim struct {
	size   uint64
	stride int64
}

// job is an ops.Plan translated into kernel variants, counts and the
// parameter array the kernels read. It depends only on the plan's shapes,
// dtypes and attributes, never on index values.
type job struct {
	kind   shaders.Kind
	gather bool // Block plans with more updates than outputs: gather.comp
	// walk: an Element plan whose scatter pass runs one invocation per
	// column (o, k), walking its J updates in index order, instead of
	// claiming owner words (reduction none) or folding with atomics or the
	// sort (reductions); see facts.walks.
	walk bool
	// copies: a Slice plan whose contiguous runs (rowRun) the backend
	// moves with copy commands (facts.planCopies).
	copies  bool
	posBits int
	// noInt64: the device lacks shaderInt64, and every kernel runs its
	// 32-bit baseline variant (shaders.Key.NoInt64; facts.noInt64).
	noInt64   bool
	elemBytes int // bytes per unit moved (strings: 4-byte handles); see widen

	updates uint64 // update units (elements, or several; see widen)
	resolve uint64 // resolve invocations: index tuples (Block) or indices (Element)
	checks  uint64 // Cache, linear: write indices checked in a resolve pass of their own
	indices uint64 // index elements
	outputs uint64 // output units
	owners  uint64 // owner words (0 when duplicates are impossible)

	indexBytes  int
	indexSigned bool
	flags       uint32
	errShift    uint32
	params      []uint64

	// red describes how a reduction runs (nil for reduction none); the
	// planner sets it (facts.planReduction).
	red *reduction
	// direct: an atomic reduction whose scatter reads and checks the raw
	// indices itself (FLAG_DIRECT; facts.planDirect), so that no pass
	// writes normalised ones; check: a resolve pass checks them first
	// (the output is a caller's tensor), else there is none.
	direct, check bool
	// skip: a call on a caller's tensor with SkipBadIndices (flagSkipBad;
	// facts.planSkip): a bad index skips its own updates, the others are
	// applied, and no pass checks the indices before the scatter.
	skip bool
}

// unsupported returns an error for a plan this backend cannot run.
func unsupported(p *ops.Plan, format string, args ...any) error {
	return &ops.Error{Op: p.Op.Name, Input: "data", Err: ops.ErrUnsupported, Msg: "vulkan: " + fmt.Sprintf(format, args...)}
}

// magic returns the fast-division constant of shaders/src/common.glsl's
// udiv for divisor d: ceil(2^32 / d), or 0 when d is 0, 1 or above 2^31.
func magic(d uint64) uint64 {
	if d <= 1 || d > 1<<31 {
		return 0
	}
	return (1<<32 + d - 1) / d
}

// collapse drops dimensions of size 1 and merges neighbours that form one
// contiguous run (outer stride = inner size * inner stride). dims are
// outermost first; the result is innermost first, as the kernels read it.
func collapse(dims []dim) []dim {
	var out []dim // innermost first
	for i := len(dims) - 1; i >= 0; i-- {
		d := dims[i]
		if d.size == 1 {
			continue
		}
		if n := len(out); n > 0 && d.stride == int64(out[n-1].size)*out[n-1].stride {
			out[n-1].size *= d.size
			continue
		}
		out = append(out, d)
	}
	return out
}

// widen returns how many elements of elemBytes bytes to move as one unit
// of at most 16 bytes: the largest power of two that divides every value
// of runs (lengths and starts of contiguous runs). Moving units instead of
// elements divides the invocations, and for 1- and 2-byte elements whose
// runs cover whole words it avoids sub-word atomics.
func widen(elemBytes int, runs ...uint64) uint64 {
	vw := uint64(16 / elemBytes)
	for ; vw > 1; vw /= 2 {
		ok := true
		for _, r := range runs {
			ok = ok && r%vw == 0
		}
		if ok {
			break
		}
	}
	return max(vw, 1)
}

// newJob translates p. It fails with ops.ErrUnsupported where a count does
// not fit the kernels' 32-bit words: an axis or row count above 2^32, or
// more than 2^32-2 updates competing for one slot.
//
// Block and Slice plans move contiguous runs; where their lengths allow,
// the job moves units of several elements (widen), and every count and
// stride below is in units. Reductions combine element by element: their
// units are elements, and they claim no owner words (the planner's
// planReduction decides what they need instead).
func newJob(p *ops.Plan) (*job, error) {
	if p.Reduction != ops.None && p.Kind != ops.KindND && p.Kind != ops.KindElements {
		return nil, unsupported(p, "reduction %q on operator kind %v", p.Reduction, p.Kind)
	}
	j := &job{
		elemBytes: p.DType.Size(),
		updates:   uint64(p.NumUpdates()),
		indices:   uint64(p.NumIndices()),
		params:    make([]uint64, paramHeader),
	}
	outputs, _ := tensor.NumElements(p.Shape)
	j.outputs = uint64(outputs)
	if p.Indices != nil {
		j.indexBytes = p.Indices.DType.Size()
		j.indexSigned = p.Indices.DType.IsSigned()
	}
	if p.Op.NegativeIndices {
		j.flags |= flagNegative
	}
	if J := uint64(p.J); J > maxOwner {
		return nil, unsupported(p, "%d updates along one index dimension; at most %d", J, uint64(maxOwner))
	}
	var err error
	switch p.Kind {
	case ops.KindAxis, ops.KindND:
		err = j.block(p)
	case ops.KindElements:
		err = j.element(p)
	case ops.KindSlice:
		j.slice(p)
	case ops.KindCache:
		err = j.cache(p)
	default:
		err = unsupported(p, "operator kind %v", p.Kind)
	}
	if err != nil {
		return nil, err
	}
	j.settle()
	return j, nil
}

// unit applies a widening factor vw (widen) to the element counts.
func (j *job) unit(vw uint64) {
	j.elemBytes *= int(vw)
	j.updates /= vw
	j.outputs /= vw
}

// block fills in a Block plan: ScatterUpdate-3 is a tuple of one
// component into the axis, with blocks of Inner elements; ScatterNDUpdate
// addresses rows of the leading TupleLen dimensions.
func (j *job) block(p *ops.Plan) error {
	j.kind = shaders.Block
	moves := p.Reduction == ops.None
	J, inner := uint64(p.J), uint64(p.Inner)
	tuple := []int{p.Shape[p.Axis]}
	if p.Kind == ops.KindND {
		tuple = p.Shape[:p.TupleLen]
	}
	rows := uint64(1)
	for _, s := range tuple {
		rows *= uint64(s)
	}
	if rows > 1<<32 {
		return unsupported(p, "indices address %d rows of data; at most 2^32", rows)
	}
	vw := uint64(1)
	if moves {
		vw = widen(j.elemBytes, inner)
	}
	j.unit(vw)
	inner /= vw
	j.resolve = J
	if J > 1 && moves {
		j.flags |= flagOwner
		j.owners = rows
		// Output-major when that visits fewer elements: the owner
		// words say which update each row keeps.
		j.gather = j.updates > j.outputs
		if J <= laterMax && !j.gather {
			j.flags = j.flags&^flagOwner | flagLater
			j.owners = 0
		}
	}
	j.setCommon(J, inner, rows)
	// Unit (o, v, k) of the output is (o*rows + v)*inner + k; ND
	// plans have one o.
	j.params[pVStride], j.params[pIStride] = inner, 1
	if p.Kind == ops.KindAxis {
		j.params[pOStride] = rows * inner
	}
	j.params[pTuple] = uint64(len(tuple))
	j.params[pTupleAt] = uint64(len(j.params))
	for _, s := range tuple {
		j.params = append(j.params, uint64(s))
	}
	return nil
}

// element fills in an Element plan.
func (j *job) element(p *ops.Plan) error {
	j.kind = shaders.Element
	J, inner := uint64(p.J), uint64(p.Inner)
	s := uint64(p.Shape[p.Axis])
	if s > 1<<32 {
		return unsupported(p, "axis %d has %d elements; at most 2^32", p.Axis, s)
	}
	j.resolve = j.indices
	if J > 1 && p.Reduction == ops.None {
		j.flags |= flagOwner
		j.owners = j.outputs
		if J <= laterMax {
			j.flags = j.flags&^flagOwner | flagLater
			j.owners = 0
		}
	}
	j.setCommon(J, inner, s)
	j.params[pVStride] = uint64(p.Strides[p.Axis])
	var outer, innerMap []dim
	for d := 0; d < p.Axis; d++ {
		outer = append(outer, dim{size: uint64(p.IndicesShape[d]), stride: int64(p.Strides[d])})
	}
	for d := p.Axis + 1; d < len(p.Shape); d++ {
		innerMap = append(innerMap, dim{size: uint64(p.IndicesShape[d]), stride: int64(p.Strides[d])})
	}
	outer, innerMap = collapse(outer), collapse(innerMap)
	if len(outer) <= 1 && len(innerMap) <= 1 {
		// One dimension each (or none): o and k are coordinates.
		if len(outer) == 1 {
			j.params[pOStride] = uint64(outer[0].stride)
		}
		if len(innerMap) == 1 {
			j.params[pIStride] = uint64(innerMap[0].stride)
		}
		return nil
	}
	j.flags |= flagMaps
	j.params[pNOuter], j.params[pNInner] = uint64(len(outer)), uint64(len(innerMap))
	j.params[pMapsAt] = uint64(len(j.params))
	j.putDims(outer)
	j.putDims(innerMap)
	return nil
}

// cache fills in a Cache plan (TensorScatter-24): rows of Inner
// contiguous elements, moved as units of up to 16 bytes. No two updates of
// a call collide, so there are no owner words and, in circular mode or
// without write_indices (every write index valid), no check; in linear
// mode the scatter checks the at most laterMax write indices itself
// (flagCheckAll), and more take a resolve pass (checks) first. A call
// without updates still checks them.
func (j *job) cache(p *ops.Plan) error {
	j.kind = shaders.Cache
	s := uint64(p.Shape[p.Axis])
	if s > 1<<32 {
		return unsupported(p, "axis %d has %d elements; at most 2^32", p.Axis, s)
	}
	vw := widen(j.elemBytes, uint64(p.Inner))
	j.unit(vw)
	inner := uint64(p.Inner) / vw
	j.setCommon(uint64(p.J), inner, s)
	per := uint64(p.CacheRowsPerBatch())
	j.params[pVStride], j.params[pIStride] = per, magic(per)
	j.params[pTuple] = uint64(p.Shape[0])
	switch {
	case p.Circular:
		j.flags |= flagCircular
	case p.Indices == nil:
	case j.indices <= laterMax && j.updates > 0:
		j.flags |= flagCheckAll
	default:
		j.checks = j.indices
	}
	if p.Indices == nil {
		j.flags |= flagZeroStart
	}
	return nil
}

// slice fills in a Slice plan. The innermost dimension is a contiguous
// run when its step is 1.
func (j *job) slice(p *ops.Plan) {
	j.kind = shaders.Slice
	last := len(p.Shape) - 1
	vw := uint64(1)
	if p.SliceStep[last] == 1 {
		vw = widen(j.elemBytes, uint64(p.SliceCount[last]), uint64(p.SliceStart[last]), uint64(p.Shape[last]))
	}
	j.unit(vw)
	var base int64
	var dims []dim
	for d := range p.Shape {
		start, count, stride := int64(p.SliceStart[d]), uint64(p.SliceCount[d]), int64(p.Strides[d])/int64(vw)
		if d == last {
			start, count, stride = start/int64(vw), count/vw, 1
		}
		base += start * stride
		dims = append(dims, dim{size: count, stride: int64(p.SliceStep[d]) * stride})
	}
	dims = collapse(dims)
	j.params = j.params[:sDimsAt]
	j.params[sNDims], j.params[sBase] = uint64(len(dims)), uint64(base)
	j.putDims(dims)
}

// settle settles what every kind shares: a plan without updates resolves
// alone, the position width, and the error word's shift.
func (j *job) settle() {
	if j.updates == 0 {
		// No update lands anywhere, but every index is still checked
		// (cpuref and opstest.Naive agree): resolve runs alone.
		j.flags &^= flagOwner | flagLater
		j.owners, j.gather = 0, false
	}
	j.posBits = 32
	for _, n := range []uint64{j.outputs, j.updates, j.indices, j.resolve, j.checks, j.owners} {
		if n > narrowLimit {
			j.posBits = 64
		}
	}
	if j.kind != shaders.Slice {
		// 32-bit kernels read the header from 32-bit push constants. With
		// every count within narrowLimit it fits; check rather than trust.
		for _, w := range j.params[:min(hotWords, len(j.params))] {
			if w > math.MaxUint32 {
				j.posBits = 64
			}
		}
	}
	if j.indices > 0 {
		if n := bits.Len64(j.indices - 1); n > 31 {
			j.errShift = uint32(n - 31)
		}
	}
}

// setCommon fills the header words every Block and Element kernel reads.
func (j *job) setCommon(J, inner, rows uint64) {
	j.params[pJ], j.params[pMagicJ] = J, magic(J)
	j.params[pInner], j.params[pMagicInner] = inner, magic(inner)
	j.params[pRows], j.params[pMagicRows] = rows, magic(rows)
	j.params[pOutputs] = j.outputs
}

// putDims appends (size, magic, stride) triples, innermost first.
func (j *job) putDims(dims []dim) {
	for _, d := range dims {
		j.params = append(j.params, d.size, magic(d.size), uint64(d.stride))
	}
}

// hot returns the parameter words pushed as 32-bit push constants: the
// first hotWords words, truncated to 32 bits (negative strides wrap, which
// the 32-bit kernels' wrapping arithmetic expects).
func (j *job) hot() [hotWords]uint32 {
	var h [hotWords]uint32
	for i := 0; i < hotWords && i < len(j.params); i++ {
		h[i] = uint32(j.params[i])
	}
	return h
}

// normWords returns the words of T_NORM: one per resolve position, none
// when the scatter reads the raw indices (direct).
func (j *job) normWords() uint64 {
	if j.direct {
		return 0
	}
	return j.resolve
}

// rowRun returns, for a Slice plan whose innermost dimension is
// contiguous in the output (stride 1 in the parameter array), the units of
// each such run; 0 otherwise.
func (j *job) rowRun() uint64 {
	if j.kind != shaders.Slice || j.params[sNDims] == 0 || int64(j.params[sDimsAt+2]) != 1 {
		return 0
	}
	return j.params[sDimsAt]
}

// columns returns the number of columns (o, k) of an Element plan: its
// updates over J.
func (j *job) columns() uint64 {
	if j.params[pJ] == 0 {
		return 0
	}
	return j.updates / j.params[pJ]
}

// walkSegments returns the dispatches of a walking scatter: one per
// segment of J.
func (j *job) walkSegments() uint64 {
	return ceilDiv(j.params[pJ], segment)
}

// scatterInvocations returns the invocations of the scatter or gather pass:
// one per update, one per column when the scatter walks columns, or for
// gather one per output element (per 32-bit output word for elements of 1
// and 2 bytes).
func (j *job) scatterInvocations() uint64 {
	if j.walk {
		return j.columns()
	}
	if !j.gather {
		return j.updates
	}
	if j.elemBytes < 4 {
		return ceilDiv(j.outputs*uint64(j.elemBytes), 4)
	}
	return j.outputs
}
