package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/atomicfile"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestInterruptedRunLeavesNothing starts 'gpuscatter run' with a 16 MiB
// output, stops it in the middle of writing the output (the write pauses
// after its first bytes through atomicfile.StallEnv) with each signal, and
// checks that the directory holds the inputs and nothing else, or the
// previous output unchanged. SIGKILL included: the output is an unnamed
// file until it is complete.
func TestInterruptedRunLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	const n = 4 << 20
	data, err := tensor.New(tensor.Float32, []int{n})
	require.NoError(t, err)
	inputs := []string{
		writeNPY(t, dir, "data.npy", data),
		writeNPY(t, dir, "indices.npy", i64([]int{2, 1}, 0, n-1)),
		writeNPY(t, dir, "updates.npy", f32([]int{2}, 1, 2)),
	}
	listing := func() []string {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	onlyInputs := listing()
	out := filepath.Join(dir, "out.npy")
	prev := []byte("the previous output")

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGKILL} {
		for _, replace := range []bool{false, true} {
			name := signalNames[sig]
			if sig == syscall.SIGKILL {
				name = "SIGKILL"
			}
			t.Run(name+map[bool]string{false: " new", true: " replace"}[replace], func(t *testing.T) {
				os.Remove(out)
				if replace {
					require.NoError(t, os.WriteFile(out, prev, 0o644))
				}
				before := listing()
				marker := filepath.Join(t.TempDir(), "writing")
				var stderr bytes.Buffer
				cmd := exec.Command(bin, "run", "--op", "ScatterND-11", "--data", inputs[0], "--indices", inputs[1],
					"--updates", inputs[2], "--out", out, "--backend", "cpu")
				cmd.Env = append(os.Environ(), atomicfile.StallEnv+"="+marker)
				cmd.Stderr = &stderr
				require.NoError(t, cmd.Start())
				killed := false
				defer func() {
					if !killed {
						cmd.Process.Kill()
						cmd.Wait()
					}
				}()
				waitFor(t, marker, 30*time.Second)
				assert.True(t, writesInto(t, cmd.Process.Pid, dir), "the run holds a file open in the output directory")
				assert.Equal(t, before, listing(), "the unfinished output has no name")

				require.NoError(t, cmd.Process.Signal(sig))
				err := cmd.Wait()
				killed = true
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee)
				if sig == syscall.SIGKILL {
					ws := ee.Sys().(syscall.WaitStatus)
					assert.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "%v", ws)
				} else {
					assert.Equal(t, 128+int(sig), ee.ExitCode())
					assert.Equal(t, "gpuscatter: interrupted by "+signalNames[sig]+"\n", stderr.String())
				}
				assert.Equal(t, before, listing())
				if replace {
					got, err := os.ReadFile(out)
					require.NoError(t, err)
					assert.Equal(t, prev, got)
				} else {
					assert.Equal(t, onlyInputs, listing())
				}
			})
		}
	}

	// Undisturbed, the same run writes the output.
	os.Remove(out)
	cmd := exec.Command(bin, "run", "--op", "ScatterND-11", "--data", inputs[0], "--indices", inputs[1],
		"--updates", inputs[2], "--out", out, "--backend", "cpu")
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	got := readNPY(t, out)
	assert.Equal(t, []int{n}, got.Shape)
	assert.ElementsMatch(t, slices.Concat(onlyInputs, []string{"out.npy"}), listing())
}

// waitFor waits until path exists.
func waitFor(t *testing.T, path string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		} else if !errors.Is(err, os.ErrNotExist) {
			require.NoError(t, err)
		}
		require.True(t, time.Now().Before(deadline), "the run did not reach the write within %v", limit)
		time.Sleep(5 * time.Millisecond)
	}
}

// writesInto reports whether process pid has a file in dir open, named or
// not (an unnamed file shows in /proc as "dir/#inode (deleted)").
func writesInto(t *testing.T, pid int, dir string) bool {
	fds := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(fds)
	require.NoError(t, err)
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(fds, e.Name()))
		if err == nil && strings.HasPrefix(target, dir+"/") && !strings.HasSuffix(target, ".npy") {
			return true
		}
	}
	return false
}
