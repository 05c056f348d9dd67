//go:build unix

package atomicfile

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// writable reports, as an *fs.PathError, whether the process may open
// path for writing. The check is access(2)'s, so root passes it for a
// read-only file as it passes the open itself.
func writable(path string) error {
	if err := unix.Access(path, unix.W_OK); err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return nil
}

// writableDir reports whether the process may create files in dir.
func writableDir(dir string) error {
	return unix.Access(dir, unix.W_OK|unix.X_OK)
}

// keepOwner gives f the owner and group of the file st describes, which f
// replaces, where the process may (root may; another user may keep only
// a group it belongs to). It is best effort, as for cp -p.
func keepOwner(f interface{ Chown(uid, gid int) error }, st fs.FileInfo) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	uid, gid := int(sys.Uid), int(sys.Gid)
	if uid == os.Geteuid() && gid == os.Getegid() {
		return
	}
	if f.Chown(uid, gid) != nil {
		f.Chown(-1, gid)
	}
}
