package ops_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// The README's library example: ScatterNDUpdate-15 with reduction sum on
// the CPU reference, then an out-of-range index.
func ExampleRun() {
	data := tensor.MustFromSlice([]int{8}, []int32{1, 2, 3, 4, 5, 6, 7, 8})
	indices := tensor.MustFromSlice([]int{6, 1}, []int64{4, 3, 1, 7, -2, -4})
	updates := tensor.MustFromSlice([]int{6}, []int32{9, 10, 11, 12, 13, 14})

	ctx := context.Background()
	req := ops.Request{
		Op: "ScatterNDUpdate-15", Data: data, Indices: indices, Updates: updates,
		Reduction: "sum",
	}
	out, err := ops.Run(ctx, cpuref.New(), req)
	fmt.Println(out, err)

	req.Indices = tensor.MustFromSlice([]int{2, 1}, []int64{0, 9})
	req.Updates = tensor.MustFromSlice([]int{2}, []int32{1, 2})
	_, err = ops.Run(ctx, cpuref.New(), req)
	var oe *ops.Error
	fmt.Println(errors.Is(err, ops.ErrIndexRange), errors.As(err, &oe) && oe.Input == "indices")
	fmt.Println(err)
	// Output:
	// int32[8] [1 13 3 14 28 6 20 20] <nil>
	// true true
	// ScatterNDUpdate-15: indices[1,0] = 9 is out of range [-8, 7] for axis 0 of data
}
