//go:build cgo

package vk

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSequenceUploadAndReadBack: uploads and readbacks travel in the
// sequence's one submission: Start submits without waiting, Wait waits
// once, and Result gives the bytes read back, on mapped and staged
// memory alike.
func TestSequenceUploadAndReadBack(t *testing.T) {
	for _, staged := range []bool{false, true} {
		t.Run(fmt.Sprintf("staged=%v", staged), func(t *testing.T) {
			d, a, seq := sequenceWithBuffer(t, Options{NoUnifiedMemory: staged}, 1024)

			before := d.Counters()
			src := make([]byte, 1000)
			for i := range src {
				src[i] = byte(i * 7)
			}
			require.NoError(t, seq.Upload(a, 8, src))
			src[0] = 99 // Upload copied it already
			require.NoError(t, seq.Fill(a, 1008, 16, 0x01020304))
			rb, err := seq.ReadBack(a, []CopyRegion{{SrcOffset: 1008, DstOffset: 0, Size: 16}, {SrcOffset: 8, DstOffset: 16, Size: 4}, {SrcOffset: 20, DstOffset: 20, Size: 4}})
			require.NoError(t, err)
			assert.EqualValues(t, 24, rb.Size())
			_, err = seq.Result(rb)
			assert.ErrorContains(t, err, "has not completed", "before the submission")

			require.NoError(t, seq.Start(testContext(t)))
			assert.True(t, seq.Pending())
			n := d.Counters().Sub(before)
			assert.Equal(t, Counters{Submits: 1, TransferPieces: 1}, n, "Start waits on no fence")
			_, err = seq.Result(rb)
			assert.Error(t, err, "before Wait")
			require.NoError(t, seq.Wait(testContext(t)))
			require.NoError(t, seq.Wait(testContext(t)), "a second Wait returns at once")
			got, err := seq.Result(rb)
			require.NoError(t, err)
			assert.Equal(t, Counters{Submits: 1, Waits: 1, TransferPieces: 2}, d.Counters().Sub(before))
			want := append(u32bytes([]uint32{0x01020304, 0x01020304, 0x01020304, 0x01020304}), 0, 7, 14, 21, 12*7, 13*7, 14*7, 15*7)
			assert.Equal(t, want, got)
			assert.Equal(t, []byte{0, 7, 14}, download(t, a, 8, 3))

			require.NoError(t, seq.Reset())
			_, err = seq.Result(rb)
			assert.ErrorContains(t, err, "another recording")
			assert.Empty(t, d.ValidationMessages())
		})
	}
}

// TestSequenceAreasGrow: uploads and readbacks larger than the first area
// buffer, and many of them in one recording, all arrive.
func TestSequenceAreasGrow(t *testing.T) {
	d := openTest(t, Options{})
	const n = 3 * hostAreaMin / 2
	a, err := d.NewBuffer(4 * n)
	require.NoError(t, err)
	defer func() { assert.NoError(t, a.Close()) }()
	seq, err := d.NewSequence()
	require.NoError(t, err)
	defer func() { assert.NoError(t, seq.Close()) }()
	for round := 0; round < 2; round++ {
		var rbs []ReadBack
		for k := 0; k < 4; k++ {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(k + i + round)
			}
			require.NoError(t, seq.Upload(a, uint64(k)*n, src))
			rb, err := seq.ReadBack(a, []CopyRegion{{SrcOffset: uint64(k) * n, Size: n}})
			require.NoError(t, err)
			rbs = append(rbs, rb)
		}
		require.NoError(t, seq.Submit(context.Background()))
		for k, rb := range rbs {
			got, err := seq.Result(rb)
			require.NoError(t, err)
			require.Len(t, got, n)
			for i := range got {
				if got[i] != byte(k+i+round) {
					t.Fatalf("round %d readback %d byte %d: %d, want %d", round, k, i, got[i], byte(k+i+round))
				}
			}
		}
		require.NoError(t, seq.Reset())
	}
	assert.Empty(t, d.ValidationMessages())
}

// TestSequenceUploadErrors: bad arguments are refused with an error naming
// them, and nothing is recorded.
func TestSequenceUploadErrors(t *testing.T) {
	_, a, seq := sequenceWithBuffer(t, Options{}, 64)
	assert.ErrorContains(t, seq.Upload(a, 0, nil), "no data")
	assert.ErrorContains(t, seq.Upload(a, 60, make([]byte, 8)), "outside the buffer")
	assert.ErrorContains(t, seq.Upload(nil, 0, make([]byte, 8)), "nil buffer")
	_, err := seq.ReadBack(a, nil)
	assert.ErrorContains(t, err, "no regions")
	_, err = seq.ReadBack(a, []CopyRegion{{SrcOffset: 60, Size: 8}})
	assert.ErrorContains(t, err, "outside the buffer")
	_, err = seq.ReadBack(a, []CopyRegion{{SrcOffset: 0, Size: 8}, {SrcOffset: 8, DstOffset: 4, Size: 8}})
	assert.ErrorContains(t, err, "overlap")
	_, err = seq.Result(ReadBack{})
	assert.ErrorContains(t, err, "empty")
	assert.Zero(t, seq.Len(), "nothing recorded")
}

// TestSequenceAreaKinds: the upload area is upload memory, the readback
// area readback memory (host-cached where the device has it).
func TestSequenceAreaKinds(t *testing.T) {
	_, a, seq := sequenceWithBuffer(t, Options{}, 64)
	require.NoError(t, seq.Upload(a, 0, make([]byte, 64)))
	_, err := seq.ReadBack(a, []CopyRegion{{Size: 64}})
	require.NoError(t, err)
	require.NotNil(t, seq.uploads.cur)
	require.NotNil(t, seq.readbacks.cur)
	assert.Equal(t, kindUpload, seq.uploads.cur.kind)
	assert.Equal(t, kindReadback, seq.readbacks.cur.kind)
}

// sequenceWithBuffer opens a device with opts and returns it with a
// buffer of size bytes and a sequence, both closed when the test ends.
func sequenceWithBuffer(t *testing.T, opts Options, size uint64) (*Device, *Buffer, *Sequence) {
	t.Helper()
	d := openTest(t, opts)
	a, err := d.NewBuffer(size)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, a.Close()) })
	seq, err := d.NewSequence()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, seq.Close()) })
	return d, a, seq
}
