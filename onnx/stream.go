package onnx

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/gpuscatter/gpuscatter/hostmem"
	"github.com/gpuscatter/gpuscatter/internal/onnxpb"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TensorProto's field numbers (onnx.proto).
const (
	fieldDims         = 1
	fieldDataType     = 2
	fieldSegment      = 3
	fieldFloatData    = 4
	fieldInt32Data    = 5
	fieldStringData   = 6
	fieldInt64Data    = 7
	fieldName         = 8
	fieldRawData      = 9
	fieldDoubleData   = 10
	fieldUint64Data   = 11
	fieldDocString    = 12
	fieldExternalData = 13
	fieldDataLocation = 14
)

// streamReader parses a TensorProto from a stream field by field, so that
// the encoded message is never held whole: raw_data is read straight into
// the buffer that becomes the tensor's data, and a peak of the tensor plus
// a small constant results, as for .npy. Every length is checked against
// the bytes left before anything is allocated for it: the file's size for
// a regular file, MaxFileBytes (protobuf's limit) for a stream, and the
// memory the process may use (package hostmem) for both.
type streamReader struct {
	r    *bufio.Reader
	left int64 // bytes the message may still take
	// known reports that left is the file's exact remaining size rather
	// than a bound.
	known bool
	// header: raw_data is skipped, its length kept in rawLen (ReadHeaderFile).
	header bool
	rawLen int64
}

// streamLimit is the most bytes a stream of unknown length may hold:
// protobuf's limit, lowered by tests.
var streamLimit int64 = MaxFileBytes

// errPastLimit is the cause of reading past the end that left allows.
var errPastLimit = errors.New("past the limit")

func (s *streamReader) byte() (byte, error) {
	if s.left <= 0 {
		return 0, errPastLimit
	}
	b, err := s.r.ReadByte()
	if err != nil {
		return 0, err
	}
	s.left--
	return b, nil
}

// atEnd reports whether the message is over: no byte follows.
func (s *streamReader) atEnd() (bool, error) {
	if s.left <= 0 {
		if !s.known {
			// Anything more in an endless stream is past the limit.
			if _, err := s.r.Peek(1); err == nil {
				return false, s.tooLong()
			}
		}
		return true, nil
	}
	_, err := s.r.Peek(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return false, err
}

func (s *streamReader) tooLong() error {
	return unsupportedErr("more than %d bytes, over protobuf's 2 GiB limit", streamLimit)
}

func (s *streamReader) varint() (uint64, error) {
	var v uint64
	for i := 0; ; i++ {
		b, err := s.byte()
		if err != nil {
			return 0, s.ioErr(err)
		}
		if i == 9 && b > 1 {
			return 0, formatErr("not a TensorProto: a varint overflows 64 bits")
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, nil
		}
	}
}

func (s *streamReader) fixed(n int) (uint64, error) {
	var b [8]byte
	if err := s.full(b[:n]); err != nil {
		return 0, err
	}
	if n == 4 {
		return uint64(binary.LittleEndian.Uint32(b[:])), nil
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// full reads len(b) bytes of the message.
func (s *streamReader) full(b []byte) error {
	if int64(len(b)) > s.left {
		return s.ioErr(errPastLimit)
	}
	n, err := io.ReadFull(s.r, b)
	s.left -= int64(n)
	if err != nil {
		return s.ioErr(err)
	}
	return nil
}

// length reads a length prefix and checks it against the bytes left.
func (s *streamReader) length(what string) (int64, error) {
	v, err := s.varint()
	if err != nil {
		return 0, err
	}
	if v > uint64(s.left) {
		if s.known {
			return 0, formatErr("%s claims %d bytes, but only %d follow", what, v, s.left)
		}
		if v > MaxFileBytes {
			return 0, formatErr("%s claims %d bytes, over protobuf's 2 GiB limit", what, v)
		}
		return 0, s.tooLong()
	}
	return int64(v), nil
}

// ioErr turns a failed read into an error of ours.
func (s *streamReader) ioErr(err error) error {
	switch {
	case errors.Is(err, errPastLimit) && !s.known:
		return s.tooLong()
	case errors.Is(err, errPastLimit), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return formatErr("not a TensorProto: the data ends in the middle of a field")
	}
	return err
}

// bytes reads a length-delimited field into a new slice, after checking
// that its memory is there. In a stream of unknown length the slice grows
// as the bytes arrive, so that a length the stream does not honour costs
// no more than the bytes that came.
func (s *streamReader) bytes(what string) ([]byte, error) {
	n, err := s.length(what)
	if err != nil {
		return nil, err
	}
	noMem := func(err error) error { return prefixed(what, &onnxError{kind: ErrUnsupported, msg: err.Error()}) }
	if s.known || n <= firstChunk {
		if err := hostmem.Check(uint64(n)); err != nil {
			return nil, noMem(err)
		}
		b := make([]byte, n)
		return b, s.full(b)
	}
	b := make([]byte, 0, firstChunk)
	for int64(len(b)) < n {
		if len(b) == cap(b) {
			c := min(2*int64(cap(b)), n)
			if err := hostmem.Check(uint64(c)); err != nil {
				return nil, noMem(err)
			}
			b = append(make([]byte, 0, c), b...)
		}
		k := min(int64(cap(b)), n) - int64(len(b))
		if err := s.full(b[len(b) : len(b)+int(k)]); err != nil {
			return nil, err
		}
		b = b[:len(b)+int(k)]
	}
	return b, nil
}

// firstChunk is the most a stream's field gets before its bytes arrive.
const firstChunk = 1 << 20

// skip skips the value of an unknown field of wire type typ.
func (s *streamReader) skip(num protowire.Number, typ protowire.Type) error {
	switch typ {
	case protowire.VarintType:
		_, err := s.varint()
		return err
	case protowire.Fixed32Type:
		_, err := s.fixed(4)
		return err
	case protowire.Fixed64Type:
		_, err := s.fixed(8)
		return err
	case protowire.BytesType:
		n, err := s.length("a field")
		if err != nil {
			return err
		}
		return s.discard(n)
	}
	return formatErr("not a TensorProto: field %d has wire type %d, which is not supported", num, typ)
}

// discard skips n bytes of the message.
func (s *streamReader) discard(n int64) error {
	d, err := s.r.Discard(int(n))
	s.left -= int64(d)
	if err != nil {
		return s.ioErr(err)
	}
	return nil
}

// grow makes room for n more elements of size bytes each in *p, checking
// the memory first when the slice must grow.
func grow[T any](p *[]T, n int, size int) error {
	if len(*p)+n <= cap(*p) {
		return nil
	}
	newCap := len(*p) + n // a packed run: its bound
	if n <= 1 {
		newCap = max(2*cap(*p), len(*p)+1, 8)
	}
	if err := hostmem.Check(uint64(newCap) * uint64(size)); err != nil {
		return &onnxError{kind: ErrUnsupported, msg: err.Error()}
	}
	q := make([]T, len(*p), newCap)
	copy(q, *p)
	*p = q
	return nil
}

// repeated reads one entry, or a packed run of entries, of a repeated
// numeric field; value reads one entry in the field's own wire type.
func repeated[T any](s *streamReader, p *[]T, typ, want protowire.Type, size int, value func() (T, error)) error {
	if typ == want {
		if err := grow(p, 1, size); err != nil {
			return err
		}
		v, err := value()
		*p = append(*p, v)
		return err
	}
	if typ != protowire.BytesType {
		return formatErr("not a TensorProto: a repeated field has wire type %d", typ)
	}
	n, err := s.length("a packed field")
	if err != nil {
		return err
	}
	per := int64(1) // the fewest bytes an entry takes
	switch want {
	case protowire.Fixed32Type:
		per = 4
	case protowire.Fixed64Type:
		per = 8
	}
	count := n / per
	if !s.known {
		count = min(count, firstChunk/int64(size)) // grow as entries arrive
	}
	if err := grow(p, int(count), size); err != nil {
		return err
	}
	end := s.left - n
	for s.left > end {
		v, err := value()
		if err != nil {
			return err
		}
		if s.left < end {
			return formatErr("not a TensorProto: a packed entry runs past its field")
		}
		if err := grow(p, 1, size); err != nil {
			return err
		}
		*p = append(*p, v)
	}
	return nil
}

// read parses the message into a TensorProto whose raw_data is the only
// large buffer.
func (s *streamReader) read() (*onnxpb.TensorProto, error) {
	tp := &onnxpb.TensorProto{}
	for {
		end, err := s.atEnd()
		if err != nil {
			return nil, s.ioErr(err)
		}
		if end {
			return tp, nil
		}
		tag, err := s.varint()
		if err != nil {
			return nil, err
		}
		num, typ := protowire.Number(tag>>3), protowire.Type(tag&7)
		if num < protowire.MinValidNumber || num > protowire.MaxValidNumber {
			return nil, formatErr("not a TensorProto: field number %d is invalid", int64(tag>>3))
		}
		varint := func() (int64, error) { v, err := s.varint(); return int64(v), err }
		if err := s.field(tp, num, typ, varint); err != nil {
			return nil, err
		}
	}
}

// field reads the value of field num into tp.
func (s *streamReader) field(tp *onnxpb.TensorProto, num protowire.Number, typ protowire.Type, varint func() (int64, error)) error {
	want := func(w protowire.Type) error {
		if typ != w {
			return formatErr("not a TensorProto: field %d has wire type %d; want %d", num, typ, w)
		}
		return nil
	}
	switch num {
	case fieldDims:
		return repeated(s, &tp.Dims, typ, protowire.VarintType, 8, varint)
	case fieldDataType:
		if err := want(protowire.VarintType); err != nil {
			return err
		}
		v, err := varint()
		tp.DataType = proto.Int32(int32(v))
		return err
	case fieldFloatData:
		return repeated(s, &tp.FloatData, typ, protowire.Fixed32Type, 4, func() (float32, error) {
			v, err := s.fixed(4)
			return math.Float32frombits(uint32(v)), err
		})
	case fieldDoubleData:
		return repeated(s, &tp.DoubleData, typ, protowire.Fixed64Type, 8, func() (float64, error) {
			v, err := s.fixed(8)
			return math.Float64frombits(v), err
		})
	case fieldInt32Data:
		return repeated(s, &tp.Int32Data, typ, protowire.VarintType, 4, func() (int32, error) {
			v, err := varint()
			return int32(v), err
		})
	case fieldInt64Data:
		return repeated(s, &tp.Int64Data, typ, protowire.VarintType, 8, varint)
	case fieldUint64Data:
		return repeated(s, &tp.Uint64Data, typ, protowire.VarintType, 8, s.varint)
	case fieldStringData:
		if err := want(protowire.BytesType); err != nil {
			return err
		}
		if err := grow(&tp.StringData, 1, 24); err != nil {
			return err
		}
		b, err := s.bytes("string_data")
		tp.StringData = append(tp.StringData, b)
		return err
	case fieldRawData:
		if err := want(protowire.BytesType); err != nil {
			return err
		}
		tp.RawData = nil // a repeated scalar field: the last one counts
		if s.header {
			n, err := s.length("raw_data")
			if err != nil {
				return err
			}
			if err := s.discard(n); err != nil {
				return err
			}
			tp.RawData, s.rawLen = []byte{}, n
			return nil
		}
		b, err := s.bytes("raw_data")
		tp.RawData = b
		return err
	case fieldName, fieldDocString, fieldSegment, fieldExternalData:
		if err := want(protowire.BytesType); err != nil {
			return err
		}
		b, err := s.bytes("a field")
		if err != nil {
			return err
		}
		// The small fields go through protobuf itself, as a message of
		// their one field.
		one := protowire.AppendTag(nil, num, typ)
		one = protowire.AppendBytes(one, b)
		if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(one, tp); err != nil {
			return formatErr("not a TensorProto: %v", err)
		}
		return nil
	case fieldDataLocation:
		if err := want(protowire.VarintType); err != nil {
			return err
		}
		v, err := varint()
		tp.DataLocation = onnxpb.TensorProto_DataLocation(int32(v)).Enum()
		return err
	}
	return s.skip(num, typ)
}

// readStream reads one TensorProto from r and decodes it, using its
// raw_data as the tensor's data. size is the exact number of bytes r
// holds, or -1 for a stream of unknown length.
func readStream(r io.Reader, size int64) (*tensor.Tensor, error) {
	s, err := newStreamReader(r, size)
	if err != nil {
		return nil, err
	}
	tp, err := s.read()
	if err != nil {
		return nil, err
	}
	return decode(tp, true)
}

// newStreamReader returns a streamReader of r, which holds size bytes
// (-1: a stream of unknown length).
func newStreamReader(r io.Reader, size int64) (*streamReader, error) {
	s := &streamReader{r: bufio.NewReaderSize(r, 64<<10), left: streamLimit}
	if size >= 0 {
		if size > MaxFileBytes {
			return nil, unsupportedErr("%d bytes, over protobuf's 2 GiB limit", size)
		}
		s.left, s.known = size, true
	}
	return s, nil
}
