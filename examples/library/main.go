// Command library runs ScatterNDUpdate-15 with a sum reduction on the CPU
// reference, then on the default Vulkan device, or on the CPU again when
// there is none.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

func main() {
	data := tensor.MustFromSlice([]int{8}, []int32{1, 2, 3, 4, 5, 6, 7, 8})
	indices := tensor.MustFromSlice([]int{6, 1}, []int64{4, 3, 1, 7, -2, -4})
	updates := tensor.MustFromSlice([]int{6}, []int32{9, 10, 11, 12, 13, 14})
	req := ops.Request{
		Op: "ScatterNDUpdate-15", Data: data, Indices: indices, Updates: updates,
		Reduction: "sum",
	}
	ctx := context.Background()

	// The CPU reference.
	out, err := ops.Run(ctx, cpuref.New(), req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("cpu:", tensor.View[int32](out)) // cpu: [1 13 3 14 28 6 20 20]

	// The same on the GPU: open once, run many plans, Close at the end.
	// Without a usable Vulkan device, or in a build without cgo, Open
	// fails with ops.ErrNoDevice (or ops.ErrUnsupported): use the CPU.
	var b ops.Backend
	g, err := gpu.Open(gpu.Options{})
	switch {
	case errors.Is(err, ops.ErrNoDevice), errors.Is(err, ops.ErrUnsupported):
		fmt.Println("no Vulkan device, using the CPU:", err)
		b = cpuref.New()
	case err != nil:
		log.Fatal(err)
	default:
		b = g
	}
	defer b.Close()
	out, err = ops.Run(ctx, b, req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %v\n", b.Name(), tensor.View[int32](out))

	// An index out of range is an *ops.Error that names the input, the
	// position and the value; nothing is written.
	req.Indices = tensor.MustFromSlice([]int{1, 1}, []int64{8})
	req.Updates = tensor.MustFromSlice([]int{1}, []int32{100})
	_, err = ops.Run(ctx, b, req)
	var oe *ops.Error
	if errors.As(err, &oe) && errors.Is(err, ops.ErrIndexRange) {
		fmt.Printf("%s: %v\n", oe.Input, err)
		// indices: ScatterNDUpdate-15: indices[0,0] = 8 is out of range [-8, 7] for axis 0 of data
	}
}
