//go:build cgo

package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWarm: warm compiles the pipelines of bench's workloads or of run's
// call read from headers, prints one line saying what it did and where
// they are kept, and refuses what names nothing to warm, or two things.
func TestWarm(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	fx := newFixture(t)
	for name, args := range map[string][]string{
		"workloads": {"warm", "--workloads", "se-sum-dup,SND-max-i32", "--scale", "0.004", "--deterministic"},
		"call": {"warm", "--op", "ScatterNDUpdate-15", "--reduction", "max", "--data", fx.f("data"),
			"--indices", fx.f("indices"), "--updates", fx.f("updates")},
	} {
		code, stdout, stderr := runCLI(t, args...)
		require.Equal(t, exitOK, code, "%s: %s", name, stderr)
		assert.Empty(t, stderr, name)
		assert.True(t, strings.HasPrefix(stdout, "warm: "), "%s: %q", name, stdout)
		assert.Equal(t, 1, strings.Count(stdout, "\n"), "%s: one line: %q", name, stdout)
		assert.Contains(t, stdout, map[string]string{"workloads": " for 2 calls on ", "call": " for 1 call on "}[name], name)
		assert.Regexp(t, `\(\d+ compiled, \d+ there already(; \d+ calls? run once on zeros, as this device compiles at the first dispatch)?\); `+
			`(the driver keeps compiled code in its own shader cache|saved to )`, stdout, name)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"warm"}, "nothing to warm: give run's flags"},
		{[]string{"warm", "--scale", "0.5"}, "--scale applies to --workloads"},
		{[]string{"warm", "--workloads", "SE-sum-dup", "--op", "ScatterND-18"}, "--workloads and a call"},
		{[]string{"warm", "--workloads", "SE-sum-dupp"}, `unknown workload "SE-sum-dupp" (did you mean SE-sum-dup?)`},
		{[]string{"warm", "--op", "ScatterND-18"}, "missing required flags --data, --updates"},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		requireUsageError(t, code, stdout, stderr, c.msg)
	}
	code, stdout, stderr := runCLI(t, "warm", "--workloads", "SE-sum-dup", "--device", "nomatch")
	requireInputError(t, code, stdout, stderr, `--device "nomatch" matches no device name`)
}
