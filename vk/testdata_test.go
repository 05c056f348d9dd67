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

// TestStructLayouts compiles testdata/layout_check.c, which asserts that the
// structures in gsvk.h match the Khronos headers.
func TestStructLayouts(t *testing.T) {
	cc := tool(t, "cc", "gcc")
	if _, err := os.Stat("/usr/include/vulkan/vulkan.h"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("vulkan/vulkan.h not found; install Debian package libvulkan-dev")
		}
		t.Skip("vulkan/vulkan.h not found; install Debian package libvulkan-dev")
	}
	cmd := exec.Command(cc, "-std=c11", "-fsyntax-only", "-Wall", "-Werror", "testdata/layout_check.c")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}
