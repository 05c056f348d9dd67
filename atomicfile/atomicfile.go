package atomicfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// chunk is the most Write hands the file in one call, so that a cancelled
// context stops a large write within a few milliseconds.
const chunk = 8 << 20

// StallEnv names an environment variable for tests of interrupted writes:
// when it holds a path, Write creates that file once the first bytes of
// the content are in the unfinished file and then waits for ctx to be done,
// so a test can signal or kill the writer mid-write at a known point.
const StallEnv = "GPUSCATTER_TEST_STALL_WRITE"

// Write writes a file at path with the content that write produces, and
// makes it appear at path only once write has returned nil and the data is
// synced. On any failure, or when ctx is done first, Write returns the
// error (wrapping ctx.Err() for a cancelled context) and path is left as it
// was. A nil ctx means context.Background().
//
// What path names decides what is written, as cp would decide it:
//   - a missing file is created, with mode 0666 less the umask;
//   - an existing regular file is replaced by a new file with its mode
//     (and, where the process may set it, its owner and group); its other
//     hard links, if any, keep the old content;
//   - a symbolic link is followed to its final target, which is replaced
//     or created as above; the links stay as they were;
//   - a FIFO, a device, a socket, or a path through a descriptor such as
//     /dev/stdout is written directly, in place, since it cannot be
//     replaced; such a write is not atomic;
//   - a directory, a file the process may not write, and a directory it
//     may not create files in are errors, checked before write runs (see
//     Check), and leave everything unchanged.
func Write(ctx context.Context, path string, write func(w io.Writer) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t, err := resolve(path)
	if err != nil {
		return err
	}
	if t.direct {
		return writeDirect(ctx, t, write)
	}
	path = t.path
	dir := filepath.Dir(path)
	f, err := openUnnamed(dir)
	if err != nil {
		return err
	}
	if f == nil {
		return writeNamed(ctx, path, write)
	}
	return finish(ctx, f, path, write, func() error { return linkUnnamed(f, path) }, func() {})
}

// writeDirect writes the content into the existing non-regular file t.
func writeDirect(ctx context.Context, t target, write func(w io.Writer) error) error {
	f, err := openDirect(ctx, t)
	if err != nil {
		return err
	}
	// A FIFO whose reader stops reading blocks a write; a deadline, set
	// when ctx is done, ends it (a device that has none just ignores it).
	stop := context.AfterFunc(ctx, func() { f.SetWriteDeadline(time.Now()) })
	defer stop()
	w := &ctxWriter{ctx: ctx, w: f, stall: os.Getenv(StallEnv)}
	err = write(w)
	if cerr := ctx.Err(); err != nil && cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w: %v", cerr, err)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeNamed is Write through a named temporary file beside path, for
// systems without unnamed files.
func writeNamed(ctx context.Context, path string, write func(w io.Writer) error) error {
	f, err := createTemp(path)
	if err != nil {
		return err
	}
	tmp := f.Name()
	return finish(ctx, f, path, write,
		func() error { return os.Rename(tmp, path) },
		func() { os.Remove(tmp) })
}

// finish writes the content into f, syncs and closes it, and publishes it
// at path with publish. On failure it closes f and calls discard.
func finish(ctx context.Context, f *os.File, path string, write func(w io.Writer) error, publish func() error, discard func()) (err error) {
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			discard()
		}
	}()
	if st, serr := os.Stat(path); serr == nil && st.Mode().IsRegular() {
		if err := f.Chmod(st.Mode().Perm()); err != nil {
			return err
		}
		keepOwner(f, st)
	}
	w := &ctxWriter{ctx: ctx, w: f, stall: os.Getenv(StallEnv)}
	if err := write(w); err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			return fmt.Errorf("%w: %v", cerr, err)
		}
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	// The unnamed file is linked while it is still open: its descriptor is
	// the only way to reach it.
	if err := publish(); err != nil {
		return err
	}
	closed = true
	if err := f.Close(); err != nil {
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// ctxWriter writes to w in chunks, stopping when ctx is done.
type ctxWriter struct {
	ctx   context.Context
	w     io.Writer
	stall string // StallEnv's value
}

func (c *ctxWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if err := c.ctx.Err(); err != nil {
			return n, err
		}
		k, err := c.w.Write(p[:min(len(p), chunk)])
		n += k
		if err != nil {
			return n, err
		}
		p = p[k:]
		if c.stall != "" {
			if err := stall(c.ctx, c.stall); err != nil {
				return n, err
			}
			c.stall = ""
		}
	}
	return n, nil
}

// stall creates the file marker and waits for ctx to be done (see StallEnv).
func stall(ctx context.Context, marker string) error {
	if err := os.WriteFile(marker, nil, 0o666); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

// createTemp creates a new file next to path. Unlike os.CreateTemp it opens
// the file with mode 0666, so the umask decides its permissions as it would
// for os.Create.
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	for range 100 {
		f, err := os.OpenFile(tempName(dir, base), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("cannot create a temporary file next to %s", path)
}

// tempName returns a fresh hidden name in dir for a file on its way to
// becoming base.
func tempName(dir, base string) string {
	return filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
}

// syncDir flushes the directory entry of a link or rename to disk. It is
// best effort: not every system can sync a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
