//go:build !amd64

package cpuref

import "unsafe"

const haveSIMD = false

func binPartition(idx, upd unsafe.Pointer, n int, st *simdStage) int { panic("unreachable") }
