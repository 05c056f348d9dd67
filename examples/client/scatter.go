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

// scatter is gpuscatter's part of the command buffer, the one place where
// the application hands package gpu its device, its buffers and its
// command buffer.
type scatter struct {
	b       *gpu.Backend
	rec     *gpu.Recording
	scratch *vkapp.Buffer // the application's, for the recording's own tensors
	dev     *vkapp.Device
	// submits counts gpuscatter's calls of the application's submit hook;
	// atRecord is the count when Record began.
	submits, atRecord int
	stats             gpu.Stats
	scratchBytes      uint64
}

// recordScatter opens gpuscatter on the application's device, wraps the
// table, indices and updates buffers as tensors, and records the
// ScatterND-18 add of the update rows into the table, in place, into cmd.
func recordScatter(ctx context.Context, a *app, cmd vk.CommandBuffer) (*scatter, error) {
	s := &scatter{dev: a.dev}
	ext := a.dev.External()
	// The application submits from this goroutine only; the hook
	// counts gpuscatter's submissions.
	ext.Submit = func(submit func() error) error {
		s.submits++
		return submit()
	}
	b, err := gpu.OpenExternal(ext, gpu.Options{Deterministic: true})
	if err != nil {
		return nil, fmt.Errorf("gpu.OpenExternal: %w", err)
	}
	s.b = b
	cfg := a.cfg
	wrap := func(buf *vkapp.Buffer, dt tensor.DType, shape ...int) (*gpu.Tensor, error) {
		return b.WrapBuffer(buf.Uint64(), 0, buf.Size, dt, shape, uint32(buf.Usage))
	}
	table, err := wrap(a.table, tensor.Float32, cfg.rows, cfg.cols)
	if err != nil {
		s.close()
		return nil, err
	}
	indices, err := wrap(a.indices, tensor.Int32, cfg.updates, 1)
	if err != nil {
		s.close()
		return nil, err
	}
	updates, err := wrap(a.updates, tensor.Float32, cfg.updates, cfg.cols)
	if err != nil {
		s.close()
		return nil, err
	}
	batch := b.NewBatch()
	if err := batch.Add(gpu.Call{Op: "ScatterND-18", Reduction: "add", Data: table, Indices: indices, Updates: updates, Out: table}); err != nil {
		s.close()
		return nil, err
	}
	// The batch's own tensors (the sort's keys and lists) go into a
	// buffer of the application's, of the size gpuscatter asks for.
	var opt gpu.RecordOptions
	if s.scratchBytes, err = batch.ScratchBytes(); err != nil {
		s.close()
		return nil, err
	}
	if s.scratchBytes > 0 {
		if s.scratch, err = a.dev.NewBuffer(s.scratchBytes, a.table.Usage, false); err != nil {
			s.close()
			return nil, err
		}
		opt = gpu.RecordOptions{Scratch: s.scratch.Uint64(), ScratchSize: s.scratchBytes, ScratchUsage: uint32(s.scratch.Usage)}
	}
	s.atRecord = s.submits
	if s.rec, err = batch.Record(ctx, unsafe.Pointer(cmd), opt); err != nil {
		s.close()
		return nil, fmt.Errorf("gpu.Batch.Record: %w", err)
	}
	return s, nil
}

// result reads the recording's outcome once the application's fence is
// signalled, and fails if gpuscatter submitted, waited or copied more
// than its parameters and error words through the host while recorded.
func (s *scatter) result(ctx context.Context) error {
	if err := s.rec.Result(ctx); err != nil {
		return err
	}
	s.stats = s.rec.Stats()
	if n := s.submits - s.atRecord; n != 0 || s.stats.Submits != 0 || s.stats.Waits != 0 {
		return fmt.Errorf("gpuscatter submitted %d times (hook %d) and waited %d times while recorded", s.stats.Submits, n, s.stats.Waits)
	}
	// A batch's host copies are its parameters and its error words; a
	// tensor's bytes through the host would be more.
	if s.stats.TransferPieces > 2 {
		return fmt.Errorf("gpuscatter made %d host copies while recorded, more than its parameters and error words", s.stats.TransferPieces)
	}
	return nil
}

func (s *scatter) report() string {
	return fmt.Sprintf("gpuscatter: recorded into the application's command buffer: %d dispatches (%s), %d scratch bytes in the application's buffer; "+
		"0 submissions and 0 waits of its own while recorded (%d before, opening), %d host copies (its parameters and error words), no scatter byte through the host",
		s.stats.Dispatches, strings.Join(s.stats.Variants, ", "), s.scratchBytes, s.atRecord, s.stats.TransferPieces)
}

// close releases the recording and closes the backend; the application's
// device, queue and buffers stay. It is idempotent.
func (s *scatter) close() error {
	if s.b == nil {
		return nil
	}
	err := s.rec.Release()
	if cerr := s.b.Close(); err == nil {
		err = cerr
	}
	s.b, s.rec = nil, nil
	if s.scratch != nil {
		s.dev.DestroyBuffer(s.scratch)
		s.scratch = nil
	}
	return err
}
