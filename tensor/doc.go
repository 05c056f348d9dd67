// Package tensor holds the dense tensor type that every gpuscatter package
// shares: its element types (DType), row-major shapes including rank 0 and
// zero-size dimensions, and typed views over the raw little-endian payload.
//
// Tensor.Data is exactly what a device buffer holds, so backends move it
// without conversion; typed code reads it through View. String tensors keep
// their elements in Tensor.Strings.
package tensor
