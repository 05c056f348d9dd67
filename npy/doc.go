// Package npy reads and writes NumPy .npy files as tensor.Tensor values.
//
// Read and ReadFile accept format versions 1.0, 2.0 and 3.0, every byte
// order, C and Fortran layouts (Fortran arrays are transposed so the result
// is always row-major), and the dtypes that map onto tensor element types:
// bool, the signed and unsigned integers, float16/32/64, complex64/128, and
// fixed-width strings ('U', and 'S' read as UTF-8 text). Big-endian payloads
// are byte-swapped into the little-endian layout that Tensor.Data uses.
//
// Write and WriteFile produce what numpy.save produces: a version 1.0 header
// (2.0 when the header does not fit in 65535 bytes), little-endian descrs,
// C order, and a header padded so the payload starts at a multiple of 64
// bytes. WriteFile and WriteFileContext replace their target atomically
// through package atomicfile.
//
// Every error about the content of a file wraps ErrFormat (the file is
// malformed or contradicts itself) or ErrUnsupported (the file is valid NPY
// but holds something this package does not take, such as pickled objects
// or structured records). The header is parsed by a small strict parser for
// the Python literals NumPy writes; nothing is ever evaluated or unpickled.
package npy
