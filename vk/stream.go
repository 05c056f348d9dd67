//go:build cgo

package vk

import (
	"context"
	"errors"
	"fmt"
	"io"

	vulkan "github.com/vulkan-go/vulkan"
)

// UploadFrom reads n bytes from r into the buffer at offset, without a
// host copy of them: where the buffer is mapped (Mapped), r reads straight
// into the buffer's memory; otherwise it reads into the staging buffer one
// staging chunk at a time, each copied to the buffer before the next is
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
// buffer one staging chunk at a time. It returns the number of bytes w
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
// memory: the buffer's own mapping, or the staging buffer. done counts the
// bytes move handled.
func (b *Buffer) stream(op string, offset, n uint64, upload bool, move func([]byte) (int, error), done *uint64) error {
	if err := b.d.enter(); err != nil {
		return err
	}
	defer b.d.leave()
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return fmt.Errorf("%w: buffer", ErrClosed)
	}
	if err := b.checkRange(op, offset, n); err != nil {
		return err
	}
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
// staging buffer, one staging chunk per submission. For an upload, fill
// writes each piece into the staging memory before it is copied to b; the
// bytes it wrote are copied even when it fails, and staged then stops
// with its error. For a download, fill reads each piece from the staging
// memory once it holds b's bytes. d.xferMu is held for one piece at a
// time, so a slow fill does not hold other transfers up for longer.
func (d *Device) staged(b *Buffer, offset, n uint64, upload bool, fill func(stage []byte) (int, error)) error {
	chunk := min(stagingChunk, d.limits.MaxAllocationBytes, n)
	for at := uint64(0); at < n; {
		k := min(chunk, n-at)
		m, err := d.stagedPiece(b, offset+at, k, upload, fill)
		if err != nil {
			return err
		}
		if m < k {
			return errors.New("vk: internal error: a staged piece moved too few bytes")
		}
		at += k
	}
	return nil
}

// stagedPiece moves one piece of k bytes (at most the staging chunk) and
// returns how many bytes fill handled.
func (d *Device) stagedPiece(b *Buffer, at, k uint64, upload bool, fill func(stage []byte) (int, error)) (uint64, error) {
	d.xferMu.Lock()
	defer d.xferMu.Unlock()
	if err := d.ensureTransfer(k); err != nil {
		return 0, err
	}
	x := d.xfer
	stage := x.staging.mapped[:k]
	d.counts.pieces.Add(1)
	if upload {
		m, ferr := fill(stage)
		if m > 0 {
			if err := d.copyStaged(b, at, uint64(m), true); err != nil {
				return uint64(m), errors.Join(ferr, err)
			}
		}
		return uint64(m), ferr
	}
	if err := d.copyStaged(b, at, k, false); err != nil {
		return 0, err
	}
	m, err := fill(stage)
	return uint64(m), err
}

// copyStaged copies n bytes between the staging buffer's start and b at
// offset in one submission and waits for it; d.xferMu is held and the
// staging buffer holds at least n bytes.
func (d *Device) copyStaged(b *Buffer, offset, n uint64, upload bool) error {
	x := d.xfer
	if err := check("vkResetCommandPool", vulkan.ResetCommandPool(d.handle, x.pool, 0)); err != nil {
		return err
	}
	bi := vulkan.CommandBufferBeginInfo{
		SType: vulkan.StructureTypeCommandBufferBeginInfo,
		Flags: vulkan.CommandBufferUsageFlags(vulkan.CommandBufferUsageOneTimeSubmitBit),
	}
	r := vulkan.BeginCommandBuffer(x.cmd, &bi)
	bi.Free()
	if err := check("vkBeginCommandBuffer", r); err != nil {
		return err
	}
	if upload {
		d.cmdCopyBuffer(x.cmd, x.staging.handle, b.handle, []CopyRegion{{0, offset, n}})
	} else {
		d.cmdCopyBuffer(x.cmd, b.handle, x.staging.handle, []CopyRegion{{offset, 0, n}})
	}
	d.memoryBarrier(x.cmd, vulkan.PipelineStageFlags(vulkan.PipelineStageTransferBit), allCompute|hostStage,
		vulkan.AccessFlags(vulkan.AccessTransferWriteBit), allAccess|hostAccess)
	if err := check("vkEndCommandBuffer", vulkan.EndCommandBuffer(x.cmd)); err != nil {
		return err
	}
	return d.submit(context.Background(), x.cmd, x.fence)
}
