//go:build cgo

package vk

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	vulkan "github.com/vulkan-go/vulkan"
)

// openHazardTest opens the default device with validation, like openTest,
// but leaves the validation messages to the test.
func openHazardTest(t *testing.T) *Device {
	t.Helper()
	d, err := Open(Options{Validation: true, PipelineCacheDir: "off"})
	require.NoError(t, err, "a Vulkan device is required; on Debian install mesa-vulkan-drivers (lavapipe) and vulkan-validationlayers")
	t.Cleanup(func() {
		assert.NoError(t, d.Close())
		assert.Empty(t, d.LiveObjects(), "live Vulkan objects after Close")
	})
	return d
}

// recordUnordered records fill commands of value into s with no barrier
// between them or before them, bypassing the sequence's hazard tracking:
// a deliberate hazard for the validation layer to find.
func recordUnordered(t *testing.T, s *Sequence, b *Buffer, values ...uint32) {
	t.Helper()
	require.NoError(t, s.begin())
	for _, v := range values {
		vulkan.CmdFillBuffer(s.cmd, b.handle, 0, vulkan.DeviceSize(b.alloc), v)
		s.commands++
	}
}

func syncHazards(msgs []string) []string {
	var out []string
	for _, m := range msgs {
		if strings.Contains(m, "SYNC-HAZARD") {
			out = append(out, m)
		}
	}
	return out
}

// TestSyncValidationReportsHazard proves that synchronization validation is
// on: two transfer writes to the same buffer with no barrier between them
// are reported as a write-after-write hazard.
func TestSyncValidationReportsHazard(t *testing.T) {
	d := openHazardTest(t)
	require.True(t, d.inst.syncValidation, "synchronization validation is off: %v", d.ValidationMessages())
	b, err := d.NewBuffer(256)
	require.NoError(t, err)
	s, err := d.NewSequence()
	require.NoError(t, err)
	recordUnordered(t, s, b, 1, 2)
	require.NoError(t, s.Submit(testContext(t)))
	hazards := syncHazards(d.ValidationMessages())
	require.NotEmpty(t, hazards, "no hazard reported; messages: %v", d.ValidationMessages())
	assert.Contains(t, hazards[0], "SYNC-HAZARD-WRITE-AFTER-WRITE")
	require.NoError(t, s.Close())
	require.NoError(t, b.Close())
}

// TestSyncValidationSilentWithBarriers records the same two writes through
// the sequence, which orders them, and a copy of the result: no message.
func TestSyncValidationSilentWithBarriers(t *testing.T) {
	d := openTest(t, Options{})
	require.True(t, d.inst.syncValidation)
	b, err := d.NewBuffer(256)
	require.NoError(t, err)
	c, err := d.NewBuffer(256)
	require.NoError(t, err)
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Fill(b, 0, 0, 1))
	require.NoError(t, s.Fill(b, 0, 0, 2))
	require.NoError(t, s.Copy(b, 0, c, 0, 256))
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, []uint32{2, 2, 2, 2}, bytesU32(download(t, c, 0, 16)))
	assert.Empty(t, d.ValidationMessages())
}

// hazardBuffers creates n buffers of words 32-bit words, buffer i holding
// 1000*i + j at word j.
func hazardBuffers(t *testing.T, d *Device, n, words int) []*Buffer {
	t.Helper()
	bufs := make([]*Buffer, n)
	for i := range bufs {
		v := make([]uint32, words)
		for j := range v {
			v[j] = uint32(1000*i + j)
		}
		bufs[i] = upload(t, d, u32bytes(v))
	}
	return bufs
}

func words(v uint32, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestHazardFillsOfDifferentBuffers(t *testing.T) {
	d := openTest(t, Options{})
	b := hazardBuffers(t, d, 2, 16)
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Fill(b[0], 0, 0, 7))
	require.NoError(t, s.Fill(b[1], 0, 0, 8))
	assert.Equal(t, 0, s.Barriers(), "independent fills")
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, words(7, 16), bytesU32(download(t, b[0], 0, 64)))
	assert.Equal(t, words(8, 16), bytesU32(download(t, b[1], 0, 64)))
}

func TestHazardFillThenCopy(t *testing.T) {
	d := openTest(t, Options{})
	b := hazardBuffers(t, d, 2, 16)
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Fill(b[0], 0, 0, 7))
	require.NoError(t, s.Copy(b[0], 0, b[1], 0, 64))
	assert.Equal(t, 1, s.Barriers(), "read after write")
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, words(7, 16), bytesU32(download(t, b[1], 0, 64)))
}

func TestHazardWriteAfterRead(t *testing.T) {
	d := openTest(t, Options{})
	b := hazardBuffers(t, d, 2, 16)
	want := bytesU32(download(t, b[0], 0, 64))
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Copy(b[0], 0, b[1], 0, 64))
	require.NoError(t, s.Fill(b[0], 0, 0, 7))
	assert.Equal(t, 1, s.Barriers(), "write after read")
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, want, bytesU32(download(t, b[1], 0, 64)))
	assert.Equal(t, words(7, 16), bytesU32(download(t, b[0], 0, 64)))
}

func TestHazardWriteAfterWrite(t *testing.T) {
	d := openTest(t, Options{})
	b := hazardBuffers(t, d, 1, 16)
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Fill(b[0], 0, 0, 7))
	require.NoError(t, s.Fill(b[0], 0, 0, 9))
	assert.Equal(t, 1, s.Barriers(), "write after write")
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, words(9, 16), bytesU32(download(t, b[0], 0, 64)))
}

// TestHazardDispatchUses: dispatches that declare disjoint buffers, through
// bindings or uses, are not separated; one that reads what another wrote
// waits for it.
func TestHazardDispatchUses(t *testing.T) {
	d := openTest(t, Options{})
	const n = 64
	b := hazardBuffers(t, d, 6, n)
	in := make([][]uint32, len(b))
	for i := range b {
		in[i] = bytesU32(download(t, b[i], 0, 4*n))
	}
	p := copyPipeline(t, d, 32)
	addr, err := d.NewPipeline(PipelineSpec{SPIRV: addressSPV, PushConstantSize: 24})
	require.NoError(t, err)
	addrPush := func(src, dst *Buffer, add uint32) []byte {
		sa, err := src.Address()
		require.NoError(t, err)
		da, err := dst.Address()
		require.NoError(t, err)
		out := make([]byte, 24)
		binary.LittleEndian.PutUint64(out[0:], sa)
		binary.LittleEndian.PutUint64(out[8:], da)
		binary.LittleEndian.PutUint32(out[16:], n)
		binary.LittleEndian.PutUint32(out[20:], add)
		return out
	}
	s, err := d.NewSequence()
	require.NoError(t, err)
	groups := [3]uint32{2, 1, 1}
	// b0 -> b1 and b2 -> b3 through bindings, b4 -> b5 through addresses.
	require.NoError(t, s.DispatchUses(p, []Binding{{Buffer: b[0]}, {Buffer: b[1]}}, push(n, 1), groups, Uses{}))
	require.NoError(t, s.DispatchUses(p, []Binding{{Buffer: b[2]}, {Buffer: b[3]}}, push(n, 2), groups, Uses{}))
	require.NoError(t, s.DispatchUses(addr, nil, addrPush(b[4], b[5], 3), groups, Uses{Reads: []*Buffer{b[4]}, Writes: []*Buffer{b[5]}}))
	assert.Equal(t, 0, s.Barriers(), "disjoint dispatches")
	// b1 -> b4 reads what the first wrote and writes what the third read.
	require.NoError(t, s.DispatchUses(addr, nil, addrPush(b[1], b[4], 10), groups, Uses{Reads: []*Buffer{b[1]}, Writes: []*Buffer{b[4]}}))
	assert.Equal(t, 1, s.Barriers())
	// A fill of b3 (written before the last barrier) needs none.
	require.NoError(t, s.Fill(b[3], 0, 0, 5))
	assert.Equal(t, 1, s.Barriers())
	// b3 -> b0 through the address kernel: reads the fill's buffer.
	require.NoError(t, s.DispatchUses(addr, nil, addrPush(b[3], b[0], 1), groups, Uses{Reads: []*Buffer{b[3]}, Writes: []*Buffer{b[0]}}))
	assert.Equal(t, 2, s.Barriers())
	require.NoError(t, s.Submit(testContext(t)))

	add := func(v []uint32, k uint32) []uint32 {
		out := make([]uint32, len(v))
		for i := range v {
			out[i] = v[i] + k
		}
		return out
	}
	assert.Equal(t, add(in[0], 1), bytesU32(download(t, b[1], 0, 4*n)))
	assert.Equal(t, words(5, n), bytesU32(download(t, b[3], 0, 4*n)))
	assert.Equal(t, add(in[4], 3), bytesU32(download(t, b[5], 0, 4*n)))
	assert.Equal(t, add(in[0], 11), bytesU32(download(t, b[4], 0, 4*n)))
	assert.Equal(t, words(6, n), bytesU32(download(t, b[0], 0, 4*n)))
}

// TestHazardPlainDispatch: a Dispatch without Uses is separated from
// everything before and after it, as every command once was.
func TestHazardPlainDispatch(t *testing.T) {
	d := openTest(t, Options{})
	const n = 64
	b := hazardBuffers(t, d, 4, n)
	in := bytesU32(download(t, b[0], 0, 4*n))
	p := copyPipeline(t, d, 32)
	s, err := d.NewSequence()
	require.NoError(t, err)
	groups := [3]uint32{2, 1, 1}
	require.NoError(t, s.Dispatch(p, []Binding{{Buffer: b[0]}, {Buffer: b[1]}}, push(n, 1), groups))
	assert.Equal(t, 0, s.Barriers(), "nothing before the first command")
	require.NoError(t, s.Fill(b[2], 0, 0, 3))
	assert.Equal(t, 1, s.Barriers(), "after a plain dispatch")
	require.NoError(t, s.Dispatch(p, []Binding{{Buffer: b[0]}, {Buffer: b[3]}}, push(n, 2), groups))
	assert.Equal(t, 2, s.Barriers(), "before a plain dispatch")
	require.NoError(t, s.Dispatch(p, []Binding{{Buffer: b[1]}, {Buffer: b[2]}}, push(n, 1), groups))
	assert.Equal(t, 3, s.Barriers())
	// An explicit Barrier right after one placed automatically is not
	// recorded again; after a command it is.
	require.NoError(t, s.Barrier())
	assert.Equal(t, 4, s.Barriers())
	require.NoError(t, s.Barrier())
	assert.Equal(t, 4, s.Barriers())
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, 4, s.Len())
	want := make([]uint32, n)
	for i := range want {
		want[i] = in[i] + 2
	}
	assert.Equal(t, want, bytesU32(download(t, b[2], 0, 4*n)))
	assert.Equal(t, want, bytesU32(download(t, b[3], 0, 4*n)))

	// Reset forgets the accesses and the count.
	require.NoError(t, s.Reset())
	assert.Equal(t, 0, s.Barriers())
	require.NoError(t, s.Fill(b[2], 0, 0, 4))
	assert.Equal(t, 0, s.Barriers(), "the first command after Reset")
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, words(4, n), bytesU32(download(t, b[2], 0, 4*n)))
}

func TestHazardDispatchUsesErrors(t *testing.T) {
	d := openTest(t, Options{})
	p := copyPipeline(t, d, 32)
	b := hazardBuffers(t, d, 2, 16)
	s, err := d.NewSequence()
	require.NoError(t, err)
	bind := []Binding{{Buffer: b[0]}, {Buffer: b[1]}}
	assert.Error(t, s.DispatchUses(p, bind, push(16, 1), [3]uint32{1, 1, 1}, Uses{Reads: []*Buffer{nil}}))
	assert.Error(t, s.DispatchUses(p, bind, push(16, 1), [3]uint32{1, 1, 1}, Uses{Writes: []*Buffer{nil}}))
	c, err := d.NewBuffer(64)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	assert.ErrorIs(t, s.DispatchUses(p, bind, push(16, 1), [3]uint32{1, 1, 1}, Uses{Writes: []*Buffer{c}}), ErrClosed)
	assert.Equal(t, 0, s.Len())
}

// TestHazardRandomTransfers records random fills and copies among a few
// buffers and compares the results with a host model; synchronization
// validation checks that every needed barrier is there.
func TestHazardRandomTransfers(t *testing.T) {
	d := openTest(t, Options{})
	const nb, n = 5, 32
	b := hazardBuffers(t, d, nb, n)
	model := make([][]uint32, nb)
	for i := range b {
		model[i] = bytesU32(download(t, b[i], 0, 4*n))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	s, err := d.NewSequence()
	require.NoError(t, err)
	const ops = 300
	for k := 0; k < ops; k++ {
		x := rng.IntN(nb)
		switch rng.IntN(3) {
		case 0:
			off, size := 4*rng.IntN(n/2), 4*(1+rng.IntN(n/2))
			v := uint32(k)
			require.NoError(t, s.Fill(b[x], uint64(off), uint64(size), v))
			for j := off / 4; j < (off+size)/4; j++ {
				model[x][j] = v
			}
		default:
			y := (x + 1 + rng.IntN(nb-1)) % nb
			so, do, size := rng.IntN(n/2), rng.IntN(n/2), 1+rng.IntN(n/2)
			require.NoError(t, s.Copy(b[x], uint64(4*so), b[y], uint64(4*do), uint64(4*size)))
			copy(model[y][do:do+size], model[x][so:so+size])
		}
	}
	t.Logf("%d commands, %d barriers", s.Len(), s.Barriers())
	assert.Less(t, s.Barriers(), ops-1)
	require.NoError(t, s.Submit(testContext(t)))
	for i := range b {
		assert.Equal(t, model[i], bytesU32(download(t, b[i], 0, 4*n)), "buffer %d", i)
	}
}

// TestHazardBarrierCoversLaterStages: a barrier placed for a transfer
// command must also order earlier writes before later compute work, since
// the tracking forgets them once the barrier is recorded. Here the fill of
// b0 is followed by an unrelated fill and copy (b1 -> b2, which needs a
// barrier), and then a dispatch reads b0, which nothing since that barrier
// wrote.
func TestHazardBarrierCoversLaterStages(t *testing.T) {
	d := openTest(t, Options{})
	const n = 64
	b := hazardBuffers(t, d, 4, n)
	p := copyPipeline(t, d, 32)
	s, err := d.NewSequence()
	require.NoError(t, err)
	require.NoError(t, s.Fill(b[0], 0, 0, 7))
	require.NoError(t, s.Fill(b[1], 0, 0, 8))
	require.NoError(t, s.Copy(b[1], 0, b[2], 0, 4*n))
	require.Equal(t, 1, s.Barriers())
	require.NoError(t, s.DispatchUses(p, []Binding{{Buffer: b[0]}, {Buffer: b[3]}}, push(n, 1), [3]uint32{2, 1, 1}, Uses{}))
	assert.Equal(t, 1, s.Barriers(), "b0 was written before the last barrier")
	require.NoError(t, s.Submit(testContext(t)))
	assert.Equal(t, words(8, n), bytesU32(download(t, b[2], 0, 4*n)))
	assert.Equal(t, words(8, n), bytesU32(download(t, b[3], 0, 4*n)))
}
