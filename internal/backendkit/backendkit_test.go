package backendkit

import (
	"context"
	"errors"
	"testing"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

func TestBeginExecute(t *testing.T) {
	p, err := ops.Prepare(ops.Request{Op: "ScatterElements-18",
		Data:    tensor.MustFromSlice([]int{3}, []float32{1, 2, 3}),
		Indices: tensor.MustFromSlice([]int{1}, []int64{2}),
		Updates: tensor.MustFromSlice([]int{1}, []float32{9}),
		Axis:    tensor.Scalar(int64(0))})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := tensor.New(tensor.Float32, []int{3})

	if _, err := BeginExecute(context.Background(), "x", nil, out); !errors.Is(err, ops.ErrMissingInput) || err.Error() != "x: plan is nil" {
		t.Errorf("nil plan: %v", err)
	}
	wrong, _ := tensor.New(tensor.Float32, []int{4})
	if _, err := BeginExecute(context.Background(), "x", p, wrong); !errors.Is(err, ops.ErrOutput) {
		t.Errorf("wrong output shape: %v", err)
	}
	var none context.Context // nil: BeginExecute gives context.Background
	ctx, err := BeginExecute(none, "x", p, out)
	if err != nil || ctx == nil {
		t.Errorf("nil context: %v, %v", ctx, err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := BeginExecute(done, "x", p, out); !errors.Is(err, context.Canceled) {
		t.Errorf("done context: %v", err)
	}
}
