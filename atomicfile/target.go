package atomicfile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks bounds the symbolic links Write follows from a path, as the
// kernel's 40 does for one lookup.
const maxLinks = 40

// target is what a path given to Write names, found before any content is
// written.
type target struct {
	// path is the file that is replaced or created: the given path with its
	// symbolic links followed, so that the links stay as they were.
	path string
	// direct means the content is written into the existing file rather
	// than replacing it: a FIFO, a device or a socket cannot be replaced
	// by a regular file, and a path through a process's descriptor
	// (/dev/stdout, /proc/self/fd/1) means that descriptor's file.
	direct bool
	// old is the regular file replaced, nil for a new one.
	old fs.FileInfo
}

// Check reports whether Write could write path, without writing anything:
// the error Write would give before writing, for a command to fail with
// before its work rather than after. It wraps fs.ErrPermission for a file
// or directory the process may not write, syscall.EISDIR for a directory,
// and fs.ErrNotExist for a missing directory.
func Check(path string) error {
	_, err := resolve(path)
	return err
}

// resolve finds what Write does with path and checks that the process may
// do it.
func resolve(path string) (target, error) {
	if path == "" {
		return target{}, &fs.PathError{Op: "open", Path: path, Err: syscall.ENOENT}
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return target{}, &fs.PathError{Op: "open", Path: path, Err: syscall.EISDIR}
	case err == nil && !st.Mode().IsRegular():
		return target{path: path, direct: true}, writable(path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return target{}, err
	}
	final, viaFD, lerr := followLinks(path)
	if lerr != nil {
		return target{}, lerr
	}
	if err == nil && viaFD {
		// A regular file behind a descriptor is written as cp writes
		// /dev/stdout: in place, from its start.
		return target{path: path, direct: true, old: st}, writable(path)
	}
	dir := filepath.Dir(final)
	dst, derr := os.Stat(dir)
	switch {
	case derr != nil:
		return target{}, derr
	case !dst.IsDir():
		return target{}, &fs.PathError{Op: "open", Path: final, Err: syscall.ENOTDIR}
	}
	if err == nil {
		// Replacing a file the user may not write would give what cp
		// refuses: a 0444 file or another user's file changed anyway.
		if werr := writable(final); werr != nil {
			return target{}, werr
		}
	}
	// The new content is created beside the target and renamed over it.
	if werr := writableDir(dir); werr != nil {
		return target{}, &fs.PathError{Op: "create a file in", Path: dir, Err: werr}
	}
	t := target{path: final}
	if err == nil {
		t.old = st
	}
	return t, nil
}

// followLinks follows the symbolic links of path's last element until it
// names no link (maybe a missing file, which a dangling link points at).
// viaFD reports a link through a process's descriptor table
// (/proc/PID/fd/N), whose targets are not paths.
func followLinks(path string) (final string, viaFD bool, err error) {
	p := path
	for range maxLinks {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, viaFD, nil
		}
		if err != nil {
			return "", viaFD, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, viaFD, nil
		}
		dir := filepath.Dir(p)
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real // so that ".." in the link is taken as the kernel takes it
		}
		if isFDDir(dir) {
			viaFD = true
		}
		l, err := os.Readlink(p)
		if err != nil {
			return "", viaFD, err
		}
		if !filepath.IsAbs(l) {
			l = filepath.Join(dir, l)
		}
		p = l
	}
	return "", viaFD, &fs.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
}

// isFDDir reports whether dir is a descriptor directory of /proc.
func isFDDir(dir string) bool {
	rest, ok := strings.CutPrefix(dir, "/proc/")
	if !ok {
		return false
	}
	_, fd, ok := strings.Cut(rest, "/")
	return ok && (fd == "fd")
}

// openDirect opens the existing file t for writing in place. Opening a
// FIFO waits for a reader; ctx ends that wait.
func openDirect(ctx context.Context, t target) (*os.File, error) {
	flag := os.O_WRONLY
	if t.old != nil {
		flag |= os.O_TRUNC
	}
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		f, err := os.OpenFile(t.path, flag, 0)
		ch <- result{f, err}
	}()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-ctx.Done():
		go func() {
			// The open may still succeed once a reader comes; close it then.
			if r := <-ch; r.f != nil {
				r.f.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
