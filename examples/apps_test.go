package examples_test

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

// TestExampleShadersUpToDate recompiles the example applications'
// shaders (*/shaders/*.comp) as compile_shaders.sh does and compares each
// with the committed .spv that the programs embed (regenerate with go
// generate ./examples/...).
func TestExampleShadersUpToDate(t *testing.T) {
	glslc, err := exec.LookPath("glslc")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("glslc not found; install Debian package glslc")
		}
		t.Skip("glslc not found; install Debian package glslc")
	}
	sources, err := filepath.Glob("*/shaders/*.comp")
	require.NoError(t, err)
	require.NotEmpty(t, sources)
	dir := t.TempDir()
	for _, src := range sources {
		spv := strings.TrimSuffix(src, ".comp") + ".spv"
		t.Run(spv, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(spv, "/", "_"))
			msg, err := exec.Command(glslc, "--target-env=vulkan1.1", "-O", "-o", out, src).CombinedOutput()
			require.NoError(t, err, "%s: %s", src, msg)
			fresh, err := os.ReadFile(out)
			require.NoError(t, err)
			committed, err := os.ReadFile(spv)
			require.NoError(t, err, "missing %s; run go generate ./examples/...", spv)
			assert.True(t, bytes.Equal(fresh, committed), "%s is stale; run go generate ./examples/...", spv)
		})
	}
}
