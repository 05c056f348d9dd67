package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// disableUnnamed makes openUnnamed report no support, for the tests of
// the fallback.
var disableUnnamed bool

// openUnnamed opens a new unnamed file in dir with O_TMPFILE. It returns a
// nil file and no error when dir's filesystem, the kernel or a missing
// /proc cannot give one, so that Write falls back to a named file.
func openUnnamed(dir string) (*os.File, error) {
	if disableUnnamed {
		return nil, nil
	}
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o666)
	if err != nil {
		// EISDIR: a kernel older than 3.11 reads O_TMPFILE as O_DIRECTORY
		// alone. EOPNOTSUPP: the filesystem has no unnamed files.
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) ||
			errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
			return nil, nil
		}
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	f := os.NewFile(uintptr(fd), dir)
	// Linking needs /proc/self/fd (linkat with AT_EMPTY_PATH needs a
	// privilege); without it, use a named file.
	if _, err := os.Stat(procPath(f)); err != nil {
		f.Close()
		return nil, nil
	}
	return f, nil
}

// procPath names f's descriptor in /proc.
func procPath(f *os.File) string {
	return "/proc/self/fd/" + strconv.FormatUint(uint64(f.Fd()), 10)
}

// linkUnnamed gives the unnamed file f the name path: directly when path
// does not exist, else under a temporary name renamed over path, which
// replaces it atomically.
func linkUnnamed(f *os.File, path string) error {
	err := link(f, path)
	if !errors.Is(err, unix.EEXIST) {
		return err
	}
	dir, base := filepath.Split(path)
	for range 100 {
		tmp := tempName(dir, base)
		err := link(f, tmp)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return err
		}
		return nil
	}
	return fmt.Errorf("cannot create a temporary name next to %s", path)
}

// link links f's descriptor to path.
func link(f *os.File, path string) error {
	if err := unix.Linkat(unix.AT_FDCWD, procPath(f), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW); err != nil {
		return &os.LinkError{Op: "link", Old: "(unnamed file)", New: path, Err: err}
	}
	return nil
}
