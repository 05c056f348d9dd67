//go:build cgo

package gpu

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// WarmStats says what Backend.Warm did.
type WarmStats struct {
	// Pipelines is the number of distinct pipelines the plans need;
	// Compiled the number Warm compiled, the others being there already:
	// compiled by an earlier call or Warm, taken over from a kept device,
	// or compiled by an earlier process on this device and driver that
	// kept the pipeline cache (vk.Device.PipelineKnown), whose compiled
	// code the driver finds in that cache or its own.
	Pipelines, Compiled int
	// Ran is the number of plans Warm ran once on zeros, on a device
	// that compiles at the first dispatch (see Warm).
	Ran int
	// Took is Warm's wall time.
	Took time.Duration
	// CacheFile is the device's pipeline cache file ("" when
	// Options.PipelineCacheDir is "off"), and CacheBytes the size of the
	// cache data Warm saved to it. DriverCache: the data holds no
	// compiled code (vk.PipelineCacheHeaderBytes), because the driver
	// keeps it in a cache of its own (Mesa's drivers do), which later
	// processes use instead.
	CacheFile   string
	CacheBytes  int
	DriverCache bool
	// NotKept says why a later process compiles these pipelines again
	// (vk.Device.DriverCacheOff: the driver's own cache is off); "" where
	// they are kept.
	NotKept string
}

// Warm compiles the pipelines that calls of plans need, so that their
// first call does not wait for the compiler: for each plan, those of an
// Execute and of a Batch call on resident tensors, every fold pass
// included, and, where an Execute of atomic reductions takes the
// hot-target census or not by the index values (skewedIndices), both. It
// compiles on as many goroutines as GOMAXPROCS allows and
// saves the device's pipeline cache file at the end, so that a later
// process finds them too (where the driver keeps compiled code in a cache
// of its own, that cache serves; WarmStats says which). Calls on other
// goroutines go on meanwhile. Only the shapes, dtypes and attributes of
// the plans matter (ops.PrepareShapes plans a call from shapes alone).
// Warm returns the first error: a plan the device cannot run
// (ops.ErrUnsupported), a failing device, ctx done, or ErrClosed.
//
// A CPU device (lavapipe) compiles much of a pipeline only when a
// dispatch first binds it, specialised for the values it is given (on
// lavapipe, deterministic SE-sum-dup at a quarter of its bench size
// spends 3 of its 3.7 s first call there, and 0.09 s in pipeline
// creation); there Warm also runs each plan once, on zero-filled
// tensors of its shapes, which costs the call's memory and time once,
// unless it compiled nothing (every pipeline there already).
func (b *Backend) Warm(ctx context.Context, plans ...*ops.Plan) (WarmStats, error) {
	st, err := b.warm(ctx, plans)
	if err != nil || b.dev.Info().Type != vk.DeviceCPU || st.Compiled == 0 {
		// With nothing compiled, the driver has every pipeline already,
		// as its first dispatch left it.
		return st, err
	}
	start := time.Now().Add(-st.Took)
	for _, p := range plans {
		if p.DType == tensor.String {
			continue // strings move as handles through the same kernels
		}
		q, out, err := zeroed(p)
		if err != nil {
			return st, err
		}
		if err := b.Execute(ctx, q, out); err != nil {
			return st, fmt.Errorf("warm: running %s once: %w", p.Op.Name, err)
		}
		st.Ran++
	}
	st.Took = time.Since(start)
	return st, nil
}

// zeroed returns p on zero-filled data and updates of its shapes, and an
// output for it. Its indices spread over the data (index k is k modulo
// the dimension it addresses, as far as the index type holds), as a
// real call's do, rather than all meeting element 0 (which would send an
// in-order fold through passes a real call does not take); TensorScatter's
// write_indices are 0, which every cache takes.
func zeroed(p *ops.Plan) (*ops.Plan, *tensor.Tensor, error) {
	q := *p
	for _, x := range []**tensor.Tensor{&q.Data, &q.Indices, &q.Updates} {
		if *x == nil {
			continue
		}
		z, err := tensor.New((*x).DType, (*x).Shape)
		if err != nil {
			return nil, nil, err
		}
		*x = z
	}
	if idx := q.Indices; idx != nil && p.Kind != ops.KindCache && idx.DType.IsInteger() {
		size := idx.DType.Size()
		most := uint64(1)<<(8*size-1) - 1
		for k := range idx.Len() {
			dim := uint64(p.Shape[p.IndexDim(k)])
			if dim == 0 {
				break // no index is valid: the call fails as a real one would
			}
			v := uint64(k) % min(dim, most+1)
			for i := range size {
				idx.Data[k*size+i] = byte(v >> (8 * i))
			}
		}
	}
	out, err := tensor.New(p.DType, p.Shape)
	return &q, out, err
}

// warm is Warm's compilation.
func (b *Backend) warm(ctx context.Context, plans []*ops.Plan) (WarmStats, error) {
	start := time.Now()
	var st WarmStats
	if b == nil {
		return st, ErrClosed
	}
	keys, err := b.warmKeys(plans)
	if err != nil {
		return st, err
	}
	st.Pipelines = len(keys)
	var todo []pipeKey
	// fresh[i]: todo[i] was never compiled on this device and driver;
	// the others the driver finds compiled (vk.Device.PipelineKnown).
	var fresh []bool
	b.mu.Lock()
	for _, k := range keys {
		if _, ok := b.pipes[k]; !ok {
			todo = append(todo, k)
			spec, _, err := pipelineSpec(k)
			fresh = append(fresh, err != nil || !b.dev.PipelineKnown(spec))
		}
	}
	b.mu.Unlock()

	made := make([]*vk.Pipeline, len(todo))
	errs := make([]error, len(todo))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				spec, name, err := pipelineSpec(todo[i])
				if err == nil {
					made[i], err = b.dev.NewPipeline(spec)
					if err != nil {
						err = wrapVK(fmt.Errorf("pipeline %s: %w", name, err))
					}
				}
				errs[i] = err
			}
		}()
	}
feed:
	for i := range todo {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()

	b.mu.Lock()
	closed := b.closed
	for i, p := range made {
		if p == nil {
			continue
		}
		if fresh[i] {
			st.Compiled++
		}
		if !closed {
			if _, ok := b.pipes[todo[i]]; !ok {
				b.pipes[todo[i]] = p
				if fresh[i] {
					b.noteCreated(todo[i], p.CreateDuration())
				}
			}
		}
	}
	b.mu.Unlock()
	if err := errors.Join(errs...); err != nil {
		return st, err
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	if closed {
		return st, ErrClosed
	}
	n, err := b.dev.SavePipelineCache()
	st.CacheFile, st.CacheBytes = b.dev.PipelineCachePath(), n
	st.DriverCache = n <= vk.PipelineCacheHeaderBytes
	st.NotKept = b.dev.DriverCacheOff()
	st.Took = time.Since(start)
	return st, wrapVK(err)
}

// warmKeys returns the distinct pipelines that Execute and resident calls
// of plans use.
func (b *Backend) warmKeys(plans []*ops.Plan) ([]pipeKey, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	seen := map[pipeKey]bool{}
	var keys []pipeKey
	for _, p := range plans {
		for _, resident := range []bool{false, true} {
			f := b.facts(!resident)
			// Execute plans the hot-target census only where a sample of
			// the call's indices looks skewed (skewedIndices), and a plan
			// from shapes has none to read: warm both ways.
			noHot := []bool{f.noHot}
			if !resident && !f.noHot {
				noHot = append(noHot, true)
			}
			for _, off := range noHot {
				f.noHot = off
				plan := f.planCall
				if resident {
					plan = f.planResident
				}
				pl, err := plan(p)
				if err != nil {
					return nil, err
				}
				for _, ps := range append(append([]pass(nil), pl.passes...), pl.more...) {
					k := ps.pipeKey(pl.flags)
					if ps.kind == passDispatch && !seen[k] {
						seen[k] = true
						keys = append(keys, k)
					}
				}
			}
		}
	}
	return keys, nil
}
