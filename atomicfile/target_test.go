package atomicfile

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// TestWriteFollowsSymlinks: the documented in-place update through a link
// changes the real file, and the link stays a link.
func TestWriteFollowsSymlinks(t *testing.T) {
	modes(t, func(t *testing.T, unnamed bool) {
		dir := t.TempDir()
		realDir := filepath.Join(dir, "real")
		require.NoError(t, os.Mkdir(realDir, 0o755))
		real := filepath.Join(realDir, "data.npy")
		require.NoError(t, os.WriteFile(real, []byte("old"), 0o640))
		// A relative link to a relative link.
		require.NoError(t, os.Symlink("real/data.npy", filepath.Join(dir, "one")))
		require.NoError(t, os.Symlink("one", filepath.Join(dir, "two")))

		require.NoError(t, Write(context.Background(), filepath.Join(dir, "two"), writeString("new")))
		assert.Equal(t, "new", read(t, real))
		for _, l := range []string{"one", "two"} {
			fi, err := os.Lstat(filepath.Join(dir, l))
			require.NoError(t, err)
			assert.NotZero(t, fi.Mode()&fs.ModeSymlink, "%s stays a link", l)
		}
		fi, err := os.Stat(real)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o640), fi.Mode().Perm())
		assert.Equal(t, []string{"data.npy"}, names(t, realDir))

		// A dangling link: its target is created.
		require.NoError(t, os.Symlink("real/new.npy", filepath.Join(dir, "dangling")))
		require.NoError(t, Write(context.Background(), filepath.Join(dir, "dangling"), writeString("made")))
		assert.Equal(t, "made", read(t, filepath.Join(realDir, "new.npy")))

		// A loop is an error.
		require.NoError(t, os.Symlink("loop", filepath.Join(dir, "loop")))
		require.ErrorIs(t, Write(context.Background(), filepath.Join(dir, "loop"), writeString("x")), syscall.ELOOP)
	})
}

// TestWriteIntoFIFO: a FIFO cannot be replaced; its reader gets the
// content.
func TestWriteIntoFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	require.NoError(t, Write(context.Background(), fifo, writeString("through the pipe")))
	assert.Equal(t, "through the pipe", <-got)
	fi, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&fs.ModeNamedPipe, "still a FIFO")
}

// TestWriteFIFOWithoutReaderStopsWhenCancelled: opening a FIFO waits for a
// reader, and a cancelled context ends the wait.
func TestWriteFIFOWithoutReaderStopsWhenCancelled(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Write(ctx, fifo, writeString("x")) }()
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	// Let the open that still waits finish.
	if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

func TestWriteIntoDevice(t *testing.T) {
	require.NoError(t, Write(context.Background(), os.DevNull, writeString("gone")))
	fi, err := os.Stat(os.DevNull)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&fs.ModeCharDevice, "/dev/null is still a device")
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Check(filepath.Join(dir, "new")))
	require.ErrorIs(t, Check(dir), syscall.EISDIR)
	require.ErrorIs(t, Check(filepath.Join(dir, "missing", "x")), fs.ErrNotExist)
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	require.ErrorIs(t, Check(filepath.Join(file, "x")), syscall.ENOTDIR)
	require.NoError(t, Check(file))
	require.NoError(t, Check(os.DevNull))
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.WriteFile(ro, []byte("keep"), 0o444))
		require.ErrorIs(t, Write(context.Background(), ro, writeString("x")), fs.ErrPermission)
		assert.Equal(t, "keep", read(t, ro))
	}
}

// TestWriteSplitsHardLinks pins what the README says: the replaced name
// gets the new content, its other names keep the old file.
func TestWriteSplitsHardLinks(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	require.NoError(t, os.WriteFile(a, []byte("old"), 0o644))
	require.NoError(t, os.Link(a, b))
	require.NoError(t, Write(context.Background(), a, writeString("new")))
	assert.Equal(t, "new", read(t, a))
	assert.Equal(t, "old", read(t, b))
}

// TestWriteKeepsOwner: root replacing another user's file leaves it that
// user's, as the file it replaces was.
func TestWriteKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
	modes(t, func(t *testing.T, unnamed bool) {
		path := filepath.Join(t.TempDir(), "theirs")
		require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
		require.NoError(t, os.Chown(path, 65534, 65534))
		require.NoError(t, Write(context.Background(), path, writeString("new")))
		fi, err := os.Stat(path)
		require.NoError(t, err)
		st := fi.Sys().(*syscall.Stat_t)
		assert.Equal(t, uint32(65534), st.Uid)
		assert.Equal(t, uint32(65534), st.Gid)
		assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm())
		assert.Equal(t, "new", read(t, path))
	})
}
