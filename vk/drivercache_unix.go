//go:build cgo && unix

package vk

import "golang.org/x/sys/unix"

// writable reports whether the process may create entries in the folder
// dir: write and search permission.
func writable(dir string) bool {
	return unix.Access(dir, unix.W_OK|unix.X_OK) == nil
}
