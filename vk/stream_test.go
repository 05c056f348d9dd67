//go:build cgo

package vk

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testStreams moves bytes between readers and writers and buffers with
// UploadFrom and DownloadTo, whole and in parts, through readers that
// return a few bytes at a time, and checks short input and failing
// writers.
func testStreams(t *testing.T, d *Device) {
	r := rand.New(rand.NewSource(2))
	for _, size := range []uint64{1, 5, 1000, 4096 + 7, 100_003} {
		b, err := d.NewBuffer(size)
		require.NoError(t, err)
		whole := randomBytes(r, int(size))
		n, err := b.UploadFrom(0, size, iotest.HalfReader(bytes.NewReader(whole)))
		require.NoError(t, err)
		assert.Equal(t, size, n)
		assert.Equal(t, whole, download(t, b, 0, size), "size %d", size)

		var out bytes.Buffer
		n, err = b.DownloadTo(0, size, &out)
		require.NoError(t, err)
		assert.Equal(t, size, n)
		assert.Equal(t, whole, out.Bytes(), "size %d", size)

		if size > 3 {
			part := randomBytes(r, int(size-3))
			n, err = b.UploadFrom(1, size-3, bytes.NewReader(part))
			require.NoError(t, err)
			assert.Equal(t, size-3, n)
			copy(whole[1:], part)
			out.Reset()
			_, err = b.DownloadTo(2, size-2, &out)
			require.NoError(t, err)
			assert.Equal(t, whole[2:], out.Bytes(), "size %d", size)

			// A reader that ends early: what it gave is in the buffer.
			short := randomBytes(r, int(size-2))
			n, err = b.UploadFrom(0, size, bytes.NewReader(short))
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
			assert.Equal(t, size-2, n)
			copy(whole, short)
			assert.Equal(t, whole, download(t, b, 0, size), "size %d", size)
		}
		if size > 1000 {
			// Ending where a staged piece ends is still short.
			n, err = b.UploadFrom(0, size, bytes.NewReader(whole[:1000]))
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
			assert.Equal(t, uint64(1000), n)
		}
		n, err = b.UploadFrom(0, size, bytes.NewReader(nil))
		assert.ErrorIs(t, err, io.EOF)
		assert.Zero(t, n)

		// A failing reader or writer stops the transfer with its error.
		boom := errors.New("boom")
		_, err = b.UploadFrom(0, size, iotest.ErrReader(boom))
		assert.ErrorIs(t, err, boom)
		_, err = b.DownloadTo(0, size, failWriter{boom})
		assert.ErrorIs(t, err, boom)

		_, err = b.UploadFrom(size, 1, bytes.NewReader([]byte{1}))
		assert.Error(t, err, "past the end")
		_, err = b.DownloadTo(1, size, io.Discard)
		assert.Error(t, err, "past the end")
		n, err = b.UploadFrom(size, 0, nil)
		assert.NoError(t, err, "an empty transfer at the end")
		assert.Zero(t, n)
		require.NoError(t, b.Close())
		_, err = b.UploadFrom(0, 1, bytes.NewReader([]byte{1}))
		assert.ErrorIs(t, err, ErrClosed)
		_, err = b.DownloadTo(0, 1, io.Discard)
		assert.ErrorIs(t, err, ErrClosed)
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

func TestBufferStreams(t *testing.T) {
	d := openTest(t, Options{})
	require.True(t, d.UnifiedMemory())
	testStreams(t, d)
}

func TestBufferStreamsStaged(t *testing.T) {
	old := stagingChunk
	stagingChunk = 1000 // several pieces for the larger sizes
	t.Cleanup(func() { stagingChunk = old })
	d := openTest(t, Options{NoUnifiedMemory: true})
	require.False(t, d.UnifiedMemory())
	testStreams(t, d)
	// The staging buffer stays one chunk, however large the transfer.
	assert.LessOrEqual(t, d.xfer.staging.size, uint64(1000))
}
