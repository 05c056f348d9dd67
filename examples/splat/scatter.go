//go:build cgo

package main

import (
	"context"
	"fmt"
	"strings"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"

	"github.com/gpuscatter/gpuscatter/examples/internal/vkapp"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// splatter is gpuscatter's part of each frame, the one place where the
// application hands package gpu its device, its buffers and its command
// buffers.
type splatter struct {
	b                  *gpu.Backend
	grid, cells, ones  *gpu.Tensor
	recs               [inFlight]*gpu.Recording
	submits, atFrames  int // calls of the submit hook: all, and before the first frame
	frames, dispatches int
	variants           []string
}

// newSplatter opens gpuscatter on the application's device and wraps its
// grid, cells and ones buffers as tensors.
func newSplatter(ctx context.Context, a *app) (*splatter, error) {
	s := &splatter{}
	ext := a.dev.External()
	// The application submits and presents from this goroutine only;
	// the hook counts gpuscatter's submissions.
	ext.Submit = func(submit func() error) error {
		s.submits++
		return submit()
	}
	b, err := gpu.OpenExternal(ext, gpu.Options{})
	if err != nil {
		return nil, fmt.Errorf("gpu.OpenExternal: %w", err)
	}
	s.b = b
	wrap := func(buf *vkapp.Buffer, n int) (*gpu.Tensor, error) {
		return b.WrapBuffer(buf.Uint64(), 0, buf.Size, tensor.Int32, []int{n}, uint32(buf.Usage))
	}
	if s.grid, err = wrap(a.grid, a.cfg.gw*a.cfg.gh); err == nil {
		if s.cells, err = wrap(a.cells, a.cfg.particles); err == nil {
			s.ones, err = wrap(a.ones, a.cfg.particles)
		}
	}
	if err != nil {
		s.close()
		return nil, err
	}
	s.atFrames = s.submits
	return s, nil
}

// record records the frame's ScatterElements-18 add of the ones into the
// grid at the cells (axis 0), in place, into cmd, for the frame in slot.
func (s *splatter) record(ctx context.Context, cmd vk.CommandBuffer, slot int) error {
	batch := s.b.NewBatch()
	if err := batch.Add(gpu.Call{Op: "ScatterElements-18", Reduction: "add", Data: s.grid, Indices: s.cells, Updates: s.ones, Out: s.grid}); err != nil {
		return err
	}
	rec, err := batch.Record(ctx, unsafe.Pointer(cmd), gpu.RecordOptions{})
	if err != nil {
		return fmt.Errorf("gpu.Batch.Record: %w", err)
	}
	s.recs[slot] = rec
	return nil
}

// finish reads the outcome of the frame in slot after its fence, checks
// that gpuscatter neither submitted nor waited for it, and releases it.
func (s *splatter) finish(ctx context.Context, slot int) error {
	rec := s.recs[slot]
	s.recs[slot] = nil
	if err := rec.Result(ctx); err != nil {
		rec.Release()
		return err
	}
	st := rec.Stats()
	if err := rec.Release(); err != nil {
		return err
	}
	if st.Submits != 0 || st.Waits != 0 || s.submits != s.atFrames {
		return fmt.Errorf("gpuscatter submitted %d times (hook %d) and waited %d times in the frames", st.Submits, s.submits-s.atFrames, st.Waits)
	}
	s.frames++
	s.dispatches, s.variants = st.Dispatches, st.Variants
	return nil
}

func (s *splatter) report() string {
	return fmt.Sprintf("gpuscatter: recorded into %d frames' command buffers, %d dispatches each (%s); 0 submissions and 0 waits of its own in them",
		s.frames, s.dispatches, strings.Join(s.variants, ", "))
}

// close releases what is still recorded and closes the backend; the
// application's device, queue and buffers stay. It is idempotent.
func (s *splatter) close() error {
	if s.b == nil {
		return nil
	}
	var err error
	for i, rec := range s.recs {
		if rerr := rec.Release(); err == nil {
			err = rerr
		}
		s.recs[i] = nil
	}
	if cerr := s.b.Close(); err == nil {
		err = cerr
	}
	s.b = nil
	return err
}
