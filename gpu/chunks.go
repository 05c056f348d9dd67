//go:build cgo

package gpu

import "math/bits"

// minChunk is the smallest chunk: every element size (at most 16 bytes)
// divides it, so no element or 32-bit word straddles two chunks.
const minChunk = 16

// minBuffer is the smallest buffer allocated, so that tiny tensors of
// different sizes share pooled buffers.
const minBuffer = 256

// chunkShift returns log2 of the chunk size for a device whose largest
// allocation is maxAlloc bytes: the largest power of two not above it (and
// at least minChunk).
func chunkShift(maxAlloc uint64) uint {
	if maxAlloc < minChunk {
		maxAlloc = minChunk
	}
	return uint(bits.Len64(maxAlloc) - 1)
}

// chunkSizes splits a tensor of size bytes into chunks of 2^shift bytes;
// the last holds the rest. A zero-size tensor has no chunks.
func chunkSizes(size uint64, shift uint) []uint64 {
	chunk := uint64(1) << shift
	var out []uint64
	for size > 0 {
		n := min(size, chunk)
		out = append(out, n)
		size -= n
	}
	return out
}

// allocSize returns the size of the buffer that holds a chunk of n bytes:
// n rounded up to a size class (eight per power of two, so at most 12.5%
// more), at least minBuffer and at most the chunk size. Pooled buffers are
// then reused across calls whose sizes differ a little.
func allocSize(n uint64, shift uint) uint64 {
	chunk := uint64(1) << shift
	if n <= minBuffer {
		return min(minBuffer, chunk)
	}
	step := uint64(1) << max(bits.Len64(n-1)-4, 0) // n > 256: step >= 32
	return min((n+step-1)/step*step, chunk)
}
