package cpuref

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// forEach calls fn(i) for every i in [0, n) on up to w goroutines, the
// caller's included, handing the tasks out in increasing order. Once done
// is closed no further task starts and forEach returns false after the
// running ones finish; a nil done never closes.
func forEach(done <-chan struct{}, w, n int, fn func(i int)) bool {
	if n <= 0 {
		return true
	}
	w = min(w, n)
	if w <= 1 {
		for i := range n {
			if isClosed(done) {
				return false
			}
			fn(i)
		}
		return true
	}
	var next atomic.Int64
	var stopped atomic.Bool
	loop := func() {
		for !stopped.Load() {
			if isClosed(done) {
				stopped.Store(true)
				return
			}
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			fn(i)
		}
	}
	var wg sync.WaitGroup
	for range w - 1 {
		wg.Go(loop)
	}
	loop()
	wg.Wait()
	return !stopped.Load()
}

func isClosed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// copyParallel copies src into dst (of equal length) in chunks of at least
// chunk bytes spread over w goroutines.
func copyParallel[E any](w, chunk int, dst, src []E) {
	var z E
	n := len(src)
	parts := max(1, min(4*w, n*int(unsafe.Sizeof(z))/chunk))
	forEach(nil, w, parts, func(i int) {
		lo, hi := part(i, n, parts)
		copy(dst[lo:hi], src[lo:hi])
	})
}

// part returns the i-th of parts near-equal ranges of [0, n).
func part(i, n, parts int) (lo, hi int) {
	return i * n / parts, (i + 1) * n / parts
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// grid splits an iteration space of outer x mid x inner into no x nm x nk
// tasks: first along outer, then along mid (only where the caller allows:
// updates that differ in mid may conflict), then along inner in ranges of
// at least minInner.
type grid struct {
	outer, mid, inner int
	no, nm, nk        int
}

func planGrid(outer, mid, inner int, splitMid bool, want, minInner int) grid {
	g := grid{outer: outer, mid: mid, inner: inner, no: 1, nm: 1, nk: 1}
	if want <= 1 {
		return g
	}
	g.no = max(1, min(outer, want))
	rem := ceilDiv(want, g.no)
	if splitMid && rem > 1 {
		g.nm = max(1, min(mid, rem))
		rem = ceilDiv(rem, g.nm)
	}
	if rem > 1 {
		g.nk = max(1, min(rem, inner/max(1, minInner)))
	}
	return g
}

func (g grid) tasks() int { return g.no * g.nm * g.nk }

// task returns the ranges of task t.
func (g grid) task(t int) (oLo, oHi, mLo, mHi, kLo, kHi int) {
	ki := t % g.nk
	t /= g.nk
	mi := t % g.nm
	oi := t / g.nm
	oLo, oHi = part(oi, g.outer, g.no)
	mLo, mHi = part(mi, g.mid, g.nm)
	kLo, kHi = part(ki, g.inner, g.nk)
	return
}

// elemSize returns the size of an E in bytes. It measures through a nil
// *E, not a zero E: a zero E of more than 128 KiB (a binStage) would be
// allocated on the heap and cleared on every call.
func elemSize[E any]() int {
	var p *E
	return int(unsafe.Sizeof(*p))
}

// viewAs returns b as a slice of E sharing its memory, like tensor.View but
// for any type of E's size (tensor payloads are aligned for their dtype).
func viewAs[E any](b []byte) []E {
	var z E
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// cast reinterprets s as a slice of T, a type of the same size as E.
func cast[T, E any](s []E) []T {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// fromBits returns the element of E whose little-endian bytes are those of
// bits (E at most 8 bytes).
func fromBits[E any](bits uint64) E {
	var e E
	b := unsafe.Slice((*byte)(unsafe.Pointer(&e)), unsafe.Sizeof(e))
	for i := range b {
		b[i] = byte(bits >> (8 * i))
	}
	return e
}
