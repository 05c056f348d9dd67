package bench

import (
	"context"

	"github.com/gpuscatter/gpuscatter/ops"
)

// Bounds returns, for every output element of req, how far the result of a
// backend whose float sum, sub, prod and mean reductions fold in another
// order than the CPU reference's may be from it: the bound Compare takes,
// the one bench itself applies. tol is relative to the magnitude of the
// terms of each element (0 means DefaultTolerance; float16 and bfloat16
// get at least 8 machine epsilons). Bounds returns nil when req's output
// must match bit for bit: every other element type and reduction.
func Bounds(ctx context.Context, req ops.Request, tol float64) ([]float64, error) {
	p, err := ops.PrepareShapes(req)
	if err != nil {
		return nil, err
	}
	if !tolerant(p) {
		return nil, nil
	}
	if tol == 0 {
		tol = DefaultTolerance
	}
	return bounds(ctx, req, effectiveTolerance(p.DType, tol))
}
