package gpu

import (
	"errors"

	"github.com/gpuscatter/gpuscatter/ops"
)

// ErrClosed is the error of every method called on a nil or closed
// *Backend, and of every method of a Batch or Tensor, and of the Wait of
// a Submission, whose Backend is nil or closed (a Tensor's accessors,
// DType, Shape and Bytes, still answer). It also matches
// ops.ErrNoDevice, so that code written against ops.Backend needs no test
// of its own.
var ErrClosed error = closedError{}

type closedError struct{}

func (closedError) Error() string { return "vulkan: the backend is closed" }

func (closedError) Is(target error) bool { return target == ops.ErrNoDevice }

// ErrResidentLost is what the error of a call on resident tensors adds,
// after "; ", when the device is lost (the error matches
// ops.ErrDeviceLost and ErrResidentLost): the tensors cannot run
// elsewhere as a host call's inputs can.
var ErrResidentLost = errors.New("the resident tensors are lost with the device: open a new Backend and upload them again")

// closedPlanError is ErrClosed for an Execute of p.
func closedPlanError(p *ops.Plan) error {
	return &ops.Error{Op: p.Op.Name, Input: "data", Err: ErrClosed, Msg: ErrClosed.Error()}
}
