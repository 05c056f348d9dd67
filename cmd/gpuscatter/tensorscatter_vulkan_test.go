//go:build cgo

package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpubench"
	"github.com/gpuscatter/gpuscatter/ops"
)

// The TensorScatter-24 tests run on the Vulkan device too (lavapipe in
// CI), with validation: every backend it opens must report nothing and
// leave no Vulkan object alive.
func init() {
	tensorScatterBackends = append(tensorScatterBackends, tensorScatterBackend{name: "gpu", setup: func(t *testing.T) {
		var opened []*gpu.Backend
		withGPU(t, func(context.Context) (ops.Backend, error) {
			b, err := gpu.Open(testGPUOptions(t, gpu.Options{Validation: true, PipelineCacheDir: "off"}))
			if err == nil {
				opened = append(opened, b)
			}
			return b, err
		})
		t.Cleanup(func() {
			assert.NotEmpty(t, opened, "no run opened the device")
			for _, b := range opened {
				assert.Empty(t, b.ValidationMessages(), "validation messages")
				assert.Empty(t, gpubench.Of(b).Device().LiveObjects(), "Vulkan objects alive after the command")
			}
		})
	}})
}
