package hostmem

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestMapHuge maps sizes around whole huge pages: each mapping starts on a
// huge page, is rounded up to whole ones, reads as zeros, can be written
// to its last byte, and goes away with Unmap. Where the kernel gives no
// transparent huge pages the answer must be ErrNoHugePages.
func TestMapHuge(t *testing.T) {
	mode := ""
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil {
		mode = string(b)
	}
	usable := runtime.GOOS == "linux" && (strings.Contains(mode, "[always]") || strings.Contains(mode, "[madvise]"))
	for _, n := range []int{1, HugePageSize - 1, HugePageSize, HugePageSize + 1, 5 * HugePageSize / 2} {
		b, err := MapHuge(n)
		if !usable {
			require.ErrorIs(t, err, ErrNoHugePages, "THP setting %q", mode)
			continue
		}
		require.NoError(t, err, "%d bytes", n)
		want := (n + HugePageSize - 1) / HugePageSize * HugePageSize
		require.Len(t, b, want, "%d bytes", n)
		require.Equal(t, want, cap(b))
		require.Zero(t, uintptr(unsafe.Pointer(&b[0]))%HugePageSize, "start of %d bytes", n)
		for _, i := range []int{0, n - 1, len(b) - 1} {
			require.Zero(t, b[i], "byte %d of %d", i, n)
		}
		b[0], b[n-1], b[len(b)-1] = 7, 7, 7
		require.NoError(t, Unmap(b[:n]), "%d bytes", n)
	}
}
