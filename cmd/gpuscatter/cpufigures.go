package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/gpuscatter/gpuscatter/atomicfile"
	"github.com/gpuscatter/gpuscatter/bench"
	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/cpuref"
)

// The CPU backend's figures (cost.CPU, cpuref.Measure), by which it
// chooses how to fold a float reduction, are kept in the cache folder, so
// that only the first process of a machine measures them (about half a
// second): cpu-figures-KEY-THREADS.json in gpuscatter in the user's cache
// folder (os.UserCacheDir), KEY a digest of the processor's model name
// and architecture and THREADS GOMAXPROCS, so that another machine or
// thread count sharing the folder measures its own. The file is read only
// when it is a regular file of at most maxCPUFiguresBytes, and used only
// when its figures are complete (cost.CPU.Complete) and of this thread
// count; anything else is measured again and replaced. Where there is no
// user cache folder the figures are measured once per process.
// 'gpuscatter devices --remeasure' measures them again with the device's.

// maxCPUFiguresBytes bounds the kept figures file: one small JSON object.
const maxCPUFiguresBytes = 16 << 10

// cpuFiguresPath returns the path of this machine's kept CPU figures, ""
// where there is no user cache folder.
func cpuFiguresPath() string {
	dir, err := os.UserCacheDir()
	if err != nil || dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(bench.CPUModel() + "\x00" + runtime.GOARCH))
	return filepath.Join(dir, "gpuscatter", fmt.Sprintf("cpu-figures-%x-%d.json", sum[:8], runtime.GOMAXPROCS(0)))
}

// keptCPUFigures returns the CPU figures kept at path, nil where there
// are none usable.
func keptCPUFigures(path string) *cost.CPU {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxCPUFiguresBytes {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, maxCPUFiguresBytes+1))
	if err != nil || len(b) > maxCPUFiguresBytes {
		return nil
	}
	var c cost.CPU
	if json.Unmarshal(b, &c) != nil || !c.Complete() || c.Threads != runtime.GOMAXPROCS(0) {
		return nil
	}
	return &c
}

// keepCPUFigures writes c to path, replacing what is there; a failure
// only means that a later process measures again.
func keepCPUFigures(path string, c cost.CPU) error {
	if path == "" || !c.Complete() {
		return nil
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		// A FIFO or a device in the file's place would be written into.
		if err := os.Remove(path); err != nil {
			return err
		}
	}
	return atomicfile.Write(context.Background(), path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// newCPUBackend returns the CPU backend of the commands: with the kept
// CPU figures, or, where there are none, keeping the figures it measures
// when a call first needs them.
func newCPUBackend() *cpuref.Backend {
	path := cpuFiguresPath()
	b := &cpuref.Backend{Figures: keptCPUFigures(path)}
	if b.Figures == nil {
		b.Keep = func(c cost.CPU) { _ = keepCPUFigures(path, c) }
	}
	return b
}
