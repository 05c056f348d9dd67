package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/examples"
	"github.com/gpuscatter/gpuscatter/tensor"
)

func f32(shape []int, v ...float32) *tensor.Tensor { return tensor.MustFromSlice(shape, v) }
func i32(shape []int, v ...int32) *tensor.Tensor   { return tensor.MustFromSlice(shape, v) }
func i64(shape []int, v ...int64) *tensor.Tensor   { return tensor.MustFromSlice(shape, v) }

// exampleCLIArgs writes the inputs of req into dir and returns the run
// arguments for it, written independently of exampleArgs so that the test
// checks the command rather than the helper the examples command uses.
func exampleCLIArgs(t *testing.T, dir string, req ops.Request, out string) []string {
	t.Helper()
	args := []string{"run", "--op", req.Op, "--out", out, "--backend", "cpu"}
	add := func(flag string, x *tensor.Tensor) {
		if x != nil {
			args = append(args, "--"+flag, writeNPY(t, dir, flag+".npy", x))
		}
	}
	add("data", req.Data)
	add("indices", req.Indices)
	add("updates", req.Updates)
	add("axis", req.Axis)
	add("start", req.Start)
	add("stop", req.Stop)
	add("step", req.Step)
	add("axes", req.Axes)
	if req.Reduction != "" {
		args = append(args, "--reduction="+req.Reduction)
	}
	if req.UseInitVal != nil {
		args = append(args, fmt.Sprintf("--use-init-val=%t", *req.UseInitVal))
	}
	if req.Mode != "" {
		args = append(args, "--mode="+req.Mode)
	}
	return args
}

// TestEverySpecExampleThroughRun runs every spec example through the run
// command in-process and compares its output file with the spec's output.
func TestEverySpecExampleThroughRun(t *testing.T) {
	all := examples.All()
	require.NotEmpty(t, all)
	for _, ex := range all {
		t.Run(ex.Name, func(t *testing.T) {
			require.NotNil(t, ex.Want, "example without an expected output")
			dir := t.TempDir()
			out := filepath.Join(dir, "out.npy")
			code, stdout, stderr := runCLI(t, exampleCLIArgs(t, dir, ex.Request, out)...)
			require.Equal(t, exitOK, code, "stderr: %s", stderr)
			assert.Empty(t, stdout)
			assert.Empty(t, stderr)
			requireEqualTensor(t, ex.Want, readNPY(t, out))
		})
	}
}

// fixture is a directory of input files shared by the error tests.
type fixture struct {
	dir   string
	files map[string]string // name -> path
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	fx := &fixture{dir: t.TempDir(), files: map[string]string{}}
	for name, x := range map[string]*tensor.Tensor{
		"data":        f32([]int{5}, 1, 2, 3, 4, 5),
		"data33":      f32([]int{3, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9),
		"indices":     i64([]int{2, 1}, 1, 3),
		"indices-neg": i64([]int{2, 1}, 1, -1),
		"indices-oob": i64([]int{2, 1}, 1, 7),
		"indices-f32": f32([]int{2, 1}, 1, 3),
		"indices-1d":  i32([]int{1}, 2),
		"updates":     f32([]int{2}, 10, 20),
		"updates-3":   f32([]int{3}, 10, 20, 30),
		"updates-i32": i32([]int{2}, 10, 20),
		"updates-13":  f32([]int{1, 3}, 10, 20, 30),
		"updates-31":  f32([]int{3, 1}, 10, 20, 30),
		"axis-scalar": tensor.MustFromSlice([]int{}, []int32{0}),
		"axis-1":      tensor.MustFromSlice([]int{1}, []uint8{0}),
		"axis-2":      i64([]int{2}, 0, 1),
		"axis-f32":    f32([]int{}, 0),
		"start":       i32([]int{1}, 0),
		"step0":       i32([]int{1}, 0),
	} {
		fx.files[name] = writeNPY(t, fx.dir, name+".npy", x)
	}
	garbage := filepath.Join(fx.dir, "garbage.npy")
	require.NoError(t, os.WriteFile(garbage, []byte("this is not an npy file"), 0o644))
	fx.files["garbage"] = garbage
	truncated := filepath.Join(fx.dir, "truncated.npy")
	full, err := os.ReadFile(fx.files["data"])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(truncated, full[:len(full)-3], 0o644))
	fx.files["truncated"] = truncated
	return fx
}

// f returns the path of a fixture file.
func (fx *fixture) f(name string) string {
	p, ok := fx.files[name]
	if !ok {
		panic("no fixture file " + name)
	}
	return p
}

// listDir returns the names in dir, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// snapshot returns the contents of every file in dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, name := range listDir(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		m[name] = string(b)
	}
	return m
}

// TestRunInputErrors checks every exit-1 path: one stderr line naming the
// input, and no output file (nor a temporary one) left behind.
func TestRunInputErrors(t *testing.T) {
	withGPU(t, nil) // a build without a GPU backend
	fx := newFixture(t)
	nd15 := func(extra ...string) []string {
		return append([]string{"--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"), "--updates", fx.f("updates")}, extra...)
	}
	with := func(args []string, flag, value string) []string {
		out := append([]string(nil), args...)
		for i := range out {
			if out[i] == "--"+flag {
				out[i+1] = value
				return out
			}
		}
		return append(out, "--"+flag, value)
	}
	upd3 := []string{"--op", "ScatterUpdate-3", "--data", fx.f("data"), "--indices", fx.f("indices-1d"), "--updates", fx.f("updates-13")}
	slice := []string{"--op", "SliceScatter-15", "--data", fx.f("data"), "--updates", fx.f("updates"), "--start", "0", "--stop", "2", "--step", "1"}
	missing := filepath.Join(fx.dir, "missing.npy")
	tests := []struct {
		name  string
		args  []string
		exact string   // the whole stderr line, after the prefix
		parts []string // or pieces of it
	}{
		{"data file missing", with(nd15(), "data", missing), "--data " + missing + ": open: no such file or directory", nil},
		{"indices file missing", with(nd15(), "indices", missing), "--indices " + missing + ": open: no such file or directory", nil},
		{"updates not an npy file", with(nd15(), "updates", fx.f("garbage")), "", []string{"--updates " + fx.f("garbage") + ": ", "magic"}},
		{"data truncated", with(nd15(), "data", fx.f("truncated")), "", []string{"--data " + fx.f("truncated") + ": ", "bytes"}},
		{"data is a directory", with(nd15(), "data", fx.dir), "", []string{"--data " + fx.dir + ": "}},
		{"axis file missing", with(upd3, "axis", missing), "--axis " + missing + ": open: no such file or directory", nil},
		{"start file missing", with(slice, "start", missing), "--start " + missing + ": open: no such file or directory", nil},
		{"axes file not npy", with(slice, "axes", fx.f("garbage")), "", []string{"--axes " + fx.f("garbage") + ": "}},

		// Out of range indices (the contract's message).
		{"index out of range", with(nd15(), "indices", fx.f("indices-oob")),
			"ScatterNDUpdate-15: indices[1,0] = 7 is out of range [-5, 4] for axis 0 of data", nil},
		{"negative index in a version that rejects it", with(with(nd15(), "op", "ScatterNDUpdate-3"), "indices", fx.f("indices-neg")),
			"ScatterNDUpdate-3: indices[1,0] = -1 is out of range [0, 4] for axis 0 of data", nil},

		// Validation after the inputs load.
		{"indices not integer", with(nd15(), "indices", fx.f("indices-f32")), "", []string{"ScatterNDUpdate-15: indices has dtype float32"}},
		{"updates shape", with(nd15(), "updates", fx.f("updates-3")), "", []string{"ScatterNDUpdate-15: updates has shape [3], want [2]"}},
		{"updates dtype", with(nd15(), "updates", fx.f("updates-i32")), "", []string{"updates has dtype int32 but data has float32"}},
		{"reduction not in the version", nd15("--reduction", "mean"), "", []string{"ScatterNDUpdate-15: reduction \"mean\" is not accepted"}},
		{"reduction in an operator without reductions", append(with(upd3, "axis", "0"), "--reduction", "sum"), "",
			[]string{"ScatterUpdate-3: reduction \"sum\" is not accepted by ScatterUpdate-3; it takes none"}},
		{"misspelt reduction", with(nd15("--reduction", "ad"), "op", "ScatterND-18"),
			`ScatterND-18: reduction "ad" is not accepted by ScatterND-18 (did you mean add?); it takes none, add, mul, min, max`, nil},
		{"misspelt reduction max", nd15("--reduction", "maxx"),
			`ScatterNDUpdate-15: reduction "maxx" is not accepted by ScatterNDUpdate-15 (did you mean max?); it takes none, sum, sub, prod, min, max`, nil},
		{"use-init-val on an operator without it", nd15("--use-init-val=false"), "", []string{"use_init_val is not an attribute of ScatterNDUpdate-15"}},
		{"axis on an operator without one", nd15("--axis", "0"), "", []string{"axis is not an input of ScatterNDUpdate-15"}},
		{"axis of shape [2]", with(upd3, "axis", fx.f("axis-2")), "", []string{"ScatterUpdate-3: axis has shape [2]; it must be a scalar or a 1-element 1-D tensor"}},
		{"axis not integer", with(upd3, "axis", fx.f("axis-f32")), "", []string{"axis has dtype float32"}},
		{"axis out of range", with(upd3, "axis", "1"), "", []string{"ScatterUpdate-3: axis = 1 is out of range [-1, 0] for data of rank 1"}},
		{"indices on SliceScatter", append(append([]string(nil), slice...), "--indices", fx.f("indices")), "", []string{"indices is not an input of SliceScatter-15"}},
		{"slice step 0", with(slice, "step", fx.f("step0")), "", []string{"SliceScatter-15: step[0] is 0"}},
		{"slice lengths differ", with(slice, "stop", "2,3"), "", []string{"SliceScatter-15: stop has 2 elements but start has 1"}},
		{"slice duplicate axes", append(with(with(with(with(slice, "data", fx.f("data33")), "start", "0,0"), "stop", "1,1"), "step", "1,1"), "--axes", "0,-2"), "",
			[]string{"SliceScatter-15: axes[1] names axis 0 again"}},
		{"slice updates shape", with(slice, "stop", "3"), "", []string{"SliceScatter-15: updates has shape [2], want the slice's shape [3]"}},
		{"start not integer", with(slice, "start", fx.f("data")), "", []string{"start has dtype float32"}},

		// Backends.
		{"gpu backend", nd15("--backend", "gpu"), "--backend gpu: this build has no Vulkan (built with CGO_ENABLED=0; the gpu backend needs cgo)", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outDir := t.TempDir()
			out := filepath.Join(outDir, "out.npy")
			before := snapshot(t, fx.dir)
			args := append([]string{"run"}, tt.args...)
			args = append(args, "--out", out)
			code, stdout, stderr := runCLI(t, args...)
			if tt.exact != "" {
				requireInputError(t, code, stdout, stderr)
				require.Equal(t, prefix+tt.exact+"\n", stderr)
			} else {
				requireInputError(t, code, stdout, stderr, tt.parts...)
			}
			assert.Empty(t, listDir(t, outDir), "a failed run left files behind")
			assert.Equal(t, before, snapshot(t, fx.dir), "a failed run changed its inputs")
		})
	}
}

func TestRunOutputErrors(t *testing.T) {
	fx := newFixture(t)
	args := func(out string) []string {
		return []string{"run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"),
			"--updates", fx.f("updates"), "--out", out, "--backend", "cpu"}
	}
	noDir := filepath.Join(t.TempDir(), "no", "such", "dir", "out.npy")
	code, stdout, stderr := runCLI(t, args(noDir)...)
	requireInputError(t, code, stdout, stderr, "--out "+noDir+": ")
	assert.Equal(t, 1, strings.Count(stderr, noDir), stderr)

	// Checked before the inputs are read: a missing input is not reported.
	a := args(noDir)
	a[4] = filepath.Join(t.TempDir(), "missing.npy")
	code, stdout, stderr = runCLI(t, a...)
	requireInputError(t, code, stdout, stderr, "--out "+noDir+": ", "no such file or directory")

	dirOut := t.TempDir()
	code, stdout, stderr = runCLI(t, args(dirOut)...)
	requireInputError(t, code, stdout, stderr)
	assert.Equal(t, prefix+"--out "+dirOut+": is a directory\n", stderr)

	// A file where the directory should be.
	fileDir := fx.f("data")
	code, stdout, stderr = runCLI(t, args(filepath.Join(fileDir, "out.npy"))...)
	requireInputError(t, code, stdout, stderr, "--out "+filepath.Join(fileDir, "out.npy")+": ")
	fi, err := os.Stat(dirOut)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	assert.Empty(t, listDir(t, dirOut))
}

// TestFailedRunKeepsExistingOutput: a run that fails, at any stage, leaves
// an existing output file exactly as it was and no temporary files.
func TestFailedRunKeepsExistingOutput(t *testing.T) {
	withGPU(t, nil) // a build without a GPU backend
	fx := newFixture(t)
	outDir := t.TempDir()
	out := filepath.Join(outDir, "out.npy")
	const old = "previous result, not to be touched"
	require.NoError(t, os.WriteFile(out, []byte(old), 0o600))
	base := []string{"run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--updates", fx.f("updates"), "--out", out}
	for name, extra := range map[string][]string{
		"out-of-range index":   {"--indices", fx.f("indices-oob")},
		"validation failure":   {"--indices", fx.f("indices-f32")},
		"unreadable input":     {"--indices", fx.f("garbage")},
		"gpu backend":          {"--indices", fx.f("indices"), "--backend", "gpu"},
		"usage error":          {"--indices", fx.f("indices"), "--backend", "tpu"},
		"bad reduction":        {"--indices", fx.f("indices"), "--reduction", "xor"},
		"missing indices file": {"--indices", filepath.Join(outDir, "nope.npy")},
	} {
		code, _, stderr := runCLI(t, append(append([]string(nil), base...), extra...)...)
		assert.NotEqual(t, exitOK, code, name)
		assert.True(t, strings.HasPrefix(stderr, prefix), name)
		got, err := os.ReadFile(out)
		require.NoError(t, err, name)
		assert.Equal(t, old, string(got), name)
		fi, err := os.Stat(out)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), name)
		assert.Equal(t, []string{"out.npy"}, listDir(t, outDir), name)
	}
	// A successful run replaces it.
	code, _, stderr := runCLI(t, append(base, "--indices", fx.f("indices"), "--backend", "cpu")...)
	require.Equal(t, exitOK, code, stderr)
	requireEqualTensor(t, f32([]int{5}, 1, 10, 3, 20, 5), readNPY(t, out))
	assert.Equal(t, []string{"out.npy"}, listDir(t, outDir))
}

func TestRunUsageErrors(t *testing.T) {
	fx := newFixture(t)
	out := filepath.Join(t.TempDir(), "out.npy")
	full := []string{"--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"), "--updates", fx.f("updates"), "--out", out}
	without := func(flag string) []string {
		var a []string
		for i := 0; i < len(full); i += 2 {
			if full[i] != "--"+flag {
				a = append(a, full[i], full[i+1])
			}
		}
		return a
	}
	slice := []string{"--op", "SliceScatter-15", "--data", fx.f("data"), "--updates", fx.f("updates"), "--out", out}
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"no flags", nil, "missing required flags --op, --data, --updates, --out"},
		{"missing --op", without("op"), "missing required flag --op"},
		{"missing --data", without("data"), "missing required flag --data"},
		{"missing --updates", without("updates"), "missing required flag --updates"},
		{"missing --out", without("out"), "missing required flag --out"},
		{"unknown flag", append(full, "--fast", "1"), "unknown flag --fast"},
		{"unknown operator", append(without("op"), "--op", "ScatterUpdate-99"), `--op "ScatterUpdate-99" is not an operator gpuscatter runs`},
		{"bad backend", append(full, "--backend", "tpu"), `--backend "tpu": want one of auto, cpu, gpu`},
		{"bad backend case", append(full, "--backend=CPU"), `--backend "CPU"`},
		{"flag twice", append(full, "--data", fx.f("data")), "flag --data is given more than once"},
		{"stray argument", append(full, "extra"), `unexpected argument "extra"`},
		{"flag without value", append(full, "--reduction"), "flag --reduction needs a value"},
		{"flag followed by a flag", append(without("data"), "--data", "--backend", "cpu"), "flag --data needs a value"},
		{"empty data path", append(without("data"), "--data="), `--data "": want the path of a .npy or .pb file`},
		{"empty out path", append(without("out"), "--out="), `--out "": want a path`},
		{"use-init-val not a bool", append(full, "--use-init-val=maybe"), `--use-init-val "maybe": want true or false`},
		{"use-init-val as separate false", append(full, "--use-init-val", "false", "false"), `unexpected argument "false"`},
		{"axis not an integer", append(full, "--axis", "one"), `--axis "one": want an integer or a path ending in .npy`},
		{"axis a float", append(full, "--axis", "1.5"), `--axis "1.5": want an integer`},
		{"axis a list", append(full, "--axis", "0,1"), `--axis "0,1": want an integer`},
		{"axis too large", append(full, "--axis", "99999999999999999999"), "does not fit in an int64"},
		{"start empty element", append(slice, "--start", "1,,2", "--stop", "1", "--step", "1"), `--start "1,,2": element 2 of the comma list is empty`},
		{"stop not an integer", append(slice, "--start", "1", "--stop", "1,x", "--step", "1"), `--stop "1,x": element 2 ("x") is not a decimal integer`},
		{"step trailing comma", append(slice, "--start", "1", "--stop", "1", "--step", "1,"), `--step "1,"`},
		{"axes out of int64", append(slice, "--start", "1", "--stop", "1", "--step", "1", "--axes", "9223372036854775808"), "does not fit in an int64"},
		{"start a non-npy path", append(slice, "--start", fx.dir+"/start.bin", "--stop", "1", "--step", "1"), "or a path ending in .npy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"run"}, tt.args...)...)
			requireUsageError(t, code, stdout, stderr, tt.msg)
			assert.Contains(t, stderr, "gpuscatter run (--op NAME | --model FILE.onnx)")
			assert.NoFileExists(t, out)
		})
	}
}

// TestRunSliceParameters: start, stop, step and axes as comma lists, as
// .npy files of any integer type, and mixed, all give the same result.
func TestRunSliceParameters(t *testing.T) {
	dir := t.TempDir()
	data := writeNPY(t, dir, "data.npy", f32([]int{3, 5}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14))
	upd := writeNPY(t, dir, "upd.npy", f32([]int{2, 2}, 50, 60, 70, 80))
	want := f32([]int{3, 5}, 0, 50, 2, 60, 4, 5, 6, 7, 8, 9, 10, 70, 12, 80, 14) // SliceScatter-15 example 3
	npyFile := func(name string, x *tensor.Tensor) string { return writeNPY(t, dir, name, x) }
	forms := map[string][]string{
		"comma lists":       {"--start", "0,1", "--stop", "3,5", "--step", "2,2"},
		"comma lists, axes": {"--start", "1,0", "--stop", "5,3", "--step", "2,2", "--axes", "1,0"},
		"negative axes":     {"--start", "1, 0", "--stop", "5, 3", "--step", "2, 2", "--axes", "-1, -2"},
		"negative start":    {"--start", "-3,1", "--stop", "99,5", "--step", "2,2"},
		"npy int32": {"--start", npyFile("start32.npy", i32([]int{2}, 0, 1)), "--stop", npyFile("stop32.npy", i32([]int{2}, 3, 5)),
			"--step", npyFile("step32.npy", i32([]int{2}, 2, 2))},
		"npy mixed types": {"--start", npyFile("start8.npy", tensor.MustFromSlice([]int{2}, []int8{0, 1})),
			"--stop", npyFile("stopu16.npy", tensor.MustFromSlice([]int{2}, []uint16{3, 5})),
			"--step", npyFile("stepu64.npy", tensor.MustFromSlice([]int{2}, []uint64{2, 2})),
			"--axes", npyFile("axes64.npy", i64([]int{2}, 0, 1))},
		"lists and npy": {"--start", "0,1", "--stop", npyFile("stop64.npy", i64([]int{2}, 3, 5)), "--step", "2,2",
			"--axes", npyFile("axesu8.npy", tensor.MustFromSlice([]int{2}, []uint8{0, 1}))},
	}
	for name, params := range forms {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.npy")
			args := append([]string{"run", "--op", "slicescatter-15", "--data", data, "--updates", upd, "--out", out, "--backend", "cpu"}, params...)
			code, _, stderr := runCLI(t, args...)
			require.Equal(t, exitOK, code, stderr)
			requireEqualTensor(t, want, readNPY(t, out))
		})
	}

	// A backwards slice to the end: INT64_MIN as stop.
	d5 := writeNPY(t, dir, "d5.npy", f32([]int{5}, 0, 1, 2, 3, 4))
	u5 := writeNPY(t, dir, "u5.npy", f32([]int{5}, 10, 11, 12, 13, 14))
	out := filepath.Join(dir, "rev.npy")
	code, _, stderr := runCLI(t, "run", "--op", "SliceScatter-15", "--data", d5, "--updates", u5, "--out", out, "--backend", "cpu",
		"--start", "-1", "--stop", "-9223372036854775808", "--step", "-1")
	require.Equal(t, exitOK, code, stderr)
	requireEqualTensor(t, f32([]int{5}, 14, 13, 12, 11, 10), readNPY(t, out))

	// Empty lists: no axis sliced, so updates replaces all of data.
	out = filepath.Join(dir, "all.npy")
	code, _, stderr = runCLI(t, "run", "--op", "SliceScatter-15", "--data", d5, "--updates", u5, "--out", out, "--backend", "cpu",
		"--start=", "--stop=", "--step=")
	require.Equal(t, exitOK, code, stderr)
	requireEqualTensor(t, f32([]int{5}, 10, 11, 12, 13, 14), readNPY(t, out))
}

// TestRunAxisForms: --axis as an integer, a scalar .npy and a [1]-shaped
// .npy give the same result; a [2]-shaped one is rejected; ONNX operators
// default to axis 0.
func TestRunAxisForms(t *testing.T) {
	dir := t.TempDir()
	data := writeNPY(t, dir, "data.npy", f32([]int{2, 3}, 1, 2, 3, 4, 5, 6))
	idx := writeNPY(t, dir, "idx.npy", i64([]int{1}, 2))
	upd := writeNPY(t, dir, "upd.npy", f32([]int{2, 1}, 30, 60))
	want := f32([]int{2, 3}, 1, 2, 30, 4, 5, 60) // ScatterUpdate-3 along axis 1
	forms := map[string]string{
		"integer":          "1",
		"negative integer": "-1",
		"plus sign":        "+1",
		"scalar int32 npy": writeNPY(t, dir, "axis-s.npy", tensor.MustFromSlice([]int{}, []int32{1})),
		"[1] uint8 npy":    writeNPY(t, dir, "axis-1.npy", tensor.MustFromSlice([]int{1}, []uint8{1})),
		"[1] int64 npy":    writeNPY(t, dir, "axis-1b.npy", i64([]int{1}, -1)),
	}
	for name, axis := range forms {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.npy")
			code, _, stderr := runCLI(t, "run", "--op", "ScatterUpdate-3", "--data", data, "--indices", idx, "--updates", upd,
				"--axis", axis, "--out", out, "--backend", "cpu")
			require.Equal(t, exitOK, code, stderr)
			requireEqualTensor(t, want, readNPY(t, out))
		})
	}
	t.Run("[2]-shaped npy rejected", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out.npy")
		axis := writeNPY(t, dir, "axis-2.npy", i64([]int{2}, 1, 1))
		code, stdout, stderr := runCLI(t, "run", "--op", "ScatterUpdate-3", "--data", data, "--indices", idx, "--updates", upd,
			"--axis", axis, "--out", out, "--backend", "cpu")
		requireInputError(t, code, stdout, stderr, "ScatterUpdate-3: axis has shape [2]")
		assert.NoFileExists(t, out)
	})
	t.Run("ONNX default axis 0", func(t *testing.T) {
		edata := writeNPY(t, dir, "edata.npy", f32([]int{3, 3}, 0, 0, 0, 0, 0, 0, 0, 0, 0))
		eidx := writeNPY(t, dir, "eidx.npy", i64([]int{2, 3}, 1, 0, 2, 0, 2, 1))
		eupd := writeNPY(t, dir, "eupd.npy", f32([]int{2, 3}, 1.0, 1.1, 1.2, 2.0, 2.1, 2.2))
		ewant := f32([]int{3, 3}, 2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2)
		for _, extra := range [][]string{nil, {"--axis", "0"}, {"--axis", "-2"}} {
			out := filepath.Join(t.TempDir(), "out.npy")
			args := append([]string{"run", "--op", "scatterelements-18", "--data", edata, "--indices", eidx, "--updates", eupd,
				"--out", out, "--backend", "cpu"}, extra...)
			code, _, stderr := runCLI(t, args...)
			require.Equal(t, exitOK, code, stderr)
			requireEqualTensor(t, ewant, readNPY(t, out))
		}
	})
}

// TestRunReductionsAndUseInitVal: --reduction and --use-init-val reach the
// operator (ScatterElementsUpdate-12, sum), and the result matches the
// reference backend called directly.
func TestRunReductionsAndUseInitVal(t *testing.T) {
	dir := t.TempDir()
	data := f32([]int{3}, 1, 2, 3)
	idx := i64([]int{3}, 0, 0, -1)
	upd := f32([]int{3}, 10, 20, 30)
	paths := []string{writeNPY(t, dir, "d.npy", data), writeNPY(t, dir, "i.npy", idx), writeNPY(t, dir, "u.npy", upd)}
	tru, fal := true, false
	tests := []struct {
		flag   []string
		useIV  *bool
		red    string
		expect *tensor.Tensor
	}{
		{nil, nil, "sum", f32([]int{3}, 31, 2, 33)},
		{[]string{"--use-init-val=true"}, &tru, "sum", f32([]int{3}, 31, 2, 33)},
		{[]string{"--use-init-val=false"}, &fal, "sum", f32([]int{3}, 30, 2, 30)},
		{[]string{"--use-init-val", "0"}, &fal, "sum", f32([]int{3}, 30, 2, 30)},
		{[]string{"--use-init-val=false"}, &fal, "max", f32([]int{3}, 20, 2, 30)},
		{nil, nil, "", f32([]int{3}, 20, 2, 30)},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s %v", tt.red, tt.flag)
		out := filepath.Join(t.TempDir(), "out.npy")
		args := []string{"run", "--op", "ScatterElementsUpdate-12", "--axis", "0", "--data", paths[0], "--indices", paths[1],
			"--updates", paths[2], "--out", out, "--backend", "cpu"}
		if tt.red != "" {
			args = append(args, "--reduction", tt.red)
		}
		code, _, stderr := runCLI(t, append(args, tt.flag...)...)
		require.Equal(t, exitOK, code, "%s: %s", name, stderr)
		got := readNPY(t, out)
		requireEqualTensor(t, tt.expect, got)
		ref, err := ops.Run(context.Background(), cpuref.New(), ops.Request{Op: "ScatterElementsUpdate-12", Data: data, Indices: idx,
			Updates: upd, Axis: tensor.Scalar(0), Reduction: tt.red, UseInitVal: tt.useIV})
		require.NoError(t, err, name)
		requireEqualTensor(t, ref, got)
	}
}

// TestRunStrings: string tensors travel through .npy files (ONNX
// ScatterElements takes them with reduction none). Data is '<U4', wide
// enough for the updates: the output keeps data's dtype (see
// TestStringOutputKeepsDataDType).
func TestRunStrings(t *testing.T) {
	dir := t.TempDir()
	data, err := tensor.FromStrings([]int{2, 2}, []string{"a", "b", "c", "d"})
	require.NoError(t, err)
	data.StringFormat = tensor.StringFormat{Width: 4}
	upd, err := tensor.FromStrings([]int{1, 2}, []string{"über", ""})
	require.NoError(t, err)
	want, err := tensor.FromStrings([]int{2, 2}, []string{"a", "b", "über", ""})
	require.NoError(t, err)
	out := filepath.Join(dir, "out.npy")
	code, _, stderr := runCLI(t, "run", "--op", "ScatterElements-13", "--data", writeNPY(t, dir, "d.npy", data),
		"--indices", writeNPY(t, dir, "i.npy", i64([]int{1, 2}, 1, -1)), "--updates", writeNPY(t, dir, "u.npy", upd),
		"--out", out, "--backend", "cpu")
	require.Equal(t, exitOK, code, stderr)
	got := readNPY(t, out)
	requireEqualTensor(t, want, got)
	assert.Equal(t, data.StringFormat, got.StringFormat)
}

// TestRunLeavesInputsUnchanged: a successful run changes no input file,
// even when the output replaces one of them.
func TestRunLeavesInputsUnchanged(t *testing.T) {
	fx := newFixture(t)
	before := snapshot(t, fx.dir)
	out := filepath.Join(t.TempDir(), "out.npy")
	code, _, stderr := runCLI(t, "run", "--op", "ScatterNDUpdate-15", "--reduction", "prod", "--data", fx.f("data"),
		"--indices", fx.f("indices-neg"), "--updates", fx.f("updates"), "--out", out, "--backend", "cpu")
	require.Equal(t, exitOK, code, stderr)
	requireEqualTensor(t, f32([]int{5}, 1, 20, 3, 4, 100), readNPY(t, out))
	assert.Equal(t, before, snapshot(t, fx.dir))

	// In place: --out names --data. Only data changes, and only on success.
	inplace := filepath.Join(fx.dir, "inplace.npy")
	require.NoError(t, os.WriteFile(inplace, []byte(before["data.npy"]), 0o644))
	before = snapshot(t, fx.dir)
	code, _, stderr = runCLI(t, "run", "--op", "ScatterNDUpdate-15", "--data", inplace, "--indices", fx.f("indices"),
		"--updates", fx.f("updates"), "--out", inplace, "--backend", "cpu")
	require.Equal(t, exitOK, code, stderr)
	requireEqualTensor(t, f32([]int{5}, 1, 10, 3, 20, 5), readNPY(t, inplace))
	after := snapshot(t, fx.dir)
	delete(before, "inplace.npy")
	delete(after, "inplace.npy")
	assert.Equal(t, before, after)
}

// fakeGPU stands in for a GPU backend: it runs the CPU reference under
// another name and counts its calls. With corrupt set it returns data
// unchanged, so the examples command sees mismatches.
type fakeGPU struct {
	ops.Backend
	calls   *int
	corrupt bool
}

func (g fakeGPU) Name() string { return "vulkan: fake device" }

func (g fakeGPU) Execute(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error {
	*g.calls++
	if g.corrupt {
		copy(out.Data, p.Data.Data)
		copy(out.Strings, p.Data.Strings)
		return nil
	}
	return g.Backend.Execute(ctx, p, out)
}

// withGPU installs open as the GPU backend constructor for the test.
func withGPU(t *testing.T, open func(ctx context.Context) (ops.Backend, error)) {
	t.Helper()
	saved := newGPUBackend
	newGPUBackend = nil // a build without a GPU backend
	if open != nil {
		newGPUBackend = func(ctx context.Context, _ gpuSettings, _ bool) (ops.Backend, error) { return open(ctx) }
	}
	t.Cleanup(func() { newGPUBackend = saved })
}

func TestRunBackends(t *testing.T) {
	fx := newFixture(t)
	args := func(out string, backend ...string) []string {
		a := []string{"run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"),
			"--updates", fx.f("updates"), "--out", out}
		return append(a, backend...)
	}
	want := f32([]int{5}, 1, 10, 3, 20, 5)

	t.Run("cpu: no notice", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out.npy")
		code, stdout, stderr := runCLI(t, args(out, "--backend", "cpu")...)
		require.Equal(t, exitOK, code, stderr)
		assert.Empty(t, stdout)
		assert.Empty(t, stderr)
		requireEqualTensor(t, want, readNPY(t, out))
	})
	t.Run("auto without a GPU backend: CPU and a notice", func(t *testing.T) {
		withGPU(t, nil)
		for _, b := range [][]string{nil, {"--backend", "auto"}} {
			out := filepath.Join(t.TempDir(), "out.npy")
			code, stdout, stderr := runCLI(t, args(out, b...)...)
			require.Equal(t, exitOK, code, stderr)
			assert.Empty(t, stdout)
			assert.Equal(t, prefix+"--backend auto: this build has no Vulkan (built with CGO_ENABLED=0; the gpu backend needs cgo); using the CPU\n", stderr)
			requireEqualTensor(t, want, readNPY(t, out))
		}
	})
	t.Run("auto: no notice when the run fails", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out.npy")
		a := args(out)
		require.Equal(t, "--indices", a[5])
		a[6] = fx.f("indices-oob")
		code, stdout, stderr := runCLI(t, a...)
		requireInputError(t, code, stdout, stderr, "indices[1,0] = 7")
		assert.NotContains(t, stderr, "using the CPU")
	})
	t.Run("gpu plugged in", func(t *testing.T) {
		calls := 0
		withGPU(t, func(context.Context) (ops.Backend, error) { return fakeGPU{Backend: cpuref.New(), calls: &calls}, nil })
		for _, b := range [][]string{nil, {"--backend", "auto"}, {"--backend", "gpu"}} {
			out := filepath.Join(t.TempDir(), "out.npy")
			code, _, stderr := runCLI(t, args(out, b...)...)
			require.Equal(t, exitOK, code, stderr)
			assert.Empty(t, stderr)
			requireEqualTensor(t, want, readNPY(t, out))
		}
		assert.Equal(t, 3, calls)
		out := filepath.Join(t.TempDir(), "out.npy")
		code, _, stderr := runCLI(t, args(out, "--backend", "cpu")...)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, 3, calls, "--backend cpu ran on the GPU")
	})
	t.Run("gpu without a device", func(t *testing.T) {
		withGPU(t, func(context.Context) (ops.Backend, error) {
			return nil, fmt.Errorf("vulkan: no physical device: %w", ops.ErrNoDevice)
		})
		out := filepath.Join(t.TempDir(), "out.npy")
		code, stdout, stderr := runCLI(t, args(out, "--backend", "gpu")...)
		requireInputError(t, code, stdout, stderr)
		assert.Equal(t, prefix+"--backend gpu: vulkan: no physical device: no device\n", stderr)
		assert.NoFileExists(t, out)

		code, _, stderr = runCLI(t, args(out)...)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, prefix+"--backend auto: vulkan: no physical device: no device; using the CPU\n", stderr)
		requireEqualTensor(t, want, readNPY(t, out))
	})
	t.Run("backend errors are reported", func(t *testing.T) {
		withGPU(t, func(context.Context) (ops.Backend, error) { return failingBackend{}, nil })
		out := filepath.Join(t.TempDir(), "out.npy")
		code, stdout, stderr := runCLI(t, args(out, "--backend", "gpu")...)
		requireInputError(t, code, stdout, stderr, "ScatterNDUpdate-15: device lost")
		assert.NoFileExists(t, out)
	})
}

// failingBackend fails every Execute with a device loss.
type failingBackend struct{}

func (failingBackend) Name() string { return "vulkan: failing" }
func (failingBackend) Execute(_ context.Context, p *ops.Plan, _ *tensor.Tensor) error {
	return &ops.Error{Op: p.Op.Name, Input: "data", Err: ops.ErrDeviceLost, Msg: "device lost while scattering"}
}
func (failingBackend) Close() error { return nil }

func TestRunCloseErrorFailsTheRun(t *testing.T) {
	fx := newFixture(t)
	withGPU(t, func(context.Context) (ops.Backend, error) { return closeFails{cpuref.New()}, nil })
	out := filepath.Join(t.TempDir(), "out.npy")
	code, stdout, stderr := runCLI(t, "run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"),
		"--updates", fx.f("updates"), "--out", out, "--backend", "gpu")
	requireInputError(t, code, stdout, stderr, ": close: close failed")
	assert.NoFileExists(t, out)
}

// closeFails is a working backend whose Close fails.
type closeFails struct{ ops.Backend }

func (closeFails) Close() error { return errors.New("close failed") }

func TestRunCancelled(t *testing.T) {
	fx := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	withGPU(t, func(ctx context.Context) (ops.Backend, error) { return nil, ctx.Err() })
	out := filepath.Join(t.TempDir(), "out.npy")
	var stdout, stderr strings.Builder
	code := Main(ctx, []string{"run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"),
		"--updates", fx.f("updates"), "--out", out}, &stdout, &stderr)
	require.Equal(t, exitError, code)
	assert.Equal(t, prefix+"context canceled\n", stderr.String())
	assert.NoFileExists(t, out)
}

// noReductionsGPU is a GPU backend that runs only plans without a
// reduction, as a device lacking some atomics might.
type noReductionsGPU struct{ ops.Backend }

func (g noReductionsGPU) Name() string { return "vulkan: fake device" }

func (g noReductionsGPU) Execute(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error {
	if p.Reduction != ops.None {
		return &ops.Error{Op: p.Op.Name, Input: "reduction", Err: ops.ErrUnsupported, Msg: "reduction " + p.Reduction.String() + " is not on this device"}
	}
	return g.Backend.Execute(ctx, p, out)
}

func TestAutoFallsBackToCPUForUnsupportedPlans(t *testing.T) {
	withGPU(t, func(context.Context) (ops.Backend, error) { return noReductionsGPU{cpuref.New()}, nil })
	fx := newFixture(t)
	args := func(out string, extra ...string) []string {
		return append([]string{"run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"),
			"--updates", fx.f("updates"), "--out", out}, extra...)
	}
	out := filepath.Join(t.TempDir(), "out.npy")
	code, _, stderr := runCLI(t, args(out)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr, "a plan the GPU runs gives no notice")

	code, _, stderr = runCLI(t, args(out, "--reduction", "sum")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, prefix+"--backend auto: ScatterNDUpdate-15: reduction sum is not on this device; ran ScatterNDUpdate-15 on the CPU\n", stderr)
	want, err := cpuref.Run(ops.Request{Op: "ScatterNDUpdate-15", Reduction: "sum", Data: readNPY(t, fx.f("data")),
		Indices: readNPY(t, fx.f("indices")), Updates: readNPY(t, fx.f("updates"))})
	require.NoError(t, err)
	requireEqualTensor(t, want, readNPY(t, out))

	code, _, stderr = runCLI(t, args(out, "--reduction", "sum", "--backend", "gpu")...)
	requireInputError(t, code, "", stderr, "reduction sum is not on this device")
}

func TestRunDeterministicOnTheGPU(t *testing.T) {
	fx := newFixture(t)
	out := filepath.Join(t.TempDir(), "out.npy")
	code, _, stderr := runCLI(t, "run", "--op", "ScatterNDUpdate-15", "--reduction", "sum", "--data", fx.f("data"),
		"--indices", fx.f("indices"), "--updates", fx.f("updates"), "--out", out, "--backend", "gpu", "--deterministic")
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	want, err := cpuref.Run(ops.Request{Op: "ScatterNDUpdate-15", Reduction: "sum", Data: readNPY(t, fx.f("data")),
		Indices: readNPY(t, fx.f("indices")), Updates: readNPY(t, fx.f("updates"))})
	require.NoError(t, err)
	requireEqualTensor(t, want, readNPY(t, out))
}

// TestRunSkipBadIndices: with --skip-bad-indices a bad index skips its
// updates, --out holds every other one, and the run still fails with the
// index's error (status 1); without it nothing is written.
func TestRunSkipBadIndices(t *testing.T) {
	withGPU(t, nil) // a build without a GPU backend
	fx := newFixture(t)
	outDir := t.TempDir()
	out := filepath.Join(outDir, "out.npy")
	base := []string{"run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices-oob"),
		"--updates", fx.f("updates"), "--out", out}
	const bad = "gpuscatter: ScatterNDUpdate-15: indices[1,0] = 7 is out of range [-5, 4] for axis 0 of data"

	code, _, stderr := runCLI(t, base...)
	assert.Equal(t, exitError, code)
	assert.Equal(t, bad+"\n", stderr)
	assert.Empty(t, listDir(t, outDir), "no output without the opt-in")

	for _, flag := range []string{"--skip-bad-indices", "--skip-bad-indices=true"} {
		code, _, stderr = runCLI(t, append(append([]string(nil), base...), flag)...)
		assert.Equal(t, exitError, code, flag)
		assert.Equal(t, bad+" (--skip-bad-indices: its updates, and those of any other bad index, were skipped; --out holds every other update)\n", stderr, flag)
		requireEqualTensor(t, f32([]int{5}, 1, 10, 3, 4, 5), readNPY(t, out))
		require.NoError(t, os.Remove(out))
	}

	// With every index valid the option changes nothing.
	code, _, stderr = runCLI(t, "run", "--op", "ScatterNDUpdate-15", "--data", fx.f("data"), "--indices", fx.f("indices"),
		"--updates", fx.f("updates"), "--out", out, "--skip-bad-indices")
	require.Equal(t, exitOK, code, stderr)
	requireEqualTensor(t, f32([]int{5}, 1, 10, 3, 20, 5), readNPY(t, out))

	code, _, stderr = runCLI(t, append(append([]string(nil), base...), "--skip-bad-indices=maybe")...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--skip-bad-indices="maybe": want true or false`)
}
