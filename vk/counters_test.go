//go:build cgo

package vk

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCounters: with unified memory an Upload or Download is one mapped
// copy, no submission and no wait; with staging it is one piece per
// staging chunk, each one submission and one wait. The device decides:
// staged=false opens a device without unified memory too (a discrete GPU,
// or GPUSCATTER_TEST_NO_UNIFIED_MEMORY=1).
func TestCounters(t *testing.T) {
	for _, staged := range []bool{false, true} {
		t.Run(fmt.Sprintf("staged=%v", staged), func(t *testing.T) {
			d := openTest(t, Options{NoUnifiedMemory: staged})
			if staged {
				require.False(t, d.UnifiedMemory(), "NoUnifiedMemory stages")
			}
			unified := d.UnifiedMemory()
			b, err := d.NewBuffer(64)
			require.NoError(t, err)
			defer func() { assert.NoError(t, b.Close()) }()
			src := bytes.Repeat([]byte{7}, 64)
			before := d.Counters()
			require.NoError(t, b.Upload(0, src))
			dst := make([]byte, 64)
			require.NoError(t, b.Download(0, dst))
			assert.Equal(t, src, dst)
			got := d.Counters().Sub(before)
			want := Counters{TransferPieces: 2}
			if !unified {
				want = Counters{Submits: 2, Waits: 2, TransferPieces: 2}
			}
			assert.Equal(t, want, got)

			if !unified {
				old := stagingChunk
				stagingChunk = 16
				defer func() { stagingChunk = old }()
				before = d.Counters()
				require.NoError(t, b.Upload(0, src))
				assert.Equal(t, Counters{Submits: 4, Waits: 4, TransferPieces: 4}, d.Counters().Sub(before), "four chunks of 16 bytes")
			}
		})
	}
}
