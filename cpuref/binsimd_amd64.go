package cpuref

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveSIMD reports whether binPartition runs here: it needs AVX-512
// Foundation, which the operating system must have enabled.
var haveSIMD = cpu.X86.HasAVX512F && cpu.X86.HasPOPCNT

// binPartition appends the units of [0, n) rounded down to a multiple of
// 16, of the indices at idx (int64, or int32 where st.flags has 2) and the
// 4-byte updates at upd, to st's rows (see simdStage), 16 at a time. It
// stops before the first group of 16 that holds a bad index and returns
// the units it appended.
//
//go:noescape
func binPartition(idx, upd unsafe.Pointer, n int, st *simdStage) int
