//go:build cgo

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/internal/gpucheck"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
)

// TestCheckPasses runs two paths of check at the quick size on the default
// device, with validation: every case passes, the header names the device
// and the reduction paths, and --json holds the same rows.
func TestCheckPasses(t *testing.T) {
	out := filepath.Join(t.TempDir(), "check.json")
	code, stdout, stderr := runCLI(t, "check", "--quick", "--match", "resident", "--validate", "--json", out)
	require.Equal(t, exitOK, code, "%s\n%s", stdout, stderr)
	assert.Contains(t, stdout, "device:")
	assert.Contains(t, stdout, "float32 sum")
	assert.Contains(t, stdout, "resident/chunks4KiB")
	assert.Contains(t, stdout, "PASS: ")
	var res checkResult
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	assert.NotEmpty(t, res.Device.Name)
	assert.NotEmpty(t, res.Rows)
	assert.Zero(t, res.Failed)
	assert.Positive(t, res.Cases)
	assert.Contains(t, []string{"on", "not installed"}, res.Validation)
	for _, row := range res.Rows {
		assert.Equal(t, row.Cases, row.Passed, "%+v", row)
	}
}

// TestCheckProgressOffTerminal: with stderr a file (check --quick 2>FILE),
// check writes a line per path, the group of rows it fills, as the path
// finishes, so a log shows where a long run is; with stdout into the same
// file, every such line comes before the verdict.
func TestCheckProgressOffTerminal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "check.log")
	f, err := os.Create(path)
	require.NoError(t, err)
	code := Main(context.Background(), []string{"check", "--quick", "--match", "resident"}, f, f)
	require.NoError(t, f.Close())
	log, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, exitOK, code, "%s", log)
	text := string(log)
	verdict := strings.Index(text, "\nPASS: ")
	require.Positive(t, verdict, text)
	paths := gpucheck.Config{Size: gpucheck.Quick, Match: "resident"}.Selected()
	require.Greater(t, len(paths), 1)
	for i, p := range paths {
		line := fmt.Sprintf("%scheck [%d/%d] %s: ", prefix, i+1, len(paths), p.Name)
		at := strings.Index(text, line)
		if assert.GreaterOrEqual(t, at, 0, "no line %q in\n%s", line, text) {
			assert.Less(t, at, verdict, "%q after the verdict", line)
			rest, _, _ := strings.Cut(text[at+len(line):], "\n")
			assert.Regexp(t, `^[1-9][0-9]* cases, 0 failed, [0-9]+\.[0-9] s$`, rest)
		}
	}
	assert.NotContains(t, text, "\r", "no line redrawn in place off a terminal")
}

// TestCheckCatchesBrokenPaths forces two broken paths (knobs.Knobs.Fault)
// and requires check to fail with exit status 1 and show the first
// mismatch: one bit flipped in the last element of every result, and min
// reductions run as max.
func TestCheckCatchesBrokenPaths(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault knobs.Fault
		match string
		want  []string
	}{
		{"flipLast", knobs.FlipLast, "none/default", []string{"first mismatch: op ", "path none/default"}},
		{"minAsMax", knobs.MinAsMax, "random/deterministic", []string{"first mismatch: op ", "reduction min", "path random/deterministic"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkFault = c.fault
			t.Cleanup(func() { checkFault = knobs.NoFault })
			out := filepath.Join(t.TempDir(), "check.json")
			code, stdout, stderr := runCLI(t, "check", "--quick", "--match", c.match, "--json", out)
			t.Logf("check with %s:\n%s%s", c.name, stdout, stderr)
			require.Equal(t, exitError, code)
			for _, w := range c.want {
				assert.Contains(t, stdout, w)
			}
			assert.Contains(t, stderr, "cases failed")
			var res checkResult
			data, err := os.ReadFile(out)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &res))
			assert.Positive(t, res.Failed)
			var first bool
			for _, row := range res.Rows {
				if row.First != nil {
					first = true
					assert.NotEqual(t, row.First.Want, row.First.Got)
				}
			}
			assert.True(t, first, "a row records its first mismatch")
		})
	}
}

func TestCheckUsage(t *testing.T) {
	code, stdout, stderr := runCLI(t, "check", "--quick", "--full")
	requireUsageError(t, code, stdout, stderr, "--quick and --full exclude each other")
	code, stdout, stderr = runCLI(t, "check", "--match", "no such path")
	requireUsageError(t, code, stdout, stderr, "selects no path")
	code, stdout, stderr = runCLI(t, "check", "--seed", "x")
	assert.Equal(t, exitUsage, code, stdout+stderr)
	code, stdout, _ = runCLI(t, "help", "check")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "--validate")
}

// TestCheckRowsNameRealOperators: a row's operator is one gpuscatter runs,
// or "-" for the checks of a path as a whole; the validation table's
// requests with an unknown or missing operator count under "-".
func TestCheckRowsNameRealOperators(t *testing.T) {
	out := filepath.Join(t.TempDir(), "check.json")
	code, stdout, stderr := runCLI(t, "check", "--quick", "--match", "deterministic", "--json", out)
	require.Equal(t, exitOK, code, "%s\n%s", stdout, stderr)
	var res checkResult
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	dash := false
	for _, row := range res.Rows {
		if row.Op == "-" {
			dash = true
			continue
		}
		op, err := ops.Lookup(row.Op)
		if assert.NoError(t, err, "row %s %s", row.Path, row.Op) {
			assert.Equal(t, op.Name, row.Op)
		}
	}
	assert.True(t, dash, "a row of the operator -")
	assert.NotContains(t, stdout, "(no operator)")
}

// TestCheckReportsRefusedRows: on a device without shaderFloat64 (forced
// by the knob) check counts the refused float64 sum, sub, prod and mean
// cases as refused, not failed, names the feature under the table, in the
// header's reduction paths and in --json, and exits 0.
func TestCheckReportsRefusedRows(t *testing.T) {
	checkNoShaderFloat64 = true
	t.Cleanup(func() { checkNoShaderFloat64 = false })
	out := filepath.Join(t.TempDir(), "check.json")
	code, stdout, stderr := runCLI(t, "check", "--quick", "--match", "contention/cas-global", "--json", out)
	t.Logf("check without shaderFloat64:\n%s%s", stdout, stderr)
	require.Equal(t, exitOK, code, "%s\n%s", stdout, stderr)
	assert.Regexp(t, `float64 sum +refused: the device lacks shaderFloat64\n`, stdout)
	assert.Regexp(t, `float64 min/max +(native|cas|ordered|walk)`, stdout)
	assert.Contains(t, stdout, "REFUSED")
	assert.Regexp(t, `\nREFUSED [1-9][0-9]* cases in [1-9][0-9]* rows: the device lacks shaderFloat64, `, stdout)
	assert.Regexp(t, `\nPASS: [1-9][0-9]* cases, 0 failed, [1-9][0-9]* refused, `, stdout)
	assert.Regexp(t, `check \[1/1\] contention/cas-global: [1-9][0-9]* cases, 0 failed, [1-9][0-9]* refused, `, stderr)
	var res checkResult
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	assert.Zero(t, res.Failed)
	assert.Positive(t, res.Refused)
	assert.Equal(t, []string{"shaderFloat64"}, res.RefusedFor)
	assert.NotContains(t, res.Device.Features, "shaderFloat64")
	var refused int
	for _, row := range res.Rows {
		assert.Equal(t, row.Cases, row.Passed+row.Refused, "%+v", row)
		if row.Refused > 0 {
			assert.Equal(t, "shaderFloat64", row.RefusedFor, "%+v", row)
			refused += row.Refused
		}
	}
	assert.Equal(t, res.Refused, refused)
}

// TestCheckBlamesWhatWithholdsTheFeature: the refusals of a path that
// withholds shaderInt64 on purpose (the 32-bit baseline) are the path's,
// named as such under the table and in --json's withheld, on a device that
// has shaderInt64; only where the device lacks it is the device blamed.
func TestCheckBlamesWhatWithholdsTheFeature(t *testing.T) {
	const path = "reduce/noInt64Chunks16B/atomics"
	out := filepath.Join(t.TempDir(), "check.json")
	code, stdout, stderr := runCLI(t, "check", "--quick", "--match", path, "--json", out)
	t.Logf("check %s:\n%s%s", path, stdout, stderr)
	require.Equal(t, exitOK, code, "%s\n%s", stdout, stderr)
	var res checkResult
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	require.Positive(t, res.Refused, "float64 sums on the 32-bit baseline are refused")
	if slices.Contains(res.Device.Features, "shaderInt64") {
		assert.Contains(t, stdout, "\nREFUSED "+itoa(res.Refused)+" cases in ")
		assert.Contains(t, stdout, ": the path "+path+" withholds shaderInt64 on purpose, which they need; ")
		assert.NotContains(t, stdout, "the device lacks")
		assert.Equal(t, map[string][]string{"shaderInt64": {path}}, res.Withheld)
		assert.Empty(t, res.RefusedFor)
	} else {
		assert.Contains(t, stdout, ": the device lacks shaderInt64, which they need; ")
		assert.Equal(t, []string{"shaderInt64"}, res.RefusedFor)
		assert.Empty(t, res.Withheld)
	}
}

// TestCheckRefusedCauses: each refused row is put down to its path where
// the path withholds the feature and the device has it, else to the
// device, and the line under the table names each cause once.
func TestCheckRefusedCauses(t *testing.T) {
	paths := gpucheck.Paths()
	var baseline []string // paths that withhold shaderInt64
	for _, p := range paths {
		if p.Withholds("shaderInt64") {
			baseline = append(baseline, p.Name)
		}
	}
	require.Greater(t, len(baseline), 4)
	rows := func(feature string, names ...string) []gpucheck.Row {
		var out []gpucheck.Row
		for _, n := range names {
			out = append(out, gpucheck.Row{Path: n, Op: "ScatterND-18", Refused: 1, RefusedFor: feature})
		}
		return out
	}
	has := []string{"int64 atomics", "shaderInt64", "shaderFloat64"}
	for _, c := range []struct {
		name     string
		features []string
		rows     []gpucheck.Row
		want     string
		lacks    []string
		withheld map[string][]string
	}{
		{"one path withholds", has, rows("shaderInt64", baseline[0]),
			"the path " + baseline[0] + " withholds shaderInt64 on purpose", nil, map[string][]string{"shaderInt64": baseline[:1]}},
		{"two paths withhold", has, rows("shaderInt64", baseline[:2]...),
			"the paths " + baseline[0] + " and " + baseline[1] + " withhold shaderInt64 on purpose", nil, map[string][]string{"shaderInt64": baseline[:2]}},
		{"many paths withhold", has, rows("shaderInt64", baseline[:5]...),
			"the paths " + baseline[0] + ", " + baseline[1] + " and 3 more withhold shaderInt64 on purpose", nil, map[string][]string{"shaderInt64": baseline[:5]}},
		{"the device lacks it too", has[:1], rows("shaderInt64", baseline[0], "default"),
			"the device lacks shaderInt64", []string{"shaderInt64"}, nil},
		{"a path that does not withhold it", has, rows("shaderInt64", "default"),
			"the device lacks shaderInt64", []string{"shaderInt64"}, nil},
		{"both", has[:2], append(rows("shaderFloat64", "cas"), rows("shaderInt64", baseline[0])...),
			"the device lacks shaderFloat64, and the path " + baseline[0] + " withholds shaderInt64 on purpose",
			[]string{"shaderFloat64"}, map[string][]string{"shaderInt64": baseline[:1]}},
	} {
		r := checkResult{Device: checkDevice{Features: c.features}, Rows: c.rows}
		r.refusals(paths)
		assert.Equal(t, c.want, r.refusedCauses(), c.name)
		assert.Equal(t, c.lacks, r.RefusedFor, c.name)
		assert.Equal(t, c.withheld, r.Withheld, c.name)
	}
}

// TestCheckList: check --list prints every path with what it forces, one
// a line, those --match selects, and with --json FILE writes them there;
// it runs nothing and needs no device.
func TestCheckList(t *testing.T) {
	withGPU(t, nil) // no device: the list does not open one
	code, stdout, stderr := runCLI(t, "check", "--list")
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	all := gpucheck.Paths()
	require.Len(t, lines, len(all))
	for i, p := range all {
		name, doc, _ := strings.Cut(lines[i], "  ")
		assert.Equal(t, p.Name, name)
		want := p.Doc
		if p.FullOnly {
			want += " (--full only)"
		}
		assert.Equal(t, want, strings.TrimSpace(doc))
	}

	out := filepath.Join(t.TempDir(), "paths.json")
	code, stdout, stderr = runCLI(t, "check", "--list", "--match", "CAS", "--json", out)
	require.Equal(t, exitOK, code, stderr)
	var listed []checkPath
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &listed))
	require.NotEmpty(t, listed)
	for _, p := range listed {
		assert.Contains(t, strings.ToLower(p.Name), "cas")
		assert.Contains(t, stdout, p.Name+" ")
	}
	assert.Equal(t, len(listed), strings.Count(stdout, "\n"))

	// An operator's name selects every path.
	code, stdout, _ = runCLI(t, "check", "--list", "--match", "TensorScatter")
	require.Equal(t, exitOK, code)
	assert.Equal(t, len(all), strings.Count(stdout, "\n"))
}

// TestCheckMatchOperator: --match with an operator version, or an operator
// (every version), where it is no path's name, runs every path with that
// operator's cases alone.
func TestCheckMatchOperator(t *testing.T) {
	for _, c := range []struct {
		match string
		want  []string
	}{
		{"ScatterElements-18", []string{"ScatterElements-18"}},
		{"scatterelements-18", []string{"ScatterElements-18"}},
		{"ScatterND", []string{"ScatterND-11", "ScatterND-13", "ScatterND-16", "ScatterND-18"}},
		{"TensorScatter", []string{"TensorScatter-24"}},
		{"cas", nil},
		{"none/", nil},
		{"Gather", nil},
	} {
		cfg := gpucheck.Config{Size: gpucheck.Quick, Match: c.match}
		assert.Equal(t, c.want, cfg.Operators(), c.match)
		if c.want != nil {
			assert.Equal(t, gpucheck.Config{Size: gpucheck.Quick}.Selected(), cfg.Selected(), "%s selects every path", c.match)
		}
	}
	code, stdout, stderr := runCLI(t, "check", "--match", "Gather-13")
	requireUsageError(t, code, stdout, stderr, `--match "Gather-13" selects no path and names no operator`)

	out := filepath.Join(t.TempDir(), "check.json")
	code, stdout, stderr = runCLI(t, "check", "--quick", "--match", "TensorScatter", "--json", out)
	require.Equal(t, exitOK, code, "%s\n%s", stdout, stderr)
	assert.Contains(t, stdout, ", the cases of TensorScatter-24 alone\n")
	var res checkResult
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	assert.Equal(t, []string{"TensorScatter-24"}, res.Operators)
	assert.Len(t, res.Paths, len(gpucheck.Config{Size: gpucheck.Quick}.Selected()))
	paths := map[string]bool{}
	for _, row := range res.Rows {
		if row.Op != "-" {
			assert.Equal(t, "TensorScatter-24", row.Op, "%+v", row)
		}
		paths[row.Path] = true
	}
	assert.Greater(t, len(paths), 10, "the cases of many paths")
	assert.Positive(t, res.Cases)
	assert.Zero(t, res.Failed)
}

// gpuavMatch is the Makefile's GPUAV_MATCH and kit/run.sh's default
// KIT_GPUAV_MATCH: the paths of the bounded pass under GPU-assisted
// validation (make qualify-gpuav).
const gpuavMatch = "skip/default,hot/default,resident/default,contention/exactAtomics,scale/default"

// TestCheckMatchList: --match with a comma-separated list keeps the
// paths that match any of its terms, and the operators that its terms
// name where no path matches.
func TestCheckMatchList(t *testing.T) {
	cfg := gpucheck.Config{Size: gpucheck.Quick, Match: gpuavMatch}
	var names []string
	for _, p := range cfg.Selected() {
		names = append(names, p.Name)
	}
	assert.ElementsMatch(t, []string{"skip/default", "hot/default", "resident/default", "contention/exactAtomics", "scale/default"}, names)
	assert.Nil(t, cfg.Operators())
	cfg.Match = "ScatterND-18, TensorScatter"
	assert.Equal(t, []string{"ScatterND-18", "TensorScatter-24"}, cfg.Operators())
	code, stdout, stderr := runCLI(t, "check", "--list", "--match", "resident/default,skip/cas")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, 2, strings.Count(stdout, "\n"), stdout)
}

// TestCheckPrintsValidationMessages: a failing row's validation messages
// are printed under it, each on a line of its own, up to
// maxValidationShown.
func TestCheckPrintsValidationMessages(t *testing.T) {
	var msgs []string
	for i := range maxValidationShown + 3 {
		msgs = append(msgs, fmt.Sprintf("validation error [UNASSIGNED-Device address out of bounds] message %d", i))
	}
	var b strings.Builder
	printCheckRows(&b, checkResult{Size: "quick", Cases: len(msgs), Failed: len(msgs), Rows: []gpucheck.Row{
		{Path: "hot/default", Op: "-", Cases: len(msgs), Failed: len(msgs), FirstError: "hot/default: " + msgs[0], Validation: msgs},
	}})
	out := b.String()
	for i, m := range msgs {
		if i < maxValidationShown {
			assert.Contains(t, out, "  validation: "+m+"\n")
		} else {
			assert.NotContains(t, out, m+"\n")
		}
	}
	assert.Contains(t, out, "... and 3 more validation messages")
	assert.Contains(t, out, "FAIL: ")
}
