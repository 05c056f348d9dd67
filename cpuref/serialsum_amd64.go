package cpuref

import "unsafe"

// haveSerialAsm reports whether the assembly float32 sums of the serial
// fold (serialsum_amd64.s) run here: every amd64 processor has what they
// use.
const haveSerialAsm = true

// foldSumF32I64 and foldSumF32I32 are foldRawSum of float32 updates onto
// out at stride 1 with int64 and int32 indices: n units of raw and upd
// onto the s elements at out, m negMask's; they return the first bad
// unit, the ones before it folded, or -1 (serialsum_amd64.s).
//
//go:noescape
func foldSumF32I64(out unsafe.Pointer, s int, raw, upd unsafe.Pointer, n, m int) int

//go:noescape
func foldSumF32I32(out unsafe.Pointer, s int, raw, upd unsafe.Pointer, n, m int) int
