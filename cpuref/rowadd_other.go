//go:build !amd64

package cpuref

import "unsafe"

const (
	haveRowAVX2   = false
	haveRowAVX512 = false
)

func addRowsAVX512(out, upd, dst, src unsafe.Pointer, n, inner int) { panic("unreachable") }

func addRowsAVX2(out, upd, dst, src unsafe.Pointer, n, inner int) { panic("unreachable") }
