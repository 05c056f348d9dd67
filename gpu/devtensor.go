//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/vk"
)

// devTensor is a tensor on the device: its bytes split into chunks of
// 2^shift bytes, each chunk one pooled buffer, and the chunks' device
// addresses for the kernels' chunk tables.
type devTensor struct {
	size  uint64 // bytes
	bufs  []*vk.Buffer
	sizes []uint64 // bytes of each chunk in use
	addrs []uint64
}

// acquire returns a device tensor of size bytes (no chunks when size is 0).
// On error it releases what it acquired.
func (b *Backend) acquire(size uint64) (t *devTensor, err error) {
	return b.acquireChunks(size, b.shift)
}

// acquireWhole returns a device tensor of size bytes in one buffer; size
// must not exceed the device's largest buffer.
func (b *Backend) acquireWhole(size uint64) (t *devTensor, err error) {
	return b.acquireChunks(size, b.maxShift)
}

func (b *Backend) acquireChunks(size uint64, shift uint) (t *devTensor, err error) {
	if b.carve != nil {
		return b.carve.take(b, size, shift)
	}
	t = &devTensor{size: size, sizes: chunkSizes(size, shift)}
	defer func() {
		if err != nil {
			b.releaseTensor(t)
			t = nil
		}
	}()
	for _, n := range t.sizes {
		buf, err := b.dev.Acquire(allocSize(n, shift))
		if err != nil {
			return t, wrapVK(err)
		}
		t.bufs = append(t.bufs, buf)
		addr, err := b.address(buf)
		if err != nil {
			return t, wrapVK(err)
		}
		if addr%minChunk != 0 {
			return t, fmt.Errorf("%w: vulkan: buffer device address %#x is not %d-byte aligned", ops.ErrUnsupported, addr, minChunk)
		}
		t.addrs = append(t.addrs, addr)
	}
	return t, nil
}

// releaseTensor gives t's buffers back to the pool.
func (b *Backend) releaseTensor(t *devTensor) {
	if t == nil {
		return
	}
	for _, buf := range t.bufs {
		_ = buf.Release()
	}
	t.bufs, t.addrs = nil, nil
}

// piece is a range of one chunk of a tensor, and for a host copy the host
// bytes it moves to or from.
type piece struct {
	buf      *vk.Buffer
	off, len uint64
	host     []byte
}

// copyPiece is the unit of parallel host copies: large enough that
// goroutine overhead vanishes, small enough to spread a chunk over CPUs.
const copyPiece = 32 << 20

// transfer runs Upload or Download over every chunk of t against the host
// bytes host (len(host) == t.size), in pieces spread over the CPUs: with
// mapped (unified) memory each piece is a memcpy, and one core cannot
// saturate memory bandwidth. It checks ctx between pieces.
func (t *devTensor) transfer(ctx context.Context, host []byte, upload bool) error {
	var pieces []piece
	var at uint64
	for i, n := range t.sizes {
		for off := uint64(0); off < n; off += copyPiece {
			l := min(copyPiece, n-off)
			pieces = append(pieces, piece{t.bufs[i], off, l, host[at+off : at+off+l]})
		}
		at += n
	}
	workers := min(runtime.GOMAXPROCS(0), len(pieces))
	if workers <= 1 || !t.bufs[0].Mapped() {
		workers = 1 // staged copies are serialised by the device anyway
	}
	var (
		mu    sync.Mutex
		first error
		next  int
		wg    sync.WaitGroup
	)
	work := func() {
		defer wg.Done()
		for {
			mu.Lock()
			if first != nil || next == len(pieces) {
				mu.Unlock()
				return
			}
			pc := pieces[next]
			next++
			mu.Unlock()
			err := ctx.Err()
			if err == nil {
				if upload {
					err = pc.buf.Upload(pc.off, pc.host)
				} else {
					err = pc.buf.Download(pc.off, pc.host)
				}
				err = wrapVK(err)
			}
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				return
			}
		}
	}
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go work()
	}
	wg.Wait()
	return first
}

// streamMin is the least output size, in bytes, that Execute downloads
// chunk by chunk on a device whose memory is the host's (unified memory)
// when the backend keeps no buffers for reuse (Options.MaxPoolBytes < 0),
// freeing each chunk as soon as it is read: the output then never exists
// three times over (data on the host, the device's copy and the host
// result), only twice and a chunk. Such calls use chunks of at most
// 2^streamShift bytes. Smaller outputs keep the device's chunk size, and
// with it the kernels' one-chunk path. A pooling backend keeps its
// buffers instead: memory that a later call reuses costs no page faults,
// while fresh memory costs about 2 ms per MB on first touch (lavapipe: a
// 300 MB output took 0.6 s more per call when its chunks were freed).
const (
	streamMin   = 256 << 20
	streamShift = 26
)

// callShift returns the chunk shift of an Execute call of job j whose
// output takes outBytes bytes; b.mu is held.
func (b *Backend) callShift(outBytes uint64) uint {
	least := b.streamMin
	if least == 0 {
		least = streamMin
	}
	if outBytes >= least && b.streams() {
		return min(b.shift, streamShift)
	}
	return b.shift
}

// streams reports whether large outputs download chunk by chunk, each
// freed once read (see streamMin): on unified memory, without pooling.
func (b *Backend) streams() bool {
	return b.poolLimit < 0 && b.dev.UnifiedMemory()
}

// download reads the output tensor t into host, which has t's size. Where
// the backend streams, it frees each chunk once it is read (its contents
// are not needed again), so the device's copy shrinks as the host's grows.
func (b *Backend) download(t *devTensor, host []byte) error {
	if !b.streams() || len(t.bufs) <= 1 {
		return t.transfer(context.Background(), host, false)
	}
	var at uint64
	for i, n := range t.sizes {
		one := &devTensor{size: n, bufs: t.bufs[i : i+1], sizes: t.sizes[i : i+1]}
		if err := one.transfer(context.Background(), host[at:at+n], false); err != nil {
			return err
		}
		at += n
		buf := t.bufs[i]
		if _, ok := b.pooled[buf]; ok {
			delete(b.pooled, buf)
			b.poolBytes -= int64(buf.Size())
		}
		if err := buf.Close(); err != nil {
			return wrapVK(err)
		}
		t.bufs[i] = nil
		b.freedEarly++
	}
	return nil
}

// mapped reports whether t's memory is the host's (its buffers are
// mapped); an empty tensor counts as mapped.
func (t *devTensor) mapped() bool {
	return len(t.bufs) == 0 || t.bufs[0].Mapped()
}

// recordUpload records copying host (t's size) into t in seq's
// submission, chunk by chunk.
func (t *devTensor) recordUpload(seq *vk.Sequence, host []byte) error {
	var at uint64
	for i, n := range t.sizes {
		if err := seq.Upload(t.bufs[i], 0, host[at:at+n]); err != nil {
			return wrapVK(err)
		}
		at += n
	}
	return nil
}

// recordReadBack records reading t back in seq's submission, chunk by
// chunk; readBackInto copies the bytes out once it completed.
func (t *devTensor) recordReadBack(seq *vk.Sequence) ([]vk.ReadBack, error) {
	rbs := make([]vk.ReadBack, len(t.sizes))
	for i, n := range t.sizes {
		var err error
		if rbs[i], err = seq.ReadBack(t.bufs[i], []vk.CopyRegion{{Size: n}}); err != nil {
			return nil, wrapVK(err)
		}
	}
	return rbs, nil
}

// readBackInto copies the bytes of rbs (recordReadBack's, completed) into
// host.
func readBackInto(seq *vk.Sequence, rbs []vk.ReadBack, host []byte) error {
	var at uint64
	for _, rb := range rbs {
		b, err := seq.Result(rb)
		if err != nil {
			return wrapVK(err)
		}
		at += uint64(copy(host[at:], b))
	}
	if at != uint64(len(host)) {
		return fmt.Errorf("vulkan: read back %d bytes of %d", at, len(host))
	}
	return nil
}
