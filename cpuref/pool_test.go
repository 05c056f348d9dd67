package cpuref

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/hostmem"
)

// TestPoolMapsLargeScratch: a scratch slice of hugeMin bytes or more comes
// from hostmem.MapHuge where the kernel gives huge pages (aligned to one,
// and remembered by the pool), is handed out again after release, and is
// unmapped and forgotten once the pool lets it go; a smaller one, and
// any from a pool of a type that holds pointers, comes from the Go heap.
func TestPoolMapsLargeScratch(t *testing.T) {
	_, herr := hostmem.MapHuge(1)
	huge := herr == nil
	var sp slicePool[uint32]
	n := hugeMin / 4
	s := sp.get(n)
	require.Len(t, s, n)
	mapped := sp.mapped[&s[0]]
	require.Equal(t, huge, mapped, "mapped (MapHuge error %v)", herr)
	if mapped {
		require.Zero(t, uintptr(unsafe.Pointer(&s[0]))%hostmem.HugePageSize)
	}
	s[0], s[n-1] = 1, 2
	sp.put(s)
	again := sp.get(n - 100)
	require.Equal(t, &s[0], &again[0], "the pooled slice is handed out again")
	require.Equal(t, uint32(1), again[0])
	sp.put(again)
	sp.flush()
	require.Empty(t, sp.mapped, "flushed slices are unmapped")

	small := sp.get(n - 1024)
	require.False(t, sp.mapped[&small[0]], "a slice under hugeMin bytes is not mapped")

	// More slices than the pool keeps: the smallest is let go, and
	// unmapped.
	var held [][]uint32
	for i := range poolSlots + 1 {
		held = append(held, sp.get(n+i*hostmem.HugePageSize/4))
	}
	for _, h := range held {
		sp.put(h)
	}
	require.Len(t, sp.free, poolSlots)
	require.False(t, sp.mapped[&held[0][0]], "the evicted slice is unmapped")
	if huge {
		require.Len(t, sp.mapped, poolSlots)
	}
	sp.flush()
	require.Empty(t, sp.mapped)

	noHuge := slicePool[uint32]{noHuge: true}
	p := noHuge.get(n)
	require.False(t, noHuge.mapped[&p[0]], "a noHuge pool maps nothing")
}

// TestPoolReuseAllocatesNothing: taking a pooled slice and giving it back
// allocates nothing, for every pooled type, the partition stage (a
// binStage of over 128 KiB) included: a zero E of that size, declared to
// measure it, would live on the heap, and the partition takes a stage for
// every chunk of every round of a binned scatter.
func TestPoolReuseAllocatesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reuse func()
	}{
		{"binStage", func() { release(scratch[binStage](1)) }},
		{"uint32", func() { release(scratch[uint32](1000)) }},
		{"int32", func() { release(scratch[int32](1000)) }},
		{"[2]uint64", func() { release(scratch[[2]uint64](1000)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.reuse() // the first may allocate; the pool then holds one
			require.Zero(t, testing.AllocsPerRun(20, tc.reuse))
		})
	}
}
