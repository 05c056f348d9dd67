package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/internal/treetests"
)

// TestBuildWithoutCgo: with CGO_ENABLED=0 the module builds and vets, and
// the command runs on the CPU: --backend gpu, check and devices say in one
// line that the build has no Vulkan, --backend auto falls back to the CPU
// with its notice.
func TestBuildWithoutCgo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module without cgo")
	}
	treetests.Require(t)
	env := append(os.Environ(), "CGO_ENABLED=0")
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = "../..", env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "CGO_ENABLED=0 go %s:\n%s", strings.Join(args, " "), out)
	}
	bin := filepath.Join(t.TempDir(), "gpuscatter")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = env
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	run := func(args ...string) (code int, stdout, stderr string) {
		t.Helper()
		var o, e bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return code, o.String(), e.String()
	}
	const noVulkan = "this build has no Vulkan"
	dir := t.TempDir()
	data := writeNPY(t, dir, "data.npy", i32([]int{8}, 1, 2, 3, 4, 5, 6, 7, 8))
	indices := writeNPY(t, dir, "indices.npy", i64([]int{6, 1}, 4, 3, 1, 7, -2, -4))
	updates := writeNPY(t, dir, "updates.npy", i32([]int{6}, 9, 10, 11, 12, 13, 14))
	outPath := filepath.Join(dir, "out.npy")
	flags := []string{"run", "--op", "ScatterNDUpdate-15", "--data", data, "--indices", indices, "--updates", updates, "--out", outPath}

	code, _, stderr := run(append(flags, "--backend", "gpu")...)
	assert.Equal(t, exitError, code)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, "gpuscatter: --backend gpu: "+noVulkan)
	assert.NoFileExists(t, outPath)

	code, _, stderr = run(flags...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "--backend auto: ")
	assert.Contains(t, stderr, noVulkan)
	requireEqualTensor(t, i32([]int{8}, 1, 11, 3, 10, 14, 6, 13, 12), readNPY(t, outPath))

	for _, cmd := range []string{"check", "devices"} {
		code, _, stderr = run(cmd)
		assert.Equal(t, exitError, code, cmd)
		assert.Equal(t, "gpuscatter: "+errNoGPUBackend.Error()+"\n", stderr, cmd)
	}
	_, stdout, _ := run("version")
	assert.Contains(t, stdout, "gpu: not in this build")
}
