package bench

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"
)

// DefaultMemcpyBytes is the smallest buffer the memory-copy reference
// copies: large enough that no cache holds it.
const DefaultMemcpyBytes = 256 << 20

// memcpy measures the bandwidth of a parallel memory copy: the reference
// that effective scatter bandwidth is a fraction of. Its buffers are
// allocated once, written before use (so that reads do not hit the shared
// zero page) and reused; results are kept per size.
type memcpy struct {
	src, dst []byte
	gbps     map[int64]float64
}

// extra returns the memory that measuring a copy of size bytes would add.
func (m *memcpy) extra(size int64) int64 {
	if int64(len(m.src)) >= size {
		return 0
	}
	return 2 * size
}

// measure returns the bandwidth of copying size bytes with GOMAXPROCS
// goroutines, each copying one contiguous share, in GB/s of traffic (the
// bytes read plus the bytes written): the median of repeats copies after
// one untimed copy.
func (m *memcpy) measure(ctx context.Context, size int64, repeats int) (float64, error) {
	if g, ok := m.gbps[size]; ok {
		return g, nil
	}
	if int64(len(m.src)) < size {
		m.src, m.dst = nil, nil
		runtime.GC()
		m.src, m.dst = make([]byte, size), make([]byte, size)
		src := m.src
		parallel(int((size+1<<20-1)>>20), func(c int) {
			for i := c << 20; i < min(len(src), (c+1)<<20); i++ {
				src[i] = byte(i*7 + 1)
			}
		})
	}
	src, dst := m.src[:size], m.dst[:size]
	copyAll(dst, src)
	times := make([]time.Duration, 0, repeats)
	for range repeats {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		start := time.Now()
		copyAll(dst, src)
		times = append(times, time.Since(start))
	}
	med := median(times)
	g := 0.0
	if med > 0 {
		g = 2 * float64(size) / med.Seconds() / 1e9
	}
	if m.gbps == nil {
		m.gbps = map[int64]float64{}
	}
	m.gbps[size] = g
	return g, nil
}

// copyAll copies src into dst, one share per goroutine.
func copyAll(dst, src []byte) {
	w := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	n := len(src)
	for i := range w {
		lo, hi := i*n/w, (i+1)*n/w
		wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
	}
	wg.Wait()
}

// median returns the median of ts (the mean of the middle two for an even
// count), 0 for none.
func median(ts []time.Duration) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	s := slices.Clone(ts)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
