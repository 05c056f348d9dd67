//go:build cgo

package gpucheck

import (
	"context"
	"fmt"
	"math/rand"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpubench"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// bigRequests returns requests whose data tensor holds bytes bytes or a
// little more: scatters of a few thousand updates (with reduction none,
// an integer sum and a float max, all exact) landing all over the tensor,
// its last elements included, and a strided SliceScatter.
func bigRequests(rng *rand.Rand, bytes uint64) []ops.Request {
	const cols = 64
	rows := int((bytes+4*cols-1)/(4*cols)) + 1
	n := rows * cols
	f32 := func(shape ...int) *tensor.Tensor {
		x, _ := tensor.New(tensor.Float32, shape)
		v := tensor.View[float32](x)
		for i := range v {
			v[i] = float32(rng.Intn(2001)-1000) / 4
		}
		return x
	}
	i32 := func(shape ...int) *tensor.Tensor {
		x, _ := tensor.New(tensor.Int32, shape)
		v := tensor.View[int32](x)
		for i := range v {
			v[i] = rng.Int31() - 1<<30
		}
		return x
	}
	positions := func(limit int, shape ...int) *tensor.Tensor {
		x, _ := tensor.New(tensor.Int64, shape)
		v := tensor.View[int64](x)
		for i := range v {
			v[i] = int64(rng.Intn(limit))
		}
		v[len(v)-1] = int64(limit - 1) // the last element: the far end of the last chunk
		return x
	}
	const k = 4096
	return []ops.Request{
		{Op: "ScatterElements-18", Data: f32(n), Indices: positions(n, k), Updates: f32(k)},
		{Op: "ScatterElements-18", Data: f32(n), Indices: positions(n, k), Updates: f32(k), Reduction: "max"},
		{Op: "ScatterND-16", Data: i32(rows, cols), Indices: positions(rows, k/8, 1), Updates: i32(k/8, cols), Reduction: "add"},
		{Op: "SliceScatter-15", Data: f32(rows, cols), Updates: f32((rows+2)/3, cols/2),
			Start: tensor.Ints(0, 1), Stop: tensor.Ints(int64(rows), int64(cols)), Step: tensor.Ints(3, 2), Axes: tensor.Ints(0, 1)},
	}
}

// big runs bigRequests with data tensors beyond the device's storage
// binding limit (maxStorageBufferRange) on b, each compared bit for bit
// with the CPU reference.
func big(t opstest.T, b *gpu.Backend, seed int64) {
	ctx := context.Background()
	limit := gpubench.Of(b).Device().Limits().MaxBindingBytes
	size := limit + 1<<20
	if alloc := gpubench.Of(b).Device().Limits().MaxAllocationBytes; size > alloc/4 {
		t.Logf("the binding limit (%d bytes) is near the allocation limit (%d bytes): tensors of %d bytes", limit, alloc, alloc/4)
		size = alloc / 4
	}
	rng := rand.New(rand.NewSource(seed))
	for i, req := range bigRequests(rng, size) {
		if !opstest.BeginCase(t, req) {
			continue
		}
		want, err := ops.Run(ctx, cpuref.New(), req)
		require.NoError(t, err, "request %d", i)
		got, err := ops.Run(ctx, b, req)
		if opstest.Refused(t, req, err) {
			continue
		}
		require.NoError(t, err, "request %d: %s %v%s", i, req.Op, req.Data.DType, tensor.FormatShape(req.Data.Shape))
		if d := opstest.DiffFor(opstest.ReductionOf(req), got, want); d != "" {
			if m, ok := t.(opstest.MismatchReporter); ok {
				if mm, found := opstest.FirstMismatch(req, got, want); found {
					m.Mismatch(mm)
				}
			}
			t.Errorf("request %d (seed %d): %s reduction %q on %v%s: %s", i, seed, req.Op, req.Reduction, req.Data.DType,
				tensor.FormatShape(req.Data.Shape), d)
		}
	}
	t.Logf("%s", fmt.Sprintf("data of %d bytes; binding limit %d bytes", size, limit))
}
