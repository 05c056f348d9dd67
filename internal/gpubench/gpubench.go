//go:build cgo

package gpubench

import (
	"context"
	"errors"
	"time"

	"github.com/gpuscatter/gpuscatter/bench"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpulink"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// Backend is a *gpu.Backend with the methods the benchmark and the checks
// need of it. The zero Backend, like Of(nil), acts as a closed one.
type Backend struct{ *gpu.Backend }

// The benchmark finds these methods by interface.
var (
	_ bench.DeviceCopier   = Backend{}
	_ bench.ResidentRunner = Backend{}
	_ bench.BatchRunner    = Backend{}
	_ bench.TrafficPlanner = Backend{}
	_ bench.AtomicCounter  = Backend{}
)

// Of returns b with the benchmark's methods.
func Of(b *gpu.Backend) Backend { return Backend{b} }

// link returns package gpu's registered functions; package gpu registers
// them at init, before any function of this package (which imports gpu)
// runs.
func link() gpulink.Funcs[*gpu.Backend] {
	f, _ := gpulink.Get[*gpu.Backend]()
	return f
}

// Device returns the underlying device, for its properties, capabilities,
// validation messages and live-object counts (nil for a nil Backend). It
// must not be closed.
func (b Backend) Device() *vk.Device { return link().Device(b.Backend) }

// CopyTime measures a device-to-device copy of size bytes between two
// device tensors of this backend (vkCmdCopyBuffer per chunk), timed with
// timestamp queries, and returns the median of repeats runs after one
// warm-up (it is bench.DeviceCopier). It is the bandwidth yardstick for
// the copy-dominated scatters: a scatter of reduction none moves data to
// the output much as this copy does. It returns an error wrapping
// ops.ErrUnsupported when the device has no timestamps, and gpu.ErrClosed
// for a nil or closed Backend.
func (b Backend) CopyTime(ctx context.Context, size uint64, repeats int) (time.Duration, error) {
	return link().CopyTime(b.Backend, ctx, size, repeats)
}

// CountAtomics executes p into out once with the global atomics of its
// reduction counted on the device (gpu.Options.CountAtomics) and returns
// how many it issued and the most on one output element (it is
// bench.AtomicCounter). Calls without an atomic reduction count 0.
func (b Backend) CountAtomics(ctx context.Context, p *ops.Plan, out *tensor.Tensor) (issued, maxAddress uint64, err error) {
	return link().CountAtomics(b.Backend, ctx, p, out)
}

// PlanTraffic returns, from Needs, the number of passes Execute of p
// runs and their compute dispatches, the device bytes they read and write
// in all, the device memory the call takes and the plan's description (it
// is bench.TrafficPlanner).
func (b Backend) PlanTraffic(p *ops.Plan) (passes, dispatches int, traffic, memory uint64, plan string, err error) {
	n, err := b.Needs(p)
	if err != nil {
		return 0, 0, 0, 0, "", err
	}
	return len(n.Passes), n.Dispatches, n.TrafficBytes, n.DeviceBytes, n.Plan, nil
}

// PlanResidentTraffic returns, from NeedsInPlace, the compute dispatches
// and the device bytes of p's call in place on resident tensors (it is
// bench.ResidentPlanner).
func (b Backend) PlanResidentTraffic(p *ops.Plan) (dispatches int, traffic uint64, err error) {
	n, err := b.NeedsInPlace(p)
	if err != nil {
		return 0, 0, err
	}
	return n.Dispatches, n.TrafficBytes, nil
}

// RunResident times req's call on inputs already in device memory, the
// way a runtime that keeps its tensors on the device runs it: it uploads
// req's inputs once, runs the call in place (the output is data's tensor,
// so no copy of data is made) once untimed and then repeats times timed,
// each after data is restored from the host (untimed), and downloads the
// last output into out. It returns the wall time of each timed call (it
// is bench.ResidentRunner). Every tensor it made is closed on return.
func (b Backend) RunResident(ctx context.Context, req ops.Request, repeats int, out *tensor.Tensor) (times []time.Duration, err error) {
	return b.RunResidentBatch(ctx, req, 1, repeats, out)
}

// RunResidentBatch is RunResident with each run one Batch of calls calls
// of req in place, one after the other (it is bench.BatchRunner); the
// times are those of whole batches.
func (b Backend) RunResidentBatch(ctx context.Context, req ops.Request, calls, repeats int, out *tensor.Tensor) (times []time.Duration, err error) {
	return b.runResident(ctx, req, calls, nil, repeats, out)
}

// RunResidentSteps is RunResidentBatch for a decode loop: call i of each
// batch takes steps[i] as its indices (uploaded once, untimed), in place
// on data's tensor, so every call sees the ones before it (it is
// bench.StepRunner).
func (b Backend) RunResidentSteps(ctx context.Context, req ops.Request, steps []*tensor.Tensor, repeats int, out *tensor.Tensor) (times []time.Duration, err error) {
	return b.runResident(ctx, req, len(steps), steps, repeats, out)
}

// runResident runs RunResidentBatch's batches; call i takes steps[i] as
// its indices when steps is not nil.
func (b Backend) runResident(ctx context.Context, req ops.Request, calls int, steps []*tensor.Tensor, repeats int, out *tensor.Tensor) (times []time.Duration, err error) {
	if calls < 1 {
		return nil, errors.New("gpubench: a batch needs at least one call")
	}
	var open []*gpu.Tensor
	defer func() {
		for _, t := range open {
			err = errors.Join(err, t.Close())
		}
	}()
	c := gpu.CallOf(req)
	for _, in := range []struct {
		host *tensor.Tensor
		dev  **gpu.Tensor
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
	stepIndices := make([]*gpu.Tensor, len(steps))
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
func (b Backend) LastRoundTrips() (submits, waits, transferPieces int) {
	s := b.LastStats()
	return s.Submits, s.Waits, s.TransferPieces
}
