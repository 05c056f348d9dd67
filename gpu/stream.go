//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"io"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// ReadTensor returns a resident tensor of dt and shape holding the bytes
// read from r: exactly the tensor's payload (Tensor.Data's layout), which
// CopyFrom reads. It is Upload for a payload that is not in memory, such
// as the body of a file: no host copy of it is made. On error the tensor
// is released.
func (b *Backend) ReadTensor(ctx context.Context, dt tensor.DType, shape []int, r io.Reader) (*Tensor, error) {
	if b == nil {
		return nil, ErrClosed
	}
	if ctx == nil {
		ctx = context.Background()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.newResident(dt, shape)
	if err != nil {
		return nil, err
	}
	if _, err := t.copyFrom(ctx, r); err != nil {
		b.closeResident(t)
		return nil, err
	}
	return t, nil
}

// CopyFrom fills t with its payload read from r, t.Bytes() bytes in
// Tensor.Data's layout, and returns the number of bytes read. Where the
// device's memory is the host's (unified memory), r reads straight into
// t's device memory; otherwise through the device's staging buffer in
// pieces of a few MiB. Either way no host copy of the payload is made.
//
// When r ends early, CopyFrom returns an error wrapping
// io.ErrUnexpectedEOF that says how many bytes came; an error of r is
// returned as it is. ctx is checked between pieces of at most 32 MiB. On
// any error t holds the bytes read so far, then what it held before.
func (t *Tensor) CopyFrom(ctx context.Context, r io.Reader) (int64, error) {
	var done int64
	err := t.withDevice(ctx, false, func(ctx context.Context) (err error) {
		done, err = t.copyFrom(ctx, r)
		return err
	})
	return done, err
}

// CopyTo writes t's payload, t.Bytes() bytes in Tensor.Data's layout, to
// w and returns the number of bytes written: straight from the device's
// memory where it is the host's, else through the staging buffer in
// pieces of a few MiB. ctx is checked between pieces of at most 32 MiB;
// an error of w is returned as it is.
func (t *Tensor) CopyTo(ctx context.Context, w io.Writer) (int64, error) {
	var done int64
	err := t.withDevice(ctx, true, func(ctx context.Context) error {
		return t.dev.pieces(ctx, func(pc piece) error {
			n, err := pc.buf.DownloadTo(pc.off, pc.len, w)
			done += int64(n)
			return err
		})
	})
	return done, err
}

// copyFrom is CopyFrom once b.mu is held and t is usable.
func (t *Tensor) copyFrom(ctx context.Context, r io.Reader) (int64, error) {
	var done int64
	err := t.dev.pieces(ctx, func(pc piece) error {
		n, err := pc.buf.UploadFrom(pc.off, pc.len, r)
		done += int64(n)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fmt.Errorf("%w: vulkan: the input ends after %d of the tensor's %d bytes", io.ErrUnexpectedEOF, done, t.dev.size)
		}
		return err
	})
	return done, err
}

// pieces calls f for each piece of at most copyPiece bytes of t's chunks,
// in order, checking ctx before each. Errors of the device are mapped
// onto ops' sentinels; f's other errors are returned as they are.
func (t *devTensor) pieces(ctx context.Context, f func(piece) error) error {
	for i, n := range t.sizes {
		for off := uint64(0); off < n; off += copyPiece {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := f(piece{buf: t.bufs[i], off: off, len: min(copyPiece, n-off)}); err != nil {
				return wrapVK(err)
			}
		}
	}
	return nil
}

// CheckResident tells whether a call of p on resident tensors can run on
// this device before the caller reads or uploads its inputs: it returns
// the error Execute of p would give before any work, for a Call of p on
// resident tensors not yet made, whose output is its data (in place):
// ops.ErrUnsupported for a plan this device cannot run, and
// ops.ErrOutOfMemory when the data, indices and updates tensors with the
// call's scratch need more device memory than the device has free. p may
// come from ops.PrepareShapes (see Needs).
func (b *Backend) CheckResident(p *ops.Plan) error {
	if b == nil {
		return closedPlanError(p)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return closedPlanError(p)
	}
	f := b.facts(false)
	pl, err := f.planCall(p)
	if err != nil {
		return err
	}
	return b.checkFits(p, pl.needs())
}
