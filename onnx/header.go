package onnx

import (
	"os"

	"github.com/gpuscatter/gpuscatter/tensor"
)

// Header is what a TensorProto says of its tensor: the element type and
// the shape.
type Header struct {
	DType tensor.DType
	Shape []int
}

// ReadHeaderFile reads the dtype and shape of the TensorProto file at path
// without its raw_data, whose bytes it skips: ReadFile's checks of the
// message, the dtype, the dims and the length of the data (raw_data's
// length, or the entries of a typed field, which it reads) apply, with
// ReadFile's errors, naming path.
func ReadHeaderFile(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, withPath(path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Header{}, withPath(path, err)
	}
	size := int64(-1)
	if st.Mode().IsRegular() {
		size = st.Size()
	}
	h, err := readHeader(f, size)
	return h, withPath(path, err)
}

// readHeader is ReadHeaderFile on a stream of size bytes (-1: unknown).
func readHeader(f *os.File, size int64) (Header, error) {
	s, err := newStreamReader(f, size)
	if err != nil {
		return Header{}, err
	}
	s.header = true
	tp, err := s.read()
	if err != nil {
		return Header{}, err
	}
	dt, shape, _, err := check(tp, int(s.rawLen))
	if err != nil {
		return Header{}, err
	}
	return Header{DType: dt, Shape: shape}, nil
}
