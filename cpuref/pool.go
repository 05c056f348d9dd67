package cpuref

import (
	"sync"
	"time"
	"unsafe"

	"github.com/gpuscatter/gpuscatter/hostmem"
)

// slicePool keeps scratch slices between Execute calls. Fresh memory costs
// a page fault per 4 KiB on first touch, which costs more than the work
// done on it; a reused slice is already mapped. Slices come back with
// arbitrary contents.
//
// It is not a sync.Pool: the garbage collector empties those within two
// cycles, and the allocations of a large scatter trigger a cycle about
// every call, so its scratch was fresh memory again each time. The pool
// keeps at most poolSlots slices and poolBytes bytes, and lets everything
// go once it has been idle for poolIdle.
//
// Slices of hugeMin bytes or more are mapped outside the Go heap on
// transparent huge pages where the kernel has them (hostmem.MapHuge): a
// large scratch buffer is walked at random or streamed through, and on
// 2 MiB pages its accesses miss the TLB far less often. Such a slice
// stays mapped while it is in use or pooled, and is unmapped when the
// pool lets it go; pools of types that hold pointers (noHuge) never map.
type slicePool[E any] struct {
	mu     sync.Mutex
	free   [][]E
	bytes  int
	timer  *time.Timer
	noHuge bool
	// mapped holds the first element of every slice from MapHuge that
	// the pool has handed out or holds.
	mapped map[*E]bool
}

const (
	poolSlots = 8
	poolBytes = 2 << 30
	poolIdle  = 10 * time.Second
	hugeMin   = 4 << 20
)

// hugeScratch turns the mapping of large scratch slices on huge pages on;
// tests turn it off to compare.
var hugeScratch = true

// get returns a slice of n elements: the smallest pooled one that holds
// n and is not much larger (a small request must not take the large slice
// that the next large one needs), or a new one.
func (sp *slicePool[E]) get(n int) []E {
	sp.mu.Lock()
	best := -1
	for i, s := range sp.free {
		if c := cap(s); c >= n && c <= 2*n+4096 && (best < 0 || c < cap(sp.free[best])) {
			best = i
		}
	}
	if best >= 0 {
		s := sp.free[best]
		sp.free = append(sp.free[:best], sp.free[best+1:]...)
		sp.bytes -= sizeOf(s)
		sp.mu.Unlock()
		return s[:n]
	}
	sp.mu.Unlock()
	if size := n * elemSize[E](); hugeScratch && !sp.noHuge && size >= hugeMin {
		if b, err := hostmem.MapHuge(size); err == nil {
			s := unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/elemSize[E]())
			sp.mu.Lock()
			if sp.mapped == nil {
				sp.mapped = make(map[*E]bool)
			}
			sp.mapped[&s[0]] = true
			sp.mu.Unlock()
			return s[:n]
		}
	}
	return make([]E, n)
}

// drop lets s go: unmapped if it came from MapHuge. sp.mu is held.
func (sp *slicePool[E]) drop(s []E) {
	s = s[:cap(s)]
	if len(s) == 0 || !sp.mapped[&s[0]] {
		return
	}
	delete(sp.mapped, &s[0])
	hostmem.Unmap(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*elemSize[E]()))
}

// put returns s to the pool, dropping the smallest slices when it is full.
func (sp *slicePool[E]) put(s []E) {
	size := sizeOf(s)
	if size == 0 {
		return
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if size > poolBytes {
		sp.drop(s)
		return
	}
	for len(sp.free) > 0 && (len(sp.free) >= poolSlots || sp.bytes+size > poolBytes) {
		small := 0
		for i, f := range sp.free {
			if cap(f) < cap(sp.free[small]) {
				small = i
			}
		}
		sp.bytes -= sizeOf(sp.free[small])
		sp.drop(sp.free[small])
		sp.free = append(sp.free[:small], sp.free[small+1:]...)
	}
	sp.free = append(sp.free, s[:0])
	sp.bytes += size
	if sp.timer == nil {
		sp.timer = time.AfterFunc(poolIdle, sp.flush)
	} else {
		sp.timer.Reset(poolIdle)
	}
}

// flush lets every pooled slice go.
func (sp *slicePool[E]) flush() {
	sp.mu.Lock()
	for _, s := range sp.free {
		sp.drop(s)
	}
	clear(sp.free)
	sp.free, sp.bytes = sp.free[:0], 0
	sp.mu.Unlock()
}

func sizeOf[E any](s []E) int {
	return cap(s) * elemSize[E]()
}

var (
	int32Pool  slicePool[int32]
	intPool    slicePool[int]
	int64Pool  slicePool[int64]
	uint64Pool slicePool[uint64]
	u8Pool     slicePool[uint8]
	u16Pool    slicePool[uint16]
	u32Pool    slicePool[uint32]
	u128Pool   slicePool[[2]uint64]
	stagePool  = slicePool[binStage]{noHuge: true} // holds pointers
)

// poolOf returns the pool for slices of E, or nil for types not pooled
// (strings, whose slices would keep their contents alive).
func poolOf[E any]() *slicePool[E] {
	// A nil *E, not a zero E: converting a large E (a binStage) to an
	// interface would copy it to the heap.
	var p any
	switch any((*E)(nil)).(type) {
	case *int32:
		p = &int32Pool
	case *int:
		p = &intPool
	case *int64:
		p = &int64Pool
	case *uint64:
		p = &uint64Pool
	case *uint8:
		p = &u8Pool
	case *uint16:
		p = &u16Pool
	case *uint32:
		p = &u32Pool
	case *[2]uint64:
		p = &u128Pool
	case *binStage:
		p = &stagePool // released with their pointers cleared
	default:
		return nil
	}
	return p.(*slicePool[E])
}

// scratch returns a slice of n elements of E with arbitrary contents,
// pooled where E allows.
func scratch[E any](n int) []E {
	if p := poolOf[E](); p != nil {
		return p.get(n)
	}
	return make([]E, n)
}

// release returns a slice from scratch to its pool.
func release[E any](s []E) {
	if p := poolOf[E](); p != nil {
		p.put(s)
	}
}
