package examples_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goDoc returns the output of go doc with args, run at the repository's
// root.
func goDoc(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"doc"}, args...)...)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go doc %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// TestGPUAPIIsTheUsers: go doc shows package gpu's API as a user meets
// it: no benchmark helper among Backend's methods (they are
// internal/gpubench's), no type of package vk in Stats, and every exported
// function and method with a doc comment that starts with its name.
func TestGPUAPIIsTheUsers(t *testing.T) {
	backend := goDoc(t, "./gpu", "Backend")
	assert.NotRegexp(t, regexp.MustCompile(`\) (CopyTime|Device|LastRoundTrips|PlanTraffic|RunResident|RunResidentBatch|RunResidentSteps)\(`), backend)
	assert.Contains(t, backend, ") Execute(", "the listing has the methods")

	stats := goDoc(t, "./gpu", "Stats")
	assert.NotContains(t, stats, "vk.")
	assert.Contains(t, stats, "Passes []PassTime")

	all := strings.Split(goDoc(t, "-all", "./gpu"), "\n")
	decl := regexp.MustCompile(`^func (\([a-z]+ \*?[A-Za-z]+\) )?([A-Z]\w*)\(`)
	funcs := 0
	for i, line := range all {
		m := decl.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		funcs++
		require.Less(t, i+1, len(all), line)
		assert.True(t, strings.HasPrefix(all[i+1], "    "+m[2]+" "), "%s: its doc starts %q", line, all[i+1])
	}
	assert.Greater(t, funcs, 25, "the exported functions and methods found")
}
