//go:build !unix

package atomicfile

import "io/fs"

// writable leaves the check to the open where there is no access(2).
func writable(path string) error { return nil }

// writableDir leaves the check to the create.
func writableDir(dir string) error { return nil }

// keepOwner has nothing to keep where files have no owner.
func keepOwner(f interface{ Chown(uid, gid int) error }, st fs.FileInfo) {}
