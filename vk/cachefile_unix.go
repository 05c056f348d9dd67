//go:build cgo && unix

package vk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// openCacheFlags are added to a cache file's open: a FIFO put there
// between the check and the open does not make it wait for a writer, nor
// a terminal become the process's.
const openCacheFlags = unix.O_NONBLOCK | unix.O_NOCTTY

// tempCacheDir returns the per-user temporary cache folder,
// gpuscatter-UID in os.TempDir(), creating it with mode 0700. It is usable
// only when it is a folder, not a symbolic link, owned by the process's
// user and writable by no one else: anyone may create names in the
// temporary folder, so another user could have made it first.
func tempCacheDir() (string, error) {
	uid := os.Geteuid()
	dir := filepath.Join(os.TempDir(), "gpuscatter-"+strconv.Itoa(uid))
	unusable := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("the temporary folder %s is unusable (%s)", dir, fmt.Sprintf(format, args...))
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return unusable("%v", errors.Unwrap(err))
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return unusable("%v", errors.Unwrap(err))
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return unusable("a symbolic link")
	case !fi.IsDir():
		return unusable("not a folder")
	case !ok:
		return unusable("its owner is unknown")
	case int(st.Uid) != uid:
		return unusable("owned by uid %d, not %d", st.Uid, uid)
	case fi.Mode().Perm()&0o022 != 0:
		return unusable("mode %04o: others may write in it", fi.Mode().Perm())
	}
	return dir, nil
}
