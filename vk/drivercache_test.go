//go:build cgo

package vk

import (
	"os"
	"os/user"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDirUsable: the folders Mesa can create its cache folder in, found
// by creating a folder there.
func TestDirUsable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, c := range []struct {
		name string
		dir  string
		want bool
	}{
		{"a writable folder", dir, true},
		{"a missing folder in a writable one", filepath.Join(dir, "new"), true},
		{"a missing folder in a missing one", filepath.Join(dir, "no", "new"), false},
		{"a file", file, false},
		{"a folder under a file", filepath.Join(file, "x"), false},
		{"empty", "", false},
	} {
		assert.Equal(t, c.want, dirUsable(c.dir), c.name)
	}
	ro := t.TempDir()
	require.NoError(t, os.Chmod(ro, 0o555))
	if os.Geteuid() != 0 { // root may write there
		assert.False(t, dirUsable(ro), "a read-only folder")
		assert.False(t, dirUsable(filepath.Join(ro, "new")), "a missing folder in a read-only one")
	}
	// Mesa uses a cache folder that is there, wherever it is.
	require.NoError(t, os.Chmod(ro, 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(ro, "mesa_shader_cache"), 0o755))
	require.NoError(t, os.Chmod(ro, 0o555))
	assert.True(t, dirUsable(ro), "a read-only folder with the cache folder in it")
	// Root may write anything by its permissions, but cannot create a
	// folder in /sys/kernel.
	if fi, err := os.Stat("/sys/kernel"); err == nil && fi.IsDir() {
		assert.False(t, dirUsable("/sys/kernel"), "/sys/kernel")
		assert.False(t, dirUsable("/sys/kernel/new"), "a missing folder in /sys/kernel")
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "the probes are removed")
}

// TestQuietDriverCache: Mesa's shader cache is disabled exactly when the
// folder it would use cannot hold it, and a caller's own setting wins.
func TestQuietDriverCache(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	unset := func(t *testing.T, name string) {
		t.Setenv(name, "") // restored after the test
		require.NoError(t, os.Unsetenv(name))
	}
	for _, c := range []struct {
		name     string
		xdg      *string
		mesaDir  bool
		disabled bool
	}{
		{"usable XDG_CACHE_HOME", &dir, false, false},
		{"XDG_CACHE_HOME a file", &file, false, true},
		{"XDG_CACHE_HOME in a missing folder", ptr(filepath.Join(dir, "a", "b")), false, true},
		{"XDG_CACHE_HOME set but empty", ptr(""), false, true},
		{"the caller's MESA_SHADER_CACHE_DIR", &file, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range []string{"MESA_SHADER_CACHE_DIR", "MESA_SHADER_CACHE_DISABLE", "MESA_GLSL_CACHE_DIR", "MESA_GLSL_CACHE_DISABLE"} {
				unset(t, v)
			}
			t.Setenv("XDG_CACHE_HOME", *c.xdg)
			if c.mesaDir {
				t.Setenv("MESA_SHADER_CACHE_DIR", dir)
			}
			quietDriverCache()
			v, set := os.LookupEnv("MESA_SHADER_CACHE_DISABLE")
			assert.Equal(t, c.disabled, set, "MESA_SHADER_CACHE_DISABLE=%q", v)
			if c.disabled {
				assert.Equal(t, "true", v)
			}
		})
	}
	t.Run("no XDG_CACHE_HOME: the home folder of the password database", func(t *testing.T) {
		unset(t, "XDG_CACHE_HOME")
		t.Setenv("HOME", file) // Mesa does not read HOME
		u, err := user.Current()
		require.NoError(t, err)
		got, ok := mesaCacheParent()
		assert.True(t, ok)
		assert.Equal(t, filepath.Join(u.HomeDir, ".cache"), got)
	})
}

func ptr[T any](v T) *T { return &v }
