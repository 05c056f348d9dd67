package onnx

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/gpuscatter/gpuscatter/internal/onnxpb"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestStreamMatchesProtobuf: the streaming reader decodes what protobuf's
// own Unmarshal decodes, whatever the field order and packing.
func TestStreamMatchesProtobuf(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var msgs [][]byte
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Int64, tensor.Bool, tensor.Complex128, tensor.Uint16} {
		msgs = append(msgs, must(Marshal(randomTensor(rng, dt, []int{3, 2}))))
	}
	// Typed fields, packed and not, and raw_data before dims.
	typed := &onnxpb.TensorProto{Dims: []int64{3}, DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), Int64Data: []int64{-1, 1 << 40, 7}}
	msgs = append(msgs, must(proto.Marshal(typed)))
	var unpacked []byte
	unpacked = protowire.AppendTag(unpacked, fieldDims, protowire.VarintType)
	unpacked = protowire.AppendVarint(unpacked, 2)
	unpacked = protowire.AppendTag(unpacked, fieldDataType, protowire.VarintType)
	unpacked = protowire.AppendVarint(unpacked, uint64(onnxpb.TensorProto_FLOAT))
	for _, v := range []uint32{0x3f800000, 0x40000000} {
		unpacked = protowire.AppendTag(unpacked, fieldFloatData, protowire.Fixed32Type)
		unpacked = protowire.AppendFixed32(unpacked, v)
	}
	unpacked = protowire.AppendTag(unpacked, 99, protowire.BytesType) // unknown: skipped
	unpacked = protowire.AppendBytes(unpacked, []byte("ignored"))
	msgs = append(msgs, unpacked)
	var rawFirst []byte
	rawFirst = protowire.AppendTag(rawFirst, fieldRawData, protowire.BytesType)
	rawFirst = protowire.AppendBytes(rawFirst, []byte{1, 0, 2, 0})
	rawFirst = protowire.AppendTag(rawFirst, fieldDims, protowire.BytesType)
	rawFirst = protowire.AppendBytes(rawFirst, protowire.AppendVarint(nil, 2))
	rawFirst = protowire.AppendTag(rawFirst, fieldDataType, protowire.VarintType)
	rawFirst = protowire.AppendVarint(rawFirst, uint64(onnxpb.TensorProto_INT16))
	msgs = append(msgs, rawFirst)
	msgs = append(msgs, must(Marshal(must(tensor.FromStrings([]int{2}, []string{"a", "\xff"})))))

	for i, b := range msgs {
		want, err := Unmarshal(b)
		require.NoError(t, err, "message %d", i)
		got, err := Read(bytes.NewReader(b))
		require.NoError(t, err, "message %d", i)
		assert.True(t, tensor.Equal(want, got), "message %d: %v != %v", i, got, want)
		path := filepath.Join(t.TempDir(), "x.pb")
		require.NoError(t, os.WriteFile(path, b, 0o644))
		got, err = ReadFile(path)
		require.NoError(t, err)
		assert.True(t, tensor.Equal(want, got), "file %d", i)
	}
}

// TestStreamBounds: lengths are checked against the file before anything
// is allocated, and an endless stream ends in an error, not a crash.
func TestStreamBounds(t *testing.T) {
	// /dev/zero: a field number of 0 at once.
	_, err := ReadFile("/dev/zero")
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), "field number 0 is invalid")

	// A raw_data that claims a terabyte in a small file.
	var lying []byte
	lying = protowire.AppendTag(lying, fieldRawData, protowire.BytesType)
	lying = protowire.AppendVarint(lying, 1<<40)
	lying = append(lying, 1, 2, 3)
	path := filepath.Join(t.TempDir(), "lying.pb")
	require.NoError(t, os.WriteFile(path, lying, 0o644))
	_, err = ReadFile(path)
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), "raw_data claims 1099511627776 bytes, but only 3 follow")
	_, err = Read(bytes.NewReader(lying))
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), "over protobuf's 2 GiB limit")

	// A stream's claims cost only the bytes that come: a packed field and
	// a raw_data of a GiB each, cut short (what the fuzzer found: the
	// claims were allocated up front, and the worker ran out of memory).
	for _, field := range []protowire.Number{fieldInt64Data, fieldRawData} {
		var claim []byte
		claim = protowire.AppendTag(claim, field, protowire.BytesType)
		claim = protowire.AppendVarint(claim, 1<<30)
		claim = append(claim, 1, 2, 3)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = Read(bytes.NewReader(claim))
		runtime.ReadMemStats(&after)
		require.Error(t, err)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "field %d", field)
	}

	// A well-formed stream that never ends: dims after dims.
	defer func(v int64) { streamLimit = v }(streamLimit)
	streamLimit = 1 << 20
	_, err = Read(endless{})
	require.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), "more than 1048576 bytes")

	// Truncated in a field.
	b := must(Marshal(tensor.Ints(1, 2, 3)))
	_, err = Read(bytes.NewReader(b[:len(b)-3]))
	require.ErrorIs(t, err, ErrFormat)
}

// endless is a stream of dims fields without end.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = [2]byte{fieldDims << 3, 1}[i%2]
	}
	return len(p) &^ 1, nil
}

var _ io.Reader = endless{}
