//go:build cgo && !unix

package vk

// writable reports whether the process may create entries in the folder
// dir. Mesa's drivers, whose cache quietDriverCache guards, run on unix
// systems; elsewhere every existing folder counts as writable, which leaves
// any driver's cache as it is.
func writable(dir string) bool { return true }
