package main

import (
	"strings"

	"github.com/gpuscatter/gpuscatter/ops"
)

// editDistance is the Levenshtein distance between a and b, ignoring case.
func editDistance(a, b string) int {
	ra, rb := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// closest returns the candidates nearest to s, when they are near enough
// to be a typing mistake: at most 2 edits, and fewer than a third of s.
func closest(s string, candidates []string) []string {
	best, limit := -1, min(2, max(1, len([]rune(s))/3))
	var out []string
	for _, c := range candidates {
		d := editDistance(s, c)
		switch {
		case d > limit:
		case best < 0 || d < best:
			best, out = d, []string{c}
		case d == best:
			out = append(out, c)
		}
	}
	return out
}

// didYouMean returns "did you mean X?" (or "X or Y") for the candidates
// near s, with prefix before each, or "" when none is near.
func didYouMean(s string, candidates []string, prefix string) string {
	near := closest(s, candidates)
	if len(near) == 0 {
		return ""
	}
	for i := range near {
		near[i] = prefix + near[i]
	}
	return "did you mean " + orList(near) + "?"
}

// semi returns "; " and hint, or "" when hint is empty.
func semi(hint string) string {
	if hint == "" {
		return ""
	}
	return "; " + hint
}

// orList joins words as "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
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
	hint := semi(didYouMean(name, all, ""))
	switch vs := versions[strings.ToLower(base)]; {
	case vs != nil && !hasVersion:
		hint = "; name a version: " + orList(vs)
	case vs != nil:
		hint = "; did you mean " + orList(vs) + "?"
	case hint == "" && !hasVersion:
		if near := closest(base, bases); len(near) > 0 {
			var vs []string
			for _, b := range near {
				vs = append(vs, versions[strings.ToLower(b)]...)
			}
			hint = "; did you mean " + orList(vs) + "?"
		}
	case hint == "":
		// A mistyped name with a version: suggest the version of the
		// nearest name, if it has it.
		for _, b := range closest(base, bases) {
			for _, v := range versions[strings.ToLower(b)] {
				if strings.EqualFold(v, b+"-"+version) {
					hint = "; did you mean " + v + "?"
				}
			}
		}
	}
	return nil, usagef("--op %q is not an operator gpuscatter runs%s (run 'gpuscatter ops' for the list)", name, hint)
}
