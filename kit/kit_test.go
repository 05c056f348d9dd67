// Package kit_test builds the qualification kit (kit/build.sh, make kit)
// and runs it from a copy outside the source tree.
package kit_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/internal/treetests"
)

// TestKitRunsOutsideTheTree builds the kit, unpacks it into a temporary
// directory and runs its run.sh there exactly as a GPU machine would:
// env -i PATH=/usr/bin:/bin KIT_QUICK=1 run.sh DIR, so with HOME unset and
// no Go on the PATH, from another directory, with the tests of each test
// binary (those of internal/treetests/tests.txt skipped, and, through
// KIT_TEST_SKIP, kitHeavyTests), check on one path (KIT_CHECK_MATCH) and
// bench on two workloads (KIT_BENCH_WORKLOADS). It must end RESULT: PASS
// with exit status 0 and write every result, the JSON ones valid. The
// tarball must stay under 64 MiB.
// kitHeavyTests are the device tests that TestKitRunsOutsideTheTree
// leaves out of the kit's run: each takes over two seconds on two cores
// at the quick size and reads no file (each has passed in a kit run
// outside the tree before it joined the list), so running it again from the
// unpacked kit proves nothing that make test's own run of it and the
// kit's other tests of the same binary do not. gpu's TestCheck runs
// check's paths, which the kit's check step runs itself. A kit run on a
// GPU machine runs them all.
var kitHeavyTests = []string{
	"TestCheck", "TestBucketedFoldBitIdentity", "TestSpecShapes", "TestCheckWithoutShaderFloat64",
	"TestReductionsCheckIndicesInOnePass", "TestCheckResident", "TestFaultMatrix", "TestReductionTable",
	"TestStartup", "TestMinMaxNaNBits", "TestBenchQuickGPU", "TestCheckRowsNameRealOperators",
	"TestBaseline64BitReductions", "TestSubnormalSteps", "TestExecuteRecordsThePlan",
	"TestDeterministicFoldBitIdentity", "TestReductionPaths", "TestConcurrentExecute",
	"TestBenchKVDecodeGPU", "TestPlanIsTheDevicesPlan", "TestCheckMatchOperator", "TestCheckCatchesBrokenPaths",
	"TestCheckReportsRefusedRows", "TestSubnormalSums", "TestReductionIndexErrors", "TestResidentValidationTable",
	"TestNoShaderFloat64Knob", "TestSkipBadIndices", "TestBatchHonoursContext", "TestSplitBucketsBitIdentity",
	"TestWatchdogSeesProgress", "TestStallKeepsObjects", "TestDevicesMeasured", "TestBenchDeterministicIsBitForBit",
	"TestExternalRandom", "TestBarriersBatch", "TestExternalOperators", "TestExternalBadIndices", "TestLongBatchShortTimeout",
}

func TestKitRunsOutsideTheTree(t *testing.T) {
	const kitCheckMatch, kitBenchWorkloads = "none/default", "SND5,SS"
	// check's pass under GPU-assisted validation on one path alone: make
	// qualify-gpuav runs the whole bounded set.
	const kitGPUAVMatch = "resident/default"
	kitTestSkip := "^(" + strings.Join(kitHeavyTests, "|") + ")$"
	if testing.Short() {
		t.Skip("builds and runs the kit")
	}
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		goCmd = "go"
	}
	build := t.TempDir()
	cmd := exec.Command("sh", "kit/build.sh", filepath.Join(build, "gpuscatter-kit"))
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GO="+goCmd)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	tgz, err := os.Stat(filepath.Join(build, "gpuscatter-kit.tar.gz"))
	require.NoError(t, err)
	assert.Less(t, tgz.Size(), int64(64<<20))

	// A copy elsewhere, unpacked from the tarball as a user would.
	elsewhere := t.TempDir()
	untar := exec.Command("tar", "-xzf", filepath.Join(build, "gpuscatter-kit.tar.gz"), "-C", elsewhere)
	msg, err := untar.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	require.NoError(t, os.RemoveAll(build))
	// Each test kitHeavyTests names is a test of the kit's binaries, so
	// that a renamed test cannot make the skip pattern miss it.
	listed := map[string]bool{}
	for _, bin := range []string{"vk.test", "gpu.test", "gpuscatter.test"} {
		out, err := exec.Command(filepath.Join(elsewhere, "gpuscatter-kit", "tests", bin), "-test.list", ".").Output()
		require.NoError(t, err, bin)
		for _, name := range strings.Fields(string(out)) {
			listed[name] = true
		}
	}
	for _, name := range kitHeavyTests {
		assert.True(t, listed[name], "kitHeavyTests names %s, which no test binary of the kit has", name)
	}

	// The machine's environment: nothing but PATH and KIT_QUICK. Where a
	// Go toolchain is installed in /usr/bin or /bin, a go first on the
	// PATH that fails keeps it out of reach.
	path := "/usr/bin:/bin"
	if _, err := lookPathIn("go", path); err == nil {
		noGo := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(noGo, "go"), []byte("#!/bin/sh\necho 'go: not on a GPU machine' >&2\nexit 127\n"), 0o755))
		path = noGo + ":" + path
	}
	results := filepath.Join(t.TempDir(), "results")
	// check's paths and gpu's TestCheck, which runs them, read no file
	// and run in make test already (make qualify, go test ./gpu): here
	// check runs one path, and TestCheck stays out, so that the kit's run
	// proves what only it can, that the binaries run outside the tree.
	run := exec.Command("env", "-i", "PATH="+path, "KIT_QUICK=1", "KIT_CHECK_MATCH="+kitCheckMatch, "KIT_TEST_SKIP="+kitTestSkip,
		"KIT_BENCH_WORKLOADS="+kitBenchWorkloads, "KIT_GPUAV_MATCH="+kitGPUAVMatch,
		filepath.Join(elsewhere, "gpuscatter-kit", "run.sh"), results)
	run.Dir = t.TempDir() // any directory
	report, err := run.CombinedOutput()
	t.Logf("run.sh:\n%s", report)
	if err != nil {
		logFailures(t, results)
	}
	require.NoError(t, err)
	assert.Contains(t, string(report), "RESULT: PASS")
	for _, f := range []string{"devices.json", "check.json", "check.txt", "check-gpuav.txt", "check-gpuav.json", "vk.test.txt", "gpu.test.txt", "gpuscatter.test.txt",
		"bench.txt", "bench.json", "bench.png", "report.txt"} {
		fi, err := os.Stat(filepath.Join(results, f))
		if assert.NoError(t, err, f) {
			assert.Positive(t, fi.Size(), f)
		}
	}
	for _, f := range []string{"devices.json", "check.json", "check-gpuav.json", "bench.json"} {
		b, err := os.ReadFile(filepath.Join(results, f))
		if assert.NoError(t, err, f) {
			assert.True(t, json.Valid(b), "%s is not valid JSON", f)
		}
	}
	// bench timed the workloads KIT_BENCH_WORKLOADS names, and only those.
	if b, err := os.ReadFile(filepath.Join(results, "bench.json")); err == nil {
		for _, w := range strings.Split(kitBenchWorkloads, ",") {
			assert.Contains(t, string(b), `"`+w+`"`, "bench.json")
		}
		assert.NotContains(t, string(b), `"SE-zipf"`, "bench.json: a workload KIT_BENCH_WORKLOADS leaves out")
	}
	// Each test binary ran its tests (vk's validation test through the
	// bundled layer) and none failed; the tests of the tree list were
	// skipped by run.sh, so they never ran.
	tree, err := treetests.List()
	require.NoError(t, err)
	for _, bin := range []string{"vk.test", "gpu.test", "gpuscatter.test"} {
		out, err := os.ReadFile(filepath.Join(results, bin+".txt"))
		require.NoError(t, err)
		assert.Contains(t, string(out), "--- PASS", bin)
		assert.NotContains(t, string(out), "--- FAIL", bin)
		assert.Regexp(t, `(?m)^(PASS|ok)\b`, string(out), bin)
		for _, x := range tree {
			assert.NotContains(t, string(out), "=== RUN   "+x.Name+"\n", "%s ran %s", bin, x.Name)
		}
	}
	// devices.json is the device list alone (for plan --facts).
	devs, err := os.ReadFile(filepath.Join(results, "devices.json"))
	require.NoError(t, err)
	var list []map[string]any
	require.NoError(t, json.Unmarshal(devs, &list), "%s", devs)
	require.NotEmpty(t, list)
	for i, d := range list {
		assert.Contains(t, d, "name", "device %d", i)
		assert.Contains(t, d, "capabilities", "device %d", i)
	}
	check, err := os.ReadFile(filepath.Join(results, "check.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(check), "PASS: ")
	assert.Contains(t, string(check), "none/default")
	assert.NotContains(t, string(check), "random/default", "KIT_CHECK_MATCH keeps one path")
	gpuOut, err := os.ReadFile(filepath.Join(results, "gpu.test.txt"))
	require.NoError(t, err)
	assert.NotContains(t, string(gpuOut), "=== RUN   TestCheck\n", "KIT_TEST_SKIP leaves TestCheck out")
	assert.NotContains(t, string(gpuOut), "=== RUN   TestMinMaxNaNBits\n", "KIT_TEST_SKIP leaves TestMinMaxNaNBits out")
	assert.Contains(t, string(gpuOut), "=== RUN   TestMinMaxNaNBitsHot\n", "and only the tests it names")
}

// lookPathIn finds name in the directories of path, as exec.LookPath does
// with path as $PATH.
func lookPathIn(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// TestRunShArguments: run.sh checks its argument before doing anything,
// so that no output path is computed from an empty folder name (which
// would aim every output at the root of the filesystem).
func TestRunShArguments(t *testing.T) {
	script, err := filepath.Abs("run.sh")
	require.NoError(t, err)
	cwd := t.TempDir()
	run := func(env []string, name string, args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = cwd
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return code, string(out)
	}
	for _, help := range []string{"-h", "--help"} {
		code, out := run(nil, "sh", script, help)
		assert.Equal(t, 0, code, out)
		assert.Contains(t, out, "usage: run.sh RESULTS_DIR")
	}
	for _, args := range [][]string{{}, {"a", "b"}, {""}} {
		code, out := run(nil, "sh", append([]string{script}, args...)...)
		assert.Equal(t, 2, code, "%q: %s", args, out)
		assert.Contains(t, out, "usage: run.sh RESULTS_DIR")
	}
	// A folder the user may create but not enter: mkdir succeeds, cd
	// fails, and the script stops naming it.
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("setpriv"); err == nil {
			require.NoError(t, os.Chmod(filepath.Dir(cwd), 0o755))
			require.NoError(t, os.Chmod(cwd, 0o777))
			// A copy nobody can read, wherever the tree is.
			body, err := os.ReadFile(script)
			require.NoError(t, err)
			kitDir := t.TempDir()
			require.NoError(t, os.Chmod(kitDir, 0o755))
			copied := filepath.Join(kitDir, "run.sh")
			require.NoError(t, os.WriteFile(copied, body, 0o755))
			code, out := run(nil, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
				"sh", "-c", `umask 177 && exec sh "$0" results`, copied)
			assert.Equal(t, 2, code, out)
			assert.Contains(t, out, "cannot create, enter and write the results folder results")
		}
	}
	// Nothing but that folder was made, in the working folder or at /.
	entries, err := os.ReadDir(cwd)
	require.NoError(t, err)
	for _, e := range entries {
		assert.Equal(t, "results", e.Name())
	}
	for _, p := range []string{"/summary.txt", "/check.json", "/work/summary.txt"} {
		_, err := os.Stat(p)
		assert.ErrorIs(t, err, fs.ErrNotExist, p)
	}
}

// logFailures logs the output of each failed test of the kit's test
// binaries (from its --- FAIL line back to its === RUN line), since the
// results folder goes with the test's temporary directory.
func logFailures(t *testing.T, results string) {
	files, _ := filepath.Glob(filepath.Join(results, "*.test.txt"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(string(b), "\n")
		start := 0
		for i, l := range lines {
			if strings.HasPrefix(l, "=== RUN") {
				start = i
			}
			if strings.HasPrefix(l, "--- FAIL") {
				t.Logf("%s:\n%s", filepath.Base(f), strings.Join(lines[start:i+1], "\n"))
			}
		}
	}
}
