//go:build cgo

package gpu

import (
	"context"
	"errors"
	"time"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// RunResident times req's call on inputs already in device memory, the
// way a runtime that keeps its tensors on the device runs it: it uploads
// req's inputs once, runs the call in place (the output is data's tensor,
// so no copy of data is made) once untimed and then repeats times timed,
// each after data is restored from the host (untimed), and downloads the
// last output into out. It returns the wall time of each timed call (it
// is bench.ResidentRunner). Every tensor it made is closed on return.
func (b *Backend) RunResident(ctx context.Context, req ops.Request, repeats int, out *tensor.Tensor) (times []time.Duration, err error) {
	return b.RunResidentBatch(ctx, req, 1, repeats, out)
}

// RunResidentBatch is RunResident with each run one Batch of calls calls
// of req in place, one after the other (it is bench.BatchRunner); the
// times are those of whole batches.
func (b *Backend) RunResidentBatch(ctx context.Context, req ops.Request, calls, repeats int, out *tensor.Tensor) (times []time.Duration, err error) {
	return b.runResident(ctx, req, calls, nil, repeats, out)
}

// RunResidentSteps is RunResidentBatch for a decode loop: call i of each
// batch takes steps[i] as its indices (uploaded once, untimed), in place
// on data's tensor, so every call sees the ones before it (it is
// bench.StepRunner).
func (b *Backend) RunResidentSteps(ctx context.Context, req ops.Request, steps []*tensor.Tensor, repeats int, out *tensor.Tensor) (times []time.Duration, err error) {
	return b.runResident(ctx, req, len(steps), steps, repeats, out)
}

// runResident runs RunResidentBatch's batches; call i takes steps[i] as
// its indices when steps is not nil.
func (b *Backend) runResident(ctx context.Context, req ops.Request, calls int, steps []*tensor.Tensor, repeats int, out *tensor.Tensor) (times []time.Duration, err error) {
	if calls < 1 {
		return nil, errors.New("gpu: a batch needs at least one call")
	}
	var open []*Tensor
	defer func() {
		for _, t := range open {
			err = errors.Join(err, t.Close())
		}
	}()
	c := Call{Op: req.Op, Axis: req.Axis, Start: req.Start, Stop: req.Stop, Step: req.Step, Axes: req.Axes,
		Reduction: req.Reduction, UseInitVal: req.UseInitVal, Mode: req.Mode}
	for _, in := range []struct {
		host *tensor.Tensor
		dev  **Tensor
	}{{req.Data, &c.Data}, {req.Indices, &c.Indices}, {req.Updates, &c.Updates}} {
		if in.host == nil {
			continue
		}
		if *in.dev, err = b.Upload(ctx, in.host); err != nil {
			return nil, err
		}
		open = append(open, *in.dev)
	}
	if c.Data == nil {
		return nil, &ops.Error{Op: req.Op, Input: "data", Err: ops.ErrMissingInput, Msg: "data is missing"}
	}
	c.Out = c.Data
	stepIndices := make([]*Tensor, len(steps))
	for i, x := range steps {
		if stepIndices[i], err = b.Upload(ctx, x); err != nil {
			return nil, err
		}
		open = append(open, stepIndices[i])
	}
	for i := 0; i <= repeats; i++ {
		if err := c.Data.Write(ctx, req.Data); err != nil {
			return nil, err
		}
		start := time.Now()
		bt := b.NewBatch()
		for k := range calls {
			if steps != nil {
				c.Indices = stepIndices[k]
			}
			if err := bt.Add(c); err != nil {
				return nil, err
			}
		}
		sub, err := bt.Submit(ctx)
		if err != nil {
			return nil, err
		}
		if err := sub.Wait(ctx); err != nil {
			return nil, err
		}
		if i > 0 {
			times = append(times, time.Since(start))
		}
	}
	return times, c.Data.Read(ctx, out)
}

// LastRoundTrips returns the host round trips of the last call or batch
// that ran on the device (Stats.Submits, Waits and TransferPieces; it is
// bench.BatchRunner).
func (b *Backend) LastRoundTrips() (submits, waits, transferPieces int) {
	s := b.LastStats()
	return s.Submits, s.Waits, s.TransferPieces
}
