package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpuscatter/gpuscatter/internal/suggest"
	"github.com/gpuscatter/gpuscatter/ops"
)

// semi returns "; " and hint, or "" when hint is empty.
func semi(hint string) string {
	if hint == "" {
		return ""
	}
	return "; " + hint
}

// lookupOp looks up --op name. An unknown name is a usage error that
// suggests the names it may mean: the versions of an operator named
// without one or with one it lacks, or the names a few typing mistakes
// away.
func lookupOp(name string) (*ops.Op, error) {
	op, err := ops.Lookup(name)
	if err == nil {
		return op, nil
	}
	var all []string
	versions := map[string][]string{} // lower-case base name -> full names
	var bases []string
	for _, o := range ops.All() {
		all = append(all, o.Name)
		base, _, _ := strings.Cut(o.Name, "-")
		key := strings.ToLower(base)
		if versions[key] == nil {
			bases = append(bases, base)
		}
		versions[key] = append(versions[key], o.Name)
	}
	name = strings.TrimSpace(name)
	base, version, hasVersion := strings.Cut(name, "-")
	hint := semi(suggest.DidYouMean(name, all, ""))
	switch vs := versions[strings.ToLower(base)]; {
	case vs != nil && !hasVersion:
		hint = "; name a version: " + suggest.OrList(vs)
	case vs != nil:
		hint = "; did you mean " + suggest.OrList(vs) + "?"
	case hint == "" && !hasVersion:
		if near := suggest.Closest(base, bases); len(near) > 0 {
			var vs []string
			for _, b := range near {
				vs = append(vs, versions[strings.ToLower(b)]...)
			}
			hint = "; did you mean " + suggest.OrList(vs) + "?"
		}
	case hint == "":
		// A mistyped name with a version: suggest the version of the
		// nearest name, if it has it.
		for _, b := range suggest.Closest(base, bases) {
			for _, v := range versions[strings.ToLower(b)] {
				if strings.EqualFold(v, b+"-"+version) {
					hint = "; did you mean " + v + "?"
				}
			}
		}
	}
	return nil, usagef("--op %q is not an operator gpuscatter runs%s (run 'gpuscatter ops' for the list)", name, hint)
}

// commandHint is "did you mean run?" for a mistyped command name, or "":
// by meaning first (synonyms: "benchmark" is bench), then by spelling.
func commandHint(name string) string {
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	if hint := byMeaning(name, names); hint != "" {
		return hint
	}
	if strings.HasPrefix(name, "-") {
		return "" // a flag before the command: only a meaning names one
	}
	return suggest.DidYouMean(name, names, "")
}

// flagHint is what an unknown flag --name of a command whose flags are
// flags may mean: the flag that takes the input an operator's spec calls
// so (specInputHint), else the flag of that meaning (synonyms: --index is
// --indices), else the flags a few typing mistakes away; "" where none
// is.
func flagHint(name string, flags []string) string {
	if hint := specInputHint(name, flags); hint != "" {
		return hint
	}
	dashed := make([]string, len(flags))
	for i, f := range flags {
		dashed[i] = "--" + f
	}
	if hint := byMeaning("--"+name, dashed); hint != "" {
		return hint
	}
	return suggest.DidYouMean(name, flags, "--")
}

// meaning is what a word a user types for a command or flag stands for.
type meaning struct {
	// to lists the commands, or the flags with their dashes, that do
	// what the word asks, in order of preference.
	to []string
	// why, where set, is the hint instead of "did you mean ...?": for a
	// word that names no flag's value but says where it is given.
	why string
}

// synonyms maps the words users type for a command ("benchmark") or a
// flag ("--index", written with its dashes; "-o" is "--o") to the
// gpuscatter commands or flags of that meaning: the names of other tools
// (PyTorch's src and reduce, ONNX's input), the singulars and plurals,
// the usual short forms. One rule reads it (byMeaning): a word gets a hint
// naming those of its targets that the command at hand has, and none
// where it has none of them. A word that a typing mistake explains gets
// its hint from the spelling rule instead, after this one.
var synonyms = map[string]meaning{
	// Commands.
	"benchmark": {to: []string{"bench"}}, "benchmarks": {to: []string{"bench"}}, "perf": {to: []string{"bench"}},
	"time": {to: []string{"bench"}}, "timing": {to: []string{"bench"}}, "profile": {to: []string{"bench"}},
	"measure": {to: []string{"bench"}},
	"test":    {to: []string{"check", "onnx-test"}}, "tests": {to: []string{"check", "onnx-test"}},
	"verify": {to: []string{"check"}}, "validate": {to: []string{"check"}}, "conformance": {to: []string{"check"}},
	"qualify": {to: []string{"check"}}, "selftest": {to: []string{"check"}}, "self-test": {to: []string{"check"}},
	"compile": {to: []string{"warm"}}, "precompile": {to: []string{"warm"}}, "warmup": {to: []string{"warm"}},
	"warm-up": {to: []string{"warm"}}, "prepare": {to: []string{"warm"}}, "build": {to: []string{"warm"}},
	"list": {to: []string{"ops", "devices"}}, "ls": {to: []string{"ops", "devices"}},
	"operators": {to: []string{"ops"}}, "operator": {to: []string{"ops"}}, "op": {to: []string{"ops"}},
	"device": {to: []string{"devices"}}, "gpu": {to: []string{"devices"}}, "gpus": {to: []string{"devices"}},
	"info": {to: []string{"devices", "version"}},
	"exec": {to: []string{"run"}}, "execute": {to: []string{"run"}}, "scatter": {to: []string{"run"}},
	"explain": {to: []string{"plan"}}, "estimate": {to: []string{"plan"}}, "cost": {to: []string{"plan"}},
	"onnx": {to: []string{"onnx-test", "run"}}, "node-test": {to: []string{"onnx-test"}},
	"demo":  {to: []string{"examples"}},
	"usage": {to: []string{"help"}}, "man": {to: []string{"help"}},
	"--version": {to: []string{"version"}}, "-version": {to: []string{"version"}}, "-v": {to: []string{"version"}},
	// Flags: the inputs.
	"--input": {to: []string{"--data"}}, "--in": {to: []string{"--data"}}, "--x": {to: []string{"--data"}},
	"--self": {to: []string{"--data"}}, "--tensor": {to: []string{"--data"}},
	"--index": {to: []string{"--indices"}}, "--idx": {to: []string{"--indices"}}, "--indexes": {to: []string{"--indices"}},
	"--update": {to: []string{"--updates"}}, "--src": {to: []string{"--updates"}}, "--source": {to: []string{"--updates"}},
	"--values": {to: []string{"--updates"}}, "--value": {to: []string{"--updates"}},
	"--output": {to: []string{"--out", "--json"}}, "--o": {to: []string{"--out", "--json"}},
	"--result": {to: []string{"--out"}}, "--dst": {to: []string{"--out"}},
	"--dtype": {to: []string{"--data"}, why: "the element type is --data's, read from its file"},
	"--type":  {to: []string{"--data"}, why: "the element type is --data's, read from its file"},
	"--dim":   {to: []string{"--axis"}}, "--dims": {to: []string{"--axes"}},
	"--begin": {to: []string{"--start"}}, "--end": {to: []string{"--stop"}},
	"--stride": {to: []string{"--step"}}, "--strides": {to: []string{"--step"}},
	// Flags: the operator and its attributes.
	"--operator": {to: []string{"--op"}}, "--operation": {to: []string{"--op"}}, "--op-type": {to: []string{"--op"}},
	"--reduce": {to: []string{"--reduction"}},
	"--onnx":   {to: []string{"--model"}},
	// Flags: where and how often.
	"--gpu":        {to: []string{"--device"}},
	"--iterations": {to: []string{"--repeats"}}, "--iters": {to: []string{"--repeats"}}, "--runs": {to: []string{"--repeats"}},
	"--repeat": {to: []string{"--repeats"}}, "--times": {to: []string{"--repeats"}},
	"--filter": {to: []string{"--match", "--workloads"}}, "--only": {to: []string{"--match", "--workloads"}},
	"--size": {to: []string{"--scale"}},
}

// byMeaning is the hint synonyms gives word (a command, or a flag with its
// dashes) among have, the commands or the command's flags: "did you mean
// bench?", or the entry's why; "" where the word is none of the table's or
// have holds none of its targets.
func byMeaning(word string, have []string) string {
	m, ok := synonyms[strings.ToLower(word)]
	if !ok {
		return ""
	}
	var to []string
	for _, t := range m.to {
		if slices.Contains(have, t) {
			to = append(to, t)
		}
	}
	switch {
	case len(to) == 0:
		return ""
	case m.why != "":
		return m.why
	}
	return "did you mean " + suggest.OrList(to) + "?"
}

// requestFlags names the run flag that takes each field of ops.Request.
var requestFlags = map[string]string{"Data": "data", "Indices": "indices", "Updates": "updates", "Axis": "axis",
	"Start": "start", "Stop": "stop", "Step": "step", "Axes": "axes", "Reduction": "reduction", "UseInitVal": "use-init-val", "Mode": "mode"}

// specInputHint says which flag takes what an unknown flag --name stands
// for where name, with dashes or underscores, is how an operator's spec
// names one of its inputs or attributes (ops.Op.SpecInputs):
// "TensorScatter's past_cache is --data". It is "" where no spec names
// it so, or where the flag is not among the command's flags.
func specInputHint(name string, flags []string) string {
	key := strings.ReplaceAll(strings.ToLower(name), "-", "_")
	var hints []string
	for _, op := range ops.All() {
		for _, in := range op.SpecInputs() {
			flag := requestFlags[in.Field]
			if in.Name != key || flag == name || !slices.Contains(flags, flag) {
				continue
			}
			if h := fmt.Sprintf("%s's %s is --%s", op.Family, in.Name, flag); !slices.Contains(hints, h) {
				hints = append(hints, h)
			}
		}
	}
	return strings.Join(hints, ", ")
}
