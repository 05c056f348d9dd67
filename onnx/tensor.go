package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"google.golang.org/protobuf/proto"

	"github.com/gpuscatter/gpuscatter/hostmem"
	"github.com/gpuscatter/gpuscatter/internal/onnxpb"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// MaxFileBytes is the largest file Read and ReadFile take: protobuf limits a
// message to 2 GiB.
const MaxFileBytes = 1<<31 - 1

// dataTypes maps ONNX's TensorProto.DataType onto element types.
var dataTypes = map[onnxpb.TensorProto_DataType]tensor.DType{
	onnxpb.TensorProto_BOOL:       tensor.Bool,
	onnxpb.TensorProto_INT8:       tensor.Int8,
	onnxpb.TensorProto_UINT8:      tensor.Uint8,
	onnxpb.TensorProto_INT16:      tensor.Int16,
	onnxpb.TensorProto_UINT16:     tensor.Uint16,
	onnxpb.TensorProto_INT32:      tensor.Int32,
	onnxpb.TensorProto_UINT32:     tensor.Uint32,
	onnxpb.TensorProto_INT64:      tensor.Int64,
	onnxpb.TensorProto_UINT64:     tensor.Uint64,
	onnxpb.TensorProto_FLOAT16:    tensor.Float16,
	onnxpb.TensorProto_BFLOAT16:   tensor.BFloat16,
	onnxpb.TensorProto_FLOAT:      tensor.Float32,
	onnxpb.TensorProto_DOUBLE:     tensor.Float64,
	onnxpb.TensorProto_COMPLEX64:  tensor.Complex64,
	onnxpb.TensorProto_COMPLEX128: tensor.Complex128,
	onnxpb.TensorProto_STRING:     tensor.String,
}

// DataType returns the ONNX data type code of dt (TensorProto.DataType,
// the code DTypeOf takes); ok is false for an invalid dt.
func DataType(dt tensor.DType) (code int32, ok bool) {
	c, ok := dataType(dt)
	return int32(c), ok
}

// dataType is DataType as the message's enum.
func dataType(dt tensor.DType) (onnxpb.TensorProto_DataType, bool) {
	for k, v := range dataTypes {
		if v == dt {
			return k, true
		}
	}
	return onnxpb.TensorProto_UNDEFINED, false
}

// DTypeOf returns the element type of the ONNX data type code, with an
// ErrFormat or ErrUnsupported error for a code that has none.
func DTypeOf(code int32) (tensor.DType, error) {
	dt, ok := dataTypes[onnxpb.TensorProto_DataType(code)]
	switch {
	case ok:
		return dt, nil
	case code == int32(onnxpb.TensorProto_UNDEFINED):
		return tensor.Invalid, formatErr("data_type is 0 (UNDEFINED) or missing")
	}
	if name, known := onnxpb.TensorProto_DataType_name[code]; known {
		return tensor.Invalid, unsupportedErr("data_type %d (%s) has no gpuscatter element type", code, name)
	}
	return tensor.Invalid, formatErr("data_type %d is not an ONNX data type", code)
}

// field names one place a TensorProto keeps its values.
type field int

const (
	noField field = iota
	rawData
	floatData
	int32Data
	stringData
	int64Data
	doubleData
	uint64Data
)

func (f field) String() string {
	return [...]string{"no data", "raw_data", "float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data"}[f]
}

// typedField returns the repeated field onnx.proto assigns to dt, and how
// many of its entries make one element.
func typedField(dt tensor.DType) (field, int) {
	switch dt {
	case tensor.Bool, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Uint16, tensor.Int32, tensor.Float16, tensor.BFloat16:
		return int32Data, 1
	case tensor.Uint32, tensor.Uint64:
		return uint64Data, 1
	case tensor.Int64:
		return int64Data, 1
	case tensor.Float32:
		return floatData, 1
	case tensor.Complex64:
		return floatData, 2
	case tensor.Float64:
		return doubleData, 1
	case tensor.Complex128:
		return doubleData, 2
	case tensor.String:
		return stringData, 1
	}
	return noField, 0
}

// present lists the fields of tp that hold data, with their lengths (in
// bytes for raw_data, rawLen, in entries otherwise).
func present(tp *onnxpb.TensorProto, rawLen int) (fields []field, lens []int) {
	add := func(f field, n int, set bool) {
		if set {
			fields = append(fields, f)
			lens = append(lens, n)
		}
	}
	add(rawData, rawLen, tp.RawData != nil)
	add(floatData, len(tp.FloatData), len(tp.FloatData) > 0)
	add(int32Data, len(tp.Int32Data), len(tp.Int32Data) > 0)
	add(stringData, len(tp.StringData), len(tp.StringData) > 0)
	add(int64Data, len(tp.Int64Data), len(tp.Int64Data) > 0)
	add(doubleData, len(tp.DoubleData), len(tp.DoubleData) > 0)
	add(uint64Data, len(tp.Uint64Data), len(tp.Uint64Data) > 0)
	return fields, lens
}

// decode converts tp into a tensor. It checks, before allocating the
// tensor, that tp's dims are non-negative and that their product matches
// the data present, so a lying TensorProto costs no more memory than its
// own bytes. Errors wrap ErrFormat or ErrUnsupported.
//
// With adoptRaw, the tensor takes tp.RawData as its data
// instead of a copy, so that a tensor read from a file is in memory once.
func decode(tp *onnxpb.TensorProto, adoptRaw bool) (*tensor.Tensor, error) {
	dt, shape, src, err := check(tp, len(tp.RawData))
	if err != nil {
		return nil, err
	}
	var t *tensor.Tensor
	if adoptRaw && src == rawData {
		t = &tensor.Tensor{DType: dt, Shape: shape, Data: tp.RawData}
	} else if t, err = tensor.New(dt, shape); err != nil { // bounded: n matches the data present
		if errors.Is(err, hostmem.ErrNoMemory) {
			return nil, &onnxError{kind: ErrUnsupported, msg: err.Error()}
		}
		return nil, formatErr("%v", err)
	}
	if src == rawData {
		if !adoptRaw {
			copy(t.Data, tp.RawData)
		}
		if dt == tensor.Bool {
			for i, b := range t.Data {
				if b > 1 {
					t.Data[i] = 1
				}
			}
		}
		return t, nil
	}
	return t, fill(t, tp)
}

// check checks what decode checks before it allocates the tensor, with
// raw_data rawLen bytes long (a header read skips its bytes), and returns
// the tensor's dtype and shape and the field that holds its values.
func check(tp *onnxpb.TensorProto, rawLen int) (dt tensor.DType, shape []int, src field, err error) {
	fail := func(err error) (tensor.DType, []int, field, error) { return tensor.Invalid, nil, noField, err }
	if tp.Segment != nil {
		return fail(unsupportedErr("segmented data (segment %d..%d) is not supported", tp.Segment.GetBegin(), tp.Segment.GetEnd()))
	}
	if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL || len(tp.ExternalData) > 0 {
		loc := ""
		for _, kv := range tp.ExternalData {
			if kv.GetKey() == "location" {
				loc = fmt.Sprintf(" (in %q)", kv.GetValue())
			}
		}
		return fail(unsupportedErr("external data%s is not supported; store the values in the TensorProto", loc))
	}
	dt, err = DTypeOf(tp.GetDataType())
	if err != nil {
		return fail(err)
	}
	shape = make([]int, len(tp.Dims))
	for i, d := range tp.Dims {
		if d < 0 {
			return fail(formatErr("dims[%d] is negative (%d)", i, d))
		}
		if d > tensor.MaxBytes {
			return fail(formatErr("dims[%d] = %d is over the 2^40 limit", i, d))
		}
		shape[i] = int(d)
	}
	n, err := tensor.NumElements(shape)
	if err != nil {
		return fail(formatErr("dims %s have more than 2^40 elements", tensor.FormatShape(shape)))
	}
	fields, lens := present(tp, rawLen)
	if len(fields) > 1 {
		return fail(formatErr("data in both %v and %v; a TensorProto keeps its values in one field", fields[0], fields[1]))
	}
	want, per := typedField(dt)
	claim := func() string { return fmt.Sprintf("dims %s of %v", tensor.FormatShape(shape), dt) }
	src, have := noField, 0
	if len(fields) == 1 {
		src, have = fields[0], lens[0]
	}
	switch {
	case src == noField:
		if n > 0 {
			return fail(formatErr("%s need %d elements but the TensorProto holds no data", claim(), n))
		}
		src = want
	case src == rawData && dt == tensor.String:
		return fail(formatErr("a string tensor keeps its values in string_data, not raw_data"))
	case src == rawData:
		if need := uint64(n) * uint64(dt.Size()); uint64(have) != need {
			return fail(formatErr("%s need %d bytes of raw_data, have %d", claim(), need, have))
		}
	case src != want:
		return fail(formatErr("%v data is kept in %v, but the TensorProto has %v", dt, want, src))
	default:
		if need := uint64(n) * uint64(per); uint64(have) != need {
			return fail(formatErr("%s need %d entries of %v, have %d", claim(), need, src, have))
		}
	}
	return dt, shape, src, nil
}

// fill stores the typed field of tp, whose length is checked, into t.
func fill(t *tensor.Tensor, tp *onnxpb.TensorProto) error {
	le := binary.LittleEndian
	d := t.Data
	// narrow stores int32_data entries of width bytes, checking their range.
	narrow := func(lo, hi int64, width int) error {
		for i, v := range tp.Int32Data {
			if int64(v) < lo || int64(v) > hi {
				return formatErr("int32_data[%d] = %d is out of range [%d, %d] for %v", i, v, lo, hi, t.DType)
			}
			switch width {
			case 1:
				d[i] = byte(v)
			case 2:
				le.PutUint16(d[2*i:], uint16(v))
			case 4:
				le.PutUint32(d[4*i:], uint32(v))
			}
		}
		return nil
	}
	switch t.DType {
	case tensor.Bool:
		for i, v := range tp.Int32Data {
			if v != 0 {
				d[i] = 1
			}
		}
	case tensor.Int8:
		return narrow(math.MinInt8, math.MaxInt8, 1)
	case tensor.Uint8:
		return narrow(0, math.MaxUint8, 1)
	case tensor.Int16:
		return narrow(math.MinInt16, math.MaxInt16, 2)
	case tensor.Uint16, tensor.Float16, tensor.BFloat16:
		// float16 and bfloat16 are kept as their bits, zero-extended.
		return narrow(0, math.MaxUint16, 2)
	case tensor.Int32:
		return narrow(math.MinInt32, math.MaxInt32, 4)
	case tensor.Uint32:
		for i, v := range tp.Uint64Data {
			if v > math.MaxUint32 {
				return formatErr("uint64_data[%d] = %d is out of range for uint32", i, v)
			}
			le.PutUint32(d[4*i:], uint32(v))
		}
	case tensor.Uint64:
		copy(tensor.View[uint64](t), tp.Uint64Data)
	case tensor.Int64:
		copy(tensor.View[int64](t), tp.Int64Data)
	case tensor.Float32, tensor.Complex64:
		for i, v := range tp.FloatData {
			le.PutUint32(d[4*i:], math.Float32bits(v))
		}
	case tensor.Float64, tensor.Complex128:
		for i, v := range tp.DoubleData {
			le.PutUint64(d[8*i:], math.Float64bits(v))
		}
	case tensor.String:
		for i, s := range tp.StringData {
			t.Strings[i] = string(s)
		}
	}
	return nil
}

// Unmarshal parses b as a TensorProto and decodes it.
func Unmarshal(b []byte) (*tensor.Tensor, error) {
	var tp onnxpb.TensorProto
	if err := proto.Unmarshal(b, &tp); err != nil {
		return nil, formatErr("not a TensorProto: %v", err)
	}
	return decode(&tp, false)
}

// Read reads one TensorProto from r, up to its end, and decodes it. It
// reads at most MaxFileBytes, field by field, without holding the encoded
// message: memory grows with the fields that arrive, and raw_data becomes
// the tensor's data without a copy.
func Read(r io.Reader) (*tensor.Tensor, error) {
	return readStream(r, -1)
}

// readAll reads r to its end, at most MaxFileBytes, growing its buffer as
// the bytes arrive and checking the memory for each growth (package
// hostmem), so that an endless stream is an error rather than a crash.
func readAll(r io.Reader) ([]byte, error) {
	b := make([]byte, 0, 64<<10)
	for {
		if len(b) == cap(b) {
			if len(b) > MaxFileBytes {
				return nil, unsupportedErr("more than %d bytes, over protobuf's 2 GiB limit", MaxFileBytes)
			}
			c := min(2*cap(b), MaxFileBytes+1)
			if err := hostmem.Check(uint64(c)); err != nil {
				return nil, &onnxError{kind: ErrUnsupported, msg: err.Error()}
			}
			b = append(make([]byte, 0, c), b...)
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			if len(b) > MaxFileBytes {
				return nil, unsupportedErr("more than %d bytes, over protobuf's 2 GiB limit", MaxFileBytes)
			}
			return b, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading: %w", err)
		}
	}
}

// readFile reads the file at path, refusing one over MaxFileBytes or over
// the memory there is before reading it.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Mode().IsRegular() {
		if st.Size() > MaxFileBytes {
			return nil, unsupportedErr("%d bytes, over protobuf's 2 GiB limit", st.Size())
		}
		if err := hostmem.Check(uint64(st.Size())); err != nil {
			return nil, &onnxError{kind: ErrUnsupported, msg: err.Error()}
		}
		b := make([]byte, st.Size())
		n, err := io.ReadFull(f, b)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("reading: %w", err)
		}
		return b[:n], nil
	}
	return readAll(f)
}

// ReadFile reads the TensorProto file at path (a .pb file as the ONNX
// backend tests hold), as Read does; every length in a regular file is
// checked against the file's size before anything is allocated for it,
// and something else (a pipe, a device) is read as a stream of at most
// MaxFileBytes. Errors name path.
func ReadFile(path string) (*tensor.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, withPath(path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, withPath(path, err)
	}
	size := int64(-1)
	if st.Mode().IsRegular() {
		size = st.Size()
	}
	t, err := readStream(f, size)
	return t, withPath(path, err)
}

// encode converts t into a TensorProto: dims, data_type and raw_data
// (little-endian, bools as 0 and 1), or string_data for strings, as
// onnx.numpy_helper.from_array writes them. It fails for an invalid
// tensor and for one whose payload exceeds protobuf's 2 GiB.
func encode(t *tensor.Tensor) (*onnxpb.TensorProto, error) {
	if err := t.Check(); err != nil {
		return nil, &onnxError{kind: err, msg: err.Error()}
	}
	code, _ := dataType(t.DType)
	tp := &onnxpb.TensorProto{DataType: proto.Int32(int32(code)), Dims: make([]int64, len(t.Shape))}
	for i, d := range t.Shape {
		tp.Dims[i] = int64(d)
	}
	size := len(t.Data)
	for _, s := range t.Strings {
		size += len(s) + 6 // the bytes, a tag and a length
	}
	if size > MaxFileBytes-1<<20 {
		return nil, unsupportedErr("%v%s takes %d bytes, over protobuf's 2 GiB limit", t.DType, tensor.FormatShape(t.Shape), size)
	}
	if t.DType == tensor.String {
		tp.StringData = make([][]byte, len(t.Strings))
		for i, s := range t.Strings {
			tp.StringData[i] = []byte(s)
		}
		return tp, nil
	}
	tp.RawData = append(make([]byte, 0, len(t.Data)), t.Data...)
	if t.DType == tensor.Bool {
		for i, b := range tp.RawData {
			if b > 1 {
				tp.RawData[i] = 1
			}
		}
	}
	return tp, nil
}

// Marshal returns the TensorProto encoding of t (see encode).
func Marshal(t *tensor.Tensor) ([]byte, error) {
	tp, err := encode(t)
	if err != nil {
		return nil, err
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(tp)
	if err != nil {
		return nil, unsupportedErr("encoding: %v", err)
	}
	return b, nil
}

// Write writes t to w as one TensorProto (see encode). Nothing is written
// for a tensor that fails to encode.
func Write(w io.Writer, t *tensor.Tensor) error {
	b, err := Marshal(t)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("onnx: writing: %w", err)
	}
	return nil
}
