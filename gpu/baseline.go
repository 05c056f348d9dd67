//go:build cgo

package gpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gpuscatter/gpuscatter/ops"
)

// copyTime measures a device-to-device copy of size bytes between two device
// tensors of this backend (vkCmdCopyBuffer per chunk), timed with timestamp
// queries, and returns the median of repeats runs after one warm-up. It is
// the bandwidth yardstick for the copy-dominated scatters: a scatter of
// reduction none moves data to the output much as this copy does. It
// returns an error wrapping ops.ErrUnsupported when the device has no
// timestamps. Package internal/gpubench reaches it as
// gpubench.Backend.CopyTime, which the benchmark calls.
func (b *Backend) copyTime(ctx context.Context, size uint64, repeats int) (time.Duration, error) {
	if b == nil {
		return 0, ErrClosed
	}
	if size == 0 {
		return 0, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, ErrClosed
	}
	if !b.dev.Capabilities().Timestamps {
		return 0, fmt.Errorf("%w: vulkan: the device has no timestamp queries", ops.ErrUnsupported)
	}
	if err := b.settle(ctx, false); err != nil {
		return 0, err
	}
	src, err := b.acquire(size)
	if err != nil {
		return 0, err
	}
	defer b.releaseTensor(src)
	dst, err := b.acquire(size)
	if err != nil {
		return 0, err
	}
	defer b.releaseTensor(dst)
	seq, err := b.dev.NewSequence()
	if err != nil {
		return 0, wrapVK(err)
	}
	defer seq.Close()
	for i, buf := range src.bufs {
		if err := seq.Copy(buf, 0, dst.bufs[i], 0, src.sizes[i]); err != nil {
			return 0, wrapVK(err)
		}
	}
	if err := seq.Timestamp("copy"); err != nil {
		return 0, wrapVK(err)
	}
	var times []time.Duration
	for i := 0; i <= max(repeats, 1); i++ {
		if err := seq.Submit(ctx); err != nil {
			return 0, wrapVK(err)
		}
		var d time.Duration
		for _, t := range seq.Timings() {
			d += t.Duration
		}
		if i > 0 { // the first run faults pages in
			times = append(times, d)
		}
	}
	if len(times) == 0 {
		return 0, errors.New("vulkan: no copy timings")
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}
