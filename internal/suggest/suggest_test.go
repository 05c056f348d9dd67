package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"add", "", 3}, {"", "add", 3}, {"add", "ADD", 0},
		{"ad", "add", 1}, {"maxx", "max", 1}, {"mul", "max", 2}, {"reductoin", "reduction", 1},
		{"kitten", "sitting", 3}, {"ÄB", "äc", 1},
		// A swap of two neighbours is one edit.
		{"rnu", "run", 1}, {"plna", "plan", 1}, {"ab", "ba", 1}, {"abc", "ca", 3}, {"ehcck", "check", 2},
	} {
		assert.Equal(t, c.want, editDistance(c.a, c.b), "%q %q", c.a, c.b)
		assert.Equal(t, c.want, editDistance(c.b, c.a), "%q %q", c.b, c.a)
	}
}

// TestClosest: the nearest candidates within the limit (one edit for names
// under six letters, two from six on), in the candidates' order.
func TestClosest(t *testing.T) {
	reds := []string{"none", "add", "mul", "min", "max"}
	for _, c := range []struct {
		s          string
		candidates []string
		want       []string
	}{
		{"ad", reds, []string{"add"}},
		{"maxx", reds, []string{"max"}},
		{"MAX", reds, []string{"max"}},
		{"mux", reds, []string{"mul", "max"}},
		{"sum", reds, nil},
		{"", reds, nil},
		{"reductoin", []string{"reduction", "repeats"}, []string{"reduction"}},
		{"ScaterND-18", []string{"ScatterND-18", "ScatterND-16", "Scatter-11"}, []string{"ScatterND-18"}},
		{"x", nil, nil},
		{"rnu", []string{"run", "bench", "plan"}, []string{"run"}},
		// The start of a name, of three letters or more, where no name is
		// a few edits away.
		{"circ", []string{"linear", "circular"}, []string{"circular"}},
		{"CIRC", []string{"linear", "circular"}, []string{"circular"}},
		{"ci", []string{"linear", "circular"}, nil},
		{"dete", []string{"device", "deterministic"}, []string{"deterministic"}},
		{"mod", []string{"mode", "model"}, []string{"mode"}},
	} {
		assert.Equal(t, c.want, Closest(c.s, c.candidates), "%q", c.s)
	}
}

func TestDidYouMean(t *testing.T) {
	assert.Equal(t, "did you mean --reduction?", DidYouMean("reductoin", []string{"reduction", "repeats"}, "--"))
	assert.Equal(t, "did you mean mul or max?", DidYouMean("mux", []string{"none", "mul", "max"}, ""))
	assert.Equal(t, "", DidYouMean("frobnicate", []string{"reduction"}, "--"))
}

func TestOrList(t *testing.T) {
	assert.Equal(t, "", OrList(nil))
	assert.Equal(t, "a", OrList([]string{"a"}))
	assert.Equal(t, "a or b", OrList([]string{"a", "b"}))
	assert.Equal(t, "a, b or c", OrList([]string{"a", "b", "c"}))
}
