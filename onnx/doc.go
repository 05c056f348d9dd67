// Package onnx reads and writes ONNX TensorProto files (.pb) as
// tensor.Tensor values and reads single-node ONNX models. It knows no
// backend: mapping a model's node onto an operator is the caller's work.
//
// Unmarshal, Read and ReadFile take every element type the tensor package has
// (bool, int8 ... uint64, float16, bfloat16, float, double, complex64,
// complex128, string), from raw_data (little-endian, as ONNX stores it) or
// from the typed repeated field that ONNX's onnx.proto assigns to the type
// (int32_data for the small integers, bool, float16 and bfloat16,
// uint64_data for uint32 and uint64, float_data and double_data for floats
// and complex numbers as real, imaginary pairs, string_data for strings),
// at any rank including 0 and with zero-size dimensions. Every size is
// checked against the bytes actually present before the tensor is
// allocated, so a TensorProto that lies about its dims fails with a small
// allocation.
//
// Marshal and Write produce what onnx.numpy_helper.from_array
// produces: dims, data_type and raw_data, or string_data for strings.
//
// Every error about the content of a file wraps ErrFormat (the message is
// malformed or contradicts itself) or ErrUnsupported (it is valid ONNX but
// holds something this package does not take: external or segmented data,
// a data type gpuscatter has no element type for).
package onnx
