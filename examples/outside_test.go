package examples_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outsideProgram uses a resident tensor after closing its Backend, as a
// program of another module sees the API: each call must give an error
// that errors.Is matches with gpu.ErrClosed.
const outsideProgram = `package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/tensor"
)

func main() {
	ctx := context.Background()
	g, err := gpu.Open(gpu.Options{PipelineCacheDir: "off"})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	host := tensor.MustFromSlice([]int{3}, []float32{1, 2, 3})
	t, err := g.Upload(ctx, host)
	if err != nil {
		fmt.Println("upload:", err)
		os.Exit(1)
	}
	if err := g.Close(); err != nil {
		fmt.Println("close:", err)
		os.Exit(1)
	}
	_, download := t.Download(ctx)
	_, copyTo := t.CopyTo(ctx, io.Discard)
	for _, c := range []struct {
		name string
		err  error
	}{{"Download", download}, {"Read", t.Read(ctx, host)}, {"Write", t.Write(ctx, host)}, {"CopyTo", copyTo}} {
		fmt.Printf("%s: errors.Is(err, gpu.ErrClosed) = %v (%v)\n", c.name, errors.Is(c.err, gpu.ErrClosed), c.err)
	}
}
`

// TestClosedBackendOutsideTheModule builds outsideProgram in a module of
// its own, which reaches this repository through a replace directive (with
// this module's go.sum, from the module cache alone: GOPROXY=off), and
// runs it on the default device: Download, Read, Write and CopyTo of a
// tensor whose Backend is closed each give gpu.ErrClosed.
func TestClosedBackendOutsideTheModule(t *testing.T) {
	repo, err := filepath.Abs("..")
	require.NoError(t, err)
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	require.NoError(t, err)
	goLine := ""
	for _, line := range strings.Split(string(gomod), "\n") {
		if strings.HasPrefix(line, "go ") {
			goLine = line
		}
	}
	require.NotEmpty(t, goLine, "the go line of go.mod")
	gosum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	require.NoError(t, err)

	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/outside\n\n" + goLine + "\n\nrequire github.com/gpuscatter/gpuscatter v0.0.0\n\n" +
			"replace github.com/gpuscatter/gpuscatter => " + repo + "\n",
		"go.sum":  string(gosum),
		"main.go": outsideProgram,
	}
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	bin := filepath.Join(dir, "outside")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "CGO_ENABLED=1")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build in a module outside the repository: %s", out)
	out, err = exec.Command(bin).CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, 4, "%s", out)
	for i, name := range []string{"Download", "Read", "Write", "CopyTo"} {
		assert.Equal(t, name+": errors.Is(err, gpu.ErrClosed) = true (vulkan: the backend is closed)", lines[i])
	}
}
