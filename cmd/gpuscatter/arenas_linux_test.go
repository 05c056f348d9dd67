//go:build linux && cgo

package main

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArenasCapped: the binary caps glibc's malloc arenas when, and only
// when, it starts under an address-space limit. The child is this test
// binary run again under ulimit -v.
func TestArenasCapped(t *testing.T) {
	if os.Getenv("GPUSCATTER_ARENAS_CHILD") == "1" {
		if !arenasCapped() {
			t.Fatal("under ulimit -v the arenas are not capped")
		}
		return
	}
	assert.False(t, arenasCapped(), "no address-space limit: glibc's defaults stay")
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command("sh", "-c", `ulimit -v 8000000 && exec "$0" -test.run '^TestArenasCapped$' -test.v`, exe)
	cmd.Env = append(os.Environ(), "GPUSCATTER_ARENAS_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "--- PASS: TestArenasCapped")
}
