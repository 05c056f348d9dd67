package examples_test

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExampleShadersUpToDate recompiles the example applications'
// shaders (*/shaders/*.comp) as compile_shaders.sh does and compares each
// with the committed .spv that the programs embed (regenerate with go
// generate ./examples/...).
func TestExampleShadersUpToDate(t *testing.T) {
	glslc, err := exec.LookPath("glslc")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("glslc not found; install Debian package glslc")
		}
		t.Skip("glslc not found; install Debian package glslc")
	}
	sources, err := filepath.Glob("*/shaders/*.comp")
	require.NoError(t, err)
	require.NotEmpty(t, sources)
	dir := t.TempDir()
	for _, src := range sources {
		spv := strings.TrimSuffix(src, ".comp") + ".spv"
		t.Run(spv, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(spv, "/", "_"))
			msg, err := exec.Command(glslc, "--target-env=vulkan1.1", "-O", "-o", out, src).CombinedOutput()
			require.NoError(t, err, "%s: %s", src, msg)
			fresh, err := os.ReadFile(out)
			require.NoError(t, err)
			committed, err := os.ReadFile(spv)
			require.NoError(t, err, "missing %s; run go generate ./examples/...", spv)
			assert.True(t, bytes.Equal(fresh, committed), "%s is stale; run go generate ./examples/...", spv)
		})
	}
}

// build builds the program in dir with the given build tags into a
// temporary folder.
func build(t *testing.T, dir string, tags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(dir))
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	out, err := exec.Command("go", append(args, "./"+dir)...).CombinedOutput()
	require.NoError(t, err, "go build ./%s: %s", dir, out)
	return bin
}

// runProgram runs bin with args and env added to the environment; it
// must exit 0.
func runProgram(t *testing.T, env []string, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s: %s", filepath.Base(bin), strings.Join(args, " "), out)
	return string(out)
}

// TestClientProgram runs examples/client, the application that owns its
// Vulkan device and has gpuscatter record into its command buffer, on
// lavapipe and on SwiftShader (GPUSCATTER_SWIFTSHADER_ICD, which make
// test sets; under CI=true a missing one fails), with the validation
// layer and its synchronization validation on: the program fails on any
// message, on any difference from cpuref (the table bit for bit, the row
// sums), on a submission or a host copy of gpuscatter's own while
// recorded, and on its buffers failing it after gpuscatter's Close.
func TestClientProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program")
	}
	bin := build(t, "client")
	for _, driver := range []struct{ name, icd string }{
		{"lavapipe", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"},
		{"swiftshader", os.Getenv("GPUSCATTER_SWIFTSHADER_ICD")},
	} {
		t.Run(driver.name, func(t *testing.T) {
			if _, err := os.Stat(driver.icd); driver.icd == "" || err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("no %s driver manifest at %q (make swiftshader fetches SwiftShader; make deps installs lavapipe)", driver.name, driver.icd)
				}
				t.Skipf("no %s driver manifest at %q", driver.name, driver.icd)
			}
			out := runProgram(t, []string{"VK_ICD_FILENAMES=" + driver.icd}, bin, "-validate")
			t.Log(out)
			assert.Contains(t, out, "equal to cpuref, bit for bit (table and row sums)\n")
			assert.Regexp(t, `gpuscatter: recorded into the application's command buffer: \d+ dispatches .*; 0 submissions and 0 waits of its own while recorded`, out)
			assert.Contains(t, out, "no scatter byte through the host\n")
			assert.Contains(t, out, "after gpuscatter's Close: the application's device, queue and buffers work, and the table is unchanged\n")
			assert.Contains(t, out, "validation: no messages (synchronization validation on)\n")
			assert.NotContains(t, out, "no Vulkan device")
		})
	}
}

// TestSplatProgram runs examples/splat, the window that gpuscatter splats
// particles into every frame, under Xvfb on lavapipe for 60 frames with
// the validation layer and its synchronization validation on: the
// program fails on any message, on a frame whose grid does not hold
// every particle, and on a last grid that differs from cpuref's. The
// picture it writes must be the window's size and show the particles.
func TestSplatProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program")
	}
	xvfb, err := exec.LookPath("xvfb-run")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no xvfb-run (make deps installs xvfb)")
		}
		t.Skip("no xvfb-run")
	}
	bin := build(t, "splat", "glfw")
	pic := filepath.Join(t.TempDir(), "splat.png")
	out := runProgram(t, []string{"VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"},
		xvfb, "-a", bin, "-frames", "60", "-validate", "-png", pic)
	t.Log(out)
	assert.Contains(t, out, "60 frames in ")
	assert.Contains(t, out, "every frame's grid holds exactly 50000 particles\n")
	assert.Contains(t, out, "last frame: the grid equals cpuref's ScatterElements-18 add of the same cells\n")
	assert.Contains(t, out, "validation: no messages (synchronization validation on)\n")
	f, err := os.Open(pic)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.Equal(t, image.Rect(0, 0, 512, 512), img.Bounds())
	// Empty cells are black: the particles light up part of the picture,
	// and not all of it.
	lit := 0
	for y := 0; y < 512; y++ {
		for x := 0; x < 512; x++ {
			if r, g, b, _ := img.At(x, y).RGBA(); r|g|b != 0 {
				lit++
			}
		}
	}
	assert.Greater(t, lit, 512*512/20, "lit pixels")
	assert.Less(t, lit, 512*512, "lit pixels")
}
