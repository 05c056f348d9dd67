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

// commandHint is "did you mean run?" for a mistyped command name, or "".
func commandHint(name string) string {
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	return suggest.DidYouMean(name, names, "")
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
