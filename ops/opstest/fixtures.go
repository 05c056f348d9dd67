package opstest

import (
	"fmt"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// SentinelOutput returns an output tensor for p filled with a pattern, for
// checks that a failed call leaves its output alone.
func SentinelOutput(p *ops.Plan) *tensor.Tensor {
	out, _ := tensor.New(p.DType, p.Shape)
	for i := range out.Data {
		out.Data[i] = byte(0x5A ^ i)
	}
	for i := range out.Strings {
		out.Strings[i] = fmt.Sprintf("\xffsentinel%d", i)
	}
	return out
}

// NumericDTypes returns every dtype but string, the dtypes a tensor resident
// on a device can have.
func NumericDTypes() []tensor.DType {
	var dts []tensor.DType
	for _, dt := range tensor.DTypes() {
		if dt != tensor.String {
			dts = append(dts, dt)
		}
	}
	return dts
}
