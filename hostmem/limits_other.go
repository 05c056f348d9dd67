//go:build !linux

package hostmem

// limits knows no bound outside Linux: allocations are left to the
// runtime.
func limits() []Limit { return nil }
