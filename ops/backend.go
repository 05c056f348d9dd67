package ops

import (
	"context"
	"errors"

	"github.com/gpuscatter/gpuscatter/tensor"
)

// Backend executes plans. The CPU reference (package cpuref) and the Vulkan
// backend implement it; ops/opstest holds the conformance suite every
// implementation runs.
type Backend interface {
	// Name identifies the backend and its device, e.g. "cpu" or
	// "vulkan: llvmpipe (LLVM 15.0.6, 256 bits)".
	Name() string
	// Execute writes the result of p into out, which must have p's dtype and
	// shape (CheckOutput). out may share storage with p.Data (in-place);
	// it must not share storage with the other inputs. The inputs are never
	// modified otherwise. On error, out holds either its previous contents or
	// a copy of data, never a partial scatter, with one exception: with
	// p.SkipBadIndices an error wrapping ErrIndexRange comes back once out
	// holds the result with the bad indices' updates left out (Request).
	Execute(ctx context.Context, p *Plan, out *tensor.Tensor) error
	// Close releases the backend's resources. It is idempotent.
	Close() error
}

// CheckOutput reports whether out can receive the result of p.
func (p *Plan) CheckOutput(out *tensor.Tensor) error {
	if out == nil {
		return newError(p.Op.Name, "out", ErrOutput, "out is nil")
	}
	if err := out.Check(); err != nil {
		return newError(p.Op.Name, "out", ErrOutput, "out: %v", err)
	}
	if out.DType != p.DType || !tensor.SameShape(out.Shape, p.Shape) {
		return newError(p.Op.Name, "out", ErrOutput, "out is %v%s, want %v%s (the dtype and shape of %s)",
			out.DType, tensor.FormatShape(out.Shape), p.DType, tensor.FormatShape(p.Shape), p.Op.InputName("data"))
	}
	return nil
}

// Run validates req, allocates the output and executes it on b. With
// req.SkipBadIndices and an index out of range it returns both the output,
// holding every update whose index is valid, and the error naming the
// first bad index (wrapping ErrIndexRange).
func Run(ctx context.Context, b Backend, req Request) (*tensor.Tensor, error) {
	p, err := Prepare(req)
	if err != nil {
		return nil, err
	}
	out, err := tensor.New(p.DType, p.Shape)
	if err != nil {
		return nil, newError(p.Op.Name, "data", ErrInvalidTensor, "data: %v", err)
	}
	if p.DType == tensor.String {
		// The output has data's dtype exactly, string width included.
		out.StringFormat = req.Data.StringFormat
	}
	if err := b.Execute(ctx, p, out); err != nil {
		if p.SkipBadIndices && errors.Is(err, ErrIndexRange) {
			return out, err
		}
		return nil, err
	}
	return out, nil
}
