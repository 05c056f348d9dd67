//go:build cgo

package gpulink

import (
	"context"
	"time"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// Funcs are package gpu's unexported methods of its Backend type B.
type Funcs[B any] struct {
	// Device returns the Vulkan device under b (nil for a nil b).
	Device func(b B) *vk.Device
	// CopyTime times a device-to-device copy of size bytes (the median of
	// repeats runs).
	CopyTime func(b B, ctx context.Context, size uint64, repeats int) (time.Duration, error)
	// CountAtomics executes p into out once with the global atomics
	// counted (gpu.Options.CountAtomics) and returns their number and the
	// most on one output element.
	CountAtomics func(b B, ctx context.Context, p *ops.Plan, out *tensor.Tensor) (issued, maxAddress uint64, err error)
}

// funcs is what Register was given: a Funcs[*gpu.Backend].
var funcs any

// Register records package gpu's functions; gpu calls it once, at init.
func Register[B any](f Funcs[B]) { funcs = f }

// Get returns the registered functions for backend type B, and false
// when none are registered for B (a build without cgo has no Vulkan
// backend).
func Get[B any]() (Funcs[B], bool) {
	f, ok := funcs.(Funcs[B])
	return f, ok
}
