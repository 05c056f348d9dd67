package onnx

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/gpuscatter/gpuscatter/internal/onnxpb"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// randomTensor returns a tensor of dt and shape with random contents
// (random bits for numbers, bools as 0/1, short strings).
func randomTensor(rng *rand.Rand, dt tensor.DType, shape []int) *tensor.Tensor {
	t, err := tensor.New(dt, shape)
	if err != nil {
		panic(err)
	}
	for i := range t.Data {
		t.Data[i] = byte(rng.Uint32())
		if dt == tensor.Bool {
			t.Data[i] &= 1
		}
	}
	for i := range t.Strings {
		t.Strings[i] = string([]byte{'a' + byte(rng.IntN(26)), byte(rng.Uint32())})[:rng.IntN(3)]
	}
	return t
}

func marshal(t *testing.T, tp *onnxpb.TensorProto) []byte {
	b, err := proto.Marshal(tp)
	require.NoError(t, err)
	return b
}

func TestRoundTripEveryDType(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dt := range tensor.DTypes() {
		for _, shape := range [][]int{{}, {0}, {3}, {2, 0, 4}, {2, 3}, {1, 2, 1, 3}} {
			in := randomTensor(rng, dt, shape)
			var buf bytes.Buffer
			require.NoError(t, Write(&buf, in), "%v%v", dt, shape)
			got, err := Read(&buf)
			require.NoError(t, err, "%v%v", dt, shape)
			assert.True(t, tensor.Equal(in, got), "%v%v: wrote %v, read %v", dt, shape, in, got)
		}
	}
}

func TestWriteIsWhatFromArrayWrites(t *testing.T) {
	tp, err := encode(tensor.MustFromSlice([]int{2}, []bool{true, false}))
	require.NoError(t, err)
	assert.Equal(t, int32(onnxpb.TensorProto_BOOL), tp.GetDataType())
	assert.Equal(t, []int64{2}, tp.Dims)
	assert.Equal(t, []byte{1, 0}, tp.RawData)
	s, err := tensor.FromStrings([]int{2}, []string{"a", "bc"})
	require.NoError(t, err)
	tp, err = encode(s)
	require.NoError(t, err)
	assert.Nil(t, tp.RawData)
	assert.Equal(t, [][]byte{[]byte("a"), []byte("bc")}, tp.StringData)
}

func i32(dt onnxpb.TensorProto_DataType) *int32 { return proto.Int32(int32(dt)) }

// TestTypedFields reads each element type from the repeated field
// onnx.proto assigns to it.
func TestTypedFields(t *testing.T) {
	for _, c := range []struct {
		name string
		tp   *onnxpb.TensorProto
		want *tensor.Tensor
	}{
		{"bool in int32_data", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_BOOL), Dims: []int64{3}, Int32Data: []int32{1, 0, 5}},
			tensor.MustFromSlice([]int{3}, []bool{true, false, true})},
		{"int8", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_INT8), Dims: []int64{2}, Int32Data: []int32{-128, 127}},
			tensor.MustFromSlice([]int{2}, []int8{-128, 127})},
		{"uint8", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_UINT8), Dims: []int64{2}, Int32Data: []int32{0, 255}},
			tensor.MustFromSlice([]int{2}, []uint8{0, 255})},
		{"int16", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_INT16), Dims: []int64{1}, Int32Data: []int32{-300}},
			tensor.MustFromSlice([]int{1}, []int16{-300})},
		{"uint16", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_UINT16), Dims: []int64{1}, Int32Data: []int32{65535}},
			tensor.MustFromSlice([]int{1}, []uint16{65535})},
		{"int32 scalar", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_INT32), Int32Data: []int32{-7}},
			tensor.MustFromSlice([]int{}, []int32{-7})},
		{"uint32 in uint64_data", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_UINT32), Dims: []int64{1}, Uint64Data: []uint64{math.MaxUint32}},
			tensor.MustFromSlice([]int{1}, []uint32{math.MaxUint32})},
		{"uint64", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_UINT64), Dims: []int64{1}, Uint64Data: []uint64{math.MaxUint64}},
			tensor.MustFromSlice([]int{1}, []uint64{math.MaxUint64})},
		{"int64", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_INT64), Dims: []int64{2, 1}, Int64Data: []int64{math.MinInt64, 3}},
			tensor.MustFromSlice([]int{2, 1}, []int64{math.MinInt64, 3})},
		{"float16 bits", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_FLOAT16), Dims: []int64{2}, Int32Data: []int32{0x3c00, 0xfc00}},
			tensor.MustFromSlice([]int{2}, []tensor.F16{tensor.F16From(1), tensor.F16From(float32(math.Inf(-1)))})},
		{"bfloat16 bits", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_BFLOAT16), Dims: []int64{2}, Int32Data: []int32{0x3f80, 0xc000}},
			tensor.MustFromSlice([]int{2}, []tensor.BF16{tensor.BF16From(1), tensor.BF16From(-2)})},
		{"float", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_FLOAT), Dims: []int64{2}, FloatData: []float32{1.5, float32(math.Copysign(0, -1))}},
			tensor.MustFromSlice([]int{2}, []float32{1.5, float32(math.Copysign(0, -1))})},
		{"double", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_DOUBLE), Dims: []int64{1}, DoubleData: []float64{math.Pi}},
			tensor.MustFromSlice([]int{1}, []float64{math.Pi})},
		{"complex64 pairs", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_COMPLEX64), Dims: []int64{2}, FloatData: []float32{1, 2, 3, 4}},
			tensor.MustFromSlice([]int{2}, []complex64{1 + 2i, 3 + 4i})},
		{"complex128 pairs", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_COMPLEX128), Dims: []int64{1}, DoubleData: []float64{-1, 0.5}},
			tensor.MustFromSlice([]int{1}, []complex128{-1 + 0.5i})},
		{"string", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_STRING), Dims: []int64{2}, StringData: [][]byte{[]byte("x"), {}}},
			must(tensor.FromStrings([]int{2}, []string{"x", ""}))},
		{"zero-size without data", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_FLOAT), Dims: []int64{3, 0}},
			tensor.MustFromSlice([]int{3, 0}, []float32{})},
		{"raw bools normalised", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_BOOL), Dims: []int64{2}, RawData: []byte{0, 9}},
			tensor.MustFromSlice([]int{2}, []bool{false, true})},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Unmarshal(marshal(t, c.tp))
			require.NoError(t, err)
			assert.True(t, tensor.Equal(c.want, got), "want %v, got %v", c.want, got)
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

type badCase struct {
	name string
	tp   *onnxpb.TensorProto
	kind error
	msg  string
}

func badCases() []badCase {
	f := i32(onnxpb.TensorProto_FLOAT)
	return []badCase{
		{"dims product over raw_data", &onnxpb.TensorProto{DataType: f, Dims: []int64{1 << 20, 1 << 19}, RawData: make([]byte, 8)}, ErrFormat, "need 2199023255552 bytes of raw_data, have 8"},
		{"dims product under raw_data", &onnxpb.TensorProto{DataType: f, Dims: []int64{1}, RawData: make([]byte, 8)}, ErrFormat, "need 4 bytes of raw_data, have 8"},
		{"huge dims", &onnxpb.TensorProto{DataType: f, Dims: []int64{math.MaxInt64, 2}}, ErrFormat, "over the 2^40 limit"},
		{"dims product overflow", &onnxpb.TensorProto{DataType: f, Dims: []int64{1 << 30, 1 << 30, 1 << 30}}, ErrFormat, "more than 2^40 elements"},
		{"negative dim", &onnxpb.TensorProto{DataType: f, Dims: []int64{2, -1}}, ErrFormat, "dims[1] is negative (-1)"},
		{"no data", &onnxpb.TensorProto{DataType: f, Dims: []int64{1 << 40}}, ErrFormat, "holds no data"},
		{"typed count", &onnxpb.TensorProto{DataType: f, Dims: []int64{1 << 39}, FloatData: []float32{1}}, ErrFormat, "need 549755813888 entries of float_data, have 1"},
		{"complex count", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_COMPLEX64), Dims: []int64{2}, FloatData: []float32{1, 2}}, ErrFormat, "need 4 entries of float_data, have 2"},
		{"scalar without data", &onnxpb.TensorProto{DataType: f}, ErrFormat, "dims [] of float32 need 1 elements but the TensorProto holds no data"},
		{"undefined data_type", &onnxpb.TensorProto{Dims: []int64{1}, RawData: []byte{0}}, ErrFormat, "data_type is 0 (UNDEFINED) or missing"},
		{"unknown data_type", &onnxpb.TensorProto{DataType: proto.Int32(99), Dims: []int64{1}}, ErrFormat, "data_type 99 is not an ONNX data type"},
		{"negative data_type", &onnxpb.TensorProto{DataType: proto.Int32(-3)}, ErrFormat, "data_type -3 is not an ONNX data type"},
		{"two fields", &onnxpb.TensorProto{DataType: f, Dims: []int64{1}, RawData: make([]byte, 4), FloatData: []float32{1}}, ErrFormat, "data in both raw_data and float_data"},
		{"wrong field", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_INT64), Dims: []int64{1}, FloatData: []float32{1}}, ErrFormat, "int64 data is kept in int64_data, but the TensorProto has float_data"},
		{"raw strings", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_STRING), Dims: []int64{1}, RawData: []byte("a")}, ErrFormat, "string_data, not raw_data"},
		{"int8 out of range", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_INT8), Dims: []int64{2}, Int32Data: []int32{1, 200}}, ErrFormat, "int32_data[1] = 200 is out of range [-128, 127] for int8"},
		{"float16 out of range", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_FLOAT16), Dims: []int64{1}, Int32Data: []int32{-1}}, ErrFormat, "int32_data[0] = -1 is out of range [0, 65535] for float16"},
		{"uint32 out of range", &onnxpb.TensorProto{DataType: i32(onnxpb.TensorProto_UINT32), Dims: []int64{1}, Uint64Data: []uint64{1 << 32}}, ErrFormat, "uint64_data[0] = 4294967296 is out of range for uint32"},
		{"external data", &onnxpb.TensorProto{DataType: f, Dims: []int64{1 << 30}, DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(),
			ExternalData: []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("weights.bin")}}}, ErrUnsupported, `external data (in "weights.bin") is not supported`},
		{"segment", &onnxpb.TensorProto{DataType: f, Dims: []int64{4}, Segment: &onnxpb.TensorProto_Segment{Begin: proto.Int64(0), End: proto.Int64(2)}}, ErrUnsupported, "segmented data (segment 0..2)"},
		{"data type without element type", &onnxpb.TensorProto{DataType: proto.Int32(17), Dims: []int64{1}}, ErrFormat, "data_type 17 is not an ONNX data type"},
	}
}

func TestHostileInput(t *testing.T) {
	for _, c := range badCases() {
		t.Run(c.name, func(t *testing.T) {
			_, err := Unmarshal(marshal(t, c.tp))
			require.Error(t, err)
			assert.ErrorIs(t, err, c.kind)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
	_, err := Unmarshal([]byte{0xff, 0xff})
	assert.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), "not a TensorProto")
}

func TestReadFileNamesPath(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.pb")
	require.NoError(t, os.WriteFile(p, marshal(t, badCases()[0].tp), 0o666))
	_, err := ReadFile(p)
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), "onnx: "+p+": dims [1048576,524288] of float32 need 2199023255552 bytes of raw_data, have 8")
	_, err = ReadFile(filepath.Join(dir, "missing.pb"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, os.WriteFile(p, must(Marshal(tensor.Ints(1, 2))), 0o666))
	got, err := ReadFile(p)
	require.NoError(t, err)
	assert.True(t, tensor.Equal(tensor.Ints(1, 2), got))
}

func TestEncodeRejectsInvalid(t *testing.T) {
	_, err := encode(&tensor.Tensor{DType: tensor.Float32, Shape: []int{2}, Data: make([]byte, 4)})
	require.ErrorIs(t, err, tensor.ErrInvalid)
	var buf bytes.Buffer
	require.Error(t, Write(&buf, nil))
	assert.Zero(t, buf.Len())
}

func FuzzRead(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tt := range []*tensor.Tensor{
		randomTensor(rng, tensor.Float32, []int{2, 3}),
		randomTensor(rng, tensor.Bool, []int{}),
		randomTensor(rng, tensor.Complex128, []int{1, 2}),
		randomTensor(rng, tensor.BFloat16, []int{0, 3}),
		must(tensor.FromStrings([]int{3}, []string{"héllo", "", "\xff"})),
	} {
		b := must(Marshal(tt))
		f.Add(b)
		f.Add(b[:len(b)-1])
	}
	for _, c := range badCases() {
		b, _ := proto.Marshal(c.tp)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Read(bytes.NewReader(data))
		// The streaming reader agrees with protobuf's Unmarshal.
		if want, uerr := Unmarshal(data); uerr == nil && err == nil && !tensor.Equal(want, got) {
			t.Fatalf("Read gives %v, Unmarshal %v", got, want)
		} else if uerr == nil && err != nil && !strings.Contains(err.Error(), "wire type") {
			t.Fatalf("Unmarshal takes what Read refuses: %v", err)
		}
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error wraps neither ErrFormat nor ErrUnsupported: %v", err)
			}
			return
		}
		if err := got.Check(); err != nil {
			t.Fatalf("Read returned an invalid tensor: %v", err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, got); err != nil {
			t.Fatalf("Write of a tensor Read returned: %v", err)
		}
		back, err := Read(&buf)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		if !tensor.Equal(got, back) {
			t.Fatalf("round trip changed the tensor:\n got %v\nback %v", got, back)
		}
	})
}
