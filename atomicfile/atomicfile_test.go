package atomicfile

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modes runs f with unnamed files (where the system has them) and with the
// named fallback.
func modes(t *testing.T, f func(t *testing.T, unnamed bool)) {
	for _, unnamed := range []bool{true, false} {
		name := "named"
		if unnamed {
			name = "unnamed"
		}
		t.Run(name, func(t *testing.T) {
			if unnamed && runtime.GOOS != "linux" {
				unnamed = false
			}
			disableUnnamed = !unnamed
			t.Cleanup(func() { disableUnnamed = false })
			f(t, unnamed)
		})
	}
}

// names lists dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

func TestWriteCreatesAndReplaces(t *testing.T) {
	modes(t, func(t *testing.T, unnamed bool) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.txt")
		require.NoError(t, Write(context.Background(), path, writeString("first")))
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "first", string(got))

		require.NoError(t, os.Chmod(path, 0o640))
		require.NoError(t, Write(context.Background(), path, writeString("second")))
		got, err = os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "second", string(got))
		st, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "a replaced file keeps its permissions")
		assert.Equal(t, []string{"out.txt"}, names(t, dir))
	})
}

// TestWriteHidesTheUnfinishedFile looks at the directory while the content
// is being written: an unnamed file is invisible there; the fallback shows
// as a hidden temporary name.
func TestWriteHidesTheUnfinishedFile(t *testing.T) {
	modes(t, func(t *testing.T, unnamed bool) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.txt")
		var during []string
		require.NoError(t, Write(context.Background(), path, func(w io.Writer) error {
			if _, err := io.WriteString(w, "partial"); err != nil {
				return err
			}
			during = names(t, dir)
			return nil
		}))
		if unnamed {
			assert.Empty(t, during, "the unfinished file has no name (O_TMPFILE)")
		} else {
			require.Len(t, during, 1)
			assert.True(t, strings.HasPrefix(during[0], ".out.txt.") && strings.HasSuffix(during[0], ".tmp"), during[0])
		}
	})
}

func TestWriteFailureLeavesTargetAlone(t *testing.T) {
	modes(t, func(t *testing.T, unnamed bool) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.txt")
		boom := errors.New("boom")
		fail := func(w io.Writer) error {
			io.WriteString(w, "half")
			return boom
		}
		require.ErrorIs(t, Write(context.Background(), path, fail), boom)
		assert.Empty(t, names(t, dir), "a failed write of a new file leaves nothing")

		require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
		require.ErrorIs(t, Write(context.Background(), path, fail), boom)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "old", string(got))
		assert.Equal(t, []string{"out.txt"}, names(t, dir))
	})
}

func TestWriteStopsWhenCancelled(t *testing.T) {
	modes(t, func(t *testing.T, unnamed bool) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.bin")
		ctx, cancel := context.WithCancel(context.Background())
		err := Write(ctx, path, func(w io.Writer) error {
			if _, err := w.Write(make([]byte, 10)); err != nil {
				return err
			}
			cancel()
			// One large write: it stops at the next chunk.
			_, err := w.Write(make([]byte, 3*chunk))
			return err
		})
		require.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, names(t, dir))

		// A writer that swallows the error still fails.
		ctx, cancel = context.WithCancel(context.Background())
		err = Write(ctx, path, func(w io.Writer) error {
			cancel()
			w.Write([]byte("x"))
			return nil
		})
		require.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, names(t, dir))
	})
}

func TestWriteErrors(t *testing.T) {
	modes(t, func(t *testing.T, unnamed bool) {
		dir := t.TempDir()
		err := Write(context.Background(), filepath.Join(dir, "missing", "out.txt"), writeString("x"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "missing")

		// A directory in the way: the content is not published.
		sub := filepath.Join(dir, "sub")
		require.NoError(t, os.Mkdir(sub, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(sub, "keep"), nil, 0o644))
		require.Error(t, Write(context.Background(), sub, writeString("x")))
		assert.Equal(t, []string{"sub"}, names(t, dir))
	})
}

func TestUnnamedAvailableOnLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		return
	}
	f, err := openUnnamed(t.TempDir())
	require.NoError(t, err)
	require.NotNil(t, f, "O_TMPFILE is not available in the temporary directory; the tests of unnamed files would test the fallback twice")
	f.Close()
}
