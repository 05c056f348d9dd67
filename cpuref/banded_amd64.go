package cpuref

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveBands reports whether the banded fold runs here: bandKeepFold
// needs AVX2 and POPCNT.
var haveBands = cpu.X86.HasAVX2 && cpu.X86.HasPOPCNT

// bandKeepFold checks the indices of [0, n) rounded down to a multiple
// of 8 (int64, or int32 where bp.flags has 2), 8 at a time, and appends
// the keys (each index plus bp.add where negative) that lie in
// [bp.lo, bp.hi), less bp.lo, with their float32 updates to keep's list,
// in order. It stops before the first group of 8 that holds an index out
// of [0, bp.s). Meanwhile, 8 entries a group, it folds the list at list
// into out. It returns the units it checked and the entries it folded, a
// multiple of 8 no more than folds, having moved keep's count on
// (banded_amd64.s).
//
//go:noescape
func bandKeepFold(idx, upd unsafe.Pointer, n int, bp *bandParams, keep *bandKept, out, list unsafe.Pointer, folds int) (units, folded int)

// bandLayout returns the assembly's offset of a list's updates from its
// targets, in bytes.
func bandLayout() (updOffset int)
