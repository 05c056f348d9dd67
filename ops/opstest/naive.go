package opstest

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Naive computes req element by element, the slow and obvious way: for every
// update position in row-major order it works out the target coordinates
// from the spec's formula for the operator (the NumPy snippets of
// ScatterNDUpdate-15 and SliceScatter-15, the formulas of ScatterUpdate-3
// and ONNX Scatter) and folds the update in with the contract of
// specs/README.md.
//
// It calls ops.Prepare only to decide whether req is valid (returning its
// error when not) and Plan.IndexAt only to word the error for an index it
// has itself found out of range, and takes the value an element starts
// from when use_init_val is false from ops.Reduction.NeutralBits; shapes,
// axes, slices, index positions and the folds are its own. Indices are
// checked in row-major order before anything is written, so the error
// names the first bad one. With no update elements the result is a copy
// of data and the indices are not read.
//
// With req.SkipBadIndices a bad index is skipped instead: the updates it
// addresses are left out, the rest are applied as if they were absent, and
// Naive returns both the result and the first bad index's error.
func Naive(req ops.Request) (*tensor.Tensor, error) {
	p, err := ops.Prepare(req)
	if err != nil {
		return nil, err
	}
	n := naive{req: req, plan: p, name: strings.ToLower(strings.TrimSpace(req.Op)), firstBad: new(error)}
	out, err := n.run()
	if err == nil && *n.firstBad != nil {
		return out, *n.firstBad
	}
	return out, err
}

type naive struct {
	req  ops.Request
	plan *ops.Plan // for IndexAt's error text and the neutral values only
	name string    // lower-case operator name
	// firstBad is the first bad index's error when req.SkipBadIndices
	// skips bad indices (their normalised values are then noTarget).
	firstBad *error
}

// noTarget is the normalised value of a skipped bad index, and the target
// of the updates it addresses.
const noTarget = -1

// skip records a bad index's error and reports whether it is skipped.
func (n naive) skip(err error) bool {
	if !n.req.SkipBadIndices {
		return false
	}
	if *n.firstBad == nil {
		*n.firstBad = err
	}
	return true
}

// naiveReduction is the reduction as Naive understands it, parsed from the
// request's name without ops' table.
type naiveReduction int

const (
	redNone naiveReduction = iota
	redSum
	redSub
	redProd
	redMin
	redMax
	redMean
)

func parseReduction(name string) naiveReduction {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "sum", "add":
		return redSum
	case "sub":
		return redSub
	case "prod", "mul":
		return redProd
	case "min":
		return redMin
	case "max":
		return redMax
	case "mean":
		return redMean
	}
	return redNone
}

func (n naive) family() string {
	dash := strings.LastIndexByte(n.name, '-')
	return n.name[:dash]
}

// negativeIndices: the README's table. Only the versions before negative
// indexing was added reject them.
func (n naive) negativeIndices() bool {
	switch n.name {
	case "scatterupdate-3", "scatterndupdate-3", "scatterelementsupdate-3", "scatter-9", "tensorscatter-24":
		return false
	}
	return true
}

func (n naive) run() (*tensor.Tensor, error) {
	data, upd := n.req.Data, n.req.Updates
	out := data.Clone()
	if upd.Len() == 0 {
		// No update lands anywhere, but every index is still checked: an
		// out-of-range index is an error whether or not updates use it.
		if n.family() == "tensorscatter" {
			if _, err := n.cacheTargets(); err != nil {
				return nil, err
			}
			return out, nil
		}
		if n.req.Indices != nil {
			dimOf := func([]int) int { return n.axis() }
			if f := n.family(); f == "scatterndupdate" || f == "scatternd" {
				dimOf = func(c []int) int { return c[len(c)-1] }
			}
			if _, err := n.checkIndices(dimOf); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var targets []int
	var err error
	switch n.family() {
	case "scatterupdate":
		targets, err = n.axisTargets()
	case "scatterndupdate", "scatternd":
		targets, err = n.ndTargets()
	case "scatterelementsupdate", "scatter", "scatterelements":
		targets, err = n.elementsTargets()
	case "slicescatter":
		targets, err = n.sliceTargets()
	case "tensorscatter":
		targets, err = n.cacheTargets()
	default:
		err = fmt.Errorf("opstest: Naive does not know operator %q", n.req.Op)
	}
	if err != nil {
		return nil, err
	}
	useInit := n.req.UseInitVal == nil || *n.req.UseInitVal
	apply(out, data, upd, targets, parseReduction(n.req.Reduction), n.plan.Reduction, useInit)
	return out, nil
}

// apply folds update u into element targets[u] of out (a copy of data), in
// increasing u. start is the reduction as ops parsed it, for its neutral
// value alone.
func apply(out, data, upd *tensor.Tensor, targets []int, red naiveReduction, start ops.Reduction, useInit bool) {
	switch {
	case red == redNone:
		for u, t := range targets {
			if t != noTarget {
				copyElem(out, t, upd, u)
			}
		}
	case red == redMean:
		mean(out, data, upd, targets, useInit)
	default:
		dt := data.DType
		touched := make([]bool, out.Len())
		for u, t := range targets {
			if t == noTarget {
				continue
			}
			if !useInit && !touched[t] {
				setNum(out, t, neutral(dt, start))
			}
			touched[t] = true
			setNum(out, t, combine(dt, red, getNum(out, t), getNum(upd, u)))
		}
	}
}

// axis reads the axis input or attribute (nil: 0) and normalises it.
func (n naive) axis() int {
	if n.req.Axis == nil {
		return 0
	}
	a, _ := readIndex(n.req.Axis, 0)
	if a < 0 {
		a += int64(n.req.Data.Rank())
	}
	return int(a)
}

// checkIndices checks every element of indices, in row-major order, against
// the range of the data dimension dimOf(its coordinates) addresses, and
// returns the normalised values.
func (n naive) checkIndices(dimOf func(coord []int) int) ([]int, error) {
	ind := n.req.Indices
	vals := make([]int, ind.Len())
	for pos := range vals {
		dim := dimOf(unravel(pos, ind.Shape))
		s := int64(n.req.Data.Shape[dim])
		lo := int64(0)
		if n.negativeIndices() {
			lo = -s
		}
		v, ok := readIndex(ind, pos)
		if !ok || v < lo || v > s-1 {
			if _, err := n.plan.IndexAt(pos); err != nil {
				if n.skip(err) {
					vals[pos] = noTarget
					continue
				}
				return nil, err
			}
			return nil, fmt.Errorf("opstest: Naive finds indices element %d (%s) out of range for dimension %d, but Plan.IndexAt accepts it",
				pos, ind.FormatAt(pos), dim)
		}
		if v < 0 {
			v += s
		}
		vals[pos] = int(v)
	}
	return vals, nil
}

// axisTargets: ScatterUpdate-3,
// data[..., indices[m, n, ..., p], ...] = updates[..., m, n, ..., p, ...].
func (n naive) axisTargets() ([]int, error) {
	axis := n.axis()
	idx, err := n.checkIndices(func([]int) int { return axis })
	if err != nil {
		return nil, err
	}
	ds, is, us := n.req.Data.Shape, n.req.Indices.Shape, n.req.Updates.Shape
	q := len(is)
	targets := make([]int, numElements(us))
	for u := range targets {
		c := unravel(u, us)
		v := idx[ravel(c[axis:axis+q], is)]
		if v == noTarget {
			targets[u] = noTarget
			continue
		}
		t := append([]int{}, c[:axis]...)
		t = append(t, v)
		t = append(t, c[axis+q:]...)
		targets[u] = ravel(t, ds)
	}
	return targets, nil
}

// ndTargets: ScatterNDUpdate and ScatterND,
// for ndidx in ndindex(indices.shape[:-1]):
// out[indices[ndidx]] = f(out[indices[ndidx]], updates[ndidx]).
func (n naive) ndTargets() ([]int, error) {
	ds, is := n.req.Data.Shape, n.req.Indices.Shape
	q := len(is)
	k := is[q-1]
	idx, err := n.checkIndices(func(c []int) int { return c[q-1] })
	if err != nil {
		return nil, err
	}
	// The shape updates must have; a single-element updates tensor stands
	// for a rank-0 one, in the same (only) position.
	us := append(append([]int{}, is[:q-1]...), ds[k:]...)
	targets := make([]int, numElements(us))
	for u := range targets {
		c := unravel(u, us)
		t := make([]int, 0, len(ds))
		skipped := false
		for comp := 0; comp < k; comp++ {
			v := idx[ravel(append(append([]int{}, c[:q-1]...), comp), is)]
			skipped = skipped || v == noTarget
			t = append(t, v)
		}
		if skipped {
			targets[u] = noTarget
			continue
		}
		t = append(t, c[q-1:]...)
		targets[u] = ravel(t, ds)
	}
	return targets, nil
}

// elementsTargets: ScatterElements, Scatter, ScatterElementsUpdate,
// output[i][indices[i][j]] = updates[i][j] for axis 1, and so on.
func (n naive) elementsTargets() ([]int, error) {
	axis := n.axis()
	idx, err := n.checkIndices(func([]int) int { return axis })
	if err != nil {
		return nil, err
	}
	ds, us := n.req.Data.Shape, n.req.Updates.Shape
	targets := make([]int, numElements(us))
	for u := range targets {
		c := unravel(u, us)
		c[axis] = idx[u] // indices and updates share their shape
		if idx[u] == noTarget {
			targets[u] = noTarget
			continue
		}
		targets[u] = ravel(c, ds)
	}
	return targets, nil
}

// cacheTargets: TensorScatter-24, as the ONNX operator text states it:
// for every prefix of the dimensions before the axis,
// out[prefix, write_indices[prefix[0]] + s, ...] = update[prefix, s, ...],
// the position taken modulo max_sequence_length in circular mode (only
// that coordinate wraps, not every coordinate of the target as the ONNX
// reference code does). In linear mode every write index must satisfy
// 0 <= w and w + sequence_length <= max_sequence_length; they are checked
// in order before anything is written.
func (n naive) cacheTargets() ([]int, error) {
	ds, us := n.req.Data.Shape, n.req.Updates.Shape
	axis := -2
	if n.req.Axis != nil {
		a, _ := readIndex(n.req.Axis, 0)
		axis = int(a)
	}
	if axis < 0 {
		axis += len(ds)
	}
	circular := strings.EqualFold(strings.TrimSpace(n.req.Mode), "circular")
	maxSeq, seq := int64(ds[axis]), int64(us[axis])
	starts := make([]int64, ds[0])
	skipped := make([]bool, ds[0]) // batch entries whose write index is skipped
	for b := range starts {
		if n.req.Indices == nil {
			continue
		}
		w, _ := readIndex(n.req.Indices, b)
		if !circular && (w < 0 || w > maxSeq-seq) {
			if _, err := n.plan.IndexAt(b); err != nil {
				if n.skip(err) {
					skipped[b] = true
					continue
				}
				return nil, err
			}
			return nil, fmt.Errorf("opstest: Naive finds write_indices[%d] = %d out of range, but Plan.IndexAt accepts it", b, w)
		}
		if circular && maxSeq > 0 {
			w %= maxSeq // (w + s) mod m = (w mod m + s) mod m, without overflow
		}
		starts[b] = w
	}
	targets := make([]int, numElements(us))
	for u := range targets {
		c := unravel(u, us)
		if skipped[c[0]] {
			targets[u] = noTarget
			continue
		}
		pos := starts[c[0]] + int64(c[axis])
		if circular {
			pos %= maxSeq
			if pos < 0 {
				pos += maxSeq
			}
		}
		c[axis] = int(pos)
		targets[u] = ravel(c, ds)
	}
	return targets, nil
}

// pythonSlice returns range(size)[start:stop:step] as Python computes it
// (the adjustment of CPython's PySlice_AdjustIndices, then the walk).
func pythonSlice(start, stop, step int64, size int) []int {
	n := int64(size)
	adjust := func(x int64) int64 {
		if x < 0 {
			x += n
			if x < 0 {
				if step < 0 {
					return -1
				}
				return 0
			}
			return x
		}
		if x >= n {
			if step < 0 {
				return n - 1
			}
			return n
		}
		return x
	}
	start, stop = adjust(start), adjust(stop)
	var out []int
	if step > 0 {
		for i := start; i < stop; i += step {
			out = append(out, int(i))
			if step >= stop-i {
				break
			}
		}
	} else {
		for i := start; i > stop; i += step {
			out = append(out, int(i))
			if step <= stop-i {
				break
			}
		}
	}
	return out
}

// saturated reads element i of an integer tensor; a uint64 above MaxInt64
// reads as MaxInt64, which slices exactly like it.
func saturated(t *tensor.Tensor, i int) int64 {
	v, ok := readIndex(t, i)
	if !ok {
		return math.MaxInt64
	}
	return v
}

// sliceTargets: SliceScatter-15, out[tuple(slice_list)] = updates.
func (n naive) sliceTargets() ([]int, error) {
	ds := n.req.Data.Shape
	coords := make([][]int, len(ds))
	for d, size := range ds {
		coords[d] = pythonSlice(0, int64(size), 1, size)
	}
	for i := 0; i < n.req.Start.Len(); i++ {
		axis := i
		if n.req.Axes != nil {
			a, _ := readIndex(n.req.Axes, i)
			if a < 0 {
				a += int64(len(ds))
			}
			axis = int(a)
		}
		coords[axis] = pythonSlice(saturated(n.req.Start, i), saturated(n.req.Stop, i), saturated(n.req.Step, i), ds[axis])
	}
	us := n.req.Updates.Shape
	for d := range ds {
		if us[d] != len(coords[d]) {
			return nil, fmt.Errorf("opstest: Naive's slice has %d coordinates in dimension %d, but Prepare accepted updates of shape %v",
				len(coords[d]), d, us)
		}
	}
	targets := make([]int, numElements(us))
	for u := range targets {
		c := unravel(u, us)
		for d := range c {
			c[d] = coords[d][c[d]]
		}
		targets[u] = ravel(c, ds)
	}
	return targets, nil
}

// mean is ScatterElementsUpdate-12's mean: the sum of the original element
// (when useInit) and its updates divided by their count.
func mean(out, data, upd *tensor.Tensor, targets []int, useInit bool) {
	dt := out.DType
	byTarget := make(map[int][]int)
	var order []int
	for u, t := range targets {
		if t == noTarget {
			continue
		}
		if _, ok := byTarget[t]; !ok {
			order = append(order, t)
		}
		byTarget[t] = append(byTarget[t], u)
	}
	for _, t := range order {
		var vals []num
		if useInit {
			vals = append(vals, getNum(data, t))
		}
		for _, u := range byTarget[t] {
			vals = append(vals, getNum(upd, u))
		}
		count := int64(len(vals))
		switch {
		case dt.IsFloat():
			sum := 0.0
			if useInit {
				sum = vals[0].f
				vals = vals[1:]
			}
			for _, v := range vals {
				sum = farith(dt, '+', sum, v.f)
			}
			setNum(out, t, num{f: farith(dt, '/', sum, float64(count))})
		case width(dt) <= 32:
			// Exact sum: no wrap-around for 32-bit and narrower types.
			var sum int64
			for _, v := range vals {
				sum += int64(v.u) // sign-extended or zero-extended: exact
			}
			setNum(out, t, num{u: wrap(dt, uint64(floorDiv(sum, count)))})
		case dt == tensor.Int64:
			var sum uint64
			for _, v := range vals {
				sum += v.u
			}
			setNum(out, t, num{u: uint64(floorDiv(int64(sum), count))})
		default: // uint64
			var sum uint64
			for _, v := range vals {
				sum += v.u
			}
			setNum(out, t, num{u: sum / uint64(count)})
		}
	}
}

// floorDiv divides rounding toward negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// farith computes x op y in the dtype: float64 directly, float32 in
// float32, float16 and bfloat16 in float32 and then rounded, which is exact
// rounding because float32 has more than twice their precision.
func farith(dt tensor.DType, op byte, x, y float64) float64 {
	if dt == tensor.Float64 {
		switch op {
		case '+':
			return x + y
		case '-':
			return x - y
		case '*':
			return x * y
		}
		return x / y
	}
	a, b := float32(x), float32(y)
	var r float32
	switch op {
	case '+':
		r = a + b
	case '-':
		r = a - b
	case '*':
		r = a * b
	default:
		r = a / b
	}
	switch dt {
	case tensor.Float16:
		return float64(tensor.F16From(r).Float32())
	case tensor.BFloat16:
		return float64(tensor.BF16From(r).Float32())
	}
	return float64(r)
}

// fmin and fmax are the contract's float min and max (specs/README.md,
// "Floats"): numbers compare with -0 below +0; where x or y is a NaN,
// fnan's NaN.
func fmin(x, y num) num {
	switch {
	case math.IsNaN(x.f) || math.IsNaN(y.f):
		return fnan(x, y)
	case x.f == 0 && y.f == 0:
		if math.Signbit(y.f) {
			return y
		}
		return x
	case y.f < x.f:
		return y
	}
	return x
}

func fmax(x, y num) num {
	switch {
	case math.IsNaN(x.f) || math.IsNaN(y.f):
		return fnan(x, y)
	case x.f == 0 && y.f == 0:
		if !math.Signbit(y.f) {
			return y
		}
		return x
	case y.f > x.f:
		return y
	}
	return x
}

// fnan is the NaN of a min or max step that meets one: the NaN operand
// where one is, and where both are the one whose bits (of the element's
// width, as getNum keeps them) are greater as an unsigned integer.
func fnan(x, y num) num {
	if !math.IsNaN(x.f) || (math.IsNaN(y.f) && y.nan > x.nan) {
		return y
	}
	return x
}

// less compares two integers of dtype dt.
func less(dt tensor.DType, x, y uint64) bool {
	if dt.IsSigned() {
		return int64(x) < int64(y)
	}
	return x < y
}

// combine folds update y into element x: the reduction's func(x, y) from
// the ScatterNDUpdate-15 snippet, with the contract's bool and integer
// rules.
func combine(dt tensor.DType, red naiveReduction, x, y num) num {
	switch {
	case dt == tensor.Bool:
		switch red {
		case redSum, redMax:
			return num{b: x.b || y.b}
		case redSub:
			return num{b: x.b != y.b}
		default: // prod, min
			return num{b: x.b && y.b}
		}
	case dt.IsInteger():
		switch red {
		case redSum:
			return num{u: wrap(dt, x.u+y.u)}
		case redSub:
			return num{u: wrap(dt, x.u-y.u)}
		case redProd:
			return num{u: wrap(dt, x.u*y.u)}
		case redMin:
			if less(dt, y.u, x.u) {
				return y
			}
			return x
		default: // max
			if less(dt, x.u, y.u) {
				return y
			}
			return x
		}
	default:
		switch red {
		case redSum:
			return num{f: farith(dt, '+', x.f, y.f)}
		case redSub:
			return num{f: farith(dt, '-', x.f, y.f)}
		case redProd:
			return num{f: farith(dt, '*', x.f, y.f)}
		case redMin:
			return fmin(x, y)
		default:
			return fmax(x, y)
		}
	}
}

// neutral is the value an element starts from when use_init_val is false:
// ops.Reduction.NeutralBits, whose values ops' tests pin, read as a num.
func neutral(dt tensor.DType, r ops.Reduction) num {
	bits := r.NeutralBits(dt)
	switch {
	case dt == tensor.Bool:
		return num{b: bits != 0}
	case dt.IsInteger():
		return num{u: wrap(dt, bits)}
	case dt == tensor.Float16:
		return num{f: float64(tensor.F16(uint16(bits)).Float32())}
	case dt == tensor.BFloat16:
		return num{f: float64(tensor.BF16(uint16(bits)).Float32())}
	case dt == tensor.Float32:
		return num{f: float64(math.Float32frombits(uint32(bits)))}
	}
	return num{f: math.Float64frombits(bits)}
}
