package cpuref

import "sync"

// slicePool keeps scratch slices between Execute calls. Fresh memory costs
// a page fault per 4 KiB on first touch, which costs more than the work
// done on it; a reused slice is already mapped. Slices come back with
// arbitrary contents.
type slicePool[E any] struct{ p sync.Pool }

// get returns a slice of n elements.
func (sp *slicePool[E]) get(n int) []E {
	if v, ok := sp.p.Get().(*[]E); ok {
		if cap(*v) >= n {
			return (*v)[:n]
		}
		// Too small: let it go rather than keep two.
	}
	return make([]E, n)
}

// put returns s to the pool.
func (sp *slicePool[E]) put(s []E) {
	if cap(s) == 0 {
		return
	}
	s = s[:0]
	sp.p.Put(&s)
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
)

// poolOf returns the pool for slices of E, or nil for types not pooled
// (strings, whose slices would keep their contents alive).
func poolOf[E any]() *slicePool[E] {
	var z E
	var p any
	switch any(z).(type) {
	case int32:
		p = &int32Pool
	case int:
		p = &intPool
	case int64:
		p = &int64Pool
	case uint64:
		p = &uint64Pool
	case uint8:
		p = &u8Pool
	case uint16:
		p = &u16Pool
	case uint32:
		p = &u32Pool
	case [2]uint64:
		p = &u128Pool
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
