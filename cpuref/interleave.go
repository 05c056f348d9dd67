package cpuref

import "unsafe"

// Row builds for SliceScatter: a row whose every second element the slice
// writes is built in one pass from data and the updates, instead of a
// copy of the row followed by strided stores into it.

// interleave2 sets dst[2k] = u[k] for every k with 2k < len(dst) and
// dst[2k+1] = dat[2k+1] for every 2k+1 < len(dst), for 4-byte elements;
// dat is as long as dst, and u holds (len(dst)+1)/2 elements. With
// AVX-512 or AVX2 (unless g turns them off) an assembly loop builds all
// but the last few elements.
func interleave2(dst, dat, u []uint32, g *grain) {
	n := len(dst)
	dat, u = dat[:n], u[:(n+1)/2]
	done := 0
	switch {
	case g.sliceNoAsm || n < 16:
	case haveRowAVX512 && !g.rowNoAVX512:
		blocks := n / 16
		interleave2AVX512(unsafe.Pointer(&dst[0]), unsafe.Pointer(&dat[0]), unsafe.Pointer(&u[0]), blocks)
		done = 16 * blocks
	case haveRowAVX2:
		blocks := n / 8
		interleave2AVX2(unsafe.Pointer(&dst[0]), unsafe.Pointer(&dat[0]), unsafe.Pointer(&u[0]), blocks)
		done = 8 * blocks
	}
	interleave2Go(dst[done:], dat[done:], u[done/2:])
}

// interleave2Go is interleave2's Go loop (done is even, so dst[0] takes
// u[0]).
func interleave2Go(dst, dat, u []uint32) {
	n := len(dst)
	dat, u = dat[:n], u[:(n+1)/2]
	for k := 0; 2*k+1 < n; k++ {
		dst[2*k] = u[k]
		dst[2*k+1] = dat[2*k+1]
	}
	if n%2 == 1 {
		dst[n-1] = u[n/2]
	}
}
