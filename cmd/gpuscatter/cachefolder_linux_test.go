//go:build cgo

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/atomicfile"
	"github.com/gpuscatter/gpuscatter/internal/hostilefile"
	"github.com/gpuscatter/gpuscatter/vk"
)

// TestBinaryHostileCacheFolder runs the binary on cache folders that used
// to hang it, crash it or make every run measure the device again:
//
//   - no cache folder (neither HOME nor XDG_CACHE_HOME), with a FIFO in
//     the place of the figures file of the per-user temporary folder that
//     takes its place: devices and run warn once, say where the cache
//     goes, and a later run finds the figures kept there;
//   - a FIFO, a link to /dev/zero, a 1 GiB sparse file or a directory in
//     the place of the pipeline cache or its index: run --backend auto on
//     a tiny input and devices finish as without the file, with one
//     warning line naming it, and the file is replaced (a directory
//     excepted);
//   - SIGTERM in the middle of a run on such a folder ends it within a
//     second, leaving no output file.
//
// The device is measured once, by the first devices; every other run
// finds the figures kept.
func TestBinaryHostileCacheFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	devs, err := vk.Devices()
	require.NoError(t, err)
	require.NotEmpty(t, devs)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.npy")
	runArgs := []string{"run", "--op", "ScatterND-18", "--data", writeNPY(t, dir, "data.npy", f32([]int{4}, 0, 0, 0, 0)),
		"--indices", writeNPY(t, dir, "indices.npy", i64([]int{1, 1}, 2)),
		"--updates", writeNPY(t, dir, "updates.npy", f32([]int{1}, 7)), "--out", out}
	checkOut := func(t *testing.T) {
		t.Helper()
		requireEqualTensor(t, f32([]int{4}, 0, 0, 7, 0), readNPY(t, out))
		require.NoError(t, os.Remove(out))
	}
	// The environment: no HOME, XDG_CACHE_HOME or TMPDIR of the caller's.
	// Mesa's shader cache stays where it is without them (the home folder
	// of the password database), so that the kernels the first devices
	// measures are likely compiled already.
	var base []string
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "HOME", "XDG_CACHE_HOME", "TMPDIR":
		default:
			base = append(base, kv)
		}
	}
	tmp := t.TempDir()
	base = append(base, "TMPDIR="+tmp)
	run := func(t *testing.T, env []string, args ...string) (code int, stderr string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(append([]string(nil), base...), env...)
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case ctx.Err() != nil:
			t.Fatalf("%v did not end in 30 s; stderr: %s", args, errOut.String())
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			t.Fatalf("running %v: %v", args, err)
		}
		return code, errOut.String()
	}
	warnings := func(stderr string) []string {
		var ws []string
		for _, l := range strings.SplitAfter(stderr, "\n") {
			if strings.HasPrefix(l, "gpuscatter: warning: ") {
				ws = append(ws, l)
			}
		}
		return ws
	}

	// No cache folder: the per-user temporary folder, whose figures file
	// is a FIFO.
	fallback := filepath.Join(tmp, "gpuscatter-"+strconv.Itoa(os.Geteuid()))
	require.NoError(t, os.Mkdir(fallback, 0o700))
	figures := make([]string, len(devs))
	for i, d := range devs {
		figures[i] = filepath.Join(fallback, fmt.Sprintf("measured-%04x-%04x-%08x-%s.json", d.VendorID, d.DeviceID, d.DriverVersion, d.PipelineCacheUUID))
		require.NoError(t, syscall.Mkfifo(figures[i], 0o644))
	}
	noCache := "gpuscatter: warning: cache folder: no user cache folder (neither XDG_CACHE_HOME nor HOME is set); using " + fallback + "\n"
	t0 := time.Now()
	code, stderr := run(t, nil, "devices")
	t.Logf("devices measured in %v", time.Since(t0))
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, []string{noCache}, warnings(stderr), "one warning, not the FIFO's as well")
	kept, err := os.ReadFile(figures[0])
	require.NoError(t, err, "the FIFO was replaced by the figures")
	fi, err := os.Stat(figures[0])
	require.NoError(t, err)
	for range 2 {
		code, stderr = run(t, nil, runArgs...)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, []string{noCache}, warnings(stderr))
		checkOut(t)
	}
	again, err := os.ReadFile(figures[0])
	require.NoError(t, err)
	assert.Equal(t, string(kept), string(again), "the runs found the figures kept, and measured nothing")
	fi2, err := os.Stat(figures[0])
	require.NoError(t, err)
	assert.Equal(t, fi.ModTime(), fi2.ModTime())

	// cacheWith returns an XDG_CACHE_HOME holding the cache files made
	// above, with what the file name ends with made by make instead.
	names, err := os.ReadDir(fallback)
	require.NoError(t, err)
	cacheWith := func(t *testing.T, suffix string, make func(testing.TB, string)) (xdg, path string) {
		xdg = t.TempDir()
		gs := filepath.Join(xdg, "gpuscatter")
		require.NoError(t, os.Mkdir(gs, 0o755))
		for _, e := range names {
			b, err := os.ReadFile(filepath.Join(fallback, e.Name()))
			require.NoError(t, err)
			p := filepath.Join(gs, e.Name())
			if strings.HasSuffix(e.Name(), suffix) && strings.Contains(e.Name(), "-"+devs[0].PipelineCacheUUID+".") {
				path = p
				make(t, p)
				continue
			}
			require.NoError(t, os.WriteFile(p, b, 0o644))
		}
		require.NotEmpty(t, path, "a file ending %s", suffix)
		return xdg, path
	}

	for _, suffix := range []string{".bin", ".pipelines"} {
		for _, h := range hostilefile.Files {
			t.Run(suffix+" "+h.Name, func(t *testing.T) {
				xdg, path := cacheWith(t, suffix, h.Make)
				env := []string{"XDG_CACHE_HOME=" + xdg}
				for _, args := range [][]string{runArgs, {"devices"}} {
					code, stderr := run(t, env, args...)
					require.Equal(t, exitOK, code, stderr)
					ws := warnings(stderr)
					if h.Stays || args[0] == "run" {
						require.Len(t, ws, 1, stderr)
						assert.Contains(t, ws[0], "gpuscatter: warning: pipeline cache file: "+path+": "+h.Says)
					} else {
						assert.Empty(t, ws, "replaced by the run before")
					}
					if args[0] == "run" {
						checkOut(t)
					}
				}
				fi, err := os.Lstat(path)
				require.NoError(t, err)
				assert.Equal(t, h.Stays, !fi.Mode().IsRegular(), "%v", fi.Mode())
			})
		}
	}

	// SIGTERM while the output is being written (atomicfile.StallEnv
	// stops the write there) of a run whose cache files are FIFOs.
	t.Run("SIGTERM", func(t *testing.T) {
		xdg, cache := cacheWith(t, ".bin", hostilefile.Files[0].Make)
		index := strings.TrimSuffix(cache, ".bin") + ".pipelines"
		require.NoError(t, os.Remove(index))
		require.NoError(t, syscall.Mkfifo(index, 0o644))
		marker := filepath.Join(t.TempDir(), "writing")
		cmd := exec.Command(bin, runArgs...)
		cmd.Env = append(append([]string(nil), base...), "XDG_CACHE_HOME="+xdg, atomicfile.StallEnv+"="+marker)
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		require.NoError(t, cmd.Start())
		waited := false
		defer func() {
			if !waited {
				cmd.Process.Kill()
				cmd.Wait()
			}
		}()
		waitFor(t, marker, 30*time.Second)
		t0 := time.Now()
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		err := cmd.Wait()
		waited = true
		took := time.Since(t0)
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, errOut.String())
		assert.Equal(t, 128+int(syscall.SIGTERM), ee.ExitCode(), errOut.String())
		assert.Less(t, took, time.Second)
		assert.True(t, strings.HasSuffix(errOut.String(), "gpuscatter: interrupted by SIGTERM\n"), errOut.String())
		_, err = os.Stat(out)
		assert.ErrorIs(t, err, os.ErrNotExist, "no output file")
	})
}
