//go:build !linux

package hostmem

// MapHuge fails with ErrNoHugePages outside Linux.
func MapHuge(n int) ([]byte, error) { return nil, ErrNoHugePages }

// Unmap does nothing outside Linux, where MapHuge returns nothing.
func Unmap(b []byte) error { return nil }
