//go:build cgo

package vk

import (
	"context"
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/internal/testdevice"
)

//go:generate sh testdata/compile.sh

var (
	//go:embed testdata/copy.spv
	copySPV []byte
	//go:embed testdata/histogram.spv
	histogramSPV []byte
	//go:embed testdata/scatter_add_f32.spv
	scatterAddSPV []byte
	//go:embed testdata/spin.spv
	spinSPV []byte
)

// openTest opens the default device with validation and registers checks
// that, at the end of the test, Close succeeds, the validation layer stayed
// silent and no Vulkan object is left alive. A missing device fails the test.
// GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1 opens it with NoUnifiedMemory, as a
// discrete GPU (package testdevice).
func openTest(t *testing.T, opts Options) *Device {
	t.Helper()
	opts.Validation = true
	opts.NoUnifiedMemory = testdevice.Staged(t, opts.NoUnifiedMemory)
	if opts.PipelineCacheDir == "" {
		opts.PipelineCacheDir = "off"
	}
	d, err := Open(opts)
	require.NoError(t, err, "a Vulkan device is required; on Debian install mesa-vulkan-drivers (lavapipe) and vulkan-validationlayers")
	t.Cleanup(func() {
		assert.NoError(t, d.Close())
		assert.Empty(t, d.ValidationMessages(), "validation messages")
		assert.Empty(t, d.LiveObjects(), "live Vulkan objects after Close")
	})
	return d
}

// wantUnified reports whether a device that openTest opened with opts
// should map its buffers: when the device's memory is unified and neither
// opts.NoUnifiedMemory nor GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1 asks for
// staging.
func wantUnified(t *testing.T, d *Device, opts Options) bool {
	t.Helper()
	return isUnified(d.phys.types, d.phys.heaps) && !testdevice.Staged(t, opts.NoUnifiedMemory)
}

func u32bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func bytesU32(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func push(vals ...uint32) []byte { return u32bytes(vals) }

// upload creates a buffer holding data.
func upload(t *testing.T, d *Device, data []byte) *Buffer {
	t.Helper()
	b, err := d.NewBuffer(uint64(len(data)))
	require.NoError(t, err)
	require.NoError(t, b.Upload(0, data))
	return b
}

// download reads n bytes at offset.
func download(t *testing.T, b *Buffer, offset, n uint64) []byte {
	t.Helper()
	out := make([]byte, n)
	require.NoError(t, b.Download(offset, out))
	return out
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// copyPipeline is the copy kernel with a workgroup size of local.
func copyPipeline(t *testing.T, d *Device, local uint32) *Pipeline {
	t.Helper()
	p, err := d.NewPipeline(PipelineSpec{
		SPIRV:            copySPV,
		Bindings:         2,
		PushConstantSize: 8,
		SpecConstants:    []uint32{local},
		LocalSize:        [3]uint32{local, 1, 1},
	})
	require.NoError(t, err)
	return p
}

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	code := m.Run()
	// Every instance Close kept for reuse is destroyed, and the validation
	// layer must report nothing while it is (a device's object outliving
	// it would be reported here).
	if err := ReleaseInstances(); err != nil {
		fmt.Fprintln(os.Stderr, "ReleaseInstances:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
