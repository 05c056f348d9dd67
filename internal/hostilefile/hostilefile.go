//go:build linux

// Package hostilefile lists what the tests of the cache folder put in a
// cache file's place, with what gpuscatter's warning says of each: the
// files that must neither block, exhaust nor crash a run.
package hostilefile

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// File is one kind of file in a cache file's place.
type File struct {
	// Name names it in test names; Says is part of the warning about it.
	Name, Says string
	// Make makes it at path.
	Make func(t testing.TB, path string)
	// Stays: the next write cannot replace it (a directory).
	Stays bool
}

// Files are a FIFO, a symbolic link to /dev/zero, a 1 GiB sparse file and
// a directory.
var Files = []File{
	{"FIFO", "a named pipe (FIFO), not a regular file", func(t testing.TB, path string) {
		require.NoError(t, syscall.Mkfifo(path, 0o644))
	}, false},
	{"link to /dev/zero", "a symbolic link to a character device, not a regular file", func(t testing.TB, path string) {
		require.NoError(t, os.Symlink("/dev/zero", path))
	}, false},
	{"1 GiB sparse file", "1.0 GiB, more than the", func(t testing.TB, path string) {
		f, err := os.Create(path)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(1<<30))
		require.NoError(t, f.Close())
	}, false},
	{"directory", "a directory, not a regular file", func(t testing.TB, path string) {
		require.NoError(t, os.Mkdir(path, 0o755))
	}, true},
}
