//go:build cgo

package gpu

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// streamOptions are the device set-ups CopyFrom and CopyTo must work on:
// unified memory (straight through the mapping) and staged, each with
// tensors of many small chunks. The "unified" ones stage too on a device
// without unified memory (or with GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1).
var streamOptions = map[string]struct {
	Options
	knobs.Knobs
}{
	"unified":        {},
	"unified chunks": {Knobs: knobs.Knobs{ChunkBytes: 64}},
	"staged chunks":  {Options: Options{NoUnifiedMemory: true}, Knobs: knobs.Knobs{ChunkBytes: 64}},
}

// TestTensorCopyFromAndTo reads tensors from readers that hand out a few
// bytes at a time and writes them back: the bytes are the host tensor's,
// through every chunk.
func TestTensorCopyFromAndTo(t *testing.T) {
	for name, opts := range streamOptions {
		t.Run(name, func(t *testing.T) {
			b := openTest(t, opts.Options, opts.Knobs)
			assert.Equal(t, wantUnified(t, b, opts.Options), b.device().UnifiedMemory())
			r := rand.New(rand.NewSource(3))
			for _, shape := range [][]int{{0}, {1}, {3, 5}, {1001}} {
				host, err := tensor.New(tensor.Int32, shape)
				require.NoError(t, err)
				r.Read(host.Data)
				x, err := b.ReadTensor(context.Background(), host.DType, host.Shape, iotest.HalfReader(bytes.NewReader(host.Data)))
				require.NoError(t, err)
				if opts.ChunkBytes != 0 && len(host.Data) > 64 {
					require.Greater(t, len(x.dev.bufs), 1, "several chunks")
				}
				assert.Equal(t, host.Data, download(t, x).Data, "%v", shape)

				var out bytes.Buffer
				n, err := x.CopyTo(context.Background(), &out)
				require.NoError(t, err)
				assert.Equal(t, int64(len(host.Data)), n)
				assert.True(t, bytes.Equal(host.Data, out.Bytes()), "%v", shape)

				next := make([]byte, len(host.Data))
				r.Read(next)
				n, err = x.CopyFrom(context.Background(), iotest.OneByteReader(bytes.NewReader(next)))
				require.NoError(t, err)
				assert.Equal(t, int64(len(next)), n)
				assert.Equal(t, next, download(t, x).Data, "%v", shape)
				require.NoError(t, x.Close())
				_, err = x.CopyFrom(context.Background(), bytes.NewReader(next))
				assert.ErrorIs(t, err, ops.ErrInvalidTensor, "closed")
				_, err = x.CopyTo(context.Background(), io.Discard)
				assert.ErrorIs(t, err, ops.ErrInvalidTensor, "closed")
			}
		})
	}
}

// TestTensorCopyFromPieces reads a tensor larger than copyPiece into one
// chunk: the pieces of a chunk land where they belong.
func TestTensorCopyFromPieces(t *testing.T) {
	b := openTest(t, Options{})
	host, err := tensor.New(tensor.Uint8, []int{copyPiece + 4099})
	require.NoError(t, err)
	rand.New(rand.NewSource(4)).Read(host.Data)
	x, err := b.ReadTensor(context.Background(), host.DType, host.Shape, bytes.NewReader(host.Data))
	require.NoError(t, err)
	defer x.Close()
	require.Len(t, x.dev.bufs, 1)
	var out bytes.Buffer
	_, err = x.CopyTo(context.Background(), &out)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(host.Data, out.Bytes()))
}

// TestTensorCopyFromShortOrFailing: a reader that ends early is an error
// saying how many bytes came; a reader's or writer's own error comes back
// as it is; ReadTensor then releases the tensor it made.
func TestTensorCopyFromShortOrFailing(t *testing.T) {
	for name, opts := range streamOptions {
		t.Run(name, func(t *testing.T) {
			b := openTest(t, opts.Options, opts.Knobs)
			warm, err := b.ReadTensor(context.Background(), tensor.Int16, []int{100}, bytes.NewReader(make([]byte, 200)))
			require.NoError(t, err) // makes the staging buffer, if any
			require.NoError(t, warm.Close())
			b.device().TrimPool()
			held := b.device().Memory().Held
			_, err = b.ReadTensor(context.Background(), tensor.Int16, []int{100}, bytes.NewReader(make([]byte, 150)))
			require.ErrorIs(t, err, io.ErrUnexpectedEOF)
			assert.Contains(t, err.Error(), "the input ends after 150 of the tensor's 200 bytes")
			_, err = b.ReadTensor(context.Background(), tensor.Int16, []int{100}, bytes.NewReader(nil))
			assert.Contains(t, err.Error(), "the input ends after 0 of the tensor's 200 bytes")
			boom := errors.New("boom")
			_, err = b.ReadTensor(context.Background(), tensor.Int16, []int{100}, iotest.ErrReader(boom))
			assert.Equal(t, boom, err)
			assert.Empty(t, b.resident, "no tensor left open")
			b.mu.Lock()
			b.trimPool()
			b.mu.Unlock()
			b.device().TrimPool()
			assert.Equal(t, held, b.device().Memory().Held, "nothing held")

			x, err := b.ReadTensor(context.Background(), tensor.Int16, []int{100}, bytes.NewReader(make([]byte, 200)))
			require.NoError(t, err)
			defer x.Close()
			n, err := x.CopyTo(context.Background(), &failAfter{64, boom})
			assert.Equal(t, boom, err)
			assert.LessOrEqual(t, n, int64(64))
			_, err = b.ReadTensor(context.Background(), tensor.String, []int{1}, bytes.NewReader(nil))
			assert.ErrorIs(t, err, ops.ErrUnsupported)
		})
	}
}

// failAfter takes n bytes in all, then fails with err.
type failAfter struct {
	n   int
	err error
}

func (w *failAfter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, w.err
	}
	w.n -= len(p)
	return len(p), nil
}

// cancelReader cancels its context on its first read.
type cancelReader struct {
	r      io.Reader
	cancel context.CancelFunc
}

func (c cancelReader) Read(p []byte) (int, error) {
	c.cancel()
	return c.r.Read(p)
}

// cancelWriter cancels its context on its first write.
type cancelWriter struct{ cancel context.CancelFunc }

func (c cancelWriter) Write(p []byte) (int, error) {
	c.cancel()
	return len(p), nil
}

// TestTensorCopyHonoursContext: a context done before or during a copy
// stops it at the next piece with ctx's error.
func TestTensorCopyHonoursContext(t *testing.T) {
	for name, opts := range streamOptions {
		t.Run(name, func(t *testing.T) {
			b := openTest(t, opts.Options, opts.Knobs)
			data := make([]byte, 4000)
			done, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := b.ReadTensor(done, tensor.Uint8, []int{4000}, bytes.NewReader(data))
			assert.ErrorIs(t, err, context.Canceled)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			x, err := b.NewTensor(ctx, tensor.Uint8, []int{4000})
			require.NoError(t, err)
			defer x.Close()
			n, err := x.CopyFrom(ctx, cancelReader{bytes.NewReader(data), cancel})
			if len(x.dev.bufs) > 1 {
				assert.ErrorIs(t, err, context.Canceled)
				assert.Less(t, n, int64(len(data)), "stopped early")
			} else {
				assert.NoError(t, err, "one piece: cancelled once it is read")
			}
			ctx, cancel = context.WithCancel(context.Background())
			defer cancel()
			n, err = x.CopyTo(ctx, cancelWriter{cancel})
			if len(x.dev.bufs) > 1 {
				assert.ErrorIs(t, err, context.Canceled)
				assert.Less(t, n, int64(len(data)), "stopped early")
			} else {
				assert.NoError(t, err, "one piece: cancelled once it is written")
			}
		})
	}
}

// TestCheckResident: CheckResident of a plan of shapes alone counts what
// Needs counts for the plan with its payloads, refuses it over the
// device's budget with Execute's error, and a call on tensors read from
// readers, in place, gives cpuref's result.
func TestCheckResident(t *testing.T) {
	for name, opts := range streamOptions {
		t.Run(name, func(t *testing.T) {
			b := openTest(t, opts.Options, opts.Knobs)
			p := fewUpdatesPlan(t, 3<<16)
			full, err := b.Needs(p)
			require.NoError(t, err)
			req := ops.Request{Op: p.Op.Name, Data: &tensor.Tensor{DType: p.Data.DType, Shape: p.Data.Shape},
				Indices: &tensor.Tensor{DType: p.Indices.DType, Shape: p.Indices.Shape},
				Updates: &tensor.Tensor{DType: p.Updates.DType, Shape: p.Updates.Shape}}
			shapes, err := ops.PrepareShapes(req)
			require.NoError(t, err)
			n, err := b.Needs(shapes)
			require.NoError(t, err)
			assert.Equal(t, full, n, "Needs of the shapes alone")

			b.mu.Lock()
			f := b.facts(false)
			pl, err := f.planCall(shapes)
			require.NoError(t, err)
			need := pl.needs().DeviceBytes
			b.mu.Unlock()
			b.budget = need - 1
			err = b.CheckResident(shapes)
			require.ErrorIs(t, err, ops.ErrOutOfMemory)
			assert.Regexp(t, `^ScatterNDUpdate-15: vulkan: needs \d+ MiB of device memory; the device has \d+ MiB free$`, err.Error())
			b.budget = need
			require.NoError(t, b.CheckResident(shapes))

			c := Call{Op: p.Op.Name}
			for _, in := range []struct {
				host *tensor.Tensor
				dst  **Tensor
			}{{p.Data, &c.Data}, {p.Indices, &c.Indices}, {p.Updates, &c.Updates}} {
				*in.dst, err = b.ReadTensor(context.Background(), in.host.DType, in.host.Shape, bytes.NewReader(in.host.Data))
				require.NoError(t, err)
				defer (*in.dst).Close()
			}
			c.Out = c.Data
			require.NoError(t, b.Run(context.Background(), c))
			want, err := tensor.New(p.DType, p.Shape)
			require.NoError(t, err)
			require.NoError(t, cpuref.New().Execute(context.Background(), p, want))
			var out bytes.Buffer
			_, err = c.Out.CopyTo(context.Background(), &out)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(want.Data, out.Bytes()), "the result is cpuref's")

			b.Close()
			assert.ErrorIs(t, b.CheckResident(shapes), ErrClosed)
		})
	}
}
