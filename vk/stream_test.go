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
	require.Equal(t, wantUnified(t, d, Options{}), d.UnifiedMemory())
	testStreams(t, d)
}

func TestBufferStreamsStaged(t *testing.T) {
	old := stagingChunk
	stagingChunk = 1000 // several pieces for the larger sizes
	t.Cleanup(func() { stagingChunk = old })
	d := openTest(t, Options{NoUnifiedMemory: true})
	require.False(t, d.UnifiedMemory())
	testStreams(t, d)
	// The staging buffers stay one chunk, however large the transfer.
	for _, s := range d.xfer.slots {
		for _, b := range []*Buffer{s.up, s.down} {
			if b != nil {
				assert.LessOrEqual(t, b.size, uint64(1000))
			}
		}
	}
}

// failingReader gives what it is asked for until its failth Read, which
// returns part bytes and err.
type failingReader struct {
	src   []byte
	reads int
	fail  int
	part  int
	err   error
}

func (r *failingReader) Read(p []byte) (int, error) {
	r.reads++
	n := len(p)
	if r.reads == r.fail {
		n = r.part
	}
	n = copy(p[:n], r.src)
	r.src = r.src[n:]
	if r.reads == r.fail {
		return n, r.err
	}
	return n, nil
}

// failingWriter takes what it is given until its failth Write, which
// takes part bytes and returns err.
type failingWriter struct {
	bytes.Buffer
	writes int
	fail   int
	part   int
	err    error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes == w.fail {
		w.Buffer.Write(p[:w.part])
		return w.part, w.err
	}
	return w.Buffer.Write(p)
}

// TestStreamsStagedFailures: a reader that fails on the third piece and a
// writer that fails on the second stop a staged transfer of seven pieces
// with their error and the bytes done so far; every submitted piece has
// completed by then, each counted once, and the ring works afterwards.
func TestStreamsStagedFailures(t *testing.T) {
	const chunk = 1000
	old := stagingChunk
	stagingChunk = chunk
	t.Cleanup(func() { stagingChunk = old })
	d := openTest(t, Options{NoUnifiedMemory: true})
	const off, n = 5, 7 * chunk
	b, err := d.NewBuffer(off + n)
	require.NoError(t, err)
	defer func() { assert.NoError(t, b.Close()) }()
	r := rand.New(rand.NewSource(4))
	first := randomBytes(r, n)
	require.NoError(t, b.Upload(off, first))

	boom := errors.New("boom")
	second := randomBytes(r, n)
	before := d.Counters()
	done, err := b.UploadFrom(off, n, &failingReader{src: second, fail: 3, part: 10, err: boom})
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, uint64(2*chunk+10), done)
	assert.Equal(t, Counters{Submits: 3, Waits: 3, TransferPieces: 3}, d.Counters().Sub(before))
	for _, s := range d.xfer.slots {
		assert.False(t, s.pending, "a slot left pending")
	}
	// The bytes read are in the buffer; the rest is as before.
	want := append(append([]byte(nil), second[:done]...), first[done:]...)
	assert.Equal(t, want, download(t, b, off, n))

	before = d.Counters()
	w := &failingWriter{fail: 2, part: 5, err: boom}
	done, err = b.DownloadTo(off, n, w)
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, uint64(chunk+5), done)
	assert.Equal(t, want[:done], w.Bytes())
	got := d.Counters().Sub(before)
	// The pieces submitted ahead are waited for, though not written.
	ahead := uint64(min(stagingSlots+1, 7))
	assert.Equal(t, Counters{Submits: ahead, Waits: ahead, TransferPieces: ahead}, got)
	for _, s := range d.xfer.slots {
		assert.False(t, s.pending, "a slot left pending")
	}

	// The ring is whole afterwards.
	var out bytes.Buffer
	done, err = b.DownloadTo(off, n, &out)
	require.NoError(t, err)
	assert.Equal(t, uint64(n), done)
	assert.Equal(t, want, out.Bytes())
	done, err = b.UploadFrom(off, n, bytes.NewReader(first))
	require.NoError(t, err)
	assert.Equal(t, uint64(n), done)
	assert.Equal(t, first, download(t, b, off, n))
}
