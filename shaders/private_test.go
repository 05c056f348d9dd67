package shaders

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWithPrivateWords: only the workgroup-memory scatter takes more
// workgroup memory, within PrivateWords..MaxPrivateWords, and its spec
// constant, SharedBytes and Name follow; PrivateCapacity grows with the
// device's workgroup memory within those bounds and leaves the kernels'
// other variables their bytes.
func TestWithPrivateWords(t *testing.T) {
	var private, other Variant
	for _, v := range All() {
		switch {
		case v.Key.Family == Scatter && v.Key.Private && private.Name == "":
			private = v
		case v.Key.Family == Scatter && !v.Key.Private && v.Key.Reduction != RedNone && other.Name == "":
			other = v
		}
	}
	require.NotEmpty(t, private.Name)
	require.NotEmpty(t, other.Name)
	w, err := private.WithPrivateWords(8192)
	require.NoError(t, err)
	assert.Equal(t, uint32(8192), w.SpecConstants[PrivateWordsConstant])
	assert.Equal(t, private.SharedBytes+4*(8192-PrivateWords), w.SharedBytes)
	assert.Equal(t, private.Name+":words=8192", w.Name)
	assert.Equal(t, uint32(PrivateWords), private.SpecConstants[PrivateWordsConstant], "the variant itself is unchanged")
	same, err := private.WithPrivateWords(PrivateWords)
	require.NoError(t, err)
	assert.Equal(t, private, same)
	for _, words := range []uint32{0, PrivateWords - 1, MaxPrivateWords + 1} {
		_, err := private.WithPrivateWords(words)
		assert.Error(t, err, "%d words", words)
	}
	_, err = other.WithPrivateWords(4096)
	assert.ErrorContains(t, err, other.Name)
	_, err = w.WithPrivateWords(4096)
	assert.Error(t, err, "a variant already specialised")

	assert.Equal(t, uint64(PrivateWords), PrivateCapacity(0))
	assert.Equal(t, uint64(PrivateWords), PrivateCapacity(4*PrivateWords))
	assert.Equal(t, uint64(MaxPrivateWords), PrivateCapacity(1<<30))
	last := uint64(0)
	for shared := uint64(16 << 10); shared <= 256<<10; shared += 1 << 10 {
		c := PrivateCapacity(shared)
		assert.GreaterOrEqual(t, c, last, "%d bytes", shared)
		assert.Zero(t, c%256, "%d bytes", shared)
		assert.LessOrEqual(t, uint64(private.SharedBytes)+4*(c-PrivateWords), shared, "%d bytes", shared)
		last = c
	}
}
