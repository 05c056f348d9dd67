//go:build cgo

package vk

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	r.Read(b)
	return b
}

func testRoundTrip(t *testing.T, d *Device) {
	r := rand.New(rand.NewSource(1))
	for _, size := range []uint64{1, 3, 4, 5, 17, 1023, 4096 + 7, 100_003} {
		b, err := d.NewBuffer(size)
		require.NoError(t, err)
		assert.Equal(t, size, b.Size())

		whole := randomBytes(r, int(size))
		require.NoError(t, b.Upload(0, whole))
		assert.Equal(t, whole, download(t, b, 0, size), "size %d", size)

		// Unaligned partial writes and reads.
		if size > 3 {
			off := uint64(1)
			part := randomBytes(r, int(size-off-1))
			require.NoError(t, b.Upload(off, part))
			copy(whole[off:], part)
			assert.Equal(t, whole, download(t, b, 0, size), "size %d", size)
			assert.Equal(t, whole[3:size-1], download(t, b, 3, size-4), "size %d", size)
		}
		// Empty transfers at the end are fine; anything past it is not.
		require.NoError(t, b.Upload(size, nil))
		assert.Error(t, b.Upload(size, []byte{1}))
		assert.Error(t, b.Download(size-1, make([]byte, 2)))
		assert.Error(t, b.Upload(^uint64(0), []byte{1}))
		require.NoError(t, b.Close())
	}
}

// TestBufferRoundTrip: transfers on the default device as it is opened:
// mapped where its memory is unified, else staged (a discrete GPU, or
// GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1).
func TestBufferRoundTrip(t *testing.T) {
	d := openTest(t, Options{})
	require.Equal(t, wantUnified(t, d, Options{}), d.UnifiedMemory())
	b, err := d.NewBuffer(16)
	require.NoError(t, err)
	assert.Equal(t, d.UnifiedMemory(), b.Mapped())
	require.NoError(t, b.Close())
	testRoundTrip(t, d)
}

func TestBufferRoundTripStaged(t *testing.T) {
	old := stagingChunk
	stagingChunk = 1000 // several chunks for the larger sizes
	t.Cleanup(func() { stagingChunk = old })
	d := openTest(t, Options{NoUnifiedMemory: true})
	assert.False(t, d.UnifiedMemory())
	assert.False(t, d.Capabilities().UnifiedMemory)
	b, err := d.NewBuffer(16)
	require.NoError(t, err)
	assert.False(t, b.Mapped())
	testRoundTrip(t, d)
}

func TestBufferStagedWithCompute(t *testing.T) {
	// A staged upload feeds a dispatch whose result is read back staged.
	d := openTest(t, Options{NoUnifiedMemory: true})
	n := 300
	in := make([]uint32, n)
	for i := range in {
		in[i] = uint32(i * i)
	}
	src := upload(t, d, u32bytes(in))
	dst, err := d.NewBuffer(uint64(4 * n))
	require.NoError(t, err)
	s, err := d.NewSequence()
	require.NoError(t, err)
	p := copyPipeline(t, d, 64)
	require.NoError(t, s.Dispatch(p, []Binding{{Buffer: src}, {Buffer: dst}}, push(uint32(n), 1), [3]uint32{5, 1, 1}))
	require.NoError(t, s.Submit(testContext(t)))
	out := bytesU32(download(t, dst, 0, uint64(4*n)))
	for i := range out {
		require.Equal(t, in[i]+1, out[i], "element %d", i)
	}
}

func TestBufferErrors(t *testing.T) {
	d := openTest(t, Options{})
	_, err := d.NewBuffer(0)
	assert.Error(t, err)
	_, err = d.NewBuffer(d.Limits().MaxAllocationBytes + 1)
	assert.ErrorIs(t, err, ErrUnsupported)

	b, err := d.NewBuffer(8)
	require.NoError(t, err)
	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "Close is idempotent")
	assert.ErrorIs(t, b.Upload(0, []byte{1}), ErrClosed)
	assert.ErrorIs(t, b.Download(0, []byte{1}), ErrClosed)
}

func TestBufferPool(t *testing.T) {
	d := openTest(t, Options{})
	a, err := d.Acquire(1000)
	require.NoError(t, err)
	b, err := d.Acquire(1000)
	require.NoError(t, err)
	assert.NotSame(t, a, b)
	c, err := d.Acquire(2000)
	require.NoError(t, err)
	require.NoError(t, a.Upload(0, []byte{42}))

	require.NoError(t, a.Release())
	require.NoError(t, a.Release(), "double Release is harmless")
	assert.Equal(t, 1, d.PooledBuffers())
	again, err := d.Acquire(1000)
	require.NoError(t, err)
	assert.Same(t, a, again, "a released buffer of the same size is reused")
	assert.Equal(t, 0, d.PooledBuffers())

	// Without unified memory the upload above went through the staging
	// ring, which keeps its upload buffer until Close: one more VkBuffer,
	// never in the pool.
	staging := 0
	if !d.UnifiedMemory() {
		staging = 1
	}
	require.NoError(t, again.Release())
	require.NoError(t, b.Release())
	require.NoError(t, c.Release())
	assert.Equal(t, 3, d.PooledBuffers())
	assert.Equal(t, 3+staging, d.LiveObjects()["VkBuffer"])
	assert.Equal(t, 3, d.TrimPool())
	assert.Equal(t, 0, d.PooledBuffers())
	assert.Equal(t, staging, d.LiveObjects()["VkBuffer"])

	// Release of a buffer from NewBuffer closes it.
	plain, err := d.NewBuffer(64)
	require.NoError(t, err)
	require.NoError(t, plain.Release())
	assert.Equal(t, 0, d.PooledBuffers())
	assert.Equal(t, staging, d.LiveObjects()["VkBuffer"])

	// Pooled buffers that are still idle at Close are destroyed by it.
	x, err := d.Acquire(512)
	require.NoError(t, err)
	require.NoError(t, x.Release())
}

func TestLimitsForcedSmall(t *testing.T) {
	d := openTest(t, Options{MaxBindingBytes: 256, MaxAllocationBytes: 4096})
	l := d.Limits()
	assert.Equal(t, uint64(256), l.MaxBindingBytes)
	assert.Equal(t, uint64(4096), l.MaxAllocationBytes)
	assert.NotZero(t, l.MinStorageBufferOffsetAlignment)
	assert.NotZero(t, l.MaxWorkGroupCount[0])

	_, err := d.NewBuffer(4097)
	require.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), "4096")

	in := make([]uint32, 1024) // 4096 bytes: the whole allocation limit
	for i := range in {
		in[i] = uint32(i)
	}
	src := upload(t, d, u32bytes(in))
	dst, err := d.NewBuffer(4096)
	require.NoError(t, err)
	p := copyPipeline(t, d, 64)
	s, err := d.NewSequence()
	require.NoError(t, err)

	// The whole buffer is more than one binding may cover.
	err = s.Dispatch(p, []Binding{{Buffer: src}, {Buffer: dst}}, push(64, 0), [3]uint32{1, 1, 1})
	require.ErrorIs(t, err, ErrUnsupported)
	err = s.Dispatch(p, []Binding{{Buffer: src, Range: 512}, {Buffer: dst, Range: 256}}, push(64, 0), [3]uint32{1, 1, 1})
	require.ErrorIs(t, err, ErrUnsupported)

	// Split the copy into 256-byte (64-element) bindings.
	for off := uint64(0); off < 4096; off += 256 {
		require.NoError(t, s.Dispatch(p, []Binding{{Buffer: src, Offset: off, Range: 256}, {Buffer: dst, Offset: off, Range: 256}},
			push(64, 1000), [3]uint32{1, 1, 1}))
	}
	require.NoError(t, s.Submit(testContext(t)))
	out := bytesU32(download(t, dst, 0, 4096))
	for i := range out {
		require.Equal(t, in[i]+1000, out[i], "element %d", i)
	}

	// Requests above the device limits are clamped to them.
	dev, d2 := defaultInfo(t, Options{MaxBindingBytes: 1 << 62, MaxAllocationBytes: 1 << 62})
	assert.Equal(t, dev.Capabilities.MaxStorageBufferRange, d2.Limits().MaxBindingBytes)
	assert.Equal(t, dev.Capabilities.MaxMemoryAllocationSize, d2.Limits().MaxAllocationBytes)
}

// TestMemoryCountsBuffers: Memory counts every buffer's allocation while it
// lives, idle pooled ones as Idle, and none once they are destroyed.
func TestMemoryCountsBuffers(t *testing.T) {
	d := openTest(t, Options{})
	m0 := d.Memory()
	require.NotZero(t, m0.Heap)
	b, err := d.Acquire(1 << 20)
	require.NoError(t, err)
	m1 := d.Memory()
	assert.GreaterOrEqual(t, m1.Held-m0.Held, uint64(1<<20))
	assert.Equal(t, m0.Idle, m1.Idle)
	assert.Equal(t, m0.Free()-(m1.Held-m0.Held), m1.Free())
	require.NoError(t, b.Release())
	m2 := d.Memory()
	assert.Equal(t, m1.Held, m2.Held)
	assert.Equal(t, m1.Held-m0.Held, m2.Idle-m0.Idle, "the idle buffer counts as Idle")
	assert.Equal(t, m0.Free(), m2.Free(), "idle buffers count as free")
	d.TrimPool()
	assert.Equal(t, m0.Held-m0.Idle, d.Memory().Held)
}

// TestMemoryHeldIsBuffers: Held counts the buffers of NewBuffer and
// Acquire and nothing of the host-visible memory transfers go through:
// the staging ring of Upload and Download without unified memory, and a
// Sequence's recorded uploads and readbacks, which come and go with
// transfers and sequences (closing a sequence once made a call's Held
// fall by its 64 KiB areas) and on a discrete GPU are host memory, not
// Heap. Both memory models; the staging objects are alive meanwhile.
func TestMemoryHeldIsBuffers(t *testing.T) {
	for _, staged := range []bool{false, true} {
		t.Run(fmt.Sprintf("staged=%v", staged), func(t *testing.T) {
			d := openTest(t, Options{NoUnifiedMemory: staged})
			b, err := d.NewBuffer(1000)
			require.NoError(t, err)
			held := d.Memory().Held
			require.NotZero(t, held, "the buffer")
			mems := d.LiveObjects()["VkDeviceMemory"]

			data := make([]byte, 1000)
			for i := range data {
				data[i] = byte(i)
			}
			require.NoError(t, b.Upload(0, data))
			assert.Equal(t, data, download(t, b, 0, 1000))
			ring := 0
			if !d.UnifiedMemory() {
				ring = 2 // the ring's upload and readback buffers
			}
			assert.Equal(t, mems+ring, d.LiveObjects()["VkDeviceMemory"])
			assert.Equal(t, held, d.Memory().Held, "Upload and Download")

			seq, err := d.NewSequence()
			require.NoError(t, err)
			require.NoError(t, seq.Upload(b, 0, data[:100]))
			rb, err := seq.ReadBack(b, []CopyRegion{{Size: 100}})
			require.NoError(t, err)
			require.NoError(t, seq.Submit(testContext(t)))
			got, err := seq.Result(rb)
			require.NoError(t, err)
			assert.Equal(t, data[:100], got)
			assert.Equal(t, mems+ring+2, d.LiveObjects()["VkDeviceMemory"], "the sequence's upload and readback areas")
			assert.Equal(t, held, d.Memory().Held, "a sequence's areas")
			require.NoError(t, seq.Close())
			assert.Equal(t, held, d.Memory().Held, "closing the sequence")
			require.NoError(t, b.Close())
			assert.Zero(t, d.Memory().Held)
		})
	}
}

// TestMemoryFree: without VK_EXT_memory_budget the free memory is the heap
// less what the device holds outside its pool; with it, the budget less
// the heap's usage; idle pooled buffers count as free either way.
func TestMemoryFree(t *testing.T) {
	assert.Equal(t, uint64(70), Memory{Heap: 100, Held: 50, Idle: 20}.Free())
	assert.Equal(t, uint64(0), Memory{Heap: 100, Held: 150}.Free())
	assert.Equal(t, uint64(50), Memory{Heap: 100, Budget: 80, Usage: 40, Held: 30, Idle: 10}.Free())
	assert.Equal(t, uint64(0), Memory{Heap: 100, Budget: 80, Usage: 90}.Free())
}

// TestBufferStagedPieces: staged transfers of whole numbers of pieces,
// and of one piece and a byte, at an odd offset, round-trip exactly; each
// piece is one submission, one wait and one transfer piece.
func TestBufferStagedPieces(t *testing.T) {
	const chunk = 1000
	old := stagingChunk
	stagingChunk = chunk
	t.Cleanup(func() { stagingChunk = old })
	d := openTest(t, Options{NoUnifiedMemory: true})
	require.False(t, d.UnifiedMemory())
	const off = 3
	b, err := d.NewBuffer(off + 7*chunk + 5)
	require.NoError(t, err)
	r := rand.New(rand.NewSource(2))
	for _, n := range []uint64{1, chunk - 1, chunk, chunk + 1, 2 * chunk, 3 * chunk, 7 * chunk, 2*chunk + 17, 7*chunk + 5} {
		pieces := (n + chunk - 1) / chunk
		want := Counters{Submits: pieces, Waits: pieces, TransferPieces: pieces}
		src := randomBytes(r, int(n))
		before := d.Counters()
		require.NoError(t, b.Upload(off, src))
		assert.Equal(t, want, d.Counters().Sub(before), "upload of %d bytes", n)
		dst := make([]byte, n)
		before = d.Counters()
		require.NoError(t, b.Download(off, dst))
		assert.Equal(t, want, d.Counters().Sub(before), "download of %d bytes", n)
		require.Equal(t, src, dst, "%d bytes", n)
		// A download at another odd offset sees the same bytes.
		if n > 2 {
			part := make([]byte, n-2)
			require.NoError(t, b.Download(off+1, part))
			require.Equal(t, src[1:n-1], part, "%d bytes at offset %d", n-2, off+1)
		}
	}
	require.NoError(t, b.Close())
	// Each slot's staging buffers are one chunk, and none is in use.
	for _, s := range d.xfer.slots {
		assert.False(t, s.pending)
		for _, sb := range []*Buffer{s.up, s.down} {
			if sb != nil {
				assert.Equal(t, uint64(chunk), sb.size)
			}
		}
	}
}

// TestBufferStagedGrows: the ring's staging buffers are as small as the
// transfers so far need, and grow when a larger one comes.
func TestBufferStagedGrows(t *testing.T) {
	old := stagingChunk
	stagingChunk = 4096
	t.Cleanup(func() { stagingChunk = old })
	d := openTest(t, Options{NoUnifiedMemory: true})
	b, err := d.NewBuffer(10000)
	require.NoError(t, err)
	require.NoError(t, b.Upload(0, make([]byte, 10)))
	assert.Equal(t, uint64(10), d.xfer.slots[0].up.size)
	assert.Nil(t, d.xfer.slots[0].down, "no readback buffer before a download")
	assert.Nil(t, d.xfer.slots[1].up, "one piece takes one slot")
	src := randomBytes(rand.New(rand.NewSource(3)), 10000)
	require.NoError(t, b.Upload(0, src))
	assert.Equal(t, src, download(t, b, 0, 10000))
	for _, s := range d.xfer.slots {
		assert.Equal(t, uint64(4096), s.up.size)
		assert.Equal(t, uint64(4096), s.down.size)
	}
}

// TestAllocationLimit: at the device's limit on live memory allocations
// (lowered through Options.MaxAllocations) a new buffer first takes the
// place of idle pooled ones, and fails with a clear ErrOutOfMemory when
// there are none, naming the limit; closing a buffer makes room again.
func TestAllocationLimit(t *testing.T) {
	d := openTest(t, Options{MaxAllocations: 6})
	require.Equal(t, uint32(6), d.Limits().MaxAllocations)
	var bufs []*Buffer
	var err error
	for i := 0; i < 10; i++ {
		var b *Buffer
		if b, err = d.NewBuffer(256); err != nil {
			break
		}
		bufs = append(bufs, b)
	}
	require.Error(t, err, "more buffers than the limit allows")
	assert.ErrorIs(t, err, ErrOutOfMemory)
	assert.Contains(t, err.Error(), "maxMemoryAllocationCount 6")
	assert.Equal(t, 6, d.LiveObjects()["VkDeviceMemory"], "allocations alive at the limit")
	require.NotEmpty(t, bufs)

	// A closed buffer makes room for a new one.
	require.NoError(t, bufs[0].Close())
	b, err := d.NewBuffer(512)
	require.NoError(t, err)
	require.NoError(t, b.Close())

	// Idle pooled buffers give way to a new allocation.
	for _, b := range bufs[1:] {
		require.NoError(t, b.Close())
	}
	var pooled []*Buffer
	for i := 0; i < 3; i++ {
		p, err := d.Acquire(1024)
		require.NoError(t, err)
		pooled = append(pooled, p)
	}
	for _, p := range pooled {
		require.NoError(t, p.Release())
	}
	require.Equal(t, 3, d.PooledBuffers())
	var fresh []*Buffer
	for {
		b, err := d.NewBuffer(2048)
		if err != nil {
			assert.ErrorIs(t, err, ErrOutOfMemory)
			break
		}
		fresh = append(fresh, b)
		require.Less(t, len(fresh), 10, "the limit holds")
	}
	assert.Zero(t, d.PooledBuffers(), "the idle buffers were destroyed to make room")
	assert.Equal(t, 6, d.LiveObjects()["VkDeviceMemory"])
}
