//go:build !amd64

package cpuref

import "unsafe"

const (
	haveSIMD = false
	haveKeys = false
)

func binPartition(idx, upd unsafe.Pointer, n int, st *binStage) int { panic("unreachable") }

func binPartitionKeys(keys, upd unsafe.Pointer, n int, st *binStage) { panic("unreachable") }

func decodeTargets(idx, dst unsafe.Pointer, n int, d *decodeParams) int { panic("unreachable") }

func stageLayout() (nbins, row, rowUpdates, cnt, tb, esize int) { panic("unreachable") }
