package gpu

import (
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// FeatureError is what a call is refused with when its device lacks a
// Vulkan feature the call needs (and no other path exists): an *ops.Error
// wraps it, and it wraps ops.ErrUnsupported, so errors.Is(err,
// ops.ErrUnsupported) holds and errors.As gives the feature.
type FeatureError struct {
	// Feature is the Vulkan feature's name, such as "shaderFloat64".
	Feature string
}

// Error says which feature the device lacks.
func (e *FeatureError) Error() string { return "the device lacks " + e.Feature }

// Unwrap returns ops.ErrUnsupported.
func (e *FeatureError) Unwrap() error { return ops.ErrUnsupported }

// Float64Arithmetic reports whether reduction r on dtype dt computes in
// float64 on the device: float64 sum, sub, prod and mean, which a device
// without shaderFloat64 cannot run (min and max compare bit patterns).
func Float64Arithmetic(dt tensor.DType, r ops.Reduction) bool {
	switch r {
	case ops.Sum, ops.Sub, ops.Prod, ops.Mean:
		return dt == tensor.Float64
	}
	return false
}
