package cpuref

import (
	"sync"
	"time"
	"unsafe"
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
type slicePool[E any] struct {
	mu    sync.Mutex
	free  [][]E
	bytes int
	timer *time.Timer
}

const (
	poolSlots = 8
	poolBytes = 2 << 30
	poolIdle  = 10 * time.Second
)

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
	return make([]E, n)
}

// put returns s to the pool, dropping the smallest slices when it is full.
func (sp *slicePool[E]) put(s []E) {
	size := sizeOf(s)
	if size == 0 || size > poolBytes {
		return
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for len(sp.free) > 0 && (len(sp.free) >= poolSlots || sp.bytes+size > poolBytes) {
		small := 0
		for i, f := range sp.free {
			if cap(f) < cap(sp.free[small]) {
				small = i
			}
		}
		sp.bytes -= sizeOf(sp.free[small])
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
	clear(sp.free)
	sp.free, sp.bytes = sp.free[:0], 0
	sp.mu.Unlock()
}

func sizeOf[E any](s []E) int {
	var z E
	return cap(s) * int(unsafe.Sizeof(z))
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
	stagePool  slicePool[binStage]
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
