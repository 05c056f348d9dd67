//go:build cgo

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/atomicfile"
	"github.com/gpuscatter/gpuscatter/npy"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// writeRawNPY writes an .npy file of the header numpy would write for dt
// and shape followed by payload as it is (bools other than 0 and 1, say).
func writeRawNPY(t *testing.T, dir, name string, dt tensor.DType, shape []int, payload []byte) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, npy.WriteHeader(&b, dt, shape))
	b.Write(payload)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	return path
}

// TestStreamedRunIsTheCPUs runs the same command lines on the CPU and on
// the Vulkan device, where .npy inputs are read straight into device
// memory and the output written from it: the exit status, stderr and
// output file are the same, a failed run leaves no file, the inputs are
// never changed, and the runs that can stream do.
func TestStreamedRunIsTheCPUs(t *testing.T) {
	fx := newFixture(t)
	dir := fx.dir
	boolData := writeRawNPY(t, dir, "bools.npy", tensor.Bool, []int{5}, []byte{0, 2, 1, 0, 3})
	boolUpd := writeRawNPY(t, dir, "bool-updates.npy", tensor.Bool, []int{2}, []byte{7, 0})
	// A big-endian payload is not the tensor's bytes: the host path reads it.
	bigEndian := filepath.Join(dir, "big.npy")
	hdr := "{'descr': '>f4', 'fortran_order': False, 'shape': (5,), }"
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	raw := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)+1), 0)
	raw = append(append(raw, hdr...), '\n')
	raw = append(raw, 0x3f, 0x80, 0, 0, 0x40, 0, 0, 0, 0x40, 0x40, 0, 0, 0x40, 0x80, 0, 0, 0x40, 0xa0, 0, 0)
	require.NoError(t, os.WriteFile(bigEndian, raw, 0o644))
	i32Data := writeNPY(t, dir, "i32.npy", i32([]int{5}, 1, 2, 3, 4, 5))
	collide := writeNPY(t, dir, "collide.npy", i64([]int{3, 1}, 1, 1, 4))
	i32Upd := writeNPY(t, dir, "i32-updates.npy", i32([]int{3}, 10, 20, 30))
	emptyData := writeNPY(t, dir, "empty.npy", f32([]int{0, 3}))
	emptyIdx := writeNPY(t, dir, "empty-indices.npy", i64([]int{0, 1}))
	emptyUpd := writeNPY(t, dir, "empty-updates.npy", f32([]int{0, 3}))
	noUpdates := writeNPY(t, dir, "no-updates.npy", f32([]int{0}))

	nd := func(op, data, indices, updates string, extra ...string) []string {
		return append([]string{"run", "--op", op, "--data", data, "--indices", indices, "--updates", updates}, extra...)
	}
	nd15 := func(data, indices, updates string) []string {
		return nd("ScatterNDUpdate-15", data, indices, updates)
	}
	slice := []string{"run", "--op", "SliceScatter-15", "--data", fx.f("data"), "--updates", fx.f("updates"), "--start", "1", "--stop", "5", "--step", "2"}
	upd3 := nd("ScatterUpdate-3", fx.f("data"), fx.f("indices-1d"), fx.f("updates-13"), "--axis", fx.f("axis-scalar"))
	tests := []struct {
		name     string
		args     []string
		out      string // the output's name
		streamed bool
	}{
		{"scatter", nd15(fx.f("data"), fx.f("indices"), fx.f("updates")), "out.npy", true},
		{"bools", nd15(boolData, fx.f("indices"), boolUpd), "out.npy", true},
		{"reduction", nd("ScatterND-18", i32Data, collide, i32Upd, "--reduction", "add"), "out.npy", true},
		{"slice", slice, "out.npy", true},
		{"empty data", nd15(emptyData, emptyIdx, emptyUpd), "out.npy", true},
		{"no updates", nd15(fx.f("data"), emptyIdx, noUpdates), "out.npy", true},
		{"axis file", upd3, "out.npy", true},
		{"big-endian data", nd15(bigEndian, fx.f("indices"), fx.f("updates")), "out.npy", false},
		{"pb output", nd15(fx.f("data"), fx.f("indices"), fx.f("updates")), "out.pb", false},

		{"index out of range", nd15(fx.f("data"), fx.f("indices-oob"), fx.f("updates")), "out.npy", true},
		{"negative index", nd("ScatterNDUpdate-3", fx.f("data"), fx.f("indices-neg"), fx.f("updates")), "out.npy", true},
		{"indices not integer", nd15(fx.f("data"), fx.f("indices-f32"), fx.f("updates")), "out.npy", true},
		{"updates shape", nd15(fx.f("data"), fx.f("indices"), fx.f("updates-3")), "out.npy", true},
		{"updates dtype", nd15(fx.f("data"), fx.f("indices"), fx.f("updates-i32")), "out.npy", true},
		{"data truncated", nd15(fx.f("truncated"), fx.f("indices"), fx.f("updates")), "out.npy", true},
		{"updates not npy", nd15(fx.f("data"), fx.f("indices"), fx.f("garbage")), "out.npy", true},
		{"axis out of range", nd("ScatterUpdate-3", fx.f("data"), fx.f("indices-1d"), fx.f("updates-13"), "--axis", "1"), "out.npy", true},
		{"axis file not npy", nd("ScatterUpdate-3", fx.f("data"), fx.f("indices-1d"), fx.f("updates-13"), "--axis", fx.f("garbage")), "out.npy", true},
		{"indices missing", nd15(fx.f("data"), filepath.Join(dir, "missing.npy"), fx.f("updates")), "out.npy", false},
		{"data is a directory", nd15(dir, fx.f("indices"), fx.f("updates")), "out.npy", false},
		{"bad indices before bad updates", nd15(fx.f("data"), fx.f("garbage"), fx.f("truncated")), "out.npy", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, dir)
			run := func(backend string) (int, string, string, []byte) {
				outDir := t.TempDir()
				out := filepath.Join(outDir, tt.out)
				code, stdout, stderr := runCLI(t, append(tt.args, "--out", out, "--backend", backend)...)
				assert.Empty(t, stdout)
				var got []byte
				if code == exitOK {
					var err error
					got, err = os.ReadFile(out)
					require.NoError(t, err)
				} else {
					assert.Empty(t, listDir(t, outDir), "%s: a failed run left files behind", backend)
				}
				return code, stdout, stderr, got
			}
			code, _, stderr, want := run("cpu")
			n := streamedRuns.Load()
			gcode, _, gstderr, got := run("gpu")
			assert.Equal(t, code, gcode)
			assert.Equal(t, stderr, gstderr)
			assert.True(t, bytes.Equal(want, got), "the output files differ")
			streamed := streamedRuns.Load() - n
			assert.Equal(t, tt.streamed, streamed == 1, "streamed")
			assert.Equal(t, before, snapshot(t, dir), "the inputs are unchanged")
		})
	}
}

// TestStreamedRunWriteFails: an output that cannot be written (a full
// device) fails the streamed run as it fails the CPU's.
func TestStreamedRunWriteFails(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	fx := newFixture(t)
	args := func(backend string) []string {
		return []string{"run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"),
			"--updates", fx.f("updates"), "--out", "/dev/full", "--backend", backend}
	}
	code, _, stderr := runCLI(t, args("cpu")...)
	requireInputError(t, code, "", stderr, "--out /dev/full: ", "no space left on device")
	n := streamedRuns.Load()
	gcode, _, gstderr := runCLI(t, args("gpu")...)
	assert.Equal(t, int64(1), streamedRuns.Load()-n, "streamed")
	assert.Equal(t, code, gcode)
	assert.Equal(t, stderr, gstderr)
}

// TestInterruptedStreamedRunLeavesNothing stops a streamed run with
// SIGTERM while it writes its output from device memory: it exits with
// 143 and the one-line message, leaving no output.
func TestInterruptedStreamedRunLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	const n = 4 << 20
	data, err := tensor.New(tensor.Float32, []int{n})
	require.NoError(t, err)
	args := []string{"run", "--op", "ScatterND-11",
		"--data", writeNPY(t, dir, "data.npy", data),
		"--indices", writeNPY(t, dir, "indices.npy", i64([]int{2, 1}, 0, n-1)),
		"--updates", writeNPY(t, dir, "updates.npy", f32([]int{2}, 1, 2)),
		"--out", filepath.Join(dir, "out.npy"), "--backend", "gpu"}
	before := listDir(t, dir)
	marker := filepath.Join(t.TempDir(), "writing")
	var stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), atomicfile.StallEnv+"="+marker)
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	waitFor(t, marker, 60*time.Second)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 143, ee.ExitCode())
	assert.Equal(t, "gpuscatter: interrupted by SIGTERM\n", stderr.String())
	assert.Equal(t, before, listDir(t, dir))

	msg, err := exec.Command(bin, args...).CombinedOutput()
	require.NoError(t, err, "%s", msg)
	got := readNPY(t, filepath.Join(dir, "out.npy"))
	assert.Equal(t, []int{n}, got.Shape)
	assert.Equal(t, float32(2), tensor.View[float32](got)[n-1])
}
