package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
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
		{[]string{"rnu"}, `unknown command "rnu"; did you mean run?`},
		{[]string{"chekc", "--quick"}, `unknown command "chekc"; did you mean check?`},
		{[]string{"help", "plna"}, `unknown command "plna"; did you mean plan?`},
		{[]string{"help", "frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"run", "--dev", "0"}, "unknown flag --dev; did you mean --device?"},
		// The inputs and attributes as the operators' specs name them.
		{[]string{"run", "--past-cache", "c.npy"}, "unknown flag --past-cache; TensorScatter's past_cache is --data"},
		{[]string{"run", "--past_cache", "c.npy"}, "unknown flag --past_cache; TensorScatter's past_cache is --data"},
		{[]string{"plan", "--write-indices", "w.npy"}, "unknown flag --write-indices; TensorScatter's write_indices is --indices"},
		{[]string{"bench", "--update", "u.npy"}, "unknown flag --update; TensorScatter's update is --updates"},
		{[]string{"run", "--use_init_val=false"}, "unknown flag --use_init_val; ScatterElementsUpdate's use_init_val is --use-init-val"},
		{[]string{"check", "--past-cache", "c.npy"}, "unknown flag --past-cache"},
	} {
		args := c.args
		if args[0] == "run" {
			args = append(args, "--out", filepath.Join(t.TempDir(), "o.npy"))
		}
		code, _, stderr := runCLI(t, args...)
		assert.Equal(t, exitUsage, code, "%v", c.args)
		assert.Equal(t, c.want, firstLine(stderr), "%v", c.args)
	}
	// A value of --mode the start of one (exit 1: the operator's
	// validation error).
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", "--op", "TensorScatter-24", "--mode", "circ", "--backend", "cpu",
		"--data", writeNPY(t, dir, "c.npy", f32([]int{1, 4, 2}, make([]float32, 8)...)),
		"--updates", writeNPY(t, dir, "u.npy", f32([]int{1, 1, 2}, 1, 2)), "--out", filepath.Join(dir, "o.npy"))
	requireInputError(t, code, stdout, stderr, `TensorScatter-24: mode "circ" is not accepted by TensorScatter-24 (did you mean circular?)`)
}

// TestSpecInputsAreFlags: every input and attribute that an operator's
// spec names is taken by a flag of run, plan and bench, which a flag
// spelled as the spec spells it names.
func TestSpecInputsAreFlags(t *testing.T) {
	model := newModelArg()
	var flags []string
	for _, f := range newRunFlags().specs(&model, new(gpuSettings)) {
		flags = append(flags, f.name)
	}
	for _, op := range ops.All() {
		for _, in := range op.SpecInputs() {
			flag, ok := requestFlags[in.Field]
			require.True(t, ok, "%s's %s: Request field %s has no flag", op.Name, in.Name, in.Field)
			assert.Contains(t, flags, flag, "%s's %s", op.Name, in.Name)
			if dashed := strings.ReplaceAll(in.Name, "_", "-"); dashed != flag {
				assert.Equal(t, fmt.Sprintf("%s's %s is --%s", op.Family, in.Name, flag), specInputHint(dashed, flags))
			}
		}
	}
}

// TestBenchUnknownWorkload names the unknown workload once, with the
// valid names.
func TestBenchUnknownWorkload(t *testing.T) {
	code, _, stderr := runCLI(t, "bench", "--workloads", "SE,SND9")
	require.Equal(t, exitUsage, code)
	assert.Equal(t, `--workloads: unknown workload "SND9" (did you mean SND5?); the workloads are `+
		"SU1, SND5, SE, SE-sum-dup, SE-zipf, SND-sum-dup, SS, SND-max-i32, SND-1000, SND5-f16, SND5-i64, SE-f16, SE-i64, KV-decode", firstLine(stderr))
	assert.Equal(t, 1, strings.Count(stderr, "SND9"))
}

// TestExamplesMatchNothing prints one line, as the README says.
func TestExamplesMatchNothing(t *testing.T) {
	code, stdout, stderr := runCLI(t, "examples", "--match", "nothing")
	assert.Equal(t, exitError, code)
	assert.Empty(t, stdout)
	assert.Equal(t, prefix+`--match "nothing": no example name contains it`+"\n", stderr)
}
