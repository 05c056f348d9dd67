package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestBinaryKeepsCPUFigures: a call that the CPU backend folds as its
// figures choose measures them in the first process of a cache folder,
// which keeps them; the next process reads them and measures nothing (the
// file is not written again); a damaged file, or one of another thread
// count, is measured again and replaced.
func TestBinaryKeepsCPUFigures(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	const n = 1 << 20 // 4 MiB of float32: folded serially or binned
	data, err := tensor.New(tensor.Float32, []int{n})
	require.NoError(t, err)
	ix, err := tensor.New(tensor.Int64, []int{n / 4})
	require.NoError(t, err)
	for i, v := 0, tensor.View[int64](ix); i < len(v); i++ {
		v[i] = int64(i*7919) % n
	}
	upd, err := tensor.New(tensor.Float32, []int{n / 4})
	require.NoError(t, err)
	args := []string{"run", "--op", "ScatterElements-18", "--reduction", "add", "--backend", "cpu",
		"--data", writeNPY(t, dir, "data.npy", data), "--indices", writeNPY(t, dir, "indices.npy", ix),
		"--updates", writeNPY(t, dir, "updates.npy", upd), "--out", filepath.Join(dir, "out.npy")}
	run := func() {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache, "HOME="+dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	files := func() []string {
		m, err := filepath.Glob(filepath.Join(cache, "gpuscatter", "cpu-figures-*.json"))
		require.NoError(t, err)
		return m
	}
	ino := func(path string) uint64 {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	run()
	kept := files()
	require.Len(t, kept, 1, "the first process keeps the figures it measured")
	b, err := os.ReadFile(kept[0])
	require.NoError(t, err)
	var c cost.CPU
	require.NoError(t, json.Unmarshal(b, &c))
	require.True(t, c.Complete())
	require.Equal(t, runtime.GOMAXPROCS(0), c.Threads)
	before := ino(kept[0])
	run()
	require.Equal(t, before, ino(kept[0]), "a later process reads them and writes nothing")

	for _, bad := range []string{"{not json", `{"threads": 1000}`} {
		require.NoError(t, os.WriteFile(kept[0], []byte(bad), 0o644))
		run()
		b, err := os.ReadFile(kept[0])
		require.NoError(t, err)
		var c cost.CPU
		require.NoError(t, json.Unmarshal(b, &c), "replaced after %q", bad)
		require.True(t, c.Complete())
	}
}

// TestKeptCPUFigures: the kept figures are used only when complete, of
// this thread count, and a regular file within its size.
func TestKeptCPUFigures(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "cpu-figures-x-1.json")
	good := cost.CPU{Threads: runtime.GOMAXPROCS(0), CopyGBps: 10, MoveGBps: 5, ElementNs: 1, ReduceNs: 2,
		Fold: []cost.FoldPoint{{OutBytes: 1 << 20, SerialNs: 1, BinnedNs: 2}}}
	require.Nil(t, keptCPUFigures(path), "none yet")
	require.Nil(t, keptCPUFigures(""))
	require.NoError(t, keepCPUFigures(path, good))
	require.Equal(t, &good, keptCPUFigures(path))

	other := good
	other.Threads++
	noFold := good
	noFold.Fold = nil
	for name, c := range map[string]cost.CPU{"another thread count": other, "no fold figures": noFold} {
		b, err := json.Marshal(c)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o644))
		require.Nil(t, keptCPUFigures(path), name)
	}
	require.NoError(t, os.WriteFile(path, make([]byte, maxCPUFiguresBytes+1), 0o644))
	require.Nil(t, keptCPUFigures(path), "too large")
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o755))
	require.Nil(t, keptCPUFigures(path), "a directory")
	require.Error(t, keepCPUFigures(path, good), "a directory is not replaced")
	require.NoError(t, os.Remove(path))
	require.NoError(t, syscall.Mkfifo(path, 0o644))
	require.Nil(t, keptCPUFigures(path), "a FIFO is not opened")
	require.NoError(t, keepCPUFigures(path, good), "a FIFO is replaced")
	require.Equal(t, &good, keptCPUFigures(path))
}
