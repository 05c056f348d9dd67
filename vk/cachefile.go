//go:build cgo

package vk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gpuscatter/gpuscatter/atomicfile"
)

// The cache folder (Options.PipelineCacheDir) holds four kinds of file
// for each device and driver: the pipeline cache (pipeline-cache-*.bin),
// its index (pipeline-cache-*.pipelines), the pipelines' compile times
// (pipeline-cache-*.compile) and the measured figures (measured-*.json).
// Anyone who can write the folder can put anything there, so each is
// read only when it is a regular file (a symbolic link
// is followed only to one) of at most the size such a file can hold:
//
//   - maxPipelineCacheBytes for the pipeline cache: no driver's cache of
//     this project's pipelines comes near it (Mesa's hold a 32-byte
//     header);
//   - maxIndexBytes for the index: maxIndexPipelines lines of a digest
//     in hex;
//   - maxTimesBytes for the compile times (compiletimes.go):
//     maxIndexPipelines lines of a digest, a time and a class;
//   - maxFiguresBytes for the figures: one small JSON object.
//
// A file that breaks these rules (a FIFO, a device, a socket, a directory,
// a link to one of them, a file over its size) is never opened or never
// read past its size; it is ignored with one warning (Options.Warn) naming
// it and what is wrong, and the next write replaces it with a regular file
// (writeCacheFile), a directory excepted.
const (
	maxPipelineCacheBytes = 256 << 20
	maxIndexPipelines     = 1 << 16
	maxIndexBytes         = maxIndexPipelines * (2*32 + 1)
	maxFiguresBytes       = 16 << 10
)

// badCacheFile is a cache file that breaks a rule of readCacheFile.
type badCacheFile struct {
	path    string
	problem string // "a named pipe (FIFO), not a regular file"
	// dir: the path is a directory, which writeCacheFile does not replace.
	dir bool
}

func (e *badCacheFile) Error() string { return e.path + ": " + e.problem }

// readCacheFile returns the contents of the cache file path: an error
// matching fs.ErrNotExist when there is none, a *badCacheFile when it is
// not a regular file or holds more than limit bytes, else any error of
// reading it. A non-regular file is refused before it is opened (opening
// a FIFO waits for a writer, opening a device may act on it), and the
// open itself does not wait (O_NONBLOCK) should the path change in
// between; the size is checked on the open file before any byte is read,
// so a large sparse file costs nothing.
func readCacheFile(path string, limit int64) ([]byte, error) {
	li, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	fi := li
	link := li.Mode()&fs.ModeSymlink != 0
	if link {
		if fi, err = os.Stat(path); err != nil {
			return nil, err // a dangling link is no file
		}
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi, link)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openCacheFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi, false)
	}
	if fi.Size() > limit {
		return nil, tooLarge(path, fi.Size(), limit)
	}
	var b bytes.Buffer
	b.Grow(int(fi.Size()) + 1)
	// A file that grows as it is read stops at limit+1 bytes.
	if _, err := b.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, err
	}
	if int64(b.Len()) > limit {
		return nil, tooLarge(path, int64(b.Len()), limit)
	}
	return b.Bytes(), nil
}

func notRegular(path string, fi fs.FileInfo, link bool) *badCacheFile {
	what := "an irregular file"
	switch t := fi.Mode().Type(); {
	case t&fs.ModeDir != 0:
		what = "a directory"
	case t&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		what = "a socket"
	case t&fs.ModeCharDevice != 0:
		what = "a character device"
	case t&fs.ModeDevice != 0:
		what = "a block device"
	}
	if link {
		what = "a symbolic link to " + what
	}
	return &badCacheFile{path: path, problem: what + ", not a regular file", dir: fi.IsDir() && !link}
}

func tooLarge(path string, size, limit int64) *badCacheFile {
	return &badCacheFile{path: path, problem: fmt.Sprintf("%s, more than the %s such a file holds", byteSize(size), byteSize(limit))}
}

// byteSize formats n bytes as "123 bytes", "16 KiB", "1.0 GiB".
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// replaceable reports whether the next writeCacheFile replaces the file
// that readCacheFile refused with err: anything but a directory.
func replaceable(err error) bool {
	var bad *badCacheFile
	return errors.As(err, &bad) && !bad.dir
}

// writeCacheFile writes data to the cache file path, creating its folder,
// so that readers never see a partial file and a failed or killed write
// leaves none. A regular file, or a link to one, is replaced through
// atomicfile.Write. Anything else in its place but a directory (a FIFO,
// a device, a socket, a link to one of them or to a directory) is
// replaced by renaming a new file over the name itself: written into, a
// FIFO would wait for a reader and a device take the data. A directory is
// an error, left as it is.
func writeCacheFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	li, err := os.Lstat(path)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	case err == nil && li.IsDir():
		return &badCacheFile{path: path, problem: "a directory, not a regular file; not replaced", dir: true}
	case err == nil && !li.Mode().IsRegular():
		if fi, serr := os.Stat(path); serr != nil || !fi.Mode().IsRegular() {
			return replaceName(path, data)
		}
	}
	return atomicfile.Write(context.Background(), path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// replaceName writes data to a new file beside path and renames it over
// path, whatever path names.
func replaceName(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// resolveCacheDir returns the folder that the cache files of
// Options.PipelineCacheDir opt go in ("" for none), and a warning
// (ErrCacheFolder) when that is not the folder opt names. "off" is none;
// a folder the caller names is used as it is. "" is gpuscatter in the
// user's cache folder (os.UserCacheDir) when it is a folder or can be
// created; when there is no user cache folder (neither XDG_CACHE_HOME nor
// HOME is set) or it is unusable, the per-user temporary folder
// (tempCacheDir) takes its place, so that later processes still find the
// cache and the figures, and the warning says so.
func resolveCacheDir(opt string) (dir string, warning error) {
	switch opt {
	case "off":
		return "", nil
	case "":
	default:
		return opt, nil
	}
	var why string
	if ucd, err := os.UserCacheDir(); err != nil {
		why = fmt.Sprintf("no user cache folder (%v)", err)
		if os.Getenv("XDG_CACHE_HOME") == "" && os.Getenv("HOME") == "" {
			why = "no user cache folder (neither XDG_CACHE_HOME nor HOME is set)"
		}
	} else {
		dir := filepath.Join(ucd, "gpuscatter")
		err := os.MkdirAll(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		why = fmt.Sprintf("the user cache folder is unusable (%v)", err)
	}
	tmp, err := tempCacheDir()
	if err != nil {
		return "", fmt.Errorf("%w: %s, and %v; the pipeline cache and the measured figures are not kept", ErrCacheFolder, why, err)
	}
	return tmp, fmt.Errorf("%w: %s; using %s", ErrCacheFolder, why, tmp)
}
