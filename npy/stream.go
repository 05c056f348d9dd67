package npy

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"

	"github.com/gpuscatter/gpuscatter/atomicfile"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Header is what an .npy header says of its array.
type Header struct {
	DType tensor.DType
	Shape []int
	// Fortran is the header's fortran_order.
	Fortran bool
	// Offset is where the payload starts; Size is its length in bytes.
	Offset, Size int64
	// Raw reports whether the payload is the array's Tensor.Data exactly
	// (as File.Read delivers it): a fixed-width dtype stored
	// little-endian or in single bytes, in row-major order. Strings,
	// big-endian payloads and Fortran-order arrays of rank 2 or more are
	// not raw: Read and ReadFile convert them.
	Raw bool
}

// exported returns l as a Header.
func (l *layout) exported() Header {
	return Header{
		DType: l.spec.dt, Shape: slices.Clone(l.shape), Fortran: l.fortran, Offset: l.offset, Size: int64(l.size),
		Raw: l.spec.dt != tensor.String && !l.spec.swap && !(l.fortran && len(l.shape) > 1 && l.count > 0),
	}
}

// ReadHeader reads the magic, version and header dict of an .npy array
// from r and returns what they say, with Read's errors for a malformed or
// unsupported header; r is left at the start of the payload.
func ReadHeader(r io.Reader) (Header, error) {
	l, err := readHeader(r)
	if err != nil {
		return Header{}, err
	}
	return l.exported(), nil
}

// ReadHeaderFile reads the header of the .npy file at path and returns
// what it says, without looking at the payload: a file that holds the
// header alone, or whose payload is short or has trailing bytes, reads as
// a file whose payload is whole, for a program that needs only the dtype
// and the shape. A malformed or unsupported header, and a file that cannot
// be opened or read, fail as OpenFile fails for them, naming path.
func ReadHeaderFile(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, withPath(path, err)
	}
	defer f.Close()
	h, err := ReadHeader(f)
	return h, withPath(path, err)
}

// File is an .npy file opened at its payload (OpenFile), for reading the
// payload straight into memory that is not a Go slice of its own, such
// as a device's.
type File struct {
	Header
	f    *os.File
	path string
	l    *layout
	left int64 // payload bytes not yet read
}

// OpenFile opens the .npy file at path and reads its header. Its errors
// are ReadFile's for the same file, naming path: a malformed or
// unsupported header, and, for a regular file, a payload whose length is
// not what the header claims (checked from the file's size, before any
// of it is read). Read then reads the payload.
func OpenFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, withPath(path, err)
	}
	nf, err := openFile(f)
	if err != nil {
		f.Close()
		return nil, withPath(path, err)
	}
	nf.path = path
	return nf, nil
}

func openFile(f *os.File) (*File, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	l, err := readHeader(f)
	if err != nil {
		return nil, err
	}
	if st.Mode().IsRegular() {
		if follow := st.Size() - l.offset; follow != int64(l.size) {
			if follow > int64(l.size) {
				return nil, formatErr("%s but %d bytes follow (%d trailing bytes)", l.claim(), follow, follow-int64(l.size))
			}
			return nil, formatErr("%s but only %d bytes follow", l.claim(), follow)
		}
	}
	return &File{Header: l.exported(), f: f, l: l, left: int64(l.size)}, nil
}

// Read reads the payload as it is stored, except that bool elements are
// read as 0 or 1, as ReadFile reads them; use it for a Raw header. At the
// end of the payload it returns io.EOF. A payload that ends early, a file
// that grew while being read and a failing read are errors naming the
// file, worded as ReadFile's; io.EOF never stands for a short payload.
func (f *File) Read(p []byte) (int, error) {
	if f.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > f.left {
		p = p[:f.left]
	}
	n, err := f.f.Read(p)
	f.left -= int64(n)
	if f.DType == tensor.Bool {
		for i, b := range p[:n] {
			if b > 1 {
				p[i] = 1
			}
		}
	}
	switch {
	case f.left == 0:
		var extra [1]byte
		if m, _ := f.f.Read(extra[:]); m > 0 {
			return n, withPath(f.path, formatErr("%s but the file grew past them while being read", f.l.claim()))
		}
		return n, nil
	case err == nil:
		return n, nil
	case errors.Is(err, io.EOF):
		err = io.ErrUnexpectedEOF
	}
	return n, withPath(f.path, payloadErr(f.l, f.l.size-int(f.left), err))
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// WriteHeader writes the header Write writes for a tensor of dt and shape
// (numpy.save's: little-endian descr, C order, the payload aligned to 64
// bytes), so that the payload, Tensor.Data's bytes with bools as 0 or 1,
// can be written after it from elsewhere. It fails with Write's errors,
// before writing anything, for what Write cannot write; strings, whose
// header depends on their values, are ErrUnsupported.
func WriteHeader(w io.Writer, dt tensor.DType, shape []int) error {
	h, err := fixedHeader(dt, shape)
	if err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return wrapErr(err, "writing the header")
	}
	return nil
}

// WriteFilePayload writes an .npy file of dt and shape at path atomically,
// as WriteFileContext writes a tensor: WriteHeader's header, then the
// payload that payload writes to w (Tensor.Data's bytes, bools as 0 or
// 1; it must write exactly the payload's size). Its errors are
// WriteFileContext's, naming path; an error of payload is "writing the
// payload". On any failure path is left as it was.
func WriteFilePayload(ctx context.Context, path string, dt tensor.DType, shape []int, payload func(w io.Writer) error) error {
	h, err := fixedHeader(dt, shape)
	if err == nil {
		err = atomicfile.Write(ctx, path, func(w io.Writer) error {
			if _, err := w.Write(h); err != nil {
				return wrapErr(err, "writing the header")
			}
			if err := payload(w); err != nil {
				return wrapErr(err, "writing the payload")
			}
			return nil
		})
	}
	if err != nil {
		return withPath(path, err)
	}
	return nil
}

// fixedHeader returns the header of a fixed-width array of dt and shape,
// or Write's error for one it cannot write.
func fixedHeader(dt tensor.DType, shape []int) ([]byte, error) {
	desc := &tensor.Tensor{DType: dt, Shape: shape}
	if err := desc.CheckShape(); err != nil {
		return nil, &npyError{kind: err, msg: err.Error()}
	}
	if len(shape) > maxRank {
		return nil, unsupportedErr("rank %d is over the %d-dimension limit", len(shape), maxRank)
	}
	descr, ok := descrs[dt]
	switch {
	case dt == tensor.BFloat16:
		return nil, unsupportedErr("bfloat16 has no standard NPY dtype; convert it to float32 (or reinterpret it as uint16) first")
	case dt == tensor.String:
		return nil, unsupportedErr("a string array's header depends on its strings; use Write")
	case !ok:
		return nil, unsupportedErr("no NPY dtype for %v", dt)
	}
	return encodeHeader(descr, shape), nil
}
