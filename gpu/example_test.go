//go:build cgo

package gpu_test

import (
	"context"
	"fmt"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Resident tensors: upload the inputs once, run two operators in one
// submission, the second on the first one's output, and download once.
func ExampleBatch() {
	ctx := context.Background()
	g, err := gpu.Open(gpu.Options{})
	if err != nil {
		fmt.Println(err) // no usable Vulkan device
		return
	}
	defer g.Close() // also releases every tensor still open

	if err := chain(ctx, g); err != nil {
		fmt.Println(err)
	}
	// Output: [41 0 3 0 5 0 7 0]
}

func chain(ctx context.Context, g *gpu.Backend) error {
	var ts [5]*gpu.Tensor
	var err error
	for i, host := range []*tensor.Tensor{
		tensor.MustFromSlice([]int{8}, []float32{1, 2, 3, 4, 5, 6, 7, 8}), // data
		tensor.MustFromSlice([]int{3, 1}, []int64{0, 7, 0}),               // indices
		tensor.MustFromSlice([]int{3}, []float32{10, 20, 30}),             // updates
		tensor.MustFromSlice([]int{4}, []float32{0, 0, 0, 0}),             // zeros
	} {
		if ts[i], err = g.Upload(ctx, host); err != nil {
			return err
		}
		defer ts[i].Close()
	}
	if ts[4], err = g.NewTensor(ctx, tensor.Float32, []int{8}); err != nil {
		return err
	}
	defer ts[4].Close()
	data, indices, updates, zeros, out := ts[0], ts[1], ts[2], ts[3], ts[4]

	batch := g.NewBatch()
	// out = data with the updates added at the indices (0 twice)...
	if err := batch.Add(gpu.Call{Op: "ScatterNDUpdate-15", Reduction: "sum",
		Data: data, Indices: indices, Updates: updates, Out: out}); err != nil {
		return err
	}
	// ...then every second element from 1 on set to 0, in place.
	if err := batch.Add(gpu.Call{Op: "SliceScatter-15", Data: out, Out: out, Updates: zeros,
		Start: tensor.MustFromSlice([]int{1}, []int64{1}), Stop: tensor.MustFromSlice([]int{1}, []int64{8}),
		Step: tensor.MustFromSlice([]int{1}, []int64{2})}); err != nil {
		return err
	}
	sub, err := batch.Submit(ctx) // returns without waiting
	if err != nil {
		return err
	}
	if err := sub.Wait(ctx); err != nil { // a bad index would show here
		return err
	}
	res, err := out.Download(ctx)
	if err != nil {
		return err
	}
	fmt.Println(tensor.View[float32](res))
	return nil
}
