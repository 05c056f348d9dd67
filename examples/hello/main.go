// Command hello runs ScatterElements-18 with reduction add on host
// tensors, on the default Vulkan device or, without one, on the CPU.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

func main() {
	var b ops.Backend = cpuref.New()
	if g, err := gpu.Open(gpu.Options{}); err == nil { // else no device, or no cgo
		b = g
	}
	defer b.Close()
	out, err := ops.Run(context.Background(), b, ops.Request{
		Op: "ScatterElements-18", Reduction: "add",
		Data:    tensor.MustFromSlice([]int{4}, []float32{0, 0, 0, 0}),
		Indices: tensor.MustFromSlice([]int{3}, []int64{1, 3, 1}),
		Updates: tensor.MustFromSlice([]int{3}, []float32{1, 2, 3}),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tensor.View[float32](out)) // [0 4 0 2]
}
