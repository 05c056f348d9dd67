// Package backendkit holds what the project's backends (cpuref, gpu) share
// in implementing ops.Backend and a user of ops has no need of.
package backendkit

import (
	"context"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// BeginExecute makes the checks every Backend.Execute opens with: p is not
// nil, out can receive p's result (Plan.CheckOutput), and ctx is not done.
// It returns the context to use (context.Background when ctx is nil).
// prefix starts the message of the nil-plan error, e.g. "cpuref".
func BeginExecute(ctx context.Context, prefix string, p *ops.Plan, out *tensor.Tensor) (context.Context, error) {
	if p == nil {
		return nil, &ops.Error{Input: "plan", Err: ops.ErrMissingInput, Msg: prefix + ": plan is nil"}
	}
	if err := p.CheckOutput(out); err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return ctx, nil
}
