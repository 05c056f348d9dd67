//go:build !amd64

package cpuref

import "unsafe"

// haveBands is false: the serial fold runs on one worker.
const haveBands = false

func bandKeepFold(idx, upd unsafe.Pointer, n int, bp *bandParams, keep *bandKept, out, list unsafe.Pointer, folds int) (units, folded int) {
	panic("unreachable")
}

func bandLayout() (updOffset int) { panic("unreachable") }
