//go:build cgo

package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestWarmLasts: what warm compiled is known to a fresh process with the
// same cache folder and device, so a second warm of the same call
// compiles nothing; where the driver's own cache is off (Mesa's, with
// MESA_SHADER_CACHE_DISABLE), warm says so, and a second one compiles
// every pipeline again, as it reports. Each run is a process of the
// built command; their times are logged (the second warm's is small
// next to the first's), not asserted.
func TestWarmLasts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	counts := regexp.MustCompile(`\((\d+) compiled, (\d+) there already`)
	warm := func(cache string, env ...string) (line string, compiled, there int) {
		t.Helper()
		cmd := exec.Command(bin, "warm", "--workloads", "SE-sum-dup", "--scale", "0.004", "--deterministic")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "MESA_SHADER_CACHE_") && !strings.HasPrefix(kv, "MESA_GLSL_CACHE_") && !strings.HasPrefix(kv, "XDG_CACHE_HOME=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(append(cmd.Env, "XDG_CACHE_HOME="+cache), env...)
		start := time.Now()
		out, err := cmd.Output()
		require.NoError(t, err, "%s", out)
		line = strings.TrimSpace(string(out))
		t.Logf("%v %s: %s", env, time.Since(start).Round(time.Millisecond), line)
		m := counts.FindStringSubmatch(line)
		require.NotNil(t, m, line)
		compiled, _ = strconv.Atoi(m[1])
		there, _ = strconv.Atoi(m[2])
		return line, compiled, there
	}

	cache := t.TempDir()
	line, compiled, there := warm(cache)
	assert.Positive(t, compiled, "a fresh cache folder holds none of them")
	assert.Zero(t, there, line)
	pipelines := compiled
	line, compiled, there = warm(cache)
	assert.Zero(t, compiled, "the second warm: %s", line)
	assert.Equal(t, pipelines, there, line)
	assert.NotContains(t, line, "run once on zeros", "nothing compiled, nothing to run")

	off := t.TempDir()
	line, compiled, _ = warm(off, "MESA_SHADER_CACHE_DISABLE=true")
	assert.Equal(t, pipelines, compiled, line)
	lost := strings.Contains(line, "the driver's shader cache is off (MESA_SHADER_CACHE_DISABLE=true), so a later process compiles them again")
	if strings.Contains(line, `on "llvmpipe`) {
		assert.True(t, lost, "lavapipe is Mesa's: %s", line)
	}
	line, compiled, there = warm(off, "MESA_SHADER_CACHE_DISABLE=true")
	if lost {
		assert.Equal(t, pipelines, compiled, "with the driver's cache off, compiled again: %s", line)
		assert.Zero(t, there, line)
	} else {
		assert.Zero(t, compiled, "a driver that keeps its code in the pipeline cache file: %s", line)
	}
}
