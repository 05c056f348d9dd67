//go:build !amd64

package cpuref

import "unsafe"

const (
	haveSIMD = false
	haveKeys = false
	haveFold = false
)

func binPartition(idx, upd unsafe.Pointer, n int, st *binStage) int { panic("unreachable") }

func binPartitionKeys(keys, upd unsafe.Pointer, n int, st *binStage) { panic("unreachable") }

func decodeTargets(idx, dst unsafe.Pointer, n int, d *decodeParams) int { panic("unreachable") }

func stageLayout() (nbins, row, rowUpdates, cnt, tb, esize int) { panic("unreachable") }

func foldVec(out, tgt, upd unsafe.Pointer, n int, op int) int { panic("unreachable") }
