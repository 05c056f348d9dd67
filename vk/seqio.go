//go:build cgo

package vk

import (
	"cmp"
	"fmt"
	"slices"
)

// hostArea is host-visible memory of a Sequence that its recorded
// commands copy from (uploads) or into (readbacks), filled from its start
// during one recording. A reservation that does not fit gets a bigger
// buffer; the smaller ones stay alive until Reset, since recorded commands
// may use them.
type hostArea struct {
	readback bool
	cur      *Buffer
	used     uint64
	old      []*Buffer // outgrown during this recording
}

const (
	// hostAreaAlign aligns reservations, for copies a device runs faster.
	hostAreaAlign = 16
	// hostAreaMin is the size of an area's first buffer.
	hostAreaMin = 64 << 10
)

// reserve returns a buffer of the area and an offset in it where n bytes
// are free, and takes them.
func (a *hostArea) reserve(d *Device, n uint64) (*Buffer, uint64, error) {
	at := (a.used + hostAreaAlign - 1) &^ (hostAreaAlign - 1)
	if a.cur == nil || at > a.cur.size || n > a.cur.size-at {
		size := uint64(hostAreaMin)
		if a.cur != nil {
			size = 2 * a.cur.size
		}
		size = max(size, n)
		if size > d.limits.MaxAllocationBytes {
			size = max(n, d.limits.MaxAllocationBytes)
		}
		if n > d.limits.MaxAllocationBytes {
			return nil, 0, fmt.Errorf("%w: a recorded transfer of %d bytes exceeds the allocation limit of %d bytes",
				ErrUnsupported, n, d.limits.MaxAllocationBytes)
		}
		kind := kindUpload
		if a.readback {
			kind = kindReadback // host-cached where the device has it
		}
		b, err := d.createBuffer(size, kind)
		if err != nil {
			return nil, 0, err
		}
		if b.mapped == nil {
			b.destroy()
			return nil, 0, fmt.Errorf("%w: the device has no host-visible memory for recorded transfers", ErrUnsupported)
		}
		if a.cur != nil {
			a.old = append(a.old, a.cur)
		}
		a.cur, at = b, 0
	}
	a.used = at + n
	return a.cur, at, nil
}

// reset makes the whole area free again, keeping its largest buffer; the
// device is done with it.
func (a *hostArea) reset() {
	for _, b := range a.old {
		b.destroy()
	}
	a.old = nil
	a.used = 0
}

// release destroys the area's buffers.
func (a *hostArea) release() {
	a.reset()
	if a.cur != nil {
		a.cur.destroy()
		a.cur = nil
	}
}

// Upload copies data into host-visible memory of the sequence now and
// records a copy of it into dst at offset: the transfer travels in the
// sequence's submission instead of one of its own, and the host does not
// wait for it. data may be reused as soon as Upload returns. It counts as
// one transfer piece. The bytes stay in the sequence's memory until Reset,
// so a repeated Submit copies them again.
func (s *Sequence) Upload(dst *Buffer, offset uint64, data []byte) (err error) {
	defer guard(&err)
	if err := s.enter(); err != nil {
		return err
	}
	defer s.d.leave()
	if err := s.checkBuffer(dst); err != nil {
		return fmt.Errorf("vk: Upload: %w", err)
	}
	n := uint64(len(data))
	if n == 0 {
		return fmt.Errorf("vk: Upload: no data")
	}
	if err := dst.checkRange("Upload", offset, n); err != nil {
		return err
	}
	if err := s.begin(); err != nil {
		return err
	}
	area, at, err := s.uploads.reserve(s.d, n)
	if err != nil {
		return err
	}
	copy(area.mapped[at:], data)
	s.d.counts.pieces.Add(1)
	// The device never writes the area: only dst can conflict.
	if err := s.track([]*Buffer{area}, []*Buffer{dst}, stageTransfer); err != nil {
		return err
	}
	s.d.copyBuffers(s.cmd, area, dst, []CopyRegion{{SrcOffset: at, DstOffset: offset, Size: n}})
	s.afterCommand()
	return nil
}

// ReadBack names bytes a Sequence copies into its host-visible memory
// (Sequence.ReadBack); Sequence.Result returns them once the submission
// completed.
type ReadBack struct {
	buf       *Buffer
	at, size  uint64
	recording uint64 // the sequence's recording it belongs to
}

// Size returns the number of bytes read back.
func (r ReadBack) Size() uint64 { return r.size }

// ReadBack records copying regions of src into host-visible memory of the
// sequence, so that the host reads them after the submission without a
// transfer of its own. Each region's DstOffset is its place in the result
// (Result), whose size is the furthest region end; regions must not
// overlap there.
func (s *Sequence) ReadBack(src *Buffer, regions []CopyRegion) (rb ReadBack, err error) {
	defer guard(&err)
	if err := s.enter(); err != nil {
		return rb, err
	}
	defer s.d.leave()
	if err := s.checkBuffer(src); err != nil {
		return rb, fmt.Errorf("vk: ReadBack: %w", err)
	}
	if len(regions) == 0 {
		return rb, fmt.Errorf("vk: ReadBack: no regions")
	}
	var size uint64
	for i, r := range regions {
		if r.Size == 0 {
			return rb, fmt.Errorf("vk: ReadBack: region %d: size is zero", i)
		}
		if err := src.checkRange("ReadBack source", r.SrcOffset, r.Size); err != nil {
			return rb, fmt.Errorf("region %d: %w", i, err)
		}
		if r.DstOffset > ^uint64(0)-r.Size {
			return rb, fmt.Errorf("vk: ReadBack: region %d: destination offset %d overflows", i, r.DstOffset)
		}
		size = max(size, r.DstOffset+r.Size)
	}
	if err := s.begin(); err != nil {
		return rb, err
	}
	area, at, err := s.readbacks.reserve(s.d, size)
	if err != nil {
		return rb, err
	}
	moved := make([]CopyRegion, len(regions))
	for i, r := range regions {
		moved[i] = CopyRegion{SrcOffset: r.SrcOffset, DstOffset: at + r.DstOffset, Size: r.Size}
	}
	if regionsOverlapDst(moved) {
		return rb, fmt.Errorf("vk: ReadBack: destination regions overlap")
	}
	// Each ReadBack has bytes of the area of its own, which the host
	// reads after the end of the submission: only src can conflict.
	if err := s.track([]*Buffer{src}, nil, stageTransfer); err != nil {
		return rb, err
	}
	s.d.copyBuffers(s.cmd, src, area, moved)
	s.afterCommand()
	return ReadBack{buf: area, at: at, size: size, recording: s.recording}, nil
}

// regionsOverlapDst reports whether two regions' destinations overlap.
func regionsOverlapDst(regions []CopyRegion) bool {
	r := slices.Clone(regions)
	slices.SortFunc(r, func(a, b CopyRegion) int { return cmp.Compare(a.DstOffset, b.DstOffset) })
	for i := 1; i < len(r); i++ {
		if r[i].DstOffset < r[i-1].DstOffset+r[i-1].Size {
			return true
		}
	}
	return false
}

// Result returns a copy of the bytes rb read back. The submission that
// recorded it must have completed (Wait returned nil) and the sequence not
// been reset since. It counts as one transfer piece.
func (s *Sequence) Result(rb ReadBack) (out []byte, err error) {
	defer guard(&err)
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.d.leave()
	switch {
	case rb.buf == nil:
		return nil, fmt.Errorf("vk: Result: an empty ReadBack")
	case rb.recording != s.recording:
		return nil, fmt.Errorf("vk: Result: the ReadBack belongs to another recording (the sequence was reset)")
	case s.state != seqReady || !s.ran:
		return nil, fmt.Errorf("vk: Result: the submission has not completed (call Wait)")
	}
	out = make([]byte, rb.size)
	copy(out, rb.buf.mapped[rb.at:rb.at+rb.size])
	s.d.counts.pieces.Add(1)
	return out, nil
}
