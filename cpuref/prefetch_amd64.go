package cpuref

import "unsafe"

// prefetch asks the processor to bring the cache line at addr into the
// caches, without waiting for it and without faulting.
//
//go:noescape
func prefetch(addr unsafe.Pointer)

// streamLines copies n > 0 cache lines of 64 bytes from src to dst, which
// must be 64-byte aligned, with stores that bypass the caches (the lines
// are not read first). storeFence orders them before later stores.
//
//go:noescape
func streamLines(dst, src unsafe.Pointer, n int)

// storeFence orders every store before it, streamed ones included, before
// every store after it.
func storeFence()

const canStream = true
