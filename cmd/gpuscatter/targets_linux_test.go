package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/npy"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// binRun is one run of the built binary.
type binRun struct {
	code           int
	stdout, stderr string
}

// runBinary runs bin with args, env added to the environment (with
// XDG_CACHE_HOME in a temporary folder by default), and, when
// asUser, as the unprivileged user nobody (uid and gid 65534, through
// setpriv). It fails the test when the binary does not end in a minute.
func runBinary(t *testing.T, bin string, env []string, asUser bool, args ...string) binRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := bin
	if asUser {
		args = append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, args...)
		name = "setpriv"
	}
	cmd := exec.CommandContext(ctx, name, args...)
	// The pipeline cache goes to the test's folder unless env says
	// otherwise (the last of two values counts).
	cache := t.TempDir()
	require.NoError(t, os.Chmod(cache, 0o777))
	cmd.Env = append(append(os.Environ(), "XDG_CACHE_HOME="+cache), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := binRun{stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%v did not end in a minute; stderr: %s", args, r.stderr)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running %v: %v", args, err)
	}
	return r
}

// needRoot skips a test that switches to another user.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("switching to the user nobody needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv is not installed")
	}
}

// openToAll makes dir and the temporary folder above it reachable by
// every user, for a run as nobody.
func openToAll(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
}

// TestBinaryOutputTargets runs 'gpuscatter run --out' into each kind of
// target docs/cli.md describes: a symlink, a FIFO, /dev/stdout, /dev/null,
// a directory, a missing folder, a read-only file and a folder the user
// may not write (these two as the user nobody).
func TestBinaryOutputTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	openToAll(t, filepath.Dir(bin))
	dir := t.TempDir()
	openToAll(t, dir)
	data := writeNPY(t, dir, "data.npy", i32([]int{4}, 1, 2, 3, 4))
	indices := writeNPY(t, dir, "indices.npy", i64([]int{1}, 2))
	updates := writeNPY(t, dir, "updates.npy", i32([]int{1}, 9))
	for _, p := range []string{data, indices, updates} {
		require.NoError(t, os.Chmod(p, 0o644))
	}
	args := func(out string) []string {
		return []string{"run", "--backend", "cpu", "--op", "ScatterElements-18", "--data", data,
			"--indices", indices, "--updates", updates, "--out", out}
	}
	want := i32([]int{4}, 1, 2, 9, 4)
	var wantBytes bytes.Buffer
	require.NoError(t, npy.Write(&wantBytes, want))

	t.Run("symlink followed, link kept", func(t *testing.T) {
		sub := t.TempDir()
		real := filepath.Join(sub, "real.npy")
		require.NoError(t, os.WriteFile(real, []byte("old"), 0o640))
		link := filepath.Join(sub, "link.npy")
		require.NoError(t, os.Symlink("real.npy", link))
		r := runBinary(t, bin, nil, false, args(link)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		got, err := os.ReadFile(real)
		require.NoError(t, err)
		assert.Equal(t, wantBytes.Bytes(), got, "the link's target holds the result")
		fi, err := os.Lstat(link)
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode()&fs.ModeSymlink, "the link stays a link")
		fi, err = os.Stat(real)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o640), fi.Mode().Perm(), "the replaced file keeps its mode")
	})

	t.Run("FIFO written directly", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "out.npy")
		require.NoError(t, syscall.Mkfifo(fifo, 0o600))
		got := make(chan []byte, 1)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				got <- nil
				return
			}
			b, _ := io.ReadAll(f)
			f.Close()
			got <- b
		}()
		r := runBinary(t, bin, nil, false, args(fifo)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Equal(t, wantBytes.Bytes(), <-got, "the reader gets the whole file")
		fi, err := os.Lstat(fifo)
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode()&fs.ModeNamedPipe, "still a FIFO")
	})

	t.Run("FIFO without a reader, then SIGTERM", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "out.npy")
		require.NoError(t, syscall.Mkfifo(fifo, 0o600))
		var stderr bytes.Buffer
		cmd := exec.Command(bin, args(fifo)...)
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		requireEndsOnSIGTERM(t, cmd, &stderr)
	})

	t.Run("dev stdout and dev null", func(t *testing.T) {
		r := runBinary(t, bin, nil, false, args("/dev/stdout")...)
		require.Equal(t, exitOK, r.code, r.stderr)
		assert.Equal(t, wantBytes.String(), r.stdout, "the pipe on stdout gets the file")
		r = runBinary(t, bin, nil, false, args(os.DevNull)...)
		require.Equal(t, exitOK, r.code, r.stderr)
		fi, err := os.Stat(os.DevNull)
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode()&fs.ModeCharDevice, "/dev/null is still a device")
	})

	// Errors come before any input is read: the missing --data is not
	// what the line names.
	early := func(out string) []string {
		a := args(out)
		a[6] = filepath.Join(dir, "no-such-data.npy")
		return a
	}
	t.Run("directory", func(t *testing.T) {
		r := runBinary(t, bin, nil, false, early(t.TempDir())...)
		assert.Equal(t, exitError, r.code)
		assert.Regexp(t, `^gpuscatter: --out \S+: .*is a directory\n$`, r.stderr)
	})
	t.Run("missing folder", func(t *testing.T) {
		r := runBinary(t, bin, nil, false, early(filepath.Join(dir, "missing", "out.npy"))...)
		assert.Equal(t, exitError, r.code)
		assert.Regexp(t, `^gpuscatter: --out \S+: .*no such file or directory\n$`, r.stderr)
	})

	t.Run("as nobody", func(t *testing.T) {
		needRoot(t)
		sub := t.TempDir()
		openToAll(t, sub)
		require.NoError(t, os.Chown(sub, 65534, 65534))
		ro := filepath.Join(sub, "ro.npy")
		require.NoError(t, os.WriteFile(ro, []byte("keep"), 0o444))
		require.NoError(t, os.Chown(ro, 65534, 65534))
		r := runBinary(t, bin, nil, true, args(ro)...)
		assert.Equal(t, exitError, r.code, "a 0444 file is not replaced, even by its owner")
		assert.Regexp(t, `^gpuscatter: --out \S+: .*permission denied\n$`, r.stderr)
		got, err := os.ReadFile(ro)
		require.NoError(t, err)
		assert.Equal(t, "keep", string(got))

		rootDir := t.TempDir() // root's, mode 0755: nobody may not create files there
		openToAll(t, rootDir)
		r = runBinary(t, bin, nil, true, early(filepath.Join(rootDir, "out.npy"))...)
		assert.Equal(t, exitError, r.code)
		assert.Regexp(t, `^gpuscatter: --out \S+: .*permission denied\n$`, r.stderr)
		entries, err := os.ReadDir(rootDir)
		require.NoError(t, err)
		assert.Empty(t, entries)

		// A new file in nobody's own folder is fine.
		r = runBinary(t, bin, nil, true, args(filepath.Join(sub, "mine.npy"))...)
		require.Equal(t, exitOK, r.code, r.stderr)
	})

	t.Run("check --json into a missing folder fails first", func(t *testing.T) {
		start := time.Now()
		r := runBinary(t, bin, nil, false, "check", "--quick", "--json", filepath.Join(dir, "missing", "x.json"))
		assert.Equal(t, exitError, r.code)
		assert.Regexp(t, `^gpuscatter: --json \S+: .*no such file or directory\n$`, r.stderr)
		assert.Empty(t, r.stdout, "nothing ran")
		assert.Less(t, time.Since(start), 10*time.Second)
	})
}

// TestBinaryPipelineCacheUnwritable: a cache folder that cannot be
// created (no home folder, a cache folder that is a file, a read-only
// one) costs one warning line, the whole of stderr, saying that the
// per-user temporary folder takes its place: the driver's own shader
// cache (Mesa's, which would print a line of its own) is disabled there;
// a cache folder in a missing folder is created, without a word. The run
// succeeds and writes its output, every time.
func TestBinaryPipelineCacheUnwritable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	openToAll(t, filepath.Dir(bin))
	dir := t.TempDir()
	openToAll(t, dir)
	data := writeNPY(t, dir, "data.npy", f32([]int{4}, 1, 2, 3, 4))
	indices := writeNPY(t, dir, "indices.npy", i64([]int{1}, 2))
	updates := writeNPY(t, dir, "updates.npy", f32([]int{1}, 9))
	for _, p := range []string{data, indices, updates} {
		require.NoError(t, os.Chmod(p, 0o644))
	}
	outDir := t.TempDir()
	openToAll(t, outDir)
	require.NoError(t, os.Chmod(outDir, 0o777))
	readOnly := t.TempDir()
	openToAll(t, readOnly)
	missing := filepath.Join(t.TempDir(), "no", "such", "cache")
	// The temporary folder, where the per-user one is made.
	tmp := t.TempDir()
	openToAll(t, tmp)
	require.NoError(t, os.Chmod(tmp, 0o1777))
	cases := []struct {
		name   string
		env    []string
		asUser bool
		warns  bool
	}{
		// As nobody where the test runs as root, who could create
		// /nonexistent (nobody's home folder, where Mesa's cache goes).
		{"no home", []string{"HOME=/nonexistent", "XDG_CACHE_HOME="}, os.Geteuid() == 0, true},
		{"cache home is a file", []string{"XDG_CACHE_HOME=" + data}, false, true},
		{"read-only cache home", []string{"XDG_CACHE_HOME=" + readOnly}, true, true},
		{"cache home in a missing folder", []string{"XDG_CACHE_HOME=" + missing}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.asUser {
				needRoot(t)
			}
			if c.name == "no home" {
				_, err := os.Stat("/nonexistent")
				require.ErrorIs(t, err, fs.ErrNotExist, "the test needs /nonexistent not to exist")
			}
			// Twice: the second run finds the same unwritable cache.
			for i := range 2 {
				out := filepath.Join(outDir, fmt.Sprintf("%s-%d.npy", strings.ReplaceAll(c.name, " ", "-"), i))
				r := runBinary(t, bin, append(c.env, "TMPDIR="+tmp), c.asUser, "run", "--backend", "gpu", "--op", "ScatterElements-18",
					"--data", data, "--indices", indices, "--updates", updates, "--out", out)
				require.Equal(t, exitOK, r.code, r.stderr)
				if c.warns {
					assert.Regexp(t, `^gpuscatter: warning: cache folder: the user cache folder is unusable \([^\n]*\); using `+
						regexp.QuoteMeta(tmp)+`/gpuscatter-\d+\n$`, r.stderr)
				} else {
					assert.Empty(t, r.stderr)
				}
				got, err := npy.ReadFile(out)
				require.NoError(t, err)
				assert.Equal(t, []float32{1, 2, 9, 4}, tensor.View[float32](got))
			}
		})
	}
}
