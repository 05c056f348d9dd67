package npy

import (
	"context"
	"encoding/binary"
	"io"
	"math/bits"
	"unicode/utf8"

	"github.com/gpuscatter/gpuscatter/atomicfile"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// descrs holds the descr written for each fixed-size dtype.
var descrs = map[tensor.DType]string{
	tensor.Bool:       "|b1",
	tensor.Int8:       "|i1",
	tensor.Uint8:      "|u1",
	tensor.Int16:      "<i2",
	tensor.Uint16:     "<u2",
	tensor.Int32:      "<i4",
	tensor.Uint32:     "<u4",
	tensor.Int64:      "<i8",
	tensor.Uint64:     "<u8",
	tensor.Float16:    "<f2",
	tensor.Float32:    "<f4",
	tensor.Float64:    "<f8",
	tensor.Complex64:  "<c8",
	tensor.Complex128: "<c16",
}

// encoder is a checked tensor with its header, ready to write.
type encoder struct {
	t      *tensor.Tensor
	header []byte
	width  int  // string width in code points, or bytes when bytes is set
	bytes  bool // strings as '|S' bytes rather than '<U' code points
}

// newEncoder checks that t can be written and builds its header, so that
// nothing is written for a tensor that would fail.
func newEncoder(t *tensor.Tensor) (*encoder, error) {
	if err := t.Check(); err != nil {
		return nil, &npyError{kind: err, msg: err.Error()}
	}
	if len(t.Shape) > maxRank {
		return nil, unsupportedErr("rank %d is over the %d-dimension limit", len(t.Shape), maxRank)
	}
	e := &encoder{t: t}
	descr, ok := descrs[t.DType]
	switch {
	case t.DType == tensor.BFloat16:
		return nil, unsupportedErr("bfloat16 has no standard NPY dtype; convert it to float32 (or reinterpret it as uint16) first")
	case t.DType == tensor.String:
		f := t.StringFormat
		if f.Width < 0 {
			return nil, unsupportedErr("string width %d is negative", f.Width)
		}
		kind := "'U'"
		if f.Bytes {
			kind = "'S'"
		}
		e.width, e.bytes = max(f.Width, 1), f.Bytes
		for i, s := range t.Strings {
			if !f.Bytes && !utf8.ValidString(s) {
				return nil, unsupportedErr("string element %d is not valid UTF-8, which a 'U' array cannot hold", i)
			}
			if s != "" && s[len(s)-1] == 0 {
				return nil, unsupportedErr("string element %d ends with NUL, which NPY strips from %s arrays", i, kind)
			}
			n := f.Len(s)
			if f.Width > 0 && n > f.Width {
				return nil, unsupportedErr("string element %d is %d long, wider than its dtype %s", i, n, f)
			}
			e.width = max(e.width, n)
		}
		unit := uint64(4)
		if f.Bytes {
			unit = 1
		}
		hi, lo := bits.Mul64(uint64(len(t.Strings)), unit*uint64(e.width))
		if hi != 0 || lo > tensor.MaxBytes {
			return nil, unsupportedErr("%d strings of width %d need more than %d bytes",
				len(t.Strings), e.width, uint64(tensor.MaxBytes))
		}
		descr = tensor.StringFormat{Bytes: f.Bytes, Width: e.width}.String()
	case !ok:
		return nil, unsupportedErr("no NPY dtype for %v", t.DType)
	}
	e.header = encodeHeader(descr, t.Shape)
	return e, nil
}

// Write writes t to w as a C-order .npy array with a version 1.0 header
// (2.0 if the header needs more than 65535 bytes). Bools are written as 0
// and 1. Strings are written in t.StringFormat, the dtype they were read
// with ('<U4', '|S4'), or without one as '<U{n}', n being the longest
// string in code points. BFloat16 tensors, strings ending in NUL, strings
// longer than their StringFormat's width and, for 'U', strings that are
// not valid UTF-8 fail with ErrUnsupported before anything is written.
func Write(w io.Writer, t *tensor.Tensor) error {
	e, err := newEncoder(t)
	if err != nil {
		return err
	}
	return e.write(w)
}

func (e *encoder) write(w io.Writer) error {
	if _, err := w.Write(e.header); err != nil {
		return wrapErr(err, "writing the header")
	}
	var err error
	switch e.t.DType {
	case tensor.String:
		if e.bytes {
			err = e.writeByteStrings(w)
		} else {
			err = e.writeStrings(w)
		}
	case tensor.Bool:
		err = writeBools(w, e.t.Data)
	default:
		_, err = w.Write(e.t.Data)
	}
	if err != nil {
		return wrapErr(err, "writing the payload")
	}
	return nil
}

const writeBuf = 64 << 10

// writeStrings writes the strings as little-endian UTF-32, each padded with
// NULs to e.width code points.
func (e *encoder) writeStrings(w io.Writer) error {
	buf := make([]byte, 0, writeBuf)
	put := func(c rune) error {
		if len(buf) == cap(buf) {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
		buf = binary.LittleEndian.AppendUint32(buf, uint32(c))
		return nil
	}
	for _, s := range e.t.Strings {
		n := 0
		for _, c := range s {
			if err := put(c); err != nil {
				return err
			}
			n++
		}
		for ; n < e.width; n++ {
			if err := put(0); err != nil {
				return err
			}
		}
	}
	_, err := w.Write(buf)
	return err
}

// writeByteStrings writes the strings' bytes, each padded with NULs to
// e.width bytes.
func (e *encoder) writeByteStrings(w io.Writer) error {
	buf := make([]byte, 0, writeBuf)
	for _, s := range e.t.Strings {
		if len(buf)+e.width > cap(buf) && len(buf) > 0 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
		buf = append(buf, s...)
		for range e.width - len(s) {
			buf = append(buf, 0)
		}
	}
	_, err := w.Write(buf)
	return err
}

// writeBools writes data with every non-zero byte as 1.
func writeBools(w io.Writer, data []byte) error {
	clean := true
	for _, b := range data {
		if b > 1 {
			clean = false
			break
		}
	}
	if clean {
		_, err := w.Write(data)
		return err
	}
	buf := make([]byte, min(len(data), writeBuf))
	for len(data) > 0 {
		n := copy(buf, data)
		for i, b := range buf[:n] {
			if b != 0 {
				buf[i] = 1
			}
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// WriteFile writes t to path atomically with package atomicfile: the file
// appears at path only once it is complete, and on any failure path is left
// as it was with nothing else left behind. A new file gets the usual 0666
// permissions less the umask; a replaced file keeps its permissions.
func WriteFile(path string, t *tensor.Tensor) error {
	return WriteFileContext(context.Background(), path, t)
}

// WriteFileContext is WriteFile that stops, leaving path as it was, when
// ctx is done before the file is complete; the error then wraps ctx.Err().
func WriteFileContext(ctx context.Context, path string, t *tensor.Tensor) error {
	e, err := newEncoder(t)
	if err == nil {
		err = atomicfile.Write(ctx, path, e.write)
	}
	if err != nil {
		return withPath(path, err)
	}
	return nil
}
