//go:build cgo

package vk

import (
	"context"
	"errors"
	"io"

	vulkan "github.com/vulkan-go/vulkan"
)

// UploadFrom reads n bytes from r into the buffer at offset, without a
// host copy of them: where the buffer is mapped (Mapped), r reads straight
// into the buffer's memory; otherwise it reads into the staging ring one
// staging chunk at a time, each copied to the buffer while the next is
// read, so the host memory used is bounded whatever n is. It returns the
// number of bytes read from r, all of which are in the buffer. When r ends
// before n bytes the error is io.ErrUnexpectedEOF (io.EOF when it gave
// none), as io.ReadFull reports; an error of r is returned as it is.
func (b *Buffer) UploadFrom(offset, n uint64, r io.Reader) (done uint64, err error) {
	defer guard(&err)
	err = b.stream("UploadFrom", offset, n, true, func(p []byte) (int, error) { return io.ReadFull(r, p) }, &done)
	if err == io.EOF && done > 0 {
		err = io.ErrUnexpectedEOF // r ended where a staged piece began
	}
	return done, err
}

// DownloadTo writes n bytes of the buffer at offset to w, without a host
// copy of them where the buffer is mapped, else through the staging
// ring one staging chunk at a time. It returns the number of bytes w
// took, and w's error if it failed.
func (b *Buffer) DownloadTo(offset, n uint64, w io.Writer) (done uint64, err error) {
	defer guard(&err)
	err = b.stream("DownloadTo", offset, n, false, func(p []byte) (int, error) {
		m, err := w.Write(p)
		if err == nil && m < len(p) {
			err = io.ErrShortWrite
		}
		return m, err
	}, &done)
	return done, err
}

// stream moves n bytes between the buffer at offset and the host through
// move, which fills (upload) or drains (download) a piece of host-visible
// memory: the buffer's own mapping, or the staging ring. done counts the
// bytes move handled.
func (b *Buffer) stream(op string, offset, n uint64, upload bool, move func([]byte) (int, error), done *uint64) error {
	release, err := b.use(op, offset, n)
	if err != nil {
		return err
	}
	defer release()
	if n == 0 {
		return nil
	}
	if b.mapped != nil {
		m, err := move(b.mapped[offset : offset+n])
		*done = uint64(m)
		b.d.counts.pieces.Add(1)
		return err
	}
	return b.d.staged(b, offset, n, upload, func(stage []byte) (int, error) {
		m, err := move(stage)
		*done += uint64(m)
		return m, err
	})
}

// staged moves n bytes between b at offset and the host through the
// staging ring, one staging chunk per piece and submission. For an upload,
// fill writes each piece into a slot's staging memory, which is then
// copied to b while fill writes the next piece into the next slot; the
// bytes fill wrote are copied even when it fails, and staged then stops
// with its error. For a download, the copies of the first pieces are
// submitted ahead, and fill reads each piece from its slot once it holds
// b's bytes, after which the slot is resubmitted for a later piece.
// d.xferMu is held for the whole transfer, and whatever way staged
// returns, every submitted piece has completed.
func (d *Device) staged(b *Buffer, offset, n uint64, upload bool, fill func(stage []byte) (int, error)) (err error) {
	d.xferMu.Lock()
	defer d.xferMu.Unlock()
	if err := d.ensureTransfer(); err != nil {
		return err
	}
	defer func() {
		if werr := d.drainRing(); werr != nil {
			err = errors.Join(err, werr)
		}
	}()
	chunk := min(stagingChunk, d.limits.MaxAllocationBytes, n)
	if upload {
		return d.stagedUpload(b, offset, n, chunk, fill)
	}
	return d.stagedDownload(b, offset, n, chunk, fill)
}

var errShortPiece = errors.New("vk: internal error: a staged piece moved too few bytes")

// stagedUpload fills slot after slot, submitting each one's copy to b and
// waiting for a slot only when it comes round again.
func (d *Device) stagedUpload(b *Buffer, offset, n, chunk uint64, fill func(stage []byte) (int, error)) error {
	x := d.xfer
	for at, i := uint64(0), 0; at < n; i = (i + 1) % stagingSlots {
		s := &x.slots[i]
		if s.pending {
			if err := d.waitSlot(s); err != nil {
				return err
			}
		}
		stage, err := d.stage(s, true, chunk)
		if err != nil {
			return err
		}
		k := min(chunk, n-at)
		d.counts.pieces.Add(1)
		m, ferr := fill(stage.mapped[:k])
		if m > 0 {
			if err := d.copySlot(s, b, offset+at, uint64(m), true); err != nil {
				return errors.Join(ferr, err)
			}
		}
		if ferr != nil {
			return ferr
		}
		if uint64(m) < k {
			return errShortPiece
		}
		at += k
	}
	return nil
}

// stagedDownload submits the copies of the first pieces into all slots,
// then takes the pieces in order: it waits for a piece's slot, lets fill
// read it, and resubmits the slot for the next piece not yet submitted.
func (d *Device) stagedDownload(b *Buffer, offset, n, chunk uint64, fill func(stage []byte) (int, error)) error {
	x := d.xfer
	next := uint64(0) // the first byte not yet submitted
	submit := func(s *stageSlot) error {
		if _, err := d.stage(s, false, chunk); err != nil {
			return err
		}
		k := min(chunk, n-next)
		d.counts.pieces.Add(1)
		if err := d.copySlot(s, b, offset+next, k, false); err != nil {
			return err
		}
		s.at, s.n = next, k
		next += k
		return nil
	}
	for i := 0; i < stagingSlots && next < n; i++ {
		if err := submit(&x.slots[i]); err != nil {
			return err
		}
	}
	for at, i := uint64(0), 0; at < n; i = (i + 1) % stagingSlots {
		s := &x.slots[i]
		if !s.pending || s.at != at {
			return errors.New("vk: internal error: staging ring out of order")
		}
		if err := d.waitSlot(s); err != nil {
			return err
		}
		m, err := fill(s.down.mapped[:s.n])
		if err != nil {
			return err
		}
		if uint64(m) < s.n {
			return errShortPiece
		}
		at += s.n
		if next < n {
			if err := submit(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitSlot waits for a pending slot's submission; the slot is no longer
// pending either way (a failed wait means a lost device).
func (d *Device) waitSlot(s *stageSlot) error {
	s.pending = false
	return d.waitFence(context.Background(), s.fence, nil)
}

// drainRing waits for every pending slot.
func (d *Device) drainRing() error {
	var errs []error
	for i := range d.xfer.slots {
		if s := &d.xfer.slots[i]; s.pending {
			if err := d.waitSlot(s); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// copySlot records and submits the copy of n bytes between the start of
// the slot's staging buffer for the direction and b at offset, and marks
// the slot pending; d.xferMu is held and the slot is not pending.
func (d *Device) copySlot(s *stageSlot, b *Buffer, offset, n uint64, upload bool) error {
	if d.lost.Load() {
		// After a stall the slot's last copy may still run.
		return ErrDeviceLost
	}
	if err := check("vkResetCommandPool", vulkan.ResetCommandPool(d.handle, s.pool, 0)); err != nil {
		return err
	}
	bi := vulkan.CommandBufferBeginInfo{
		SType: vulkan.StructureTypeCommandBufferBeginInfo,
		Flags: vulkan.CommandBufferUsageFlags(vulkan.CommandBufferUsageOneTimeSubmitBit),
	}
	r := vulkan.BeginCommandBuffer(s.cmd, &bi)
	bi.Free()
	if err := check("vkBeginCommandBuffer", r); err != nil {
		return err
	}
	if upload {
		d.copyBuffers(s.cmd, s.up, b, []CopyRegion{{0, offset, n}})
	} else {
		d.copyBuffers(s.cmd, b, s.down, []CopyRegion{{offset, 0, n}})
	}
	d.memoryBarrier(s.cmd, vulkan.PipelineStageFlags(vulkan.PipelineStageTransferBit), allCompute|hostStage,
		vulkan.AccessFlags(vulkan.AccessTransferWriteBit), allAccess|hostAccess)
	if err := check("vkEndCommandBuffer", vulkan.EndCommandBuffer(s.cmd)); err != nil {
		return err
	}
	if err := d.queueSubmit(s.cmd, s.fence); err != nil {
		return err
	}
	s.pending = true
	return nil
}
