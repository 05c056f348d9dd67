package opstest

import (
	"math"
	"math/rand"
	"strings"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// RandomBadRequest returns an invalid request and the sentinel its error
// must wrap: a valid RandomRequest with one thing broken (an index out of
// range, an updates shape with an extra dimension, an axis out of range,
// float indices, updates of another dtype, a reduction the version or dtype
// does not take, a missing updates input, use_init_val where the operator
// has none, and for SliceScatter-15 a zero step, a repeated axis or a stop
// of the wrong length). The out-of-range index is only found at execution
// (Plan.IndexAt); the others fail in ops.Prepare.
func RandomBadRequest(rng *rand.Rand, cfg Config) (ops.Request, error) {
	for {
		req := RandomRequest(rng, cfg)
		op, err := ops.Lookup(req.Op)
		if err != nil {
			panic(err)
		}
		type mutation func() (bool, error)
		muts := []mutation{
			func() (bool, error) { return badIndex(rng, op, &req), ops.ErrIndexRange },
			func() (bool, error) {
				us := append(append([]int{}, req.Updates.Shape...), 2)
				if numElements(us) > 2*cfg.withDefaults().MaxElements {
					return false, nil
				}
				req.Updates = randTensor(rng, req.Data.DType, us)
				return true, ops.ErrShape
			},
			func() (bool, error) {
				if !op.TakesAxis() {
					return false, nil
				}
				r := int64(req.Data.Rank())
				v := r + int64(rng.Intn(3))
				if rng.Intn(2) == 0 {
					v = -r - 1 - int64(rng.Intn(3))
				}
				req.Axis = intTensor(pickIndexDType(rng, v < 0, int(r)+3), []int{}, []int64{v})
				return true, ops.ErrAxis
			},
			func() (bool, error) {
				if !op.TakesIndices() || req.Indices == nil {
					return false, nil
				}
				ft := tensor.Float32
				if rng.Intn(2) == 0 {
					ft = tensor.Bool
				}
				req.Indices = randTensor(rng, ft, req.Indices.Shape)
				return true, ops.ErrDType
			},
			func() (bool, error) {
				for {
					dt := tensor.DTypes()[rng.Intn(len(tensor.DTypes()))]
					if dt != req.Data.DType && (dt.IsNumeric() || op.AnyDType) {
						req.Updates = randTensor(rng, dt, req.Updates.Shape)
						return true, ops.ErrDType
					}
				}
			},
			func() (bool, error) {
				names := []string{"sum", "sub", "prod", "min", "max", "mean", "add", "mul", "avg", "replace"}
				for _, i := range rng.Perm(len(names)) {
					name := names[i]
					r, ok := op.Reductions[name]
					dt := req.Data.DType
					if !ok || !r.Accepts(dt) {
						req.Reduction = name
						return true, ops.ErrReduction
					}
				}
				return false, nil
			},
			func() (bool, error) {
				req.Updates = nil
				return true, ops.ErrMissingInput
			},
			func() (bool, error) {
				if op.TakesUseInitVal() {
					return false, nil
				}
				f := rng.Intn(2) == 0
				req.UseInitVal = &f
				return true, ops.ErrUnexpectedInput
			},
			func() (bool, error) {
				if !op.TakesSlice() || req.Step.Len() == 0 {
					return false, nil
				}
				setNum(req.Step, rng.Intn(req.Step.Len()), num{})
				return true, ops.ErrSlice
			},
			func() (bool, error) {
				if !op.TakesSlice() || req.Start.Len() < 2 {
					return false, nil
				}
				n, r := req.Start.Len(), int64(req.Data.Rank())
				axes := make([]int64, n)
				for i := range axes {
					axes[i] = int64(i)
				}
				if req.Axes != nil {
					for i := range axes {
						axes[i], _ = readIndex(req.Axes, i)
					}
				}
				i, j := rng.Intn(n), rng.Intn(n-1)
				if j >= i {
					j++
				}
				axes[j] = axes[i] // the same axis, spelled as is or from the end
				if axes[j] >= 0 && rng.Intn(2) == 0 {
					axes[j] -= r
				} else if axes[j] < 0 && rng.Intn(2) == 0 {
					axes[j] += r
				}
				req.Axes = intTensor(tensor.Int64, []int{n}, axes)
				return true, ops.ErrAxis
			},
			func() (bool, error) {
				if !op.TakesSlice() {
					return false, nil
				}
				n := req.Stop.Len() + 1
				req.Stop = intTensor(tensor.Int32, []int{n}, make([]int64, n))
				return true, ops.ErrShape
			},
		}
		if ok, sentinel := muts[rng.Intn(len(muts))](); ok {
			return req, sentinel
		}
	}
}

// badIndex puts an out-of-range value into one element of req.Indices, when
// the request has updates and indices to spoil. The value is one past
// either end of the range, or a uint64 above MaxInt64.
func badIndex(rng *rand.Rand, op *ops.Op, req *ops.Request) bool {
	ind := req.Indices
	if ind == nil || ind.Len() == 0 || req.Updates.Len() == 0 {
		return false
	}
	pos := rng.Intn(ind.Len())
	if op.Kind == ops.KindCache {
		return badWriteIndex(rng, req, pos)
	}
	var dim int
	switch op.Kind {
	case ops.KindND:
		dim = pos % ind.Shape[ind.Rank()-1]
	default:
		var a int64 // the ONNX axis attribute defaults to 0
		if req.Axis != nil {
			a, _ = readIndex(req.Axis, 0)
		}
		if a < 0 {
			a += int64(req.Data.Rank())
		}
		dim = int(a)
	}
	s := int64(req.Data.Shape[dim])
	lo := int64(0)
	if op.NegativeIndices {
		lo = -s
	}
	// One past either end, where the dtype can hold it.
	var candidates []uint64
	if fits(ind.DType, s) {
		candidates = append(candidates, uint64(s))
	}
	if fits(ind.DType, lo-1) {
		candidates = append(candidates, uint64(lo-1))
	}
	if ind.DType == tensor.Uint64 {
		candidates = append(candidates, math.MaxInt64+1+uint64(rng.Intn(1000)))
	}
	if len(candidates) == 0 {
		return false
	}
	setNum(ind, pos, num{u: candidates[rng.Intn(len(candidates))]})
	return true
}

// badWriteIndex spoils write_indices[pos] of a linear TensorScatter-24
// request: one past either end of [0, max_sequence_length -
// sequence_length]. Circular requests have no bad write index.
func badWriteIndex(rng *rand.Rand, req *ops.Request, pos int) bool {
	if strings.EqualFold(req.Mode, "circular") {
		return false
	}
	axis := int64(-2)
	if req.Axis != nil {
		axis, _ = readIndex(req.Axis, 0)
	}
	if axis < 0 {
		axis += int64(req.Data.Rank())
	}
	hi := int64(req.Data.Shape[axis] - req.Updates.Shape[axis])
	v := []int64{-1, hi + 1, math.MinInt64, math.MaxInt64}[rng.Intn(4)]
	setNum(req.Indices, pos, num{u: uint64(v)})
	return true
}
