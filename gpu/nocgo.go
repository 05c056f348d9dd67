//go:build !cgo

package gpu

import (
	"context"
	"fmt"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// A build without cgo (CGO_ENABLED=0) has no Vulkan: Open fails with an
// error wrapping ops.ErrNoDevice, so that a program falls back to the CPU
// as it would on a machine without a device. The rest of the API needs
// cgo, a C compiler and the Vulkan headers.

var errNoVulkan = fmt.Errorf("%w: this build has no Vulkan (built with CGO_ENABLED=0; the gpu backend needs cgo)", ops.ErrNoDevice)

// Options configures Open.
type Options struct {
	Device        string
	Deterministic bool
}

// Backend would run plans on a Vulkan device; in this build it has none.
type Backend struct{}

// Open fails: this build has no Vulkan.
func Open(Options) (*Backend, error) { return nil, errNoVulkan }

// Name returns "vulkan: not in this build".
func (b *Backend) Name() string { return "vulkan: not in this build" }

// Execute returns ErrClosed.
func (b *Backend) Execute(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error {
	return closedPlanError(p)
}

// ReleaseInstances does nothing: this build has no Vulkan.
func ReleaseInstances() error { return nil }

// KeepDevices does nothing: this build has no Vulkan.
func KeepDevices(bool) {}

// Close returns ErrClosed.
func (b *Backend) Close() error { return ErrClosed }
