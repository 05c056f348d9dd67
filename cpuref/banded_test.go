package cpuref

import "testing"

// TestBandLayout: the assembly's offset of a list's updates is
// bandListLen's entries.
func TestBandLayout(t *testing.T) {
	if !haveBands {
		t.Skip("no AVX2: the banded fold does not run here")
	}
	if got := bandLayout(); got != 4*bandListLen {
		t.Fatalf("bandSplitFold's updates at %d bytes, banded.go's at %d", got, 4*bandListLen)
	}
}
