package ops

import (
	"fmt"
)

// Sentinel is the type of the package's sentinel errors, so that they can be
// constants and compared with errors.Is.
type Sentinel string

func (s Sentinel) Error() string { return string(s) }

// Sentinel errors. Every error returned by Prepare, Plan methods and the
// backends wraps exactly one of them.
const (
	// ErrUnknownOp: the operator name is not one gpuscatter accepts.
	ErrUnknownOp = Sentinel("unknown operator")
	// ErrMissingInput: a required input is nil.
	ErrMissingInput = Sentinel("missing input")
	// ErrUnexpectedInput: an input or attribute the operator does not take.
	ErrUnexpectedInput = Sentinel("unexpected input")
	// ErrInvalidTensor: an input tensor is malformed (payload length, dtype).
	ErrInvalidTensor = Sentinel("invalid tensor")
	// ErrDType: an element type the operator does not accept, or data and
	// updates that differ.
	ErrDType = Sentinel("unsupported dtype")
	// ErrShape: a rank or shape that breaks the operator's shape rules.
	ErrShape = Sentinel("shape mismatch")
	// ErrAxis: an axis outside [-r, r-1], or repeated.
	ErrAxis = Sentinel("axis out of range")
	// ErrIndexRange: an index outside the range its version allows.
	ErrIndexRange = Sentinel("index out of range")
	// ErrReduction: a reduction the operator version or dtype does not accept.
	ErrReduction = Sentinel("unsupported reduction")
	// ErrSlice: invalid SliceScatter parameters (step 0).
	ErrSlice = Sentinel("invalid slice")
	// ErrMode: a TensorScatter mode other than linear and circular.
	ErrMode = Sentinel("invalid mode")
	// ErrNoDevice: the backend has no device to run on.
	ErrNoDevice = Sentinel("no device")
	// ErrDeviceLost: the device failed while running.
	ErrDeviceLost = Sentinel("device lost")
	// ErrUnsupported: the backend cannot run this plan (a dtype or size its
	// device lacks).
	ErrUnsupported = Sentinel("unsupported by backend")
	// ErrOutOfMemory: the plan needs more device (or host) memory than the
	// backend's device has free. Splitting the work, or another backend,
	// may run it.
	ErrOutOfMemory = Sentinel("out of device memory")
	// ErrOutput: the output tensor given to a backend has the wrong dtype or
	// shape.
	ErrOutput = Sentinel("invalid output tensor")
)

// Error is the error type of operator validation and execution. It names the
// operator and the input at fault; Error() reads like
//
//	ScatterNDUpdate-15: indices[1,0] = 7 is out of range [-5, 4] for axis 2 of data
type Error struct {
	Op string // operator and version, e.g. "ScatterNDUpdate-15"
	// Input is the input or attribute at fault: "data", "indices", "axis",
	// ... (a Request field's name, which Msg gives as the operator's own
	// name for it: TensorScatter-24's "indices" are its write_indices;
	// see Op.InputName).
	Input string
	Err   error  // the sentinel
	Msg   string // what is wrong, starting with the input's name
}

func (e *Error) Error() string {
	if e.Op == "" {
		return e.Msg
	}
	return e.Op + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

func newError(op, input string, sentinel error, format string, args ...any) *Error {
	return &Error{Op: op, Input: input, Err: sentinel, Msg: fmt.Sprintf(format, args...)}
}
