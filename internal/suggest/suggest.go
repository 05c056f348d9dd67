// Package suggest finds the names a mistyped name may mean, for the "did
// you mean" of the command-line tool (operators, flags, workloads) and of
// package ops' errors (reductions): one rule for every such hint.
package suggest

import "strings"

// editDistance is the number of edits between a and b, ignoring case:
// letters inserted, deleted or replaced, and two neighbours swapped ("rnu"
// for "run"), each one edit (the optimal string alignment distance).
func editDistance(a, b string) int {
	ra, rb := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	// d[i][j] is the distance between ra[:i] and rb[:j]; three rows.
	back := make([]int, len(rb)+1)
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
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], back[j-2]+1)
			}
		}
		back, prev, cur = prev, cur, back
	}
	return prev[len(rb)]
}

// minPrefix is the shortest start of a name that Closest takes for it.
const minPrefix = 3

// Closest returns the candidates nearest to s, in their order, when they
// are near enough to be a typing mistake: at most 2 edits (ignoring case),
// and fewer than a third of s. Where none is, it returns the candidates
// that s, of at least three letters, is the start of ("circ" for
// "circular").
func Closest(s string, candidates []string) []string {
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
	if len(out) > 0 || len([]rune(s)) < minPrefix {
		return out
	}
	for _, c := range candidates {
		if lc, ls := strings.ToLower(c), strings.ToLower(s); len(lc) > len(ls) && strings.HasPrefix(lc, ls) {
			out = append(out, c)
		}
	}
	return out
}

// DidYouMean returns "did you mean X?" (or "X or Y") for the candidates
// near s, with prefix before each, or "" when none is near.
func DidYouMean(s string, candidates []string, prefix string) string {
	near := Closest(s, candidates)
	if len(near) == 0 {
		return ""
	}
	for i := range near {
		near[i] = prefix + near[i]
	}
	return "did you mean " + OrList(near) + "?"
}

// OrList joins words as "a", "a or b", "a, b or c".
func OrList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
