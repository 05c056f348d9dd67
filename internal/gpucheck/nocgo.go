//go:build !cgo

// The suite runs the gpu backend, which needs cgo; without it the package
// is empty.

package gpucheck
