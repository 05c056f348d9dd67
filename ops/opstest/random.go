package opstest

import (
	"math"
	"math/rand"
	"strings"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Config bounds the requests RandomRequest generates. The zero value is
// usable: every operator, ranks 1 to 5, dimensions up to 4, at most 96
// elements per tensor.
type Config struct {
	// Ops lists the operators to draw from (names as ops.Lookup takes
	// them); nil means every operator in ops.All.
	Ops []string
	// DTypes lists the data dtypes to draw from, each used only with the
	// operators that take it; nil means every dtype.
	DTypes []tensor.DType
	// MaxRank is the largest rank of data (default 5).
	MaxRank int
	// MaxDim is the largest size of one dimension (default 4).
	MaxDim int
	// MaxElements caps the elements of data, indices and updates (default 96).
	MaxElements int
}

func (c Config) withDefaults() Config {
	if c.MaxRank <= 0 {
		c.MaxRank = 5
	}
	if c.MaxDim <= 0 {
		c.MaxDim = 4
	}
	if c.MaxElements <= 0 {
		c.MaxElements = 96
	}
	return c
}

func (c Config) pickOp(rng *rand.Rand) *ops.Op {
	if len(c.Ops) == 0 {
		all := ops.All()
		return all[rng.Intn(len(all))]
	}
	op, err := ops.Lookup(c.Ops[rng.Intn(len(c.Ops))])
	if err != nil {
		panic("opstest: Config.Ops: " + err.Error())
	}
	return op
}

// dtypeFor picks a data dtype op accepts from the configured list.
func (c Config) dtypeFor(rng *rand.Rand, op *ops.Op) tensor.DType {
	list := c.DTypes
	if list == nil {
		list = tensor.DTypes()
	}
	var ok []tensor.DType
	for _, d := range list {
		if d.IsNumeric() || op.AnyDType {
			ok = append(ok, d)
		}
	}
	if len(ok) == 0 {
		panic("opstest: Config.DTypes has no dtype that " + op.Name + " takes")
	}
	return ok[rng.Intn(len(ok))]
}

var indexDTypes = []tensor.DType{tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Uint16,
	tensor.Int32, tensor.Uint32, tensor.Int64, tensor.Uint64}

// pickIndexDType draws an integer dtype that holds every index into a
// dimension of size s: 0 ... s-1, and -s ... -1 when signed.
func pickIndexDType(rng *rand.Rand, signed bool, s int) tensor.DType {
	for {
		d := indexDTypes[rng.Intn(len(indexDTypes))]
		if signed && (!d.IsSigned() || intMin(d) > -int64(s)) || intMax(d) < int64(s)-1 {
			continue
		}
		return d
	}
}

// fits reports whether v can be stored in the integer dtype dt.
func fits(dt tensor.DType, v int64) bool { return v >= intMin(dt) && v <= intMax(dt) }

// intMin and intMax of an integer dtype, as int64 (uint64's maximum
// saturates to MaxInt64; intTensor writes it exactly through intMaxBits).
func intMin(dt tensor.DType) int64 {
	if !dt.IsSigned() {
		return 0
	}
	return -1 << (width(dt) - 1)
}

func intMax(dt tensor.DType) int64 {
	if dt == tensor.Uint64 || dt == tensor.Int64 {
		return math.MaxInt64
	}
	if dt.IsSigned() {
		return 1<<(width(dt)-1) - 1
	}
	return 1<<width(dt) - 1
}

// intTensor returns a tensor of dtype dt and shape holding vals, each of
// which must fit dt.
func intTensor(dt tensor.DType, shape []int, vals []int64) *tensor.Tensor {
	t, err := tensor.New(dt, shape)
	if err != nil {
		panic(err)
	}
	for i, v := range vals {
		setNum(t, i, num{u: uint64(v)})
	}
	return t
}

// randShape draws a shape of the given rank; a dimension is 0 now and then.
func randShape(rng *rand.Rand, rank, maxDim int) []int {
	s := make([]int, rank)
	for i := range s {
		if rng.Intn(16) == 0 {
			continue
		}
		s[i] = 1 + rng.Intn(maxDim)
	}
	return s
}

// shrink halves the largest dimensions of shape until it holds at most
// limit elements.
func shrink(shape []int, limit int) {
	for numElements(shape) > limit {
		big := 0
		for i, d := range shape {
			if d > shape[big] {
				big = i
			}
		}
		shape[big] /= 2
	}
}

// fillValues fills t with values for its dtype: mostly small integers (so
// sums and products are exact), and in some tensors NaN, ±0, ±inf, extreme
// and fractional values, or integer extremes that overflow.
func fillValues(rng *rand.Rand, t *tensor.Tensor) {
	n := t.Len()
	special := rng.Intn(5) < 2 // 40% of tensors get specials
	dt := t.DType
	switch {
	case dt == tensor.String:
		alphabet := []string{"", "a", "b", "ab", "zz", "ü", "日本", "x y", "\x00"}
		for i := range t.Strings {
			t.Strings[i] = alphabet[rng.Intn(len(alphabet))]
		}
	case dt.IsComplex():
		for i := 0; i < n; i++ {
			re, im := float64(rng.Intn(9)-4), float64(rng.Intn(9)-4)
			if special && rng.Intn(6) == 0 {
				re = specialFloat(rng)
			}
			if dt == tensor.Complex64 {
				tensor.View[complex64](t)[i] = complex(float32(re), float32(im))
			} else {
				tensor.View[complex128](t)[i] = complex(re, im)
			}
		}
	case dt == tensor.Bool:
		for i := 0; i < n; i++ {
			setNum(t, i, num{b: rng.Intn(2) == 0})
		}
	case dt.IsInteger():
		for i := 0; i < n; i++ {
			v := int64(rng.Intn(9) - 4)
			if !dt.IsSigned() {
				v = int64(rng.Intn(9))
			}
			u := uint64(v)
			if special {
				switch rng.Intn(8) {
				case 0:
					u = uint64(intMin(dt))
				case 1:
					u = uint64(intMax(dt))
					if dt == tensor.Uint64 {
						u = math.MaxUint64
					}
				case 2:
					u = rng.Uint64()
				}
			}
			setNum(t, i, num{u: wrap(dt, u)})
		}
	default:
		for i := 0; i < n; i++ {
			f := float64(rng.Intn(9) - 4)
			if special && rng.Intn(4) == 0 {
				f = specialFloat(rng)
			}
			setNum(t, i, num{f: roundFloat(dt, f)})
		}
	}
}

func specialFloat(rng *rand.Rand) float64 {
	switch rng.Intn(9) {
	case 0, 1:
		return math.NaN()
	case 2:
		return math.Inf(1)
	case 3:
		return math.Inf(-1)
	case 4:
		return math.Copysign(0, -1)
	case 5:
		return 0
	case 6: // overflows float16 and bfloat16 sums and products soon
		return float64(rng.Intn(2)*2-1) * 6e4 * (1 + rng.Float64())
	case 7:
		return rng.NormFloat64() * 3
	}
	return rng.NormFloat64() * 1e-6
}

// roundFloat rounds f to the nearest value of dt (through float32 for the
// 16-bit types; generated values only need to be exact in dt).
func roundFloat(dt tensor.DType, f float64) float64 {
	switch dt {
	case tensor.Float16:
		return float64(tensor.F16From(float32(f)).Float32())
	case tensor.BFloat16:
		return float64(tensor.BF16From(float32(f)).Float32())
	case tensor.Float32:
		return float64(float32(f))
	}
	return f
}

func randTensor(rng *rand.Rand, dt tensor.DType, shape []int) *tensor.Tensor {
	t, err := tensor.New(dt, shape)
	if err != nil {
		panic(err)
	}
	fillValues(rng, t)
	return t
}

// pickReduction draws a reduction name op accepts for dtype dt, as the
// operator spells it (names are matched exactly), none sometimes as "".
func pickReduction(rng *rand.Rand, op *ops.Op, dt tensor.DType) string {
	var names []string
	for _, n := range op.ReductionNames() {
		r := op.Reductions[n]
		if !r.Accepts(dt) {
			continue
		}
		names = append(names, n)
	}
	name := names[rng.Intn(len(names))]
	switch rng.Intn(10) {
	case 0:
		if name == "none" {
			return ""
		}
	}
	return name
}

// axisTensor encodes the normalised axis a of a rank-r tensor as a scalar or
// 1-element tensor of a random integer dtype, as a or a-r.
func axisTensor(rng *rand.Rand, a, r int) *tensor.Tensor {
	v := int64(a)
	if rng.Intn(3) == 0 {
		v -= int64(r)
	}
	dt := pickIndexDType(rng, v < 0, r)
	shape := []int{}
	if rng.Intn(2) == 0 {
		shape = []int{1}
	}
	return intTensor(dt, shape, []int64{v})
}

// indexValues draws n indices into a dimension of size s: sometimes all
// from one or two values (heavy duplicates), sometimes negative where the
// operator and dtype allow it.
func indexValues(rng *rand.Rand, n, s int, negative bool) []int64 {
	vals := make([]int64, n)
	if n == 0 {
		return vals
	}
	pool := []int64{int64(rng.Intn(s)), int64(rng.Intn(s))}
	heavy := rng.Intn(5) == 0
	for i := range vals {
		v := int64(rng.Intn(s))
		if heavy {
			v = pool[rng.Intn(2)]
		}
		if negative && rng.Intn(3) == 0 {
			v -= int64(s)
		}
		vals[i] = v
	}
	return vals
}

// RandomRequest returns a valid request for a random operator of cfg.Ops:
// random ranks, dimensions (zero-size ones included), axes (negative ones
// included), data dtype, index dtypes, reduction and use_init_val, index
// values (duplicates, heavy sometimes, and negative ones where allowed), and
// for SliceScatter-15 random steps, clamped and extreme starts and stops,
// and axes given or not. It panics only when cfg names an unknown operator
// or no dtype the operator takes.
func RandomRequest(rng *rand.Rand, cfg Config) ops.Request {
	cfg = cfg.withDefaults()
	op := cfg.pickOp(rng)
	dt := cfg.dtypeFor(rng, op)
	req := ops.Request{Op: op.Name, Reduction: pickReduction(rng, op, dt)}
	if rng.Intn(8) == 0 {
		req.Op = strings.ToLower(op.Name)
	}
	if op.TakesUseInitVal() && rng.Intn(3) != 0 {
		b := rng.Intn(2) == 0
		req.UseInitVal = &b
	}
	switch op.Kind {
	case ops.KindAxis:
		genAxis(rng, cfg, op, dt, &req)
	case ops.KindND:
		genND(rng, cfg, op, dt, &req)
	case ops.KindElements:
		genElements(rng, cfg, op, dt, &req)
	case ops.KindSlice:
		genSlice(rng, cfg, dt, &req)
	case ops.KindCache:
		genCache(rng, cfg, dt, &req)
	}
	return req
}

// laterMax is the GPU kernels' LATER_MAX: the most write indices one
// invocation checks itself.
const laterMax = 64

// genCache: TensorScatter-24, data of rank >= 2, updates of its shape but
// for a sequence of at most the axis along it; the axis given positive,
// negative or left to its default -2; linear or circular mode, given or
// left out; write_indices absent now and then, in linear mode anywhere the
// sequence fits (ending exactly at the end among them), in circular mode
// anywhere in int64, far past the end and negative included.
func genCache(rng *rand.Rand, cfg Config, dt tensor.DType, req *ops.Request) {
	{
		ds := randShape(rng, 2+rng.Intn(max(1, cfg.MaxRank-1)), cfg.MaxDim)
		if rng.Intn(8) == 0 && cfg.MaxElements >= 2*(laterMax+6) {
			// More batch entries than a kernel checks in one loop
			// (LATER_MAX): the GPU checks linear write indices in a pass
			// of their own.
			ds[0] = laterMax + 1 + rng.Intn(6)
			for d := 1; d < len(ds); d++ {
				ds[d] = min(ds[d], 2)
			}
		}
		shrink(ds, cfg.MaxElements)
		r := len(ds)
		axis := 1 + rng.Intn(r-1)
		us := append([]int(nil), ds...)
		us[axis] = rng.Intn(ds[axis] + 1)
		if rng.Intn(3) == 0 {
			us[axis] = ds[axis]
		}
		req.Data = randTensor(rng, dt, ds)
		req.Updates = randTensor(rng, dt, us)
		switch {
		case axis == r-2 && rng.Intn(2) == 0: // the default
		case rng.Intn(2) == 0:
			req.Axis = tensor.Scalar(int64(axis - r))
		default:
			req.Axis = axisTensor(rng, axis, r)
		}
		circular := rng.Intn(2) == 0
		switch {
		case circular:
			req.Mode = "circular"
		case rng.Intn(2) == 0:
			req.Mode = "linear"
		}
		if rng.Intn(5) == 0 {
			return // write_indices absent: zeros
		}
		m, seq := int64(ds[axis]), int64(us[axis])
		vals := make([]int64, ds[0])
		for b := range vals {
			switch {
			case !circular:
				vals[b] = rng.Int63n(m - seq + 1)
				if rng.Intn(3) == 0 {
					vals[b] = m - seq // ends exactly at the end
				}
			case rng.Intn(4) == 0:
				vals[b] = []int64{math.MaxInt64, math.MinInt64, -1, -m - 1, 5*m + 3}[rng.Intn(5)]
			default:
				vals[b] = rng.Int63n(3*m+1) - m
			}
		}
		req.Indices = intTensor(tensor.Int64, []int{ds[0]}, vals)
		return
	}
}

// genAxis: ScatterUpdate-3, updates.shape = data.shape[:axis] +
// indices.shape + data.shape[axis+1:], indices of rank 0 to 3.
func genAxis(rng *rand.Rand, cfg Config, op *ops.Op, dt tensor.DType, req *ops.Request) {
	for {
		ds := randShape(rng, 1+rng.Intn(cfg.MaxRank), cfg.MaxDim)
		shrink(ds, cfg.MaxElements)
		axis := rng.Intn(len(ds))
		is := randShape(rng, rng.Intn(4), cfg.MaxDim)
		if ds[axis] == 0 { // no index is valid: indices must be empty
			is = append(is, 0)
		}
		us := append(append(append([]int{}, ds[:axis]...), is...), ds[axis+1:]...)
		if numElements(us) > cfg.MaxElements || numElements(is) > cfg.MaxElements {
			continue
		}
		neg := op.NegativeIndices && rng.Intn(2) == 0
		idt := pickIndexDType(rng, neg, ds[axis])
		req.Data = randTensor(rng, dt, ds)
		req.Indices = intTensor(idt, is, indexValues(rng, numElements(is), ds[axis], neg))
		req.Updates = randTensor(rng, dt, us)
		req.Axis = axisTensor(rng, axis, len(ds))
		return
	}
}

// genND: ScatterNDUpdate and ScatterND, indices.shape = lead + [k],
// updates.shape = lead + data.shape[k:] (or [1] for a rank-0 one).
func genND(rng *rand.Rand, cfg Config, op *ops.Op, dt tensor.DType, req *ops.Request) {
	for {
		ds := randShape(rng, 1+rng.Intn(cfg.MaxRank), cfg.MaxDim)
		shrink(ds, cfg.MaxElements)
		r := len(ds)
		k := 1 + rng.Intn(r)
		if rng.Intn(20) == 0 {
			k = 0
		}
		lead := randShape(rng, rng.Intn(3), cfg.MaxDim)
		for c := 0; c < k; c++ {
			if ds[c] == 0 { // no tuple is valid: there must be none
				lead = append(lead, 0)
				break
			}
		}
		is := append(append([]int{}, lead...), k)
		us := append(append([]int{}, lead...), ds[k:]...)
		if len(us) == 0 && rng.Intn(2) == 0 {
			us = []int{1} // "if expected updates rank is 0D it can be a tensor with single element"
		}
		if numElements(us) > cfg.MaxElements || numElements(is) > cfg.MaxElements {
			continue
		}
		neg := op.NegativeIndices && rng.Intn(2) == 0
		biggest := 0
		for _, d := range ds[:k] {
			biggest = max(biggest, d)
		}
		idt := pickIndexDType(rng, neg, biggest)
		tuples := numElements(lead)
		vals := make([]int64, 0, tuples*k)
		cols := make([][]int64, k)
		for c := range cols {
			if tuples > 0 {
				cols[c] = indexValues(rng, tuples, ds[c], neg)
			}
		}
		for j := 0; j < tuples; j++ {
			for c := 0; c < k; c++ {
				vals = append(vals, cols[c][j])
			}
		}
		req.Data = randTensor(rng, dt, ds)
		req.Indices = intTensor(idt, is, vals)
		req.Updates = randTensor(rng, dt, us)
		return
	}
}

// genElements: ScatterElementsUpdate, Scatter and ScatterElements: indices
// of data's rank, no larger than data outside the axis, updates of its
// shape. The ONNX axis attribute is left out now and then when it is 0.
func genElements(rng *rand.Rand, cfg Config, op *ops.Op, dt tensor.DType, req *ops.Request) {
	for {
		ds := randShape(rng, 1+rng.Intn(cfg.MaxRank), cfg.MaxDim)
		shrink(ds, cfg.MaxElements)
		r := len(ds)
		axis := rng.Intn(r)
		is := make([]int, r)
		for d := range is {
			if d == axis {
				is[d] = rng.Intn(cfg.MaxDim + 2)
				if ds[d] == 0 {
					is[d] = 0
				}
			} else {
				is[d] = rng.Intn(ds[d] + 1)
			}
		}
		if numElements(is) > cfg.MaxElements {
			continue
		}
		neg := op.NegativeIndices && rng.Intn(2) == 0
		idt := pickIndexDType(rng, neg, ds[axis])
		req.Data = randTensor(rng, dt, ds)
		req.Indices = intTensor(idt, is, indexValues(rng, numElements(is), ds[axis], neg))
		req.Updates = randTensor(rng, dt, is)
		if op.AxisRequired || axis != 0 || rng.Intn(2) == 0 {
			req.Axis = axisTensor(rng, axis, r)
		}
		return
	}
}

// sliceBound draws a start or stop for a dimension of size s in dtype dt:
// small values around and beyond the dimension, or the dtype's extremes.
func sliceBound(rng *rand.Rand, dt tensor.DType, s int) uint64 {
	switch rng.Intn(8) {
	case 0:
		return uint64(intMin(dt))
	case 1:
		if dt == tensor.Uint64 {
			return math.MaxUint64
		}
		return uint64(intMax(dt))
	}
	v := int64(rng.Intn(2*s+5) - s - 2)
	if !dt.IsSigned() && v < 0 {
		v = -v
	}
	return uint64(v)
}

func sliceStep(rng *rand.Rand, dt tensor.DType) uint64 {
	v := int64(1 + rng.Intn(3))
	if dt.IsSigned() && rng.Intn(2) == 0 {
		v = -v
	}
	if rng.Intn(12) == 0 {
		if dt.IsSigned() && rng.Intn(2) == 0 {
			return uint64(intMin(dt))
		}
		if dt == tensor.Uint64 {
			return math.MaxUint64
		}
		return uint64(intMax(dt))
	}
	return uint64(v)
}

// genSlice: SliceScatter-15 with 0 to rank(data) entries, axes given (in
// any order, negative ones included) or left to default.
func genSlice(rng *rand.Rand, cfg Config, dt tensor.DType, req *ops.Request) {
	for {
		ds := randShape(rng, 1+rng.Intn(cfg.MaxRank), cfg.MaxDim)
		shrink(ds, cfg.MaxElements)
		r := len(ds)
		n := rng.Intn(r + 1)
		withAxes := rng.Intn(5) < 3
		axes := make([]int, n)
		for i := range axes {
			axes[i] = i
		}
		if withAxes {
			perm := rng.Perm(r)
			copy(axes, perm[:n])
		}
		sdt, edt, pdt := pickIndexDType(rng, false, 0), pickIndexDType(rng, false, 0), pickIndexDType(rng, false, 0)
		start, stop, step := make([]int64, n), make([]int64, n), make([]int64, n)
		us := append([]int{}, ds...)
		for i, a := range axes {
			start[i] = int64(sliceBound(rng, sdt, ds[a]))
			stop[i] = int64(sliceBound(rng, edt, ds[a]))
			step[i] = int64(sliceStep(rng, pdt))
			us[a] = len(pythonSlice(readAs(sdt, start[i]), readAs(edt, stop[i]), readAs(pdt, step[i]), ds[a]))
		}
		req.Data = randTensor(rng, dt, ds)
		req.Updates = randTensor(rng, dt, us)
		req.Start = intTensor(sdt, []int{n}, start)
		req.Stop = intTensor(edt, []int{n}, stop)
		req.Step = intTensor(pdt, []int{n}, step)
		if withAxes {
			vals := make([]int64, n)
			neg := rng.Intn(2) == 0
			adt := pickIndexDType(rng, neg, r)
			for i, a := range axes {
				vals[i] = int64(a)
				if neg && rng.Intn(2) == 0 {
					vals[i] -= int64(r)
				}
			}
			req.Axes = intTensor(adt, []int{n}, vals)
		}
		return
	}
}

// readAs returns how a value stored with bits v in dtype dt reads (with a
// uint64 above MaxInt64 saturating, as it slices).
func readAs(dt tensor.DType, v int64) int64 {
	u := wrap(dt, uint64(v))
	if dt == tensor.Uint64 && u > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(u)
}
