package cpuref

import "unsafe"

// interleave2AVX512 and interleave2AVX2 set dst[2k] = u[k] and dst[2k+1] =
// dat[2k+1] for 4-byte elements, over n blocks of 16 elements (AVX-512)
// or 8 (AVX2); see interleave_amd64.s. The processor checks are those of
// the row adds (haveRowAVX512, haveRowAVX2).
//
//go:noescape
func interleave2AVX512(dst, dat, u unsafe.Pointer, n int)

//go:noescape
func interleave2AVX2(dst, dat, u unsafe.Pointer, n int)
