package backendkit

import (
	"context"
	"errors"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// ExecuteFunc is a backend's Execute of a plan (ops.Backend.Execute).
type ExecuteFunc func(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error

// ExecuteSkipping runs a plan with SkipBadIndices on a backend whose own
// kernels stop at a bad index: first as it is, and, when that fails with
// ErrIndexRange (having written nothing, or only a copy of data, to out),
// again on a padded copy in which every bad index is sent to a padding
// that the result then leaves out.
//
// The padding grows the data dimension the bad indices address: by one
// along the axis for ScatterUpdate and the ScatterElements family, by one
// along dimension 0 for ScatterND tuples (a bad tuple addresses row
// [s0, 0, ...]), and by sequence_length along the axis for a linear
// TensorScatter (a bad write index becomes max_sequence_length). The
// updates a bad index addresses land there and nowhere else, so every
// other element of the result is exactly the call's without them: the
// last writer among the rest wins, reductions fold the rest (mean counts
// them alone), and use_init_val applies to the elements they reach. The
// indices of the second run are the first's normalised values as int64.
//
// It returns the first bad index's error (Plan.IndexAt's, in row-major
// order) once out holds that result, the first run's other errors as they
// are, and nil when no index is bad. The second run costs a copy of data
// with its padding, the backend's call on it, and a copy back; it happens
// only when an index is bad.
func ExecuteSkipping(ctx context.Context, p *ops.Plan, out *tensor.Tensor, exec ExecuteFunc) error {
	err := exec(ctx, p, out)
	if err == nil || !p.SkipBadIndices || !errors.Is(err, ops.ErrIndexRange) {
		return err
	}
	return executePadded(ctx, p, out, exec)
}

// executePadded is ExecuteSkipping's second run.
func executePadded(ctx context.Context, p *ops.Plan, out *tensor.Tensor, exec ExecuteFunc) error {
	n := p.NumIndices()
	vals := make([]int64, n)
	bad := make([]bool, n)
	var first error
	for pos := range n {
		v, err := p.IndexAt(pos)
		if err != nil {
			if first == nil {
				first = err
			}
			bad[pos] = true
			continue
		}
		vals[pos] = int64(v)
	}
	if first == nil {
		// The first run failed for another reason than these indices.
		return exec(ctx, p, out)
	}
	outLen, _ := tensor.NumElements(p.Shape) // a plan's shape is valid
	if p.NumUpdates() == 0 || outLen == 0 {
		// No update lands anywhere: the result is data.
		copyInto(out, p.Data)
		return first
	}
	dim, by := padding(p)
	for pos := range n {
		if !bad[pos] {
			continue
		}
		switch p.Kind {
		case ops.KindND:
			// The tuple's first component goes to the padding row, the
			// others to 0 (every data dimension is non-empty here).
			t := pos - pos%p.TupleLen
			for c := range p.TupleLen {
				vals[t+c] = 0
				bad[t+c] = true
			}
			vals[t] = int64(p.Shape[0])
		default:
			vals[pos] = int64(p.Shape[dim])
		}
	}
	padded := padShape(p.Shape, dim, by)
	data, err := tensor.New(p.DType, padded)
	if err != nil {
		return err
	}
	data.StringFormat = p.Data.StringFormat
	copyPadded(data, p.Data, p.Shape, dim, by, true)
	indices, err := tensor.FromSlice(p.Indices.Shape, vals)
	if err != nil {
		return err
	}
	q := *p
	q.SkipBadIndices = false
	q.Shape = padded
	q.Strides = tensor.Strides(padded)
	q.Data = data
	q.Indices = indices
	if err := exec(ctx, &q, data); err != nil {
		return err
	}
	copyPadded(out, data, p.Shape, dim, by, false)
	return first
}

// padding returns the dimension a plan's padding grows and by how much.
func padding(p *ops.Plan) (dim, by int) {
	switch p.Kind {
	case ops.KindND:
		return 0, 1
	case ops.KindCache:
		return p.Axis, p.J
	}
	return p.Axis, 1
}

func padShape(shape []int, dim, by int) []int {
	s := append([]int(nil), shape...)
	s[dim] += by
	return s
}

// copyPadded copies between a tensor of shape and one whose dimension dim
// is by longer, the extra positions last: into the padded one (in) or out
// of it. The padding itself is left as it is.
func copyPadded(dst, src *tensor.Tensor, shape []int, dim, by int, in bool) {
	outer := 1
	for _, d := range shape[:dim] {
		outer *= d
	}
	inner := 1
	for _, d := range shape[dim+1:] {
		inner *= d
	}
	run := shape[dim] * inner
	prun := (shape[dim] + by) * inner
	for o := range outer {
		a, b := o*run, o*prun // the plain and the padded offsets
		if in {
			a, b = b, a
		}
		// dst at a, src at b
		if dst.DType == tensor.String {
			copy(dst.Strings[a:a+run], src.Strings[b:b+run])
			continue
		}
		es := dst.DType.Size()
		copy(dst.Data[a*es:(a+run)*es], src.Data[b*es:(b+run)*es])
	}
}

// copyInto makes dst a copy of src (same dtype and shape) unless they are
// the same memory.
func copyInto(dst, src *tensor.Tensor) {
	if dst.DType == tensor.String {
		copy(dst.Strings, src.Strings)
		return
	}
	copy(dst.Data, src.Data)
}
