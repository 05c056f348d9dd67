//go:build !amd64

package cpuref

import "unsafe"

func interleave2AVX512(dst, dat, u unsafe.Pointer, n int) { panic("unreachable") }

func interleave2AVX2(dst, dat, u unsafe.Pointer, n int) { panic("unreachable") }
