package npy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestWriteHeaderThenPayload: WriteHeader followed by Tensor.Data is what
// Write writes, and OpenFile reads the header and, through Read, the
// payload back, for every fixed-width dtype and shape.
func TestWriteHeaderThenPayload(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	for _, dt := range tensor.DTypes() {
		if dt == tensor.BFloat16 || dt == tensor.String {
			continue
		}
		for _, shape := range testShapes {
			want := randomTensor(rng, dt, shape)
			var whole, parts bytes.Buffer
			require.NoError(t, Write(&whole, want))
			require.NoError(t, WriteHeader(&parts, dt, shape))
			parts.Write(want.Data)
			require.Equal(t, whole.Bytes(), parts.Bytes(), "%v%v", dt, shape)

			h, err := ReadHeader(bytes.NewReader(whole.Bytes()))
			require.NoError(t, err)
			assert.Equal(t, Header{DType: dt, Shape: shape, Offset: int64(headerLen(t, whole.Bytes())), Size: int64(len(want.Data)), Raw: true}, h)

			path := filepath.Join(dir, fmt.Sprintf("%v%s.npy", dt, tensor.FormatShape(shape)))
			require.NoError(t, os.WriteFile(path, whole.Bytes(), 0o644))
			f, err := OpenFile(path)
			require.NoError(t, err)
			assert.Equal(t, h, f.Header)
			got, err := io.ReadAll(iotest.HalfReader(f))
			require.NoError(t, err)
			assert.Equal(t, len(want.Data), len(got))
			assert.True(t, bytes.Equal(want.Data, got), "%v%v", dt, shape)
			require.NoError(t, f.Close())
		}
	}
}

func TestWriteHeaderRejects(t *testing.T) {
	var buf bytes.Buffer
	err := WriteHeader(&buf, tensor.BFloat16, []int{2})
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), "bfloat16 has no standard NPY dtype")
	err = WriteHeader(&buf, tensor.String, []int{2})
	assert.ErrorIs(t, err, ErrUnsupported)
	err = WriteHeader(&buf, tensor.Int8, []int{-1})
	assert.ErrorIs(t, err, tensor.ErrInvalid)
	err = WriteHeader(&buf, tensor.Int8, ones(maxRank+1))
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.Zero(t, buf.Len(), "nothing written")
	err = WriteHeader(&failingWriter{}, tensor.Int8, []int{2})
	assert.Error(t, err)
	assert.Contains(t, err.Error(), "writing the header")
}

// TestHeaderRaw: only payloads that are Tensor.Data as stored are raw.
func TestHeaderRaw(t *testing.T) {
	for _, c := range []struct {
		descr   string
		fortran bool
		shape   string
		raw     bool
	}{
		{"<i4", false, "(2,3)", true},
		{"|b1", false, "(2,)", true},
		{"<f8", true, "(6,)", true},
		{"<i4", true, "(1,0)", true},
		{"<i4", true, "(2,3)", false},
		{">i4", false, "(2,)", false},
		{">i1", false, "(2,)", true},
		{"<U3", false, "(2,)", false},
		{"|S3", false, "(2,)", false},
	} {
		h, err := ReadHeader(bytes.NewReader(npyFile(1, dict(c.descr, c.fortran, c.shape), nil)))
		require.NoError(t, err, c.descr)
		assert.Equal(t, c.raw, h.Raw, "%s %v %s", c.descr, c.fortran, c.shape)
	}
}

// TestOpenFileErrorsAreReadFiles: wherever OpenFile fails, it fails with
// ReadFile's error for the same file; where it does not, the error
// ReadFile finds is in a payload that is not raw.
func TestOpenFileErrorsAreReadFiles(t *testing.T) {
	dir := t.TempDir()
	good := npyFile(1, dict("<i4", false, "(2,)"), le32s(1, 2))
	cases := errorCases()
	cases = append(cases,
		errCase{"trailing", append(append([]byte{}, good...), 0, 0, 0), ErrFormat, ""},
		errCase{"short", good[:len(good)-1], ErrFormat, ""})
	for _, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".npy")
		require.NoError(t, os.WriteFile(path, c.file, 0o644))
		_, want := ReadFile(path)
		require.Error(t, want)
		f, err := OpenFile(path)
		if err != nil {
			assert.Equal(t, want.Error(), err.Error(), c.name)
			assert.ErrorIs(t, err, c.is)
			continue
		}
		assert.False(t, f.Raw, "%s: a raw payload is read as ReadFile reads it", c.name)
		f.Close()
	}
	_, err := OpenFile(filepath.Join(dir, "missing.npy"))
	_, want := ReadFile(filepath.Join(dir, "missing.npy"))
	assert.Equal(t, want.Error(), err.Error())
}

// TestReadHeaderFile: the header alone is read: a file with a short,
// missing or overlong payload gives the header a whole file gives, and a
// header that OpenFile refuses is refused with OpenFile's error.
func TestReadHeaderFile(t *testing.T) {
	dir := t.TempDir()
	good := npyFile(1, dict("<i4", false, "(2,)"), le32s(1, 2))
	whole := filepath.Join(dir, "whole.npy")
	require.NoError(t, os.WriteFile(whole, good, 0o644))
	f, err := OpenFile(whole)
	require.NoError(t, err)
	want := f.Header
	require.NoError(t, f.Close())
	for name, file := range map[string][]byte{
		"header only": good[:want.Offset],
		"short":       good[:len(good)-1],
		"trailing":    append(append([]byte{}, good...), 0, 0, 0),
		"whole":       good,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".npy")
		require.NoError(t, os.WriteFile(path, file, 0o644))
		h, err := ReadHeaderFile(path)
		require.NoError(t, err, name)
		assert.Equal(t, want, h, name)
	}
	refused := 0
	for _, c := range errorCases() {
		path := filepath.Join(dir, "bad_"+strings.ReplaceAll(c.name, " ", "_")+".npy")
		require.NoError(t, os.WriteFile(path, c.file, 0o644))
		_, openErr := OpenFile(path)
		_, err := ReadHeaderFile(path)
		if err == nil {
			// A flaw in the payload, which the header alone does not show.
			continue
		}
		refused++
		require.Error(t, openErr, c.name)
		assert.Equal(t, openErr.Error(), err.Error(), c.name)
		assert.ErrorIs(t, err, c.is, c.name)
	}
	assert.Greater(t, refused, 10, "the malformed headers")
	_, err = ReadHeaderFile(filepath.Join(dir, "missing.npy"))
	_, want2 := OpenFile(filepath.Join(dir, "missing.npy"))
	assert.Equal(t, want2.Error(), err.Error())
}

// TestFileReadChangingFile: a file that shrinks or grows after OpenFile
// checked its size fails as ReadFile would.
func TestFileReadChangingFile(t *testing.T) {
	dir := t.TempDir()
	good := npyFile(1, dict("<i4", false, "(2,)"), le32s(1, 2))
	path := filepath.Join(dir, "x.npy")
	require.NoError(t, os.WriteFile(path, good, 0o644))
	f, err := OpenFile(path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, int64(len(good)-3)))
	_, err = io.ReadAll(f)
	require.ErrorIs(t, err, ErrFormat)
	assert.Equal(t, "npy: "+path+": header claims shape (2,) of <i4 (8 bytes) but only 5 bytes follow", err.Error())
	f.Close()

	require.NoError(t, os.WriteFile(path, good, 0o644))
	f, err = OpenFile(path)
	require.NoError(t, err)
	fa, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = fa.Write([]byte{9})
	require.NoError(t, err)
	fa.Close()
	_, err = io.ReadAll(f)
	require.ErrorIs(t, err, ErrFormat)
	assert.Equal(t, "npy: "+path+": header claims shape (2,) of <i4 (8 bytes) but the file grew past them while being read", err.Error())
	f.Close()
}

// TestFileReadBools: bools other than 0 and 1 are read as 1, as ReadFile
// reads them.
func TestFileReadBools(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.npy")
	require.NoError(t, os.WriteFile(path, npyFile(1, dict("|b1", false, "(4,)"), []byte{0, 1, 2, 255}), 0o644))
	f, err := OpenFile(path)
	require.NoError(t, err)
	defer f.Close()
	got, err := io.ReadAll(iotest.OneByteReader(f))
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 1, 1, 1}, got)
	want, err := ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want.Data, got)
}

// TestFileReadError: a failing read names the file and keeps its error.
func TestFileReadError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.npy")
	require.NoError(t, os.WriteFile(path, npyFile(1, dict("<i4", false, "(2,)"), le32s(1, 2)), 0o644))
	f, err := OpenFile(path)
	require.NoError(t, err)
	require.NoError(t, f.f.Close()) // reads now fail
	_, err = f.Read(make([]byte, 8))
	require.Error(t, err)
	assert.True(t, errors.Is(err, os.ErrClosed), err.Error())
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "reading the payload")
}

// TestWriteFilePayload: the file is WriteFile's for the same tensor; a
// failing payload or a cancelled context leaves nothing, with errors
// worded as WriteFileContext's.
func TestWriteFilePayload(t *testing.T) {
	dir := t.TempDir()
	x := tensor.MustFromSlice([]int{2, 3}, []int16{1, -2, 3, -4, 5, -6})
	want := filepath.Join(dir, "want.npy")
	require.NoError(t, WriteFile(want, x))
	path := filepath.Join(dir, "got.npy")
	require.NoError(t, WriteFilePayload(context.Background(), path, x.DType, x.Shape, func(w io.Writer) error {
		_, err := w.Write(x.Data)
		return err
	}))
	a, err := os.ReadFile(want)
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, a, b)

	boom := errors.New("boom")
	fail := filepath.Join(dir, "fail.npy")
	err = WriteFilePayload(context.Background(), fail, x.DType, x.Shape, func(w io.Writer) error {
		w.Write(x.Data[:3])
		return boom
	})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, "npy: "+fail+": writing the payload: boom", err.Error())
	err = WriteFilePayload(context.Background(), fail, tensor.BFloat16, []int{1}, func(io.Writer) error { return nil })
	require.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), fail)
	ctx, cancel := context.WithCancel(context.Background())
	err = WriteFilePayload(ctx, fail, x.DType, x.Shape, func(w io.Writer) error {
		cancel()
		_, err := w.Write(x.Data)
		return err
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.ElementsMatch(t, []string{"want.npy", "got.npy"}, entries(t, dir), "nothing left of the failed writes")
}
