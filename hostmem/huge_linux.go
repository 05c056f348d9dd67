package hostmem

import (
	"bytes"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeMode is the kernel's transparent huge page setting: "always",
// "madvise" or "never" ("" where it cannot be read).
var hugeMode = sync.OnceValue(func() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	// "always [madvise] never": the bracketed word is the setting.
	if i := bytes.IndexByte(b, '['); i >= 0 {
		if j := bytes.IndexByte(b[i:], ']'); j > 0 {
			return string(b[i+1 : i+j])
		}
	}
	return ""
})

// MapHuge returns n > 0 bytes of zeroed memory outside the Go heap, its
// length rounded up to whole huge pages and its start aligned to one,
// advised for transparent huge pages (MADV_HUGEPAGE, which the kernel
// needs when its setting is "madvise"). It fails with ErrNoHugePages
// where the kernel gives none, and with the error of mmap otherwise. The
// memory stays until Unmap; nothing in it may point into the Go heap.
func MapHuge(n int) ([]byte, error) {
	if m := hugeMode(); m != "always" && m != "madvise" {
		return nil, ErrNoHugePages
	}
	size := (n + HugePageSize - 1) &^ (HugePageSize - 1)
	// Mapped one huge page larger, so that an aligned start lies inside;
	// the ends beyond the aligned range are given back.
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(size+HugePageSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	lead := uintptr(-uintptr(p) & (HugePageSize - 1))
	if lead > 0 {
		unix.MunmapPtr(p, lead)
	}
	if tail := uintptr(HugePageSize) - lead; tail > 0 {
		unix.MunmapPtr(unsafe.Add(p, lead+uintptr(size)), tail)
	}
	b := unsafe.Slice((*byte)(unsafe.Add(p, lead)), size)
	if err := unix.Madvise(b, unix.MADV_HUGEPAGE); err != nil {
		Unmap(b)
		return nil, err
	}
	return b, nil
}

// Unmap gives back memory from MapHuge.
func Unmap(b []byte) error {
	b = b[:cap(b)]
	return unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)))
}
