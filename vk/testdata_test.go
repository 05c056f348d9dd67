//go:build cgo

package vk

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/internal/treetests"
)

// tool finds an external program; a missing one fails the test under CI
// (CI=true), where it is installed, and skips it elsewhere.
func tool(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found; install Debian package %s", name, pkg)
		}
		t.Skipf("%s not found; install Debian package %s", name, pkg)
	}
	return path
}

// TestShadersUpToDate recompiles every testdata/*.comp and compares the
// result with the committed .spv (regenerate with go generate ./vk).
func TestShadersUpToDate(t *testing.T) {
	treetests.Require(t)
	glslc := tool(t, "glslc", "glslc")
	sources, err := filepath.Glob("testdata/*.comp")
	require.NoError(t, err)
	require.NotEmpty(t, sources)
	dir := t.TempDir()
	for _, src := range sources {
		src := src
		name := strings.TrimSuffix(filepath.Base(src), ".comp") + ".spv"
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(dir, name)
			cmd := exec.Command(glslc, "--target-env=vulkan1.1", "-O", "-o", out, src)
			msg, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s: %s", src, msg)
			fresh, err := os.ReadFile(out)
			require.NoError(t, err)
			committed, err := os.ReadFile(filepath.Join("testdata", name))
			require.NoError(t, err, "missing %s; run go generate ./vk", name)
			assert.True(t, bytes.Equal(fresh, committed), "testdata/%s is stale; run go generate ./vk", name)
		})
	}
}

// TestHeaderLayouts compiles the testdata/*layout_check.c files, which
// assert that the structures and constants of this package's C headers
// (gsvk.h, gsaddr.h, gspipe.h, gscall.h, gsadopt.h) match the Khronos headers.
func TestHeaderLayouts(t *testing.T) {
	treetests.Require(t)
	cc := tool(t, "cc", "gcc")
	if _, err := os.Stat("/usr/include/vulkan/vulkan.h"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("vulkan/vulkan.h not found; install Debian package libvulkan-dev")
		}
		t.Skip("vulkan/vulkan.h not found; install Debian package libvulkan-dev")
	}
	for _, file := range []string{"layout_check.c", "address_layout_check.c", "pipeline_layout_check.c", "call_layout_check.c", "adopt_layout_check.c"} {
		t.Run(file, func(t *testing.T) {
			cmd := exec.Command(cc, "-std=c11", "-fsyntax-only", "-Wall", "-Werror", "testdata/"+file)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
		})
	}
}
