//go:build cgo

package gpu

import "github.com/gpuscatter/gpuscatter/internal/gpulink"

// Package internal/gpubench reaches a Backend's device and its timed copy
// through the functions this package registers in internal/gpulink; they
// are not part of the user's API.
func init() {
	gpulink.Register(gpulink.Funcs[*Backend]{Device: (*Backend).device, CopyTime: (*Backend).copyTime,
		CountAtomics: (*Backend).countAtomicsOnce})
}
