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

// buildBinary builds the command into a temporary directory and returns
// its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	treetests.Require(t)
	bin := filepath.Join(t.TempDir(), "gpuscatter")
	build := exec.Command("go", "build", "-o", bin, ".")
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	return bin
}

// TestBinary builds the command and runs it end to end: a success, an
// invalid input, a usage error and the examples.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildBinary(t)
	run := func(args ...string) (code int, stdout, stderr string) {
		t.Helper()
		var out, errOut bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			code = ee.ExitCode()
		default:
			t.Fatalf("running %v: %v", args, err)
		}
		return code, out.String(), errOut.String()
	}

	data := writeNPY(t, dir, "data.npy", i32([]int{8}, 1, 2, 3, 4, 5, 6, 7, 8))
	indices := writeNPY(t, dir, "indices.npy", i64([]int{6, 1}, 4, 3, 1, 7, -2, -4))
	updates := writeNPY(t, dir, "updates.npy", i32([]int{6}, 9, 10, 11, 12, 13, 14))
	out := filepath.Join(dir, "out.npy")

	// ScatterNDUpdate-15 text example 1, corrected (specs/README.md errata).
	code, stdout, stderr := run("run", "--op", "scatterndupdate-15", "--data", data, "--indices", indices,
		"--updates", updates, "--out", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout)
	// auto runs on the device or the CPU, whichever the estimates favour,
	// with a notice giving both; without a device, on the CPU with a notice.
	switch {
	case os.Getenv("GPUSCATTER_DEVICE") != "":
		assert.LessOrEqual(t, strings.Count(stderr, "\n"), 1, stderr)
	default:
		assert.Regexp(t, `^gpuscatter: --backend auto: (.*no Vulkan device.*|ran ScatterNDUpdate-15 on the (CPU|device ".*"): estimated \S+ .s on the CPU, \S+ .s on the device)\n$`, stderr)
	}
	requireEqualTensor(t, i32([]int{8}, 1, 11, 3, 10, 14, 6, 13, 12), readNPY(t, out))

	// The same with ScatterNDUpdate-3, which rejects negative indices: exit
	// 1, one line, and the previous output stays.
	prev, err := os.ReadFile(out)
	require.NoError(t, err)
	code, stdout, stderr = run("run", "--op", "ScatterNDUpdate-3", "--data", data, "--indices", indices,
		"--updates", updates, "--out", out, "--backend", "cpu")
	require.Equal(t, exitError, code)
	assert.Empty(t, stdout)
	assert.Equal(t, prefix+"ScatterNDUpdate-3: indices[4,0] = -2 is out of range [0, 7] for axis 0 of data\n", stderr)
	now, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, prev, now)

	code, stdout, stderr = run("run", "--op", "ScatterNDUpdate-3", "--bogus")
	require.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.True(t, strings.HasPrefix(stderr, prefix+"unknown flag --bogus\n"), stderr)
	assert.Contains(t, stderr, "Usage:")

	code, stdout, stderr = run("run", "--op", "ScatterNDUpdate-15", "--data", data, "--indices", indices,
		"--updates", updates, "--out", filepath.Join(dir, "gpu.npy"), "--backend", "gpu")
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	requireEqualTensor(t, i32([]int{8}, 1, 11, 3, 10, 14, 6, 13, 12), readNPY(t, filepath.Join(dir, "gpu.npy")))

	code, _, stderr = run("run", "--op", "ScatterNDUpdate-15", "--data", data, "--indices", indices,
		"--updates", updates, "--out", filepath.Join(dir, "none.npy"), "--backend", "gpu", "--device", "no such device")
	require.Equal(t, exitError, code)
	assert.Contains(t, stderr, "no such device")
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.NoFileExists(t, filepath.Join(dir, "none.npy"))

	code, stdout, stderr = run("examples", "--backend", "cpu")
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stdout, "MISMATCH")

	for _, args := range [][]string{{"help"}, {"--help"}, {"version"}, {"ops"}} {
		code, stdout, _ = run(args...)
		require.Equal(t, exitOK, code, "%v", args)
		assert.NotEmpty(t, stdout, "%v", args)
	}
	code, _, _ = run()
	require.Equal(t, exitUsage, code)
}
