package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/tensor"
)

// npyFile builds an .npy file by hand: magic, version major.0, the header
// length in the width that version uses, the header text exactly as given
// (no padding added) and the payload.
func npyFile(major byte, hdr string, payload []byte) []byte {
	b := append([]byte(magic), major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(hdr)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(hdr)))
	}
	b = append(b, hdr...)
	return append(b, payload...)
}

// dict returns the header dict numpy writes for descr, order and shape.
func dict(descr string, fortran bool, shape string) string {
	order := "False"
	if fortran {
		order = "True"
	}
	return fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }\n", descr, order, shape)
}

func le32s(vals ...uint32) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

var sampleStrings = []string{"", "a", "héllo", "日本語", "😀 emoji", "tab\there", "mid\x00nul", "Ωmega", "x"}

func randomTensor(rng *rand.Rand, dt tensor.DType, shape []int) *tensor.Tensor {
	t, err := tensor.New(dt, shape)
	if err != nil {
		panic(err)
	}
	if dt == tensor.String {
		for i := range t.Strings {
			t.Strings[i] = sampleStrings[rng.IntN(len(sampleStrings))]
		}
		return t
	}
	for i := range t.Data {
		t.Data[i] = byte(rng.Uint32())
		if dt == tensor.Bool {
			t.Data[i] &= 1
		}
	}
	return t
}

var testShapes = [][]int{{}, {0}, {1}, {5}, {2, 3}, {3, 0}, {0, 4, 2}, {2, 3, 4}, {2, 1, 3, 2}, {1, 2, 0, 3}}

// headerLen returns the total header size of a written file and checks its
// preamble.
func headerLen(t *testing.T, b []byte) int {
	t.Helper()
	require.GreaterOrEqual(t, len(b), 10)
	require.Equal(t, magic, string(b[:6]))
	switch b[6] {
	case 1:
		return 10 + int(binary.LittleEndian.Uint16(b[8:]))
	case 2:
		return 12 + int(binary.LittleEndian.Uint32(b[8:]))
	}
	t.Fatalf("unexpected version %d.%d", b[6], b[7])
	return 0
}

func TestRoundTripAllDTypes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for _, dt := range tensor.DTypes() {
		if dt == tensor.BFloat16 {
			continue
		}
		for _, shape := range testShapes {
			name := fmt.Sprintf("%v%s", dt, tensor.FormatShape(shape))
			t.Run(name, func(t *testing.T) {
				want := randomTensor(rng, dt, shape)

				var buf bytes.Buffer
				require.NoError(t, Write(&buf, want))
				hl := headerLen(t, buf.Bytes())
				assert.Zero(t, hl%64, "payload must start at a multiple of 64")
				assert.Equal(t, byte('\n'), buf.Bytes()[hl-1])
				r := bytes.NewReader(buf.Bytes())
				got, err := Read(r)
				require.NoError(t, err)
				assert.Zero(t, r.Len(), "Read must consume the whole array")
				require.NoError(t, got.Check())
				assert.True(t, tensor.Equal(want, got), "got %v want %v", got, want)

				path := filepath.Join(dir, name+".npy")
				require.NoError(t, WriteFile(path, want))
				disk, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, buf.Bytes(), disk, "WriteFile and Write must agree")
				got, err = ReadFile(path)
				require.NoError(t, err)
				assert.True(t, tensor.Equal(want, got), "got %v want %v", got, want)
			})
		}
	}
}

func TestWriteHeaderText(t *testing.T) {
	cases := []struct {
		t    *tensor.Tensor
		dict string
	}{
		{tensor.MustFromSlice([]int{2, 3}, make([]float32, 6)), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
		{tensor.Scalar(7), "{'descr': '<i8', 'fortran_order': False, 'shape': (), }"},
		{tensor.MustFromSlice([]int{3}, []bool{true, false, true}), "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"},
		{tensor.MustFromSlice([]int{1}, []int8{-1}), "{'descr': '|i1', 'fortran_order': False, 'shape': (1,), }"},
		{tensor.MustFromSlice([]int{1}, []uint8{1}), "{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }"},
		{tensor.MustFromSlice([]int{1}, []complex128{1}), "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }"},
		{tensor.MustFromSlice([]int{1}, []tensor.F16{tensor.F16From(1)}), "{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }"},
		{must(tensor.FromStrings([]int{2}, []string{"héllo!", "ab"})), "{'descr': '<U6', 'fortran_order': False, 'shape': (2,), }"},
		{must(tensor.FromStrings([]int{2}, []string{"", ""})), "{'descr': '<U1', 'fortran_order': False, 'shape': (2,), }"},
		{must(tensor.FromStrings([]int{0}, nil)), "{'descr': '<U1', 'fortran_order': False, 'shape': (0,), }"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, c.t))
		b := buf.Bytes()
		hl := headerLen(t, b)
		assert.Equal(t, []byte{1, 0}, b[6:8])
		assert.Zero(t, hl%64)
		hdr := string(b[10:hl])
		assert.Equal(t, c.dict, strings.TrimRight(hdr, " \n"))
		assert.True(t, strings.HasSuffix(hdr, "\n"))
		assert.Equal(t, strings.TrimRight(hdr[len(c.dict):], "\n"), strings.Repeat(" ", len(hdr)-len(c.dict)-1))
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestWriteStringPayload(t *testing.T) {
	st := must(tensor.FromStrings([]int{2}, []string{"é😀", "a"}))
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, st))
	hl := headerLen(t, buf.Bytes())
	assert.Equal(t, le32s(0xe9, 0x1f600, 'a', 0), buf.Bytes()[hl:])
}

func TestWriteBFloat16Unsupported(t *testing.T) {
	bf := tensor.MustFromSlice([]int{2}, []tensor.BF16{tensor.BF16From(1), tensor.BF16From(2)})
	var buf bytes.Buffer
	err := Write(&buf, bf)
	require.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), "bfloat16")
	assert.Zero(t, buf.Len(), "nothing may be written")
}

func TestWriteBoolNormalises(t *testing.T) {
	bt := &tensor.Tensor{DType: tensor.Bool, Shape: []int{4}, Data: []byte{0, 2, 255, 1}}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, bt))
	hl := headerLen(t, buf.Bytes())
	assert.Equal(t, []byte{0, 1, 1, 1}, buf.Bytes()[hl:])
	assert.Equal(t, []byte{0, 2, 255, 1}, bt.Data, "Write must not modify its input")
}

func TestWriteRejects(t *testing.T) {
	cases := []struct {
		name string
		t    *tensor.Tensor
		is   error
		msg  string
	}{
		{"invalid utf8", must(tensor.FromStrings([]int{2}, []string{"ok", "\xff"})), ErrUnsupported, "element 1 is not valid UTF-8"},
		{"trailing nul", must(tensor.FromStrings([]int{1}, []string{"ab\x00"})), ErrUnsupported, "element 0 ends with NUL"},
		{"short data", &tensor.Tensor{DType: tensor.Float32, Shape: []int{2}, Data: make([]byte, 4)}, tensor.ErrInvalid, "needs 8 bytes, have 4"},
		{"nil", nil, tensor.ErrInvalid, "nil tensor"},
		{"bad dtype", &tensor.Tensor{DType: 200, Shape: []int{}}, tensor.ErrInvalid, "unknown dtype"},
		{"rank", &tensor.Tensor{DType: tensor.Uint8, Shape: ones(maxRank + 1), Data: []byte{0}}, ErrUnsupported, "rank 32769"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Write(&buf, c.t)
			require.ErrorIs(t, err, c.is)
			assert.Contains(t, err.Error(), c.msg)
			assert.Zero(t, buf.Len(), "nothing may be written")
		})
	}
}

func ones(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

func TestWriteVersion2Header(t *testing.T) {
	// 25000 dimensions of 1 need a header longer than 65535 bytes.
	want := &tensor.Tensor{DType: tensor.Uint8, Shape: ones(25000), Data: []byte{42}}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, want))
	b := buf.Bytes()
	assert.Equal(t, []byte{2, 0}, b[6:8])
	hl := headerLen(t, b)
	assert.Greater(t, hl, 65535)
	assert.Zero(t, hl%64)
	got, err := Read(bytes.NewReader(b))
	require.NoError(t, err)
	assert.True(t, tensor.Equal(want, got))

	// The largest shape Write takes still reads back.
	want.Shape = ones(maxRank)
	buf.Reset()
	require.NoError(t, Write(&buf, want))
	got, err = Read(&buf)
	require.NoError(t, err)
	assert.True(t, tensor.Equal(want, got))
}

func TestStringsRoundTrip(t *testing.T) {
	want := must(tensor.FromStrings([]int{2, 4}, []string{
		"", "naïve", "日本語テキスト", "😀😃😄", "mid\x00nul", "\x00lead", "ascii", "Ω",
	}))
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, want))
	assert.Contains(t, buf.String(), "'<U7'")
	got, err := Read(&buf)
	require.NoError(t, err)
	assert.Equal(t, want.Strings, got.Strings)
	assert.Equal(t, want.Shape, got.Shape)
	assert.Nil(t, got.Data)
}

func TestLargeStreamInPieces(t *testing.T) {
	// A payload bigger than the first chunk, arriving a few bytes at a time.
	rng := rand.New(rand.NewPCG(3, 4))
	want := randomTensor(rng, tensor.Float32, []int{5 << 18}) // 5 MiB
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, want))
	got, err := Read(iotest.HalfReader(bytes.NewReader(buf.Bytes())))
	require.NoError(t, err)
	assert.True(t, tensor.Equal(want, got))

	// The same stream cut at 3 MiB of payload.
	hl := headerLen(t, buf.Bytes())
	_, err = Read(bytes.NewReader(buf.Bytes()[:hl+3<<20]))
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), "header claims shape (1310720,) of <f4 (5242880 bytes) but only 3145728 bytes follow")
}

func TestReadConsecutiveArrays(t *testing.T) {
	a := tensor.Ints(1, 2, 3)
	b := must(tensor.FromStrings([]int{}, []string{"x"}))
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, a))
	require.NoError(t, Write(&buf, b))
	got, err := Read(&buf)
	require.NoError(t, err)
	assert.True(t, tensor.Equal(a, got))
	got, err = Read(&buf)
	require.NoError(t, err)
	assert.True(t, tensor.Equal(b, got))
	_, err = Read(&buf)
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), "empty input")
}

func readBytes(t *testing.T, file []byte) *tensor.Tensor {
	t.Helper()
	got, err := Read(bytes.NewReader(file))
	require.NoError(t, err)
	require.NoError(t, got.Check())
	return got
}

func TestBigEndianFixtures(t *testing.T) {
	t.Run(">i4", func(t *testing.T) {
		payload := []byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0x01, 0x02, 0x03, 0x04}
		got := readBytes(t, npyFile(1, dict(">i4", false, "(3,)"), payload))
		assert.Equal(t, []int32{1, -2, 0x01020304}, tensor.View[int32](got))
	})
	t.Run(">f8", func(t *testing.T) {
		var payload []byte
		for _, v := range []float64{1.5, -2.25, math.Inf(1)} {
			payload = binary.BigEndian.AppendUint64(payload, math.Float64bits(v))
		}
		got := readBytes(t, npyFile(1, dict(">f8", false, "(1, 3)"), payload))
		assert.Equal(t, []int{1, 3}, got.Shape)
		assert.Equal(t, []float64{1.5, -2.25, math.Inf(1)}, tensor.View[float64](got))
	})
	t.Run(">c8", func(t *testing.T) {
		var payload []byte
		for _, v := range []float32{1, 2, -3.5, 0.25} {
			payload = binary.BigEndian.AppendUint32(payload, math.Float32bits(v))
		}
		got := readBytes(t, npyFile(1, dict(">c8", false, "(2,)"), payload))
		assert.Equal(t, []complex64{complex(1, 2), complex(-3.5, 0.25)}, tensor.View[complex64](got))
	})
	t.Run(">c16", func(t *testing.T) {
		var payload []byte
		for _, v := range []float64{1, -2} {
			payload = binary.BigEndian.AppendUint64(payload, math.Float64bits(v))
		}
		got := readBytes(t, npyFile(1, dict(">c16", false, "()"), payload))
		assert.Equal(t, []complex128{complex(1, -2)}, tensor.View[complex128](got))
	})
	t.Run(">u2 >f2 >i8", func(t *testing.T) {
		got := readBytes(t, npyFile(1, dict(">u2", false, "(2,)"), []byte{0x12, 0x34, 0xff, 0x00}))
		assert.Equal(t, []uint16{0x1234, 0xff00}, tensor.View[uint16](got))
		got = readBytes(t, npyFile(1, dict(">f2", false, "(1,)"), []byte{0x3c, 0x00}))
		assert.Equal(t, float32(1), tensor.View[tensor.F16](got)[0].Float32())
		got = readBytes(t, npyFile(1, dict(">i8", false, "(1,)"), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd}))
		assert.Equal(t, []int64{-3}, tensor.View[int64](got))
	})
	t.Run(">U3", func(t *testing.T) {
		var payload []byte
		for _, c := range []uint32{'a', 0xe9, 0, 0x1f600, 'z', 'q', 0, 0, 0} {
			payload = binary.BigEndian.AppendUint32(payload, c)
		}
		got := readBytes(t, npyFile(1, dict(">U3", false, "(3,)"), payload))
		assert.Equal(t, []string{"aé", "😀zq", ""}, got.Strings)
	})
}

func TestNativeAndAliasDescrs(t *testing.T) {
	cases := []struct {
		descr   string
		payload []byte
		want    *tensor.Tensor
	}{
		{"=i4", le32s(7, 0xffffffff), tensor.MustFromSlice([]int{2}, []int32{7, -1})},
		{"i4", le32s(7, 0xffffffff), tensor.MustFromSlice([]int{2}, []int32{7, -1})},
		{"|i4", le32s(7, 0xffffffff), tensor.MustFromSlice([]int{2}, []int32{7, -1})},
		{"=u4", le32s(7, 0xffffffff), tensor.MustFromSlice([]int{2}, []uint32{7, math.MaxUint32})},
		{"|u1", []byte{1, 255}, tensor.MustFromSlice([]int{2}, []uint8{1, 255})},
		{"u1", []byte{1, 255}, tensor.MustFromSlice([]int{2}, []uint8{1, 255})},
		{"|i1", []byte{1, 255}, tensor.MustFromSlice([]int{2}, []int8{1, -1})},
		{">i1", []byte{1, 255}, tensor.MustFromSlice([]int{2}, []int8{1, -1})},
		{"<i8", binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 5), 6), tensor.MustFromSlice([]int{2}, []int64{5, 6})},
		{"<f8", binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.5)), 0), tensor.MustFromSlice([]int{2}, []float64{0.5, 0})},
		{"=f4", le32s(math.Float32bits(2), math.Float32bits(-1)), tensor.MustFromSlice([]int{2}, []float32{2, -1})},
		{"<c16", make([]byte, 32), tensor.MustFromSlice([]int{2}, []complex128{0, 0})},
		{"=U1", le32s('a', 'b'), must(tensor.FromStrings([]int{2}, []string{"a", "b"}))},
		{"|U1", le32s('a', 'b'), must(tensor.FromStrings([]int{2}, []string{"a", "b"}))},
		{"<b1", []byte{0, 1}, tensor.MustFromSlice([]int{2}, []bool{false, true})},
	}
	for _, c := range cases {
		t.Run(c.descr, func(t *testing.T) {
			got := readBytes(t, npyFile(1, dict(c.descr, false, "(2,)"), c.payload))
			assert.True(t, tensor.Equal(c.want, got), "got %v want %v", got, c.want)
		})
	}
}

func TestBoolNonZeroIsTrue(t *testing.T) {
	got := readBytes(t, npyFile(1, dict("|b1", false, "(5,)"), []byte{0, 1, 2, 255, 0}))
	assert.Equal(t, []byte{0, 1, 1, 1, 0}, got.Data)
	assert.Equal(t, []bool{false, true, true, true, false}, tensor.View[bool](got))
}

func TestByteStrings(t *testing.T) {
	payload := []byte("ab\x00\x00h\xc3\xa9\x00\x00\x00\x00\x00a\x00b\x00")
	got := readBytes(t, npyFile(1, dict("|S4", false, "(4,)"), payload))
	assert.Equal(t, tensor.String, got.DType)
	assert.Equal(t, []string{"ab", "hé", "", "a\x00b"}, got.Strings)

	// Byte strings are bytes: any of them, UTF-8 or not, and they come
	// back out unchanged.
	raw := []byte{0xff, 0xfe, 0x80, 0x00}
	got = readBytes(t, npyFile(1, dict("|S2", false, "(2,)"), raw))
	assert.Equal(t, []string{"\xff\xfe", "\x80"}, got.Strings)
	var out bytes.Buffer
	require.NoError(t, Write(&out, got))
	assert.True(t, bytes.HasSuffix(out.Bytes(), raw), "the payload is written back as it was read")
	again := readBytes(t, out.Bytes())
	assert.Equal(t, got.Strings, again.Strings)
	assert.Equal(t, got.StringFormat, again.StringFormat)
}

func TestVersions2And3(t *testing.T) {
	payload := le32s(1, 2, 3, 4, 5, 6)
	want := tensor.MustFromSlice([]int{2, 3}, []int32{1, 2, 3, 4, 5, 6})
	for _, major := range []byte{1, 2, 3} {
		got := readBytes(t, npyFile(major, dict("<i4", false, "(2, 3)"), payload))
		assert.True(t, tensor.Equal(want, got), "version %d.0", major)
	}
	// 3.0 headers are UTF-8: a non-ASCII byte is fine in a key only if
	// valid, and then the key is unknown.
	_, err := Read(bytes.NewReader(npyFile(3, "{'descr': '<i4', 'fortran_order': False, 'shape': (), 'é': 1}", le32s(1))))
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), `unknown key "é"`)
}

func TestFortranOrder(t *testing.T) {
	// Element (i, j, k) of a [2,3,4] array holds 100i + 10j + k.
	var fortran, c []int32
	for k := range 4 {
		for j := range 3 {
			for i := range 2 {
				fortran = append(fortran, int32(100*i+10*j+k))
			}
		}
	}
	for i := range 2 {
		for j := range 3 {
			for k := range 4 {
				c = append(c, int32(100*i+10*j+k))
			}
		}
	}
	got := readBytes(t, npyFile(1, dict("<i4", true, "(2, 3, 4)"), tensor.BytesOf(fortran)))
	assert.Equal(t, []int{2, 3, 4}, got.Shape)
	assert.Equal(t, c, tensor.View[int32](got))

	// Big-endian and Fortran together.
	var be []byte
	for _, v := range fortran {
		be = binary.BigEndian.AppendUint32(be, uint32(v))
	}
	got = readBytes(t, npyFile(1, dict(">i4", true, "(2, 3, 4)"), be))
	assert.Equal(t, c, tensor.View[int32](got))

	// Every element size: widen the values.
	for _, descr := range []string{"|u1", "<i2", "<i8", "<c16"} {
		t.Run(descr, func(t *testing.T) {
			var payload []byte
			for _, v := range fortran {
				switch descr {
				case "|u1":
					payload = append(payload, byte(v))
				case "<i2":
					payload = binary.LittleEndian.AppendUint16(payload, uint16(v))
				case "<i8":
					payload = binary.LittleEndian.AppendUint64(payload, uint64(v))
				case "<c16":
					payload = binary.LittleEndian.AppendUint64(payload, math.Float64bits(float64(v)))
					payload = binary.LittleEndian.AppendUint64(payload, math.Float64bits(-float64(v)))
				}
			}
			got := readBytes(t, npyFile(1, dict(descr, true, "(2, 3, 4)"), payload))
			for idx, want := range c {
				switch descr {
				case "|u1":
					assert.Equal(t, byte(want), got.Data[idx])
				case "<i2":
					assert.Equal(t, int16(want), tensor.View[int16](got)[idx])
				case "<i8":
					assert.Equal(t, int64(want), tensor.View[int64](got)[idx])
				case "<c16":
					assert.Equal(t, complex(float64(want), -float64(want)), tensor.View[complex128](got)[idx])
				}
			}
		})
	}

	// Strings: a [2,3] array stored column by column.
	var us []byte
	for _, s := range []string{"a", "d", "b", "e", "c", "f"} {
		us = append(us, le32s(uint32(s[0]), 0)...)
	}
	got = readBytes(t, npyFile(1, dict("<U2", true, "(2, 3)"), us))
	assert.Equal(t, []string{"a", "b", "c", "d", "e", "f"}, got.Strings)

	// Rank 0 and 1 and empty arrays are the same in either order.
	got = readBytes(t, npyFile(1, dict("<i4", true, "(3,)"), le32s(1, 2, 3)))
	assert.Equal(t, []int32{1, 2, 3}, tensor.View[int32](got))
	got = readBytes(t, npyFile(1, dict("<i4", true, "(0, 3)"), nil))
	assert.Equal(t, []int{0, 3}, got.Shape)
}

func TestFortranRandomShapes(t *testing.T) {
	// The element at each Fortran offset holds its row-major index, so the
	// transposed payload must read 0, 1, 2, ...
	rng := rand.New(rand.NewPCG(9, 10))
	for range 50 {
		shape := make([]int, 2+rng.IntN(4))
		for i := range shape {
			shape[i] = 1 + rng.IntN(5)
		}
		n := 1
		for _, d := range shape {
			n *= d
		}
		cs := tensor.Strides(shape)
		var u4, u8, strs []byte
		for f := range n {
			rest, c := f, 0
			for k, d := range shape {
				c += (rest % d) * cs[k]
				rest /= d
			}
			u4 = binary.LittleEndian.AppendUint32(u4, uint32(c))
			u8 = binary.LittleEndian.AppendUint64(u8, uint64(c))
			strs = append(strs, le32s(uint32('A'+c%26), uint32('a'+c/26%26))...)
		}
		tuple := strings.Trim(strings.ReplaceAll(fmt.Sprint(shape), " ", ", "), "[]")
		got := readBytes(t, npyFile(1, dict("<u4", true, "("+tuple+")"), u4))
		got8 := readBytes(t, npyFile(1, dict("<u8", true, "("+tuple+")"), u8))
		gotS := readBytes(t, npyFile(1, dict("<U2", true, "("+tuple+")"), strs))
		require.Equal(t, shape, got.Shape)
		for i := range n {
			require.Equal(t, uint32(i), tensor.View[uint32](got)[i], "shape %v", shape)
			require.Equal(t, uint64(i), tensor.View[uint64](got8)[i], "shape %v", shape)
			require.Equal(t, string([]byte{byte('A' + i%26), byte('a' + i/26%26)}), gotS.Strings[i], "shape %v", shape)
		}
	}
}

func TestHeaderVariants(t *testing.T) {
	want := tensor.MustFromSlice([]int{2, 1}, []float32{1, 2})
	payload := le32s(math.Float32bits(1), math.Float32bits(2))
	for _, h := range []string{
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1)}",
		"{'shape': (2, 1), 'fortran_order': False, 'descr': '<f4'}",
		`{"descr": "<f4", "fortran_order": False, "shape": (2, 1)}`,
		"{'descr':'<f4','fortran_order':False,'shape':(2,1)}",
		"{'descr':'<f4','fortran_order':False,'shape':(2,1,),}",
		"  {\n\t'descr' : '<f4' ,\r\n 'fortran_order' : False ,\n 'shape' : ( 2 , 1 ) ,\n}   \n",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 1L), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }" + strings.Repeat(" ", 50) + "\n",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }\f",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }",
	} {
		got, err := Read(bytes.NewReader(npyFile(1, h, payload)))
		require.NoError(t, err, "header %q", h)
		assert.True(t, tensor.Equal(want, got), "header %q", h)
	}

	scalar := readBytes(t, npyFile(1, dict("<f4", false, "()"), le32s(math.Float32bits(3))))
	assert.Equal(t, []int{}, scalar.Shape)
	assert.Equal(t, []float32{3}, tensor.View[float32](scalar))
	empty := readBytes(t, npyFile(1, dict("<f4", false, "( )"), le32s(0)))
	assert.Equal(t, []int{}, empty.Shape)
	oneDim := readBytes(t, npyFile(1, dict("<f4", false, "(1,)"), le32s(0)))
	assert.Equal(t, []int{1}, oneDim.Shape)
	zero := readBytes(t, npyFile(1, dict("<f4", false, "(2, 0, -0)"), nil))
	assert.Equal(t, []int{2, 0, 0}, zero.Shape)
}

type errCase struct {
	name string
	file []byte
	is   error
	msg  string
}

func hdrCase(name, hdr string, is error, msg string) errCase {
	return errCase{name, npyFile(1, hdr, make([]byte, 16)), is, msg}
}

func errorCases() []errCase {
	good := npyFile(1, dict("<i4", false, "(2,)"), le32s(1, 2))
	bigRank := "(" + strings.Repeat("1,", maxRank+1) + ")"
	return []errCase{
		{"empty", nil, ErrFormat, "empty input"},
		{"bad magic", append([]byte("\x93NUMPZ"), good[6:]...), ErrFormat, `bad magic "\x93NUMPZ"`},
		{"text file", []byte("hello world, this is not numpy"), ErrFormat, `bad magic "hello "`},
		{"npz", []byte("PK\x03\x04\x14\x00\x00\x00"), ErrFormat, "zip archive (.npz?)"},
		{"short magic", []byte("\x93NUM"), ErrFormat, "input ends after 4 bytes, inside the 8-byte magic"},
		{"version 4.0", append(append([]byte(magic), 4, 0), good[8:]...), ErrFormat, "unknown format version 4.0 (want 1.0, 2.0 or 3.0)"},
		{"version 1.1", append(append([]byte(magic), 1, 1), good[8:]...), ErrFormat, "unknown format version 1.1"},
		{"version 0.0", append([]byte(magic), 0, 0), ErrFormat, "unknown format version 0.0"},
		{"length field cut", append([]byte(magic), 2, 0, 5, 0), ErrFormat, "inside the 4-byte header length field (2 bytes of it present)"},
		{"header length 0", append([]byte(magic), 1, 0, 0, 0), ErrFormat, "header length is 0"},
		{"header too long", append([]byte(magic), 2, 0, 0, 0, 0, 0x40, '{'), ErrFormat, "header length 1073741824 is over the 1048576-byte limit"},
		{"header too short for its length", good[:60], ErrFormat, fmt.Sprintf("its length field says %d bytes but only 50 follow", len(dict("<i4", false, "(2,)")))},
		{"header length cuts the dict", npyFile(1, dict("<i4", false, "(2,)")[:20], nil), ErrFormat, "string for a dict key is not closed"},
		{"v3 header not utf8", npyFile(3, "{'descr': '<i4', 'fortran_order': False, 'shape': (), '\xff': 1}", nil), ErrFormat, "version 3.0 header is not valid UTF-8"},
		{"truncated payload", good[:len(good)-3], ErrFormat, "header claims shape (2,) of <i4 (8 bytes) but only 5 bytes follow"},
		{"no payload", good[:len(good)-8], ErrFormat, "but only 0 bytes follow"},

		hdrCase("not a dict", "[1, 2]", ErrFormat, "expected '{' to open the header dict at offset 0"),
		hdrCase("empty dict", "{}", ErrFormat, "dict lacks key 'descr' and 'fortran_order' and 'shape'"),
		hdrCase("missing shape", "{'descr': '<i4', 'fortran_order': False}", ErrFormat, "dict lacks key 'shape'"),
		hdrCase("missing descr", "{'fortran_order': False, 'shape': (2,)}", ErrFormat, "dict lacks key 'descr'"),
		hdrCase("duplicate key", "{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': (2,)}", ErrFormat, `duplicate key "descr" at offset 17`),
		hdrCase("unknown key", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", ErrFormat, `unknown key "extra"`),
		hdrCase("unquoted key", "{descr: '<i4'}", ErrFormat, "expected a quoted string for a dict key at offset 1"),
		hdrCase("missing colon", "{'descr' '<i4'}", ErrFormat, `expected ':' after key "descr"`),
		hdrCase("missing comma", "{'descr': '<i4' 'shape': (2,)}", ErrFormat, `expected ',' or '}' after the value of "descr"`),
		hdrCase("unclosed dict", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,)", ErrFormat, `expected ',' or '}' after the value of "shape" at offset 54 (end of header)`),
		hdrCase("leading comma", "{, 'descr': '<i4'}", ErrFormat, "expected a quoted string for a dict key"),
		hdrCase("data after dict", dict("<i4", false, "(2,)")+"x", ErrFormat, `unexpected data after the header dict`),
		hdrCase("two dicts", "{}{}", ErrFormat, "unexpected data after the header dict at offset 2"),
		hdrCase("bad escape", "{'descr': '<i\\n4', 'fortran_order': False, 'shape': (2,)}", ErrFormat, "unsupported escape in string for 'descr'"),
		hdrCase("newline in string", "{'descr': '<i\n4', 'fortran_order': False, 'shape': (2,)}", ErrFormat, "not closed before the end of the line"),
		hdrCase("descr not a string", "{'descr': 4, 'fortran_order': False, 'shape': (2,)}", ErrFormat, "expected a quoted string for 'descr'"),
		hdrCase("fortran int", "{'descr': '<i4', 'fortran_order': 0, 'shape': (2,)}", ErrFormat, "'fortran_order' must be True or False"),
		hdrCase("fortran lowercase", "{'descr': '<i4', 'fortran_order': true, 'shape': (2,)}", ErrFormat, "'fortran_order' must be True or False"),
		hdrCase("fortran prefix", "{'descr': '<i4', 'fortran_order': Falsey, 'shape': (2,)}", ErrFormat, "'fortran_order' must be True or False"),
		hdrCase("shape list", dict("<i4", false, "[2, 3]"), ErrFormat, "'shape' must be a tuple such as (2, 3)"),
		hdrCase("shape int", dict("<i4", false, "2"), ErrFormat, "'shape' must be a tuple"),
		hdrCase("shape (3)", dict("<i4", false, "(3)"), ErrFormat, "'shape' (3) is an integer, not a tuple; a one-dimensional shape is written (3,)"),
		hdrCase("negative dim", dict("<i4", false, "(2, -3)"), ErrFormat, "shape dimension 1 is negative (-3)"),
		hdrCase("float dim", dict("<i4", false, "(2.0,)"), ErrFormat, "shape dimension 0 is not a plain integer"),
		hdrCase("underscore dim", dict("<i4", false, "(1_000,)"), ErrFormat, "shape dimension 0 is not a plain integer"),
		hdrCase("leading zero", dict("<i4", false, "(03,)"), ErrFormat, "shape dimension 0 (03) has a leading zero"),
		hdrCase("huge dim", dict("<i4", false, "(99999999999999999999,)"), ErrFormat, "shape dimension 0 (99999999999999999999) is too large"),
		hdrCase("dim missing", dict("<i4", false, "(,)"), ErrFormat, "expected an integer for shape dimension 0"),
		hdrCase("double comma", dict("<i4", false, "(2,,)"), ErrFormat, "expected an integer for shape dimension 1"),
		hdrCase("no comma between dims", dict("<i4", false, "(2 3)"), ErrFormat, "expected ',' or ')' in 'shape'"),
		hdrCase("unclosed tuple", "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3", ErrFormat, "expected ',' or ')' in 'shape'"),
		hdrCase("too many elements", dict("<f4", false, "(1000000000, 1000000)"), ErrFormat,
			"header claims shape (1000000000,1000000) of <f4 (1000000000000000 elements, 4000000000000000 bytes), more than the 2^40-element tensor limit"),
		hdrCase("too many bytes", dict("<c16", false, "(274877906944,)"), ErrFormat,
			"header claims shape (274877906944,) of <c16 (4398046511104 bytes), more than the 1099511627776-byte tensor limit"),
		hdrCase("product overflows", dict("|u1", false, "(9223372036854775807, 9223372036854775807)"), ErrFormat,
			"(85070591730234615847396907784232501249 elements, 85070591730234615847396907784232501249 bytes), more than the 2^40-element tensor limit"),
		hdrCase("zero after huge dims", dict("|u1", false, "(1000000000000000000, 0)"), ErrFormat,
			"header shape (1000000000000000000,0) is not a valid tensor shape: invalid tensor: shape [1000000000000000000 0] has more than 2^40 elements"),
		{"rank over limit", npyFile(2, dict("|u1", false, bigRank), []byte{0}), ErrUnsupported, "'shape' has more than 32768 dimensions"},

		hdrCase("object", dict("|O", false, "(2,)"), ErrUnsupported, `descr "|O" is an object array (pickled Python objects)`),
		hdrCase("structured", "{'descr': [('x', '<i4'), ('y', '<f4')], 'fortran_order': False, 'shape': (2,), }", ErrUnsupported, "structured dtype"),
		hdrCase("void", dict("|V8", false, "(2,)"), ErrUnsupported, `descr "|V8" is a void`),
		hdrCase("datetime", dict("<M8[ns]", false, "(2,)"), ErrUnsupported, `descr "<M8[ns]" is a datetime or timedelta dtype`),
		hdrCase("timedelta", dict("<m8[s]", false, "(2,)"), ErrUnsupported, "datetime or timedelta"),
		hdrCase("long double", dict("<f16", false, "(1,)"), ErrUnsupported, `descr "<f16" is an extended-precision float`),
		hdrCase("long complex", dict("<c32", false, "(1,)"), ErrUnsupported, "extended-precision complex"),
		hdrCase("empty descr", dict("", false, "(2,)"), ErrFormat, "'descr' is empty"),
		hdrCase("order only", dict("<", false, "(2,)"), ErrFormat, `descr "<" has no type code`),
		hdrCase("unknown type", dict("<x4", false, "(2,)"), ErrFormat, `descr "<x4" has unknown type code 'x'`),
		hdrCase("bad int size", dict("<i3", false, "(2,)"), ErrFormat, `descr "<i3": type code 'i' does not come in 3-byte items`),
		hdrCase("bool size 2", dict("|b2", false, "(2,)"), ErrFormat, "type code 'b' does not come in 2-byte items"),
		hdrCase("no size", dict("<f", false, "(2,)"), ErrFormat, `descr "<f" has a malformed item size ""`),
		hdrCase("size with junk", dict("<f4 ", false, "(2,)"), ErrFormat, `has a malformed item size "4 "`),
		hdrCase("size leading zero", dict("<f04", false, "(2,)"), ErrFormat, "malformed item size"),
		hdrCase("zero-width unicode", dict("<U0", false, "(2,)"), ErrFormat, `descr "<U0" is a zero-width string dtype`),
		hdrCase("huge unicode width", dict("<U1099511627776", false, "(1,)"), ErrFormat, "larger than 1 TiB"),
		{"surrogate", npyFile(1, dict("<U2", false, "(2,)"), le32s('a', 0, 'b', 0xD800)), ErrFormat,
			"string element 1 holds 0xD800 at code unit 1, which is not a Unicode scalar value"},
		{"beyond unicode", npyFile(1, dict("<U1", false, "()"), le32s(0x110000)), ErrFormat, "holds 0x110000"},
	}
}

func TestReadErrors(t *testing.T) {
	for _, c := range errorCases() {
		t.Run(c.name, func(t *testing.T) {
			got, err := Read(bytes.NewReader(c.file))
			require.Error(t, err)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, c.is)
			other := ErrUnsupported
			if c.is == ErrUnsupported {
				other = ErrFormat
			}
			assert.NotErrorIs(t, err, other)
			assert.Contains(t, err.Error(), c.msg)
			assert.True(t, strings.HasPrefix(err.Error(), "npy: "), err.Error())
		})
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range errorCases() {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".npy")
			require.NoError(t, os.WriteFile(path, c.file, 0o644))
			_, err := ReadFile(path)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.is)
			assert.Contains(t, err.Error(), path)
			// Payload-size errors are worded for a file; the rest are
			// the same as Read's.
			if !strings.Contains(c.msg, "bytes follow") {
				assert.Contains(t, err.Error(), c.msg)
			}
		})
	}

	good := npyFile(1, dict("<i4", false, "(2,)"), le32s(1, 2))
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, b, 0o644))
		return path
	}
	path := write("trailing.npy", append(append([]byte{}, good...), 0, 0, 0))
	_, err := ReadFile(path)
	require.ErrorIs(t, err, ErrFormat)
	assert.Equal(t, "npy: "+path+": header claims shape (2,) of <i4 (8 bytes) but 11 bytes follow (3 trailing bytes)", err.Error())

	path = write("short.npy", good[:len(good)-1])
	_, err = ReadFile(path)
	require.ErrorIs(t, err, ErrFormat)
	assert.Equal(t, "npy: "+path+": header claims shape (2,) of <i4 (8 bytes) but only 7 bytes follow", err.Error())

	// A huge claim is rejected from the file size, before any allocation.
	path = write("huge.npy", npyFile(1, dict("|u1", false, "(100000000000,)"), make([]byte, 128)))
	_, err = ReadFile(path)
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), "header claims shape (100000000000,) of |u1 (100000000000 bytes) but only 128 bytes follow")

	missing := filepath.Join(dir, "missing.npy")
	_, err = ReadFile(missing)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), missing)

	_, err = ReadFile(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), dir)
}

func TestHugeClaimOnShortStream(t *testing.T) {
	cases := []struct{ descr, shape, msg string }{
		{"<f4", "(1000000000, 1000000)", "header claims shape (1000000000,1000000) of <f4 (1000000000000000 elements, 4000000000000000 bytes)"},
		{"|u1", "(1000000000000000,)", "header claims shape (1000000000000000,) of |u1 (1000000000000000 elements, 1000000000000000 bytes)"},
		// Under the tensor limit, so only the short stream gives it away.
		{"|u1", "(100000000000,)", "header claims shape (100000000000,) of |u1 (100000000000 bytes) but only 128 bytes follow"},
		{"<f8", "(1000, 1000, 100)", "header claims shape (1000,1000,100) of <f8 (800000000 bytes) but only 128 bytes follow"},
		{"<U1000", "(100000000,)", "of <U1000 (400000000000 bytes) but only 128 bytes follow"},
	}
	for _, c := range cases {
		file := npyFile(1, dict(c.descr, false, c.shape), make([]byte, 128))
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		_, err := Read(bytes.NewReader(file))
		elapsed := time.Since(start)
		runtime.ReadMemStats(&after)
		require.ErrorIs(t, err, ErrFormat)
		assert.Contains(t, err.Error(), c.msg)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "%s %s allocated too much", c.descr, c.shape)
		assert.Less(t, elapsed, time.Second)
	}
}

func TestReadIOError(t *testing.T) {
	boom := errors.New("boom")
	good := npyFile(1, dict("<i4", false, "(2,)"), le32s(1, 2))
	_, err := Read(io.MultiReader(bytes.NewReader(good[:70]), iotest.ErrReader(boom)))
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "reading the payload")
}

type failingWriter struct{ ok int }

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.ok == 0 {
		return 0, errDiskFull
	}
	w.ok--
	return len(p), nil
}

func TestWriteIOError(t *testing.T) {
	for _, tt := range []*tensor.Tensor{
		tensor.Ints(1, 2),
		must(tensor.FromStrings([]int{1}, []string{"a"})),
		{DType: tensor.Bool, Shape: []int{2}, Data: []byte{3, 0}},
	} {
		err := Write(&failingWriter{0}, tt)
		require.ErrorIs(t, err, errDiskFull)
		assert.Equal(t, "npy: writing the header: disk full", err.Error())
		err = Write(&failingWriter{1}, tt)
		require.ErrorIs(t, err, errDiskFull)
		assert.Equal(t, "npy: writing the payload: disk full", err.Error())
	}
}

func TestLargePayloadsInChunks(t *testing.T) {
	// More than one write buffer of strings and of bools to normalise.
	rng := rand.New(rand.NewPCG(7, 8))
	st := randomTensor(rng, tensor.String, []int{300, 100})
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, st))
	assert.Equal(t, headerLen(t, buf.Bytes())+4*8*300*100, buf.Len(), "longest sample is 8 code points")
	got, err := Read(&buf)
	require.NoError(t, err)
	assert.True(t, tensor.Equal(st, got))

	bt := randomTensor(rng, tensor.Uint8, []int{200000})
	bt.DType = tensor.Bool
	buf.Reset()
	require.NoError(t, Write(&buf, bt))
	got, err = Read(&buf)
	require.NoError(t, err)
	for i, b := range bt.Data {
		if got.Data[i] != min(b, 1) {
			t.Fatalf("element %d: got %d for %d", i, got.Data[i], b)
		}
	}
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestWriteFileLeavesNothingOnFailure(t *testing.T) {
	dir := t.TempDir()
	bf := tensor.MustFromSlice([]int{1}, []tensor.BF16{1})

	path := filepath.Join(dir, "bf.npy")
	err := WriteFile(path, bf)
	require.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), path)
	assert.Empty(t, entries(t, dir))

	bad := must(tensor.FromStrings([]int{1}, []string{"\xff"}))
	require.ErrorIs(t, WriteFile(filepath.Join(dir, "s.npy"), bad), ErrUnsupported)
	assert.Empty(t, entries(t, dir))

	good := tensor.Ints(1, 2, 3)
	nowhere := filepath.Join(dir, "no", "such", "dir", "x.npy")
	err = WriteFile(nowhere, good)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), nowhere)
	assert.Empty(t, entries(t, dir))

	// The target is a directory: the rename fails after the data is
	// written, and the temporary file must go.
	sub := filepath.Join(dir, "sub.npy")
	require.NoError(t, os.Mkdir(sub, 0o755))
	err = WriteFile(sub, good)
	require.Error(t, err)
	assert.Contains(t, err.Error(), sub)
	assert.Equal(t, []string{"sub.npy"}, entries(t, dir))
	assert.Empty(t, entries(t, sub))

	// An existing file is left as it was when writing fails.
	keep := filepath.Join(dir, "keep.npy")
	require.NoError(t, WriteFile(keep, good))
	before, err := os.ReadFile(keep)
	require.NoError(t, err)
	require.ErrorIs(t, WriteFile(keep, bf), ErrUnsupported)
	after, err := os.ReadFile(keep)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	assert.ElementsMatch(t, []string{"sub.npy", "keep.npy"}, entries(t, dir))

	// The parent "directory" is a file.
	notDir := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	err = WriteFile(filepath.Join(notDir, "x.npy"), good)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a directory")
	assert.ElementsMatch(t, []string{"sub.npy", "keep.npy", "plain"}, entries(t, dir))

	// A read-only directory (root ignores the permission bits).
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(ro, 0o755))
		require.NoError(t, os.Chmod(ro, 0o555))
		t.Cleanup(func() { os.Chmod(ro, 0o755) })
		err = WriteFile(filepath.Join(ro, "x.npy"), good)
		require.ErrorIs(t, err, fs.ErrPermission)
		assert.Empty(t, entries(t, ro))
	}
}

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.npy")
	require.NoError(t, os.WriteFile(path, []byte("old contents"), 0o600))
	require.NoError(t, os.Chmod(path, 0o640))
	want := tensor.MustFromSlice([]int{2, 2}, []float64{1, 2, 3, 4})
	require.NoError(t, WriteFile(path, want))
	got, err := ReadFile(path)
	require.NoError(t, err)
	assert.True(t, tensor.Equal(want, got))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o640), st.Mode().Perm(), "a replaced file keeps its permissions")
	assert.Equal(t, []string{"a.npy"}, entries(t, dir))

	// A relative path in the current directory.
	t.Chdir(dir)
	require.NoError(t, WriteFile("rel.npy", want))
	got, err = ReadFile("rel.npy")
	require.NoError(t, err)
	assert.True(t, tensor.Equal(want, got))
	assert.ElementsMatch(t, []string{"a.npy", "rel.npy"}, entries(t, dir))
}

func TestReadFileFromPipe(t *testing.T) {
	// ReadFile on something that is not a regular file reads it as a
	// stream.
	want := tensor.Ints(4, 5, 6)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, want))
	r, w, err := os.Pipe()
	require.NoError(t, err)
	go func() {
		w.Write(buf.Bytes())
		w.Close()
	}()
	defer r.Close()
	got, err := ReadFile(fmt.Sprintf("/dev/fd/%d", r.Fd()))
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no /dev/fd")
	}
	require.NoError(t, err)
	assert.True(t, tensor.Equal(want, got))
}

func BenchmarkReadFile(b *testing.B) {
	const size = 64 << 20
	data := make([]float32, size/4)
	for i := range data {
		data[i] = float32(i)
	}
	want := tensor.MustFromSlice([]int{len(data) / 1024, 1024}, data)
	path := filepath.Join(b.TempDir(), "bench.npy")
	require.NoError(b, WriteFile(path, want))
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		got, err := ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		if len(got.Data) != size {
			b.Fatal("short read")
		}
	}
}

func FuzzRead(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tt := range []*tensor.Tensor{
		randomTensor(rng, tensor.Float32, []int{2, 3}),
		randomTensor(rng, tensor.Bool, []int{}),
		randomTensor(rng, tensor.Complex128, []int{1, 2}),
		randomTensor(rng, tensor.Int16, []int{0, 3}),
		must(tensor.FromStrings([]int{3}, []string{"héllo", "", "😀"})),
	} {
		var buf bytes.Buffer
		require.NoError(f, Write(&buf, tt))
		b := buf.Bytes()
		f.Add(b)
		f.Add(b[:len(b)-1])
		f.Add(append(append([]byte{}, b...), 0))
	}
	f.Add(npyFile(1, dict(">i4", true, "(2, 3)"), make([]byte, 24)))
	f.Add(npyFile(1, dict(">U2", true, "(2, 1)"), le32s(0, 'a', 0, 0, 0, 'b', 0, 0)))
	f.Add(npyFile(3, dict("|S3", false, "(2,)"), []byte("ab\x00cde")))
	f.Add(npyFile(2, dict("|b1", true, "(2, 2)"), []byte{0, 2, 1, 0}))
	f.Add(npyFile(1, dict("<c8", true, "(1, 2, 1)"), make([]byte, 16)))
	f.Add(npyFile(1, dict("|O", false, "(2,)"), nil))
	f.Add(npyFile(1, "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,)}", nil))
	f.Add(npyFile(1, dict("<f4", false, "(1000000000, 1000000)"), nil))
	f.Add(npyFile(1, dict("<f4", false, "(0, 100000000000000000)"), nil))
	f.Add(npyFile(1, dict("<f2", false, "(3L,)"), make([]byte, 6)))
	for _, c := range errorCases() {
		f.Add(c.file)
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Read(bytes.NewReader(data))
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

// TestStringFormatRoundTrip reads and writes fixed-width strings whose
// elements are shorter than the width: the dtype stays '<U4' or '|S4'.
func TestStringFormatRoundTrip(t *testing.T) {
	for _, f := range []tensor.StringFormat{{Width: 4}, {Bytes: true, Width: 4}, {Width: 1}} {
		t.Run(f.String(), func(t *testing.T) {
			x, err := tensor.FromStrings([]int{3}, []string{"a", "", "b"})
			require.NoError(t, err)
			x.StringFormat = f
			var b bytes.Buffer
			require.NoError(t, Write(&b, x))
			assert.Contains(t, b.String(), "'descr': '"+f.String()+"'")
			got, err := Read(bytes.NewReader(b.Bytes()))
			require.NoError(t, err)
			assert.Equal(t, f, got.StringFormat)
			assert.Equal(t, x.Strings, got.Strings)
			assert.Equal(t, f, got.Clone().StringFormat)
		})
	}

	// Without a format the width is the longest string's, as before.
	x, err := tensor.FromStrings([]int{2}, []string{"abc", "é"})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, Write(&b, x))
	assert.Contains(t, b.String(), "'descr': '<U3'")

	// A string wider than its format fails before anything is written.
	for _, f := range []tensor.StringFormat{{Width: 2}, {Bytes: true, Width: 1}} {
		x.StringFormat = f
		b.Reset()
		err = Write(&b, x)
		require.ErrorIs(t, err, ErrUnsupported)
		assert.Contains(t, err.Error(), "wider than its dtype "+f.String())
		assert.Zero(t, b.Len())
	}
}
