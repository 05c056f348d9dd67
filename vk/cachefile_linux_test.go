//go:build cgo

package vk

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/internal/hostilefile"
)

// within runs f and fails the test if it does not return within limit:
// a cache file that blocks an open must fail the test, not hang it.
func within(t *testing.T, limit time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("did not return within %v", limit)
	}
}

// TestReadCacheFile: a regular file, or a link to one, is read; anything
// else, or a file over the limit, is refused without waiting or reading,
// and a missing file is fs.ErrNotExist.
func TestReadCacheFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	require.NoError(t, os.WriteFile(good, []byte("0123456789"), 0o644))
	require.NoError(t, os.Symlink(good, filepath.Join(dir, "link")))
	for _, name := range []string{"good", "link"} {
		b, err := readCacheFile(filepath.Join(dir, name), 10)
		require.NoError(t, err, name)
		assert.Equal(t, "0123456789", string(b))
	}
	_, err := readCacheFile(good, 9)
	assert.EqualError(t, err, good+": 10 bytes, more than the 9 bytes such a file holds")
	_, err = readCacheFile(filepath.Join(dir, "missing"), 10)
	assert.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, os.Symlink("missing", filepath.Join(dir, "dangling")))
	_, err = readCacheFile(filepath.Join(dir, "dangling"), 10)
	assert.ErrorIs(t, err, os.ErrNotExist)
	for _, h := range hostilefile.Files {
		path := filepath.Join(dir, strings.NewReplacer(" ", "-", "/", "-").Replace(h.Name))
		h.Make(t, path)
		within(t, 5*time.Second, func() {
			_, err := readCacheFile(path, 1<<20)
			require.Error(t, err, h.Name)
			assert.Contains(t, err.Error(), path+": "+h.Says)
			assert.Equal(t, !h.Stays, replaceable(err), h.Name)
			// The next write replaces it with a regular file, or
			// says why not.
			err = writeCacheFile(path, []byte("new"))
			if h.Stays {
				assert.ErrorContains(t, err, "a directory")
				return
			}
			require.NoError(t, err, h.Name)
			b, err := readCacheFile(path, 10)
			require.NoError(t, err, h.Name)
			assert.Equal(t, "new", string(b))
		})
	}
	_, err = os.Stat("/dev/zero")
	assert.NoError(t, err, "the link was replaced, not followed")
}

// TestResolveCacheDir: without a user cache folder, or with one that
// cannot be created, the cache goes to the per-user temporary folder with
// one warning naming it; a temporary folder of another user, or a link
// there, is not used.
func TestResolveCacheDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	require.NoError(t, os.Unsetenv("HOME"))
	require.NoError(t, os.Unsetenv("XDG_CACHE_HOME"))
	want := filepath.Join(tmp, "gpuscatter-"+strconv.Itoa(os.Geteuid()))

	dir, warning := resolveCacheDir("")
	assert.Equal(t, want, dir)
	require.ErrorIs(t, warning, ErrCacheFolder)
	assert.Equal(t, "vk: cache folder: no user cache folder (neither XDG_CACHE_HOME nor HOME is set); using "+want, warning.Error())
	fi, err := os.Lstat(want)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	t.Setenv("XDG_CACHE_HOME", "relative")
	dir, warning = resolveCacheDir("")
	assert.Equal(t, want, dir)
	assert.EqualError(t, warning, "vk: cache folder: no user cache folder (path in $XDG_CACHE_HOME is relative); using "+want)

	file := filepath.Join(tmp, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	t.Setenv("XDG_CACHE_HOME", file)
	dir, warning = resolveCacheDir("")
	assert.Equal(t, want, dir)
	assert.ErrorContains(t, warning, "the user cache folder is unusable (mkdir "+file+": not a directory); using "+want)

	for _, opt := range []string{"off", file} {
		dir, warning = resolveCacheDir(opt)
		assert.Equal(t, map[string]string{"off": "", file: file}[opt], dir)
		assert.NoError(t, warning, "a folder the caller names is used as it is")
	}

	require.NoError(t, os.Chmod(want, 0o777))
	dir, warning = resolveCacheDir("")
	assert.Empty(t, dir)
	assert.ErrorContains(t, warning, "the temporary folder "+want+" is unusable (mode 0777: others may write in it); the pipeline cache and the measured figures are not kept")
	require.NoError(t, os.Remove(want))
	require.NoError(t, os.Symlink(tmp, want))
	dir, warning = resolveCacheDir("")
	assert.Empty(t, dir)
	assert.ErrorContains(t, warning, "unusable (a symbolic link)")
	if os.Geteuid() == 0 {
		require.NoError(t, os.Remove(want))
		require.NoError(t, os.Mkdir(want, 0o700))
		require.NoError(t, os.Chown(want, 65534, 65534))
		dir, warning = resolveCacheDir("")
		assert.Empty(t, dir)
		assert.ErrorContains(t, warning, "unusable (owned by uid 65534, not 0)")
	}
}

// TestHostileCacheFiles puts a FIFO, a link to /dev/zero, a 1 GiB sparse
// file and a directory in the place of each cache file: Open, Close and
// MeasuredFigures finish as they would without the file, with one warning
// naming it, and the next write replaces it (a directory excepted), after
// which a device opens, finds its figures and closes without a warning.
func TestHostileCacheFiles(t *testing.T) {
	probe := t.TempDir()
	d, err := Open(Options{PipelineCacheDir: probe})
	require.NoError(t, err)
	cacheName := filepath.Base(d.PipelineCachePath())
	files := []struct{ what, name string }{
		{"pipeline cache", cacheName},
		{"index", strings.TrimSuffix(cacheName, ".bin") + ".pipelines"},
		{"compile times", strings.TrimSuffix(cacheName, ".bin") + ".compile"},
		{"figures", measuredFile(d.Info())},
	}
	require.NoError(t, d.Close())
	ctx := context.Background()
	for _, f := range files {
		kind := ErrPipelineCache
		if f.what == "figures" {
			kind = ErrMeasuredFigures
		}
		for _, h := range hostilefile.Files {
			t.Run(f.what+"/"+h.Name, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, f.name)
				h.Make(t, path)
				// life opens a device on dir, creates a pipeline (which
				// the index keeps), takes the figures when the file is
				// theirs, closes it, and returns the figures and every
				// warning of the device's life.
				life := func() (m Measured, warnings []error) {
					within(t, 10*time.Second, func() {
						d, err := Open(Options{PipelineCacheDir: dir, Warn: func(err error) { warnings = append(warnings, err) }})
						require.NoError(t, err)
						_, err = d.NewPipeline(PipelineSpec{SPIRV: copySPV, Bindings: 2, PushConstantSize: 8})
						require.NoError(t, err)
						if f.what == "figures" {
							m, err = d.MeasuredFigures(ctx, false, nil)
							require.NoError(t, err)
							require.NoError(t, m.Check())
						}
						require.NoError(t, d.Close())
					})
					return m, warnings
				}
				m, warnings := life()
				require.Len(t, warnings, 1)
				assert.ErrorIs(t, warnings[0], kind)
				assert.Contains(t, warnings[0].Error(), path+": "+h.Says)

				again, warnings := life()
				if h.Stays {
					assert.Len(t, warnings, 1, "a directory is not replaced")
					return
				}
				assert.Empty(t, warnings, "replaced by a regular file")
				fi, err := os.Lstat(path)
				require.NoError(t, err)
				assert.True(t, fi.Mode().IsRegular(), "%v", fi.Mode())
				assert.Equal(t, m, again, "the figures were kept")
			})
		}
	}
}
