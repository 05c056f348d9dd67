package cpuref

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveRowAVX2 and haveRowAVX512 report whether the assembly row adds run
// here (the operating system must have enabled the registers).
var (
	haveRowAVX2   = cpu.X86.HasAVX2
	haveRowAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX2
)

// addRowsAVX512 and addRowsAVX2 add, for i in [0, n), the inner float32
// at upd + src[i]*inner*4 to those at out + dst[i]*inner*4, in order of i;
// dst and src point at n int32 rows each (see rowadd_amd64.s).
//
//go:noescape
func addRowsAVX512(out, upd, dst, src unsafe.Pointer, n, inner int)

//go:noescape
func addRowsAVX2(out, upd, dst, src unsafe.Pointer, n, inner int)
