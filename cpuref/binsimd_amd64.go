package cpuref

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveSIMD reports whether the vector loops (binPartition, decodeTargets)
// run here: they need AVX-512 Foundation, which the operating system must
// have enabled. haveKeys reports whether binPartitionKeys does: it needs
// AVX2 and BMI2.
var (
	haveSIMD = cpu.X86.HasAVX512F && cpu.X86.HasPOPCNT && cpu.X86.HasAVX2
	haveKeys = cpu.X86.HasAVX2 && cpu.X86.HasBMI2
	// haveFold reports whether foldVec runs: it needs AVX-512 Foundation
	// and Conflict Detection. AVX2 has gathers but no scatters, so without
	// AVX-512 the Go loops fold.
	haveFold = cpu.X86.HasAVX512F && cpu.X86.HasAVX512CD
)

// binPartition appends the units of [0, n) rounded down to a multiple of
// 16, of the indices at idx (int64, or int32 where st.flags has 2) and the
// 4-byte updates at upd, to st's rows (see binStage), 16 at a time. It
// stops before the first group of 16 that holds a bad index and returns
// the units it appended.
//
//go:noescape
func binPartition(idx, upd unsafe.Pointer, n int, st *binStage) int

// binPartitionKeys appends the n int32 targets at keys, with the 4-byte
// updates at upd, to st's rows.
//
//go:noescape
func binPartitionKeys(keys, upd unsafe.Pointer, n int, st *binStage)

// decodeTargets checks the indices of [0, n) rounded down to a multiple of
// 16 (int64, or int32 where d.flags has 2), 16 at a time, and stores
// their targets at dst as int32 (see decodeParams). It stops before the
// first group of 16 that holds a bad index and returns the units it
// decoded.
//
//go:noescape
func decodeTargets(idx, dst unsafe.Pointer, n int, d *decodeParams) int

// stageLayout returns the assembly's constants for binStage's layout: the
// bins, a row's bytes, the offset of a row's updates, and the offsets of
// cnt, tb and esize.
func stageLayout() (nbins, row, rowUpdates, cnt, tb, esize int)

// foldVec folds the 4-byte updates at upd into the elements of out at the
// int32 targets at tgt, in order, for the units of [0, n) rounded down to
// a multiple of 16, and returns that count (see vecFold for op).
//
//go:noescape
func foldVec(out, tgt, upd unsafe.Pointer, n int, op int) int
