//go:build cgo

package gpu

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/internal/knobs"
)

func TestCopyTimeMeasuresADeviceCopy(t *testing.T) {
	b := openTest(t, Options{}, knobs.Knobs{MaxAllocationBytes: 1 << 20})
	d, err := b.copyTime(context.Background(), 3<<20+5, 3) // several chunks, one partial
	require.NoError(t, err)
	assert.Positive(t, d)
	d, err = b.copyTime(context.Background(), 0, 3)
	require.NoError(t, err)
	assert.Zero(t, d)
	require.NoError(t, b.Close())
	_, err = b.copyTime(context.Background(), 16, 1)
	require.Error(t, err)
}
