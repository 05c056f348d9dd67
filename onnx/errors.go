package onnx

import (
	"errors"
	"fmt"
)

// ErrFormat is wrapped by every error about a malformed file: bytes that
// are not a protobuf message, dims whose product disagrees with the data,
// a negative dimension, data in a field the data type does not use.
var ErrFormat = errors.New("onnx: malformed file")

// ErrUnsupported is wrapped by every error about a valid ONNX file (or a
// tensor) that this package does not handle: external or segmented data,
// data types without an element type here, tensors over protobuf's 2 GiB.
var ErrUnsupported = errors.New("onnx: unsupported content")

// onnxError is an error about the content of a file, with the file's path
// once it is known.
type onnxError struct {
	kind error
	path string
	msg  string
}

func (e *onnxError) Error() string {
	if e.path != "" {
		return "onnx: " + e.path + ": " + e.msg
	}
	return "onnx: " + e.msg
}

func (e *onnxError) Unwrap() error { return e.kind }

func formatErr(format string, args ...any) error {
	return &onnxError{kind: ErrFormat, msg: fmt.Sprintf(format, args...)}
}

func unsupportedErr(format string, args ...any) error {
	return &onnxError{kind: ErrUnsupported, msg: fmt.Sprintf(format, args...)}
}

// withPath adds path to err: to the message of one of ours, or around any
// other error.
func withPath(path string, err error) error {
	if err == nil {
		return nil
	}
	var oe *onnxError
	if errors.As(err, &oe) && oe.path == "" {
		c := *oe
		c.path = path
		return &c
	}
	return fmt.Errorf("onnx: %s: %w", path, err)
}

// prefixed returns err with what its message is about put in front:
// "initializer \"x\": ...".
func prefixed(what string, err error) error {
	var oe *onnxError
	if errors.As(err, &oe) {
		c := *oe
		c.msg = what + ": " + c.msg
		return &c
	}
	return fmt.Errorf("%s: %w", what, err)
}
