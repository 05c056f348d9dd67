package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
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
		// By meaning: the words users type for a flag or a command.
		{[]string{"run", "--index", "i.npy"}, "unknown flag --index; did you mean --indices?"},
		{[]string{"plan", "--idx", "i.npy"}, "unknown flag --idx; did you mean --indices?"},
		{[]string{"run", "--input", "d.npy"}, "unknown flag --input; did you mean --data?"},
		{[]string{"run", "--in", "d.npy"}, "unknown flag --in; did you mean --data?"},
		{[]string{"warm", "--x", "d.npy"}, "unknown flag --x; did you mean --data?"},
		{[]string{"run", "--src", "u.npy"}, "unknown flag --src; did you mean --updates?"},
		{[]string{"run", "--output", "o.npy"}, "unknown flag --output; did you mean --out?"},
		{[]string{"run", "-o", "o.npy"}, "unknown flag --o; did you mean --out?"},
		{[]string{"bench", "--output", "b.json"}, "unknown flag --output; did you mean --json?"},
		{[]string{"check", "-o", "c.json"}, "unknown flag --o; did you mean --json?"},
		{[]string{"run", "--dtype", "float16"}, "unknown flag --dtype; the element type is --data's, read from its file"},
		{[]string{"plan", "--type", "int8"}, "unknown flag --type; the element type is --data's, read from its file"},
		{[]string{"run", "--operator", "ScatterND-18"}, "unknown flag --operator; did you mean --op?"},
		{[]string{"bench", "--reduce", "add"}, "unknown flag --reduce; did you mean --reduction?"},
		{[]string{"bench", "--iterations", "3"}, "unknown flag --iterations; did you mean --repeats?"},
		{[]string{"bench", "--filter", "SE"}, "unknown flag --filter; did you mean --workloads?"},
		{[]string{"check", "--filter", "hot"}, "unknown flag --filter; did you mean --match?"},
		{[]string{"check", "--dtype", "f32"}, "unknown flag --dtype"}, // check takes no --data
		{[]string{"benchmark"}, `unknown command "benchmark"; did you mean bench?`},
		{[]string{"perf"}, `unknown command "perf"; did you mean bench?`},
		{[]string{"test"}, `unknown command "test"; did you mean check or onnx-test?`},
		{[]string{"verify"}, `unknown command "verify"; did you mean check?`},
		{[]string{"compile"}, `unknown command "compile"; did you mean warm?`},
		{[]string{"list"}, `unknown command "list"; did you mean ops or devices?`},
		{[]string{"gpus"}, `unknown command "gpus"; did you mean devices?`},
		{[]string{"device"}, `unknown command "device"; did you mean devices?`},
		{[]string{"usage"}, `unknown command "usage"; did you mean help?`},
		{[]string{"help", "benchmark"}, `unknown command "benchmark"; did you mean bench?`},
		{[]string{"--version"}, `unknown command "--version"; did you mean version?`},
		{[]string{"--data", "d.npy"}, "--data must follow a command such as run"},
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

// TestReductionNamesMatchedExactly: --reduction takes a name exactly as
// the operator's spec spells it, as --mode does; another case or spaces
// around it is the operator's validation error (exit 1) naming the input
// and the spelling meant, from run, plan, warm and bench --op alike, and
// nothing is written.
func TestReductionNamesMatchedExactly(t *testing.T) {
	dir := t.TempDir()
	d := writeNPY(t, dir, "d.npy", f32([]int{3}, 1, 2, 3))
	i := writeNPY(t, dir, "i.npy", i64([]int{2}, 0, 0))
	u := writeNPY(t, dir, "u.npy", f32([]int{2}, 10, 20))
	out := filepath.Join(dir, "o.npy")
	for _, c := range []struct{ op, red, want string }{
		{"ScatterElements-18", "Add", `ScatterElements-18: reduction "Add" is not accepted by ScatterElements-18 (did you mean add? reduction names are matched exactly, as ONNX's spec spells them); it takes none, add, mul, min, max`},
		{"ScatterElements-18", "ADD", `reduction "ADD" is not accepted by ScatterElements-18 (did you mean add? reduction names are matched exactly, as ONNX's spec spells them)`},
		{"ScatterElements-18", " max", `reduction " max" is not accepted by ScatterElements-18 (did you mean max?`},
		{"ScatterElementsUpdate-12", "Sum", `ScatterElementsUpdate-12: reduction "Sum" is not accepted by ScatterElementsUpdate-12 (did you mean sum? reduction names are matched exactly, as OpenVINO's spec spells them); it takes none, sum, prod, min, max, mean`},
		{"ScatterElementsUpdate-12", "None", `reduction "None" is not accepted by ScatterElementsUpdate-12 (did you mean none?`},
		{"ScatterElementsUpdate-12", "ADD", `reduction "ADD" is not accepted by ScatterElementsUpdate-12 (did you mean sum? OpenVINO spells add sum)`},
	} {
		for _, cmd := range []string{"run", "plan", "warm", "bench"} {
			args := []string{cmd, "--op", c.op, "--reduction", c.red, "--axis", "0", "--data", d, "--indices", i, "--updates", u}
			switch cmd {
			case "run":
				args = append(args, "--out", out, "--backend", "cpu")
			case "bench":
				args = append(args, "--backend", "cpu")
			}
			code, stdout, stderr := runCLI(t, args...)
			requireInputError(t, code, stdout, stderr, c.want)
			assert.NoFileExists(t, out)
		}
	}
	// The names as the specs spell them run.
	for _, c := range []struct{ op, red string }{{"ScatterElements-18", "add"}, {"ScatterElementsUpdate-12", "sum"}, {"ScatterElements-18", "none"}} {
		code, _, stderr := runCLI(t, "run", "--op", c.op, "--reduction", c.red, "--axis", "0", "--backend", "cpu",
			"--data", d, "--indices", i, "--updates", u, "--out", out)
		require.Equal(t, exitOK, code, "%s %s: %s", c.op, c.red, stderr)
	}
}

// TestSynonymsNameWhatExists: every command and flag the synonyms table
// points to is one that gpuscatter has, and no word in it is itself a
// command or flag (the table would never be read for it), so that each
// word gets its hint from some command.
func TestSynonymsNameWhatExists(t *testing.T) {
	have := map[string]bool{}
	for _, c := range commands {
		have[c.name] = true
		if c.flags == nil {
			continue
		}
		for _, f := range c.flags() {
			have["--"+f.name] = true
		}
	}
	for word, m := range synonyms {
		assert.False(t, have[word], "%s is a command or flag itself", word)
		assert.Equal(t, strings.ToLower(word), word, "%s: the table is looked up in lower case", word)
		require.NotEmpty(t, m.to, word)
		for _, to := range m.to {
			assert.True(t, have[to], "%s points to %s, which gpuscatter does not have", word, to)
			if !strings.HasPrefix(word, "-") {
				assert.False(t, strings.HasPrefix(to, "-"), "%s -> %s: a command's word names a command", word, to)
			}
		}
	}
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

// flagWord matches the flags a hint names.
var flagWord = regexp.MustCompile(`--[a-z0-9-]+`)

// FuzzHints: whatever a user types as a command or as a flag of run, the
// hints name only commands and flags that exist, and an unknown flag is a
// usage error naming it.
func FuzzHints(f *testing.F) {
	for _, s := range []string{"benchmark", "rnu", "test", "--version", "-v", "index", "input", "o", "dtype", "update",
		"past-cache", "reductoin", "", "-", "--", "ÄÖ", "list", "Index"} {
		f.Add(s)
	}
	var names []string
	model := newModelArg()
	specs := newRunFlags().specs(&model, new(gpuSettings))
	for _, sp := range specs {
		names = append(names, sp.name)
	}
	isCommand := func(w string) bool { return lookupCommand(w) != nil }
	f.Fuzz(func(t *testing.T, word string) {
		if hint := commandHint(word); hint != "" {
			list, ok := strings.CutPrefix(hint, "did you mean ")
			require.True(t, ok, "%q: %q", word, hint)
			for _, w := range strings.FieldsFunc(strings.TrimSuffix(list, "?"), func(r rune) bool { return r == ',' || r == ' ' }) {
				if w != "or" {
					assert.True(t, isCommand(w), "%q: hint %q names %q", word, hint, w)
				}
			}
		}
		for _, w := range flagWord.FindAllString(flagHint(word, names), -1) {
			assert.Contains(t, names, strings.TrimPrefix(w, "--"), "%q", word)
		}
		if lookupCommand(word) == nil && !slices.Contains(names, word) && word != "" && word != "h" && word != "help" &&
			!strings.HasPrefix(word, "-") && !strings.Contains(word, "=") {
			err := parseFlags([]string{"--" + word}, specs)
			var ue *usageError
			require.ErrorAs(t, err, &ue, "%q", word)
			assert.True(t, strings.HasPrefix(ue.msg, "unknown flag --"+word), "%q: %s", word, ue.msg)
		}
	})
}
