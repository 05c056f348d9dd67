package hostmem

import "errors"

// HugePageSize is the size of a transparent huge page on the platforms
// MapHuge serves (2 MiB on x86-64 and on arm64 with 4 KiB pages).
const HugePageSize = 2 << 20

// ErrNoHugePages is returned by MapHuge where the kernel gives no
// transparent huge pages (none on this system, or turned off).
var ErrNoHugePages = errors.New("no transparent huge pages")
