//go:build cgo

package gpu_test

import (
	"flag"
	"strconv"
	"testing"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpucheck"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
)

// TestCheck runs the suite of `gpuscatter check` (package gpucheck) on the
// default device at the Default size (Quick with -short), with validation:
// the shared conformance suite and the differential tests against cpuref,
// through every execution path. -seed changes the random requests.
func TestCheck(t *testing.T) {
	seed := int64(20240701)
	if f := flag.Lookup("seed"); f != nil {
		if v, err := strconv.ParseInt(f.Value.String(), 10, 64); err == nil && v != 0 {
			seed = v
		}
	}
	t.Logf("seed %d (reproduce with -seed %d)", seed, seed)
	size := gpucheck.Default
	if testing.Short() {
		size = gpucheck.Quick
	}
	gpucheck.Run(opstest.WrapT(t), gpucheck.Config{
		Base: gpu.Options{Validation: true, PipelineCacheDir: "off"},
		Size: size,
		Seed: seed,
	})
}
