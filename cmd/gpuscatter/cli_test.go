package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/npy"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// The tests of this package do not run in parallel: some replace
// newGPUBackend.

// runCLI runs Main in-process with args and returns its exit status and
// output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// writeNPY writes x into dir/name and returns the path.
func writeNPY(t *testing.T, dir, name string, x *tensor.Tensor) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, npy.WriteFile(path, x))
	return path
}

func readNPY(t *testing.T, path string) *tensor.Tensor {
	t.Helper()
	x, err := npy.ReadFile(path)
	require.NoError(t, err)
	return x
}

// requireEqualTensor fails unless got and want are equal bit for bit.
func requireEqualTensor(t *testing.T, want, got *tensor.Tensor) {
	t.Helper()
	require.True(t, tensor.Equal(want, got), "got  %v\nwant %v", got, want)
}

// requireInputError checks the shape of an exit-1 failure: exactly one
// stderr line, starting with "gpuscatter: " and containing each of parts.
func requireInputError(t *testing.T, code int, stdout, stderr string, parts ...string) {
	t.Helper()
	require.Equal(t, exitError, code, "stderr: %s", stderr)
	assert.Empty(t, stdout)
	require.True(t, strings.HasSuffix(stderr, "\n"), "stderr %q does not end in a newline", stderr)
	require.Equal(t, 1, strings.Count(stderr, "\n"), "stderr is not one line: %q", stderr)
	require.True(t, strings.HasPrefix(stderr, prefix), "stderr %q", stderr)
	for _, p := range parts {
		require.Contains(t, stderr, p)
	}
}

// requireUsageError checks the shape of an exit-2 failure: a first line
// starting with "gpuscatter: " and containing msg, then the usage.
func requireUsageError(t *testing.T, code int, stdout, stderr, msg string) {
	t.Helper()
	require.Equal(t, exitUsage, code, "stderr: %s", stderr)
	assert.Empty(t, stdout)
	first, rest, _ := strings.Cut(stderr, "\n")
	require.True(t, strings.HasPrefix(first, prefix), "first line %q", first)
	require.Contains(t, first, msg)
	require.Contains(t, rest, "Usage:")
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"-help"}} {
		code, stdout, stderr := runCLI(t, args...)
		require.Equal(t, exitOK, code, "%v", args)
		assert.Empty(t, stderr)
		for _, c := range commands {
			assert.Contains(t, stdout, "\n  "+c.name+" ", "%v lists %s", args, c.name)
		}
		assert.Contains(t, stdout, "Exit status")
	}
	for _, args := range [][]string{{"help", "run"}, {"run", "-h"}, {"run", "--help"}, {"run", "--op", "x", "--help"}} {
		code, stdout, stderr := runCLI(t, args...)
		require.Equal(t, exitOK, code, "%v", args)
		assert.Empty(t, stderr)
		assert.Contains(t, stdout, "gpuscatter run (--op NAME | --model FILE.onnx)", "%v", args)
		assert.Contains(t, stdout, "--use-init-val", "%v", args)
		assert.Contains(t, stdout, "Exit status", "%v", args)
	}
	for _, c := range commands {
		code, stdout, _ := runCLI(t, "help", c.name)
		require.Equal(t, exitOK, code)
		assert.Contains(t, stdout, "gpuscatter "+c.name)
	}
	code, stdout, _ := runCLI(t, "examples", "-h")
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "--match")
}

func TestVersion(t *testing.T) {
	code, stdout, stderr := runCLI(t, "version")
	require.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	assert.True(t, strings.HasPrefix(stdout, "gpuscatter "), stdout)
	assert.Contains(t, stdout, "gpu: vulkan")
	assert.Equal(t, 1, strings.Count(stdout, "\n"))
}

func TestOpsListsEveryOperator(t *testing.T) {
	code, stdout, stderr := runCLI(t, "ops")
	require.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	table, notes, ok := strings.Cut(stdout, "\n\n")
	require.True(t, ok, stdout)
	lines := strings.Split(table, "\n")
	all := ops.All()
	require.Len(t, lines, 1+len(all), "a header and a row per operator version")
	assert.Regexp(t, `^OPERATOR +SOURCE +INPUTS BESIDES DATA, UPDATES +REDUCTIONS +NEGATIVE INDICES +DTYPES$`, lines[0])
	for i, op := range all {
		row := lines[1+i]
		require.True(t, strings.HasPrefix(row, op.Name+" "), row)
		assert.Contains(t, row, " "+op.Source+" ")
		assert.Contains(t, row, " "+strings.Join(op.ReductionNames(), " ")+" ", op.Name)
		assert.Equal(t, op.TakesSlice(), strings.Contains(row, " start stop step [axes] "), op.Name)
		assert.Equal(t, op.TakesIndices() && !op.IndicesOptional, strings.Contains(row, " indices "), op.Name)
		assert.Equal(t, op.IndicesOptional, strings.Contains(row, " [indices] "), op.Name)
		assert.Equal(t, op.TakesMode(), strings.Contains(row, " [mode=linear] "), op.Name)
		assert.Equal(t, op.TakesUseInitVal(), strings.Contains(row, "[use-init-val]"), op.Name)
		assert.Equal(t, op.AnyDType, strings.HasSuffix(row, " all"), op.Name)
		switch {
		case op.TakesSlice():
			assert.Contains(t, row, " Python slices ")
		case op.TakesMode():
			assert.Contains(t, row, " linear: rejected, circular: wrap ", op.Name)
		case op.NegativeIndices:
			assert.Contains(t, row, " [-s, s-1] ", op.Name)
		default:
			assert.Contains(t, row, " rejected ", op.Name)
		}
	}
	assert.Contains(t, notes, "numeric: bool int8")
	// TensorScatter-24's linear-mode rule, which its row has no room for.
	assert.Contains(t, notes, "except TensorScatter-24's write_indices (below)")
	at := strings.Index(notes, "\nTensorScatter-24: ")
	require.GreaterOrEqual(t, at, 0, notes)
	rule := strings.Join(strings.Fields(notes[at:]), " ")
	assert.Contains(t, rule, "TensorScatter-24: write_indices (--indices) are int64 [batch], zeros when absent.")
	assert.Contains(t, rule, "linear mode (the default): 0 <= write_indices[b] and write_indices[b] + sequence_length <= max_sequence_length")
	assert.Contains(t, rule, "else an error and nothing is written; circular mode: any int64, each position taken modulo max_sequence_length.")

	// --json: the same, for tools.
	code, stdout, _ = runCLI(t, "ops", "--json")
	require.Equal(t, exitOK, code)
	var infos []opInfo
	require.NoError(t, json.Unmarshal([]byte(stdout), &infos))
	require.Len(t, infos, len(all))
	for i, op := range all {
		assert.Equal(t, op.Name, infos[i].Name)
		assert.Equal(t, op.ReductionNames(), infos[i].Reductions)
		assert.Equal(t, op.AnyDType, slices.Contains(infos[i].DTypes, "string"), op.Name)
		if op.TakesMode() {
			assert.Equal(t, []string{"int64"}, infos[i].IndexDTypes, op.Name)
			assert.Equal(t, cacheIndexRule, infos[i].IndexRule, op.Name)
		} else {
			assert.Contains(t, infos[i].IndexDTypes, "uint64", op.Name)
			assert.Empty(t, infos[i].IndexRule, op.Name)
		}
	}
}

func TestTopLevelUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"no arguments", nil, "no command given"},
		{"unknown command", []string{"scatter"}, `unknown command "scatter"`},
		{"flag before the command", []string{"--op", "x"}, "--op must follow a command"},
		{"help for an unknown command", []string{"help", "nope"}, `unknown command "nope"`},
		{"help with two commands", []string{"help", "run", "ops"}, "at most one command"},
		{"ops takes no arguments", []string{"ops", "extra"}, `unexpected argument "extra"`},
		{"ops takes no flags", []string{"ops", "--backend", "cpu"}, "unknown flag --backend"},
		{"version takes no arguments", []string{"version", "1"}, `unexpected argument "1"`},
		{"examples: unknown flag", []string{"examples", "--fast"}, "unknown flag --fast"},
		{"examples: bad backend", []string{"examples", "--backend", "tpu"}, `--backend "tpu": want one of auto, cpu, gpu`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			requireUsageError(t, code, stdout, stderr, tt.msg)
		})
	}
}

func TestParseFlags(t *testing.T) {
	var a, b string
	specs := []flagSpec{
		{name: "a", set: func(v string) error { a = v; return nil }},
		{name: "b", set: func(v string) error { b = v; return nil }},
	}
	ok := []struct {
		args []string
		a, b string
	}{
		{[]string{"--a", "1", "--b", "2"}, "1", "2"},
		{[]string{"--a=1", "-b=2"}, "1", "2"},
		{[]string{"-a", "-1"}, "-1", ""},             // a negative number is a value
		{[]string{"--a=--b"}, "--b", ""},             // so is anything after =
		{[]string{"--a", "x=y", "--"}, "x=y", ""},    // "--" ends the flags
		{[]string{"--a="}, "", ""},                   // an empty value
		{[]string{"--b", "-", "--a", "1"}, "1", "-"}, // "-" is a value
	}
	for _, tt := range ok {
		a, b = "", ""
		require.NoError(t, parseFlags(tt.args, specs), "%q", tt.args)
		assert.Equal(t, tt.a, a, "%q", tt.args)
		assert.Equal(t, tt.b, b, "%q", tt.args)
	}
	bad := []struct {
		args []string
		msg  string
	}{
		{[]string{"--c", "1"}, "unknown flag --c"},
		{[]string{"--a"}, "flag --a needs a value"},
		{[]string{"--a", "--b", "1"}, "flag --a needs a value"},
		{[]string{"--a", "-h"}, "flag --a needs a value"},
		{[]string{"--a", "1", "--a", "2"}, "flag --a is given more than once"},
		{[]string{"--a", "1", "stray"}, `unexpected argument "stray"`},
		{[]string{"--", "stray"}, `unexpected argument "stray"`},
		{[]string{"---a", "1"}, `bad flag syntax "---a"`},
		{[]string{"--=1"}, `bad flag syntax "--=1"`},
		{[]string{"false"}, "--name=value"},
	}
	for _, tt := range bad {
		err := parseFlags(tt.args, specs)
		var ue *usageError
		require.ErrorAs(t, err, &ue, "%q", tt.args)
		assert.Contains(t, ue.msg, tt.msg, "%q", tt.args)
	}
	require.ErrorIs(t, parseFlags([]string{"--a", "1", "-h"}, specs), errHelp)
	require.ErrorIs(t, parseFlags([]string{"--help"}, specs), errHelp)
}

func TestOneLine(t *testing.T) {
	assert.Equal(t, "a b c", oneLine("a\nb\r\nc\n"))
	assert.Equal(t, "x", oneLine("x"))
	// Control characters an input echoes are escaped, not obeyed.
	assert.Equal(t, `bad \x1b[2J and \t tab \x00`, oneLine("bad \x1b[2J and \t tab \x00"))
	assert.Equal(t, `\ufffd byte`, oneLine("\xff byte"))
	// A message of megabytes keeps its start and end.
	long := oneLine("start " + strings.Repeat("9,", 5<<20) + " end")
	assert.LessOrEqual(t, len(long), maxLine)
	assert.True(t, strings.HasPrefix(long, "start 9,9,"), long[:20])
	assert.True(t, strings.HasSuffix(long, "9, end"))
	assert.Contains(t, long, "...(10485770 bytes)...")
}

// TestParseIntListErrorsAreOneShortLine is the regression of the fuzz
// target's first find (testdata/fuzz/FuzzParseIntList): an out-of-range
// element that holds a line break was echoed raw.
func TestParseIntListErrorsAreOneShortLine(t *testing.T) {
	for _, s := range []string{"18700000000000000000\n0", "1,x\x1b[2J", strings.Repeat("7", 10000)} {
		_, err := parseIntList(s)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "\n")
		assert.NotContains(t, err.Error(), "\x1b")
		assert.Less(t, len(err.Error()), 200, err.Error())
	}
}

func TestFileErrorNamesFlagAndPathOnce(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.npy")
	_, err := npy.ReadFile(missing)
	require.Error(t, err)
	msg := fileError("data", missing, err).Error()
	assert.Equal(t, "--data "+missing+": open: no such file or directory", msg)

	garbage := filepath.Join(dir, "garbage.npy")
	require.NoError(t, os.WriteFile(garbage, []byte("not an array"), 0o644))
	_, err = npy.ReadFile(garbage)
	require.Error(t, err)
	msg = fileError("indices", garbage, err).Error()
	assert.True(t, strings.HasPrefix(msg, "--indices "+garbage+": "), msg)
	assert.Equal(t, 1, strings.Count(msg, garbage), msg)
	assert.False(t, strings.HasPrefix(strings.TrimPrefix(msg, "--indices "+garbage+": "), "npy: "), msg)
}

// TestVersionLine: the module version, the VCS commit, its time and
// whether the tree was modified, from the build information.
func TestVersionLine(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/gpuscatter/gpuscatter", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-11-25T17:08:25Z"}, {Key: "vcs.modified", Value: "true"}}}
	got := versionLine(bi)
	assert.True(t, strings.HasPrefix(got,
		"gpuscatter v1.2.3 (commit 0123456789abcdef0123456789abcdef01234567 2026-11-25T17:08:25Z, modified; go1.26.8 "), got)
	bi.Settings[3].Value = "false"
	assert.NotContains(t, versionLine(bi), "modified")
	bi.Settings = nil
	bi.Main.Version = "(devel)"
	assert.True(t, strings.HasPrefix(versionLine(bi), "gpuscatter (devel) (no VCS information; go1.26.8 "), versionLine(bi))
	assert.True(t, strings.HasPrefix(versionLine(nil), "gpuscatter (devel) (no VCS information; "+runtime.Version()), versionLine(nil))
}

// TestUsageIsTheFlagTable: each command's usage line and Flags section
// come from the table its parser takes: every flag in them is accepted,
// and help run names --device and --deterministic, which the hand-written
// usage once left out.
func TestUsageIsTheFlagTable(t *testing.T) {
	for _, c := range commands {
		if c.flags == nil {
			continue
		}
		help := helpOf(c)
		for _, f := range c.flags() {
			assert.Contains(t, help, "\n  --"+f.name, "%s: the Flags section lists --%s", c.name, f.name)
			assert.NotEmpty(t, f.usage, "%s --%s says what it does", c.name, f.name)
			if f.syn != "-" {
				assert.Contains(t, c.usageLine(), "--"+f.name, "%s: the usage line shows --%s", c.name, f.name)
			}
			_, _, stderr := runCLI(t, c.name, "--"+f.name+"=x", "--help") // --help: nothing runs
			assert.NotContains(t, stderr, "unknown flag", "%s parses --%s", c.name, f.name)
		}
	}
	for _, token := range []string{"[--device SEL]", "[--deterministic]"} {
		assert.Contains(t, lookupCommand("run").usageLine(), token)
	}
	_, _, stderr := runCLI(t, "run", "--op")
	for _, token := range []string{"[--device SEL]", "[--deterministic]"} {
		assert.Contains(t, stderr, token)
	}
}
