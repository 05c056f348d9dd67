package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMissingRequiredInputIsUsage: every missing required input is a
// malformed command line, exit status 2 with the usage, whichever flag it
// is (--out and --op always were; --indices, --axis, --start, --stop and
// --step depend on the operator).
func TestMissingRequiredInputIsUsage(t *testing.T) {
	dir := t.TempDir()
	d := writeNPY(t, dir, "d.npy", i32([]int{2, 5}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9))
	u := writeNPY(t, dir, "u.npy", i32([]int{2, 3}, 1, 1, 1, 1, 1, 1))
	i := writeNPY(t, dir, "i.npy", i64([]int{1}, 0))
	out := filepath.Join(dir, "o.npy")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--op", "ScatterUpdate-3", "--axis", "1", "--data", d, "--updates", u, "--out", out},
			"ScatterUpdate-3: missing required flag --indices"},
		{[]string{"run", "--op", "ScatterUpdate-3", "--data", d, "--indices", i, "--updates", u, "--out", out},
			"ScatterUpdate-3: missing required flag --axis"},
		{[]string{"run", "--op", "ScatterElementsUpdate-12", "--data", d, "--updates", u, "--out", out},
			"ScatterElementsUpdate-12: missing required flags --indices, --axis"},
		{[]string{"run", "--op", "SliceScatter-15", "--data", d, "--updates", u, "--out", out, "--start", "0"},
			"SliceScatter-15: missing required flags --stop, --step"},
		{[]string{"run", "--op", "SliceScatter-15", "--data", d, "--updates", u, "--out", out, "--stop", "5", "--step", "2"},
			"SliceScatter-15: missing required flag --start"},
		{[]string{"run", "--op", "ScatterND-18", "--data", d, "--updates", u},
			"missing required flag --out"},
		{[]string{"bench", "--op", "ScatterND-18", "--data", d, "--updates", u},
			"ScatterND-18: missing required flag --indices"},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		assert.Equal(t, exitUsage, code, "%v", c.args)
		assert.Empty(t, stdout)
		assert.Equal(t, c.want, firstLine(stderr), "%v", c.args)
		assert.Contains(t, stderr, "\nUsage:\n", "%v", c.args)
		assert.NoFileExists(t, out)
	}
}

// TestSuggestions: a mistyped operator, version or flag gets a "did you
// mean" naming what exists.
func TestSuggestions(t *testing.T) {
	const list = " (run 'gpuscatter ops' for the list)"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--op", "ScaterND-18"}, `--op "ScaterND-18" is not an operator gpuscatter runs; did you mean ScatterND-18?` + list},
		{[]string{"run", "--op", "ScatterND"}, `--op "ScatterND" is not an operator gpuscatter runs; name a version: ScatterND-11, ScatterND-13, ScatterND-16 or ScatterND-18` + list},
		{[]string{"run", "--op", "scatternd-17"}, `--op "scatternd-17" is not an operator gpuscatter runs; did you mean ScatterND-11, ScatterND-13, ScatterND-16 or ScatterND-18?` + list},
		{[]string{"run", "--op", "ScatterUpdate-5"}, `--op "ScatterUpdate-5" is not an operator gpuscatter runs; did you mean ScatterUpdate-3?` + list},
		{[]string{"run", "--op", "Scater"}, `--op "Scater" is not an operator gpuscatter runs; did you mean Scatter-9 or Scatter-11?` + list},
		{[]string{"run", "--op", "Gather-13"}, `--op "Gather-13" is not an operator gpuscatter runs` + list},
		{[]string{"bench", "--op", "ScatterNDUpdate-51", "--data", "d.npy", "--updates", "u.npy"}, `--op "ScatterNDUpdate-51" is not an operator gpuscatter runs; did you mean ScatterNDUpdate-3 or ScatterNDUpdate-15?` + list},
		{[]string{"run", "--reductoin", "sum"}, "unknown flag --reductoin; did you mean --reduction?"},
		{[]string{"bench", "--workload", "SE"}, "unknown flag --workload; did you mean --workloads?"},
		{[]string{"run", "--frobnicate"}, "unknown flag --frobnicate"},
	} {
		args := c.args
		if args[0] == "run" {
			args = append(args, "--out", filepath.Join(t.TempDir(), "o.npy"))
		}
		code, _, stderr := runCLI(t, args...)
		assert.Equal(t, exitUsage, code, "%v", c.args)
		assert.Equal(t, c.want, firstLine(stderr), "%v", c.args)
	}
}

// TestBenchUnknownWorkload names the unknown workload once, with the
// valid names.
func TestBenchUnknownWorkload(t *testing.T) {
	code, _, stderr := runCLI(t, "bench", "--workloads", "SE,SND9")
	require.Equal(t, exitUsage, code)
	assert.Equal(t, `--workloads: unknown workload "SND9" (did you mean SND5?); the workloads are `+
		"SU1, SND5, SE, SE-sum-dup, SND-sum-dup, SS, SND-max-i32, SND-1000, SND5-f16, SND5-i64, SE-f16, SE-i64, KV-decode", firstLine(stderr))
	assert.Equal(t, 1, strings.Count(stderr, "SND9"))
}

// TestExamplesMatchNothing prints one line, as the README says.
func TestExamplesMatchNothing(t *testing.T) {
	code, stdout, stderr := runCLI(t, "examples", "--match", "nothing")
	assert.Equal(t, exitError, code)
	assert.Empty(t, stdout)
	assert.Equal(t, prefix+`--match "nothing": no example name contains it`+"\n", stderr)
}
