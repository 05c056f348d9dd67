//go:build !amd64

package cpuref

import "unsafe"

// prefetch does nothing on this architecture.
func prefetch(addr unsafe.Pointer) {}

func streamLines(dst, src unsafe.Pointer, n int) { panic("unreachable") }

func storeFence() {}

const canStream = false
