// Package examples_test checks the Go programs of the README and the
// docs pages: each ```go block is a program under examples/ or a run of
// lines of one, each program is shown whole on some page, and each
// program builds and prints what its comments say; apps_test.go runs the
// example applications that own their Vulkan device (client, splat).
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

// programs are the programs the pages show, as files of this folder.
var programs = []string{"hello/main.go", "library/main.go", "resident/main.go", "inside/main.go"}

// goBlocks returns the ```go blocks of markdown text md.
func goBlocks(md string) []string {
	var blocks []string
	for _, part := range strings.Split(md, "\n```go\n")[1:] {
		end := strings.Index(part, "\n```\n")
		if end < 0 {
			end = len(part)
		}
		blocks = append(blocks, part[:end+1])
	}
	return blocks
}

// dedent removes the tabs that every non-empty line of text starts with.
func dedent(text string) string {
	lines := strings.Split(text, "\n")
	for {
		some, all := false, true
		for _, l := range lines {
			if l != "" {
				some = true
				all = all && strings.HasPrefix(l, "\t")
			}
		}
		if !some || !all {
			return strings.Join(lines, "\n")
		}
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, "\t")
		}
	}
}

// TestReadmeBlocksAreThePrograms: every Go block of the README and of
// docs/ is one of the programs the tests build and run, whole, or a run
// of whole lines of one (dedented), and every program is shown whole.
func TestReadmeBlocksAreThePrograms(t *testing.T) {
	pages, err := filepath.Glob("../docs/*.md")
	require.NoError(t, err)
	pages = append([]string{"../README.md"}, pages...)
	src := map[string]string{}
	for _, p := range programs {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		src[p] = string(b)
	}
	whole := map[string]bool{}
	blocks := 0
	for _, page := range pages {
		md, err := os.ReadFile(page)
		require.NoError(t, err)
		for i, block := range goBlocks(string(md)) {
			blocks++
			found := false
			for _, p := range programs {
				if block == src[p] {
					whole[p], found = true, true
					break
				}
				// A run of whole lines, dedented as far as it goes.
				lines := strings.Split(src[p], "\n")
				n := strings.Count(block, "\n")
				for a := 0; a+n <= len(lines) && !found; a++ {
					found = dedent(strings.Join(lines[a:a+n], "\n"))+"\n" == block
				}
				if found {
					break
				}
			}
			assert.True(t, found, "%s: Go block %d is no program of examples/ nor a run of lines of one:\n%s", page, i+1, block)
		}
	}
	assert.GreaterOrEqual(t, blocks, len(programs))
	for _, p := range programs {
		assert.True(t, whole[p], "examples/%s is shown whole on no page", p)
	}
}

// goRun builds and runs the program in dir with env added to the
// environment and returns its output; it must exit 0.
func goRun(t *testing.T, dir string, env ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(dir))
	build := exec.Command("go", "build", "-o", bin, "./"+dir)
	build.Env = append(os.Environ(), env...)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build ./%s: %s", dir, out)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", dir, out)
	return string(out)
}

// requireDevice fails under CI=true, where lavapipe is installed, when a
// program found no Vulkan device, and skips elsewhere.
func requireDevice(t *testing.T, out string) {
	t.Helper()
	if strings.Contains(out, "no Vulkan device") {
		if os.Getenv("CI") != "" {
			t.Fatalf("no Vulkan device under CI:\n%s", out)
		}
		t.Skipf("no Vulkan device:\n%s", out)
	}
}

const (
	cpuLine   = "cpu: [1 13 3 14 28 6 20 20]\n"
	rangeLine = "indices: ScatterNDUpdate-15: indices[0,0] = 8 is out of range [-8, 7] for axis 0 of data\n"
)

// TestLibraryProgram runs examples/library on the default device, with a
// device selector that matches nothing and in a build without cgo: the
// last two fall back to the CPU (before, the README's pattern went on with
// a nil *gpu.Backend and crashed).
func TestLibraryProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the programs")
	}
	t.Run("no device", func(t *testing.T) {
		out := goRun(t, "library", "GPUSCATTER_DEVICE=no such device")
		lines := strings.SplitAfter(out, "\n")
		require.Len(t, lines, 5, out)
		assert.Equal(t, cpuLine, lines[0])
		assert.True(t, strings.HasPrefix(lines[1], `no Vulkan device, using the CPU: no device: vk: no Vulkan device: selector "no such device" matches no device name`), lines[1])
		assert.Equal(t, []string{cpuLine, rangeLine, ""}, lines[2:])
	})
	t.Run("without cgo", func(t *testing.T) {
		out := goRun(t, "library", "CGO_ENABLED=0")
		assert.Equal(t, cpuLine+
			"no Vulkan device, using the CPU: no device: this build has no Vulkan (built with CGO_ENABLED=0; the gpu backend needs cgo)\n"+
			cpuLine+rangeLine, out)
	})
	t.Run("default device", func(t *testing.T) {
		out := goRun(t, "library")
		requireDevice(t, out)
		lines := strings.SplitAfter(out, "\n")
		require.Len(t, lines, 4, out)
		assert.Equal(t, cpuLine, lines[0])
		assert.Regexp(t, `^vulkan: .*: \[1 13 3 14 28 6 20 20\]\n$`, lines[1])
		assert.Equal(t, []string{rangeLine, ""}, lines[2:])
	})
}

// TestHelloProgram runs examples/hello, the README's first Go program, on
// the default device and in a build without cgo (on the CPU).
func TestHelloProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the programs")
	}
	assert.Equal(t, "[0 4 0 2]\n", goRun(t, "hello"))
	assert.Equal(t, "[0 4 0 2]\n", goRun(t, "hello", "CGO_ENABLED=0"))
}

// TestResidentProgram runs examples/resident on the default device.
func TestResidentProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the programs")
	}
	out := goRun(t, "resident")
	requireDevice(t, out)
	assert.Equal(t, "[100 13 3 14 28 6 20 20]\n", out)
}

// TestInsideProgram runs examples/inside, the README's program inside an
// application's own Vulkan device, on the default device.
func TestInsideProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the programs")
	}
	out := goRun(t, "inside")
	requireDevice(t, out)
	assert.Equal(t, "[1 42 3 24 5 6 7 8]\n", out)
}

// TestSpecErrataInRepository: the operator contract and spec errata that
// code, tests and docs cite as specs/README.md are in the repository, and
// nothing points outside it (to the shared specs folder).
func TestSpecErrataInRepository(t *testing.T) {
	errata, err := os.ReadFile("../specs/README.md")
	require.NoError(t, err)
	assert.Contains(t, string(errata), "## Errata in ScatterNDUpdate-15.openvino.txt")
	assert.Contains(t, string(errata), "output is [1, 11, 3, 10, 14, 6, 13, 12]")
	outside := "shared" + "/specs" // spelt so as not to match itself
	cited := 0
	err = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		ext := filepath.Ext(path)
		if d.IsDir() || (ext != ".go" && ext != ".md" && ext != ".comp" && ext != ".glsl") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		assert.NotContains(t, string(b), outside, "%s points outside the repository", path)
		cited += strings.Count(string(b), "specs/README.md")
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, cited, 20, "the files that cite specs/README.md")
}
