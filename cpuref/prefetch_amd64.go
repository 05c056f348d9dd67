package cpuref

import "unsafe"

// prefetch asks the processor to bring the cache line at addr into the
// caches, without waiting for it and without faulting.
//
//go:noescape
func prefetch(addr unsafe.Pointer)
