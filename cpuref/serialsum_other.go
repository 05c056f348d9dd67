//go:build !amd64

package cpuref

import "unsafe"

// haveSerialAsm is false: the serial fold's float32 sums run the Go loop.
const haveSerialAsm = false

func foldSumF32I64(out unsafe.Pointer, s int, raw, upd unsafe.Pointer, n, m int) int {
	panic("unreachable")
}

func foldSumF32I32(out unsafe.Pointer, s int, raw, upd unsafe.Pointer, n, m int) int {
	panic("unreachable")
}
