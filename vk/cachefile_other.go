//go:build cgo && !unix

package vk

import "errors"

// openCacheFlags are added to a cache file's open; none are needed where
// opening a file does not wait.
const openCacheFlags = 0

// tempCacheDir is the per-user temporary cache folder, which only unix
// systems, whose temporary folder every user shares, are given.
func tempCacheDir() (string, error) {
	return "", errors.New("there is no per-user temporary folder on this system")
}
