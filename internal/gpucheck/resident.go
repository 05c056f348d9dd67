//go:build cgo

package gpucheck

import (
	"context"
	"fmt"
	"math/rand"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// residentVsReference runs n random requests of every operator and numeric
// dtype on resident tensors, into a separate output and (one in three) in
// place, and compares each result with cpuref's; the inputs must come back
// unchanged.
func residentVsReference(t opstest.T, b *gpu.Backend, seed int64, n int) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	gen := opstest.Config{DTypes: opstest.NumericDTypes(), MaxElements: 2000, MaxDim: 12}
	for i := 0; i < n; i++ {
		req := opstest.RandomRequest(rng, gen)
		if !opstest.BeginCase(t, req) {
			continue
		}
		want, err := ops.Run(ctx, cpuref.New(), req)
		require.NoError(t, err, opstest.Describe(req))
		residentCase(t, b, req, want, nil, i%3 == 2, i)
	}
}

// residentSkip runs n requests with SkipBadIndices and one to three bad
// indices (opstest.SkipBadRequest) of every operator that takes indices
// and every numeric dtype on resident tensors, into a separate output and
// (one in two) in place: the output must hold cpuref's result, every
// update of a valid index, and the call must report cpuref's error, the
// first bad index.
func residentSkip(t opstest.T, b *gpu.Backend, seed int64, n int) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	gen := opstest.Config{DTypes: opstest.NumericDTypes(), MaxElements: 2000, MaxDim: 12}
	for i := 0; i < n; i++ {
		req := opstest.SkipBadRequest(rng, gen)
		if !opstest.BeginCase(t, req) {
			continue
		}
		want, werr := ops.Run(ctx, cpuref.New(), req)
		require.ErrorIs(t, werr, ops.ErrIndexRange, opstest.Describe(req))
		require.NotNil(t, want, "cpuref gives the result with the error")
		residentCase(t, b, req, want, werr, i%2 == 1, i)
	}
}

// residentCase runs req on resident tensors and checks the result against
// want, and the error against werr (nil: none), closing every tensor it
// made.
func residentCase(t opstest.T, b *gpu.Backend, req ops.Request, want *tensor.Tensor, werr error, inPlace bool, i int) {
	ctx := context.Background()
	var made []*gpu.Tensor
	defer func() {
		for _, r := range made {
			if err := r.Close(); err != nil {
				t.Errorf("closing a resident tensor: %v", err)
			}
		}
	}()
	up := func(x *tensor.Tensor) *gpu.Tensor {
		if x == nil {
			return nil
		}
		r, err := b.Upload(ctx, x)
		require.NoError(t, err)
		made = append(made, r)
		return r
	}
	down := func(r *gpu.Tensor) *tensor.Tensor {
		h, err := r.Download(ctx)
		require.NoError(t, err)
		return h
	}
	c := gpu.CallOf(req)
	c.Data, c.Indices, c.Updates = up(req.Data), up(req.Indices), up(req.Updates)
	c.Out = c.Data
	if !inPlace && req.Data != nil {
		out, err := b.NewTensor(ctx, req.Data.DType, req.Data.Shape)
		require.NoError(t, err)
		made = append(made, out)
		c.Out = out
	}
	err := b.Run(ctx, c)
	if opstest.Refused(t, req, err) {
		if !opstest.Same(down(c.Data), req.Data) {
			t.Errorf("case %d (in place %v): a refused call changed data\n%s", i, inPlace, opstest.Describe(req))
		}
		return
	}
	if werr == nil {
		require.NoError(t, err, opstest.Describe(req))
	} else {
		require.ErrorIs(t, err, ops.ErrIndexRange, opstest.Describe(req))
		require.Equal(t, werr.Error(), err.Error(), opstest.Describe(req))
	}
	got := down(c.Out)
	if werr != nil && opstest.ReductionOf(req) != ops.None {
		// With SkipBadIndices small float sums take the atomics, which
		// round in the device's order: within the bound, not bit for bit.
		p, err := ops.Prepare(req)
		require.NoError(t, err)
		opstest.CheckReduction(t, p, got, want, false, fmt.Sprintf("case %d (in place %v)", i, inPlace))
	} else if d := opstest.DiffFor(opstest.ReductionOf(req), got, want); d != "" {
		if m, ok := t.(opstest.MismatchReporter); ok {
			if mm, found := opstest.FirstMismatch(req, got, want); found {
				m.Mismatch(mm)
			}
		}
		t.Fatalf("case %d (in place %v): %s\n%s", i, inPlace, d, opstest.Describe(req))
	}
	if !inPlace && !opstest.Same(down(c.Data), req.Data) {
		t.Errorf("case %d: data changed\n%s", i, opstest.Describe(req))
	}
	if !opstest.Same(down(c.Updates), req.Updates) {
		t.Errorf("case %d: updates changed\n%s", i, opstest.Describe(req))
	}
	if c.Indices != nil && !opstest.Same(down(c.Indices), req.Indices) {
		t.Errorf("case %d: indices changed\n%s", i, opstest.Describe(req))
	}
}
