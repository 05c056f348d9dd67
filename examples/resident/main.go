//go:build cgo

// Command resident keeps tensors on the Vulkan device between calls: two
// operators in one submission, the second in place on the first's
// result, and one download at the end.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

func main() {
	g, err := gpu.Open(gpu.Options{})
	if errors.Is(err, ops.ErrNoDevice) || errors.Is(err, ops.ErrUnsupported) {
		fmt.Println("no Vulkan device:", err)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close() // also releases the tensors left open
	res, err := run(context.Background(), g)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tensor.View[int32](res)) // [100 13 3 14 28 6 20 20]
}

func run(ctx context.Context, g *gpu.Backend) (*tensor.Tensor, error) {
	var in []*gpu.Tensor // each input uploaded once, into device memory
	for _, t := range []*tensor.Tensor{
		tensor.MustFromSlice([]int{8}, []int32{1, 2, 3, 4, 5, 6, 7, 8}),
		tensor.MustFromSlice([]int{6, 1}, []int64{4, 3, 1, 7, -2, -4}),
		tensor.MustFromSlice([]int{6}, []int32{9, 10, 11, 12, 13, 14}),
		tensor.MustFromSlice([]int{2}, []int64{0, 7}),
		tensor.MustFromSlice([]int{2}, []int32{100, 5}),
	} {
		d, err := g.Upload(ctx, t)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		in = append(in, d)
	}
	data, indices, updates, idx2, upd2 := in[0], in[1], in[2], in[3], in[4]
	out, err := g.NewTensor(ctx, tensor.Int32, []int{8})
	if err != nil {
		return nil, err
	}
	defer out.Close()

	batch := g.NewBatch() // calls on resident tensors, in one submission
	if err := batch.Add(gpu.Call{Op: "ScatterNDUpdate-15", Reduction: "sum",
		Data: data, Indices: indices, Updates: updates, Out: out}); err != nil {
		return nil, err
	}
	if err := batch.Add(gpu.Call{Op: "ScatterElements-18", Reduction: "max",
		Data: out, Indices: idx2, Updates: upd2, Out: out}); err != nil { // in place
		return nil, err
	}
	sub, err := batch.Submit(ctx) // one command buffer, one submission, no wait
	if err != nil {
		return nil, err
	}
	if err := sub.Wait(ctx); err != nil { // the batch's outcome: a bad index
		return nil, err
	}
	return out.Download(ctx) // the one download
}
