package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/bench"
	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// smallMemcpy lowers the memory-copy reference to 1 MiB for the test, so
// that the tests that do not look at it do not pay for 256 MiB.
func smallMemcpy(t *testing.T) {
	t.Helper()
	saved := benchMemcpyBytes
	benchMemcpyBytes = 1 << 20
	t.Cleanup(func() { benchMemcpyBytes = saved })
}

// benchGPU is a GPU backend for the tests: the CPU reference under another
// name, which can corrupt one element of its output or fail.
type benchGPU struct {
	*cpuref.Backend
	corruptAt int // flat position whose float32 gets 1 added; -1 for none
	err       error
	closed    *bool
}

func (g *benchGPU) Name() string { return "test device" }

func (g *benchGPU) Execute(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error {
	if g.err != nil {
		return g.err
	}
	if err := g.Backend.Execute(ctx, p, out); err != nil {
		return err
	}
	if g.corruptAt >= 0 {
		tensor.View[float32](out)[g.corruptAt]++
	}
	return nil
}

func (g *benchGPU) Close() error {
	if g.closed != nil {
		*g.closed = true
	}
	return nil
}

func withBenchGPU(t *testing.T, g *benchGPU) {
	t.Helper()
	g.Backend = cpuref.New()
	withGPU(t, func(context.Context) (ops.Backend, error) { return g, nil })
}

// withoutProgress drops from stderr the lines bench prints off a terminal
// as each result is measured ("gpuscatter: bench [1/2] SE on cpu: ...").
func withoutProgress(stderr string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(line, prefix+"bench [") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// requireOneErrorLine checks an exit-1 failure: exactly one stderr line
// besides bench's progress lines, starting with the prefix, containing
// each of parts.
func requireOneErrorLine(t *testing.T, code int, stderr string, parts ...string) {
	t.Helper()
	stderr = withoutProgress(stderr)
	require.Equal(t, exitError, code, "stderr: %s", stderr)
	require.Equal(t, 1, strings.Count(stderr, "\n"), "stderr is not one line: %q", stderr)
	require.True(t, strings.HasPrefix(stderr, prefix) && strings.HasSuffix(stderr, "\n"), "stderr %q", stderr)
	for _, p := range parts {
		require.Contains(t, stderr, p)
	}
}

// tableRows returns the rows of the table on stdout by workload, each as
// its fields.
func tableRows(stdout string) [][]string {
	var rows [][]string
	inTable := false
	for _, line := range strings.Split(stdout, "\n") {
		switch {
		case strings.HasPrefix(line, "workload "):
			inTable = true
		case inTable && line == "":
			inTable = false
		case inTable && !strings.HasPrefix(line, " "):
			rows = append(rows, strings.Fields(line))
		}
	}
	return rows
}

// jsonFields are the fields every result of --json carries.
var jsonFields = []string{
	"workload", "description", "backend", "device", "median_ms", "min_ms", "max_ms", "times_ms",
	"device_ms", "phases", "bytes", "gbps", "memcpy_gbps", "fraction_of_memcpy", "verified",
	"max_abs_diff", "mismatches", "tolerance",
}

type benchJSON struct {
	Tool    string           `json:"tool"`
	Command string           `json:"command"`
	Scale   float64          `json:"scale"`
	Seed    uint64           `json:"seed"`
	Repeats int              `json:"repeats"`
	Results []map[string]any `json:"results"`
}

func readBenchJSON(t *testing.T, path string) benchJSON {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc benchJSON
	require.NoError(t, json.Unmarshal(b, &doc), "%s", b)
	return doc
}

// TestBenchQuickCPU runs the whole quick benchmark on the CPU, as CI does,
// with both output files.
func TestBenchQuickCPU(t *testing.T) {
	dir := t.TempDir()
	jsonPath, plotPath := filepath.Join(dir, "bench.json"), filepath.Join(dir, "bench.png")
	code, stdout, stderr := runCLI(t, "bench", "--quick", "--backend", "cpu", "--json", jsonPath, "--plot", plotPath)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Empty(t, withoutProgress(stderr))

	// The table: a header, one verified row per workload.
	assert.Contains(t, stdout, "cpu: ")
	assert.Regexp(t, `(?m)^workload +backend +median ms +min ms +max ms +device ms +MB/pass +memcpy ms +GB/s +memcpy GB/s +of memcpy +speedup +verified +max diff$`, stdout)
	rows := tableRows(stdout)
	require.Len(t, rows, len(bench.Names()), stdout)
	for i, row := range rows {
		assert.Equal(t, bench.Names()[i], row[0])
		assert.Equal(t, "cpu", row[1])
		assert.Equal(t, "yes", row[len(row)-2], "verified: %v", row)
		assert.Equal(t, "0", row[len(row)-1], "max diff: %v", row)
	}

	doc := readBenchJSON(t, jsonPath)
	assert.Equal(t, "gpuscatter bench", doc.Tool)
	assert.Equal(t, bench.QuickScale, doc.Scale)
	assert.Equal(t, uint64(1), doc.Seed)
	assert.Equal(t, 5, doc.Repeats)
	assert.Contains(t, doc.Command, "--quick")
	require.Len(t, doc.Results, len(bench.Names()))
	for i, r := range doc.Results {
		for _, f := range jsonFields {
			assert.Contains(t, r, f, "result %d", i)
		}
		assert.Equal(t, bench.Names()[i], r["workload"])
		assert.Equal(t, "cpu", r["backend"])
		assert.Equal(t, "cpu", r["device"])
		assert.Equal(t, true, r["verified"], r["workload"])
		assert.Equal(t, 0.0, r["max_abs_diff"])
		assert.NotContains(t, r, "skipped")
		assert.NotContains(t, r, "speedup", "the CPU is the baseline")
		assert.Len(t, r["times_ms"], 5)
		for _, f := range []string{"median_ms", "min_ms", "max_ms", "gbps", "memcpy_gbps", "fraction_of_memcpy", "bytes"} {
			assert.Positive(t, r[f], "%s of %s", f, r["workload"])
		}
		assert.LessOrEqual(t, r["min_ms"], r["median_ms"])
		assert.LessOrEqual(t, r["median_ms"], r["max_ms"])
	}

	f, err := os.Open(plotPath)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, img.Bounds().Dx(), 600)
	assert.GreaterOrEqual(t, img.Bounds().Dy(), 400)

	assert.Equal(t, []string{"bench.json", "bench.png"}, listDir(t, dir), "no temporary files left")
}

func TestBenchSelectsWorkloads(t *testing.T) {
	smallMemcpy(t)
	code, stdout, stderr := runCLI(t, "bench", "--quick", "--backend=cpu", "--workloads", "ss, se-F16", "--repeats", "2")
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	rows := tableRows(stdout)
	require.Len(t, rows, 2, stdout)
	assert.Equal(t, "SS", rows[0][0])
	assert.Equal(t, "SE-f16", rows[1][0])
	assert.Contains(t, stdout, "2 timed runs after 1 warm-up")
}

func TestBenchUsageErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		msg  string
	}{
		{"unknown workload", []string{"--workloads", "SE,SX9"}, `--workloads: unknown workload "SX9"; the workloads are SU1, SND5, SE,`},
		{"empty workload", []string{"--workloads", "SE,,SS"}, "element 2 of the comma list is empty"},
		{"quick and scale", []string{"--quick", "--scale", "2"}, "--quick and --scale are exclusive"},
		{"zero scale", []string{"--scale", "0"}, `--scale "0": want a number greater than 0`},
		{"huge scale", []string{"--scale", "1e9"}, `--scale "1e9": want a number greater than 0 and at most 1024`},
		{"bad repeats", []string{"--repeats", "0"}, `--repeats "0": want an integer from 1 to 10000`},
		{"bad seed", []string{"--seed", "-3"}, `--seed "-3": want a non-negative integer`},
		{"input without op", []string{"--data", "d.npy"}, "--data needs --op"},
		{"workloads with op", []string{"--op", "ScatterND-18", "--data", "d.npy", "--updates", "u.npy", "--workloads", "SE"}, "--workloads applies to the built-in workloads, not to --op"},
		{"quick with op", []string{"--op", "ScatterND-18", "--quick"}, "--quick applies to the built-in workloads"},
		{"op without inputs", []string{"--op", "ScatterND-18"}, "missing required flags --data, --updates"},
		{"unknown op", []string{"--op", "Gather-1", "--data", "d.npy", "--updates", "u.npy"}, `--op "Gather-1" is not an operator`},
		{"plot not png", []string{"--plot", "p.svg"}, `--plot "p.svg": want a path ending in .png`},
		{"out is not a bench flag", []string{"--out", "o.npy"}, "unknown flag --out"},
		{"bad backend", []string{"--backend", "tpu"}, `--backend "tpu": want one of auto, cpu, gpu`},
		{"stray argument", []string{"SE"}, `unexpected argument "SE"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"bench"}, c.args...)...)
			require.Equal(t, exitUsage, code, "stderr: %s", stderr)
			assert.Empty(t, stdout)
			first, rest, _ := strings.Cut(stderr, "\n")
			assert.True(t, strings.HasPrefix(first, prefix), first)
			assert.Contains(t, first, c.msg)
			assert.Contains(t, rest, "gpuscatter bench [--workloads LIST] [--quick]")
		})
	}
}

func TestBenchHelp(t *testing.T) {
	code, stdout, _ := runCLI(t, "help", "bench")
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "SE-sum-dup")
	assert.Contains(t, stdout, "--plot FILE.png")
	code, stdout, _ = runCLI(t, "--help")
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "gpuscatter bench [--workloads LIST]")
	assert.Contains(t, stdout, "  bench ")
}

// userInputs writes a small ScatterNDUpdate-15 call into dir and returns
// the flags naming it.
func userInputs(t *testing.T, dir string, indices ...int64) []string {
	t.Helper()
	return []string{
		"--op", "ScatterNDUpdate-15", "--reduction", "sum",
		"--data", writeNPY(t, dir, "data.npy", f32([]int{8}, 1, 2, 3, 4, 5, 6, 7, 8)),
		"--indices", writeNPY(t, dir, "indices.npy", i64([]int{len(indices), 1}, indices...)),
		"--updates", writeNPY(t, dir, "updates.npy", f32([]int{len(indices)}, 9, 10, 11, 12, 13, 14)),
	}
}

func TestBenchOpOnUserInputs(t *testing.T) {
	smallMemcpy(t)
	closed := false
	withBenchGPU(t, &benchGPU{corruptAt: -1, closed: &closed})
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "r.json")
	args := append([]string{"bench", "--backend", "gpu", "--repeats", "3", "--json", jsonPath}, userInputs(t, dir, 4, 3, 1, 7, -2, -4)...)
	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Empty(t, withoutProgress(stderr))
	assert.True(t, closed, "the GPU backend is closed")
	assert.Contains(t, stdout, "gpu: test device")
	rows := tableRows(stdout)
	require.Len(t, rows, 2, stdout)
	assert.Equal(t, []string{"ScatterNDUpdate-15", "sum", "cpu"}, rows[0][:3])
	assert.Equal(t, []string{"ScatterNDUpdate-15", "sum", "gpu"}, rows[1][:3])

	doc := readBenchJSON(t, jsonPath)
	require.Len(t, doc.Results, 2)
	for _, r := range doc.Results {
		assert.Equal(t, true, r["verified"])
		assert.Equal(t, "ScatterNDUpdate-15 sum: data float32[8], indices [6,1], updates [6]", r["description"])
		assert.Equal(t, float64(2*32+24+48), r["bytes"])
		wantTol := map[string]float64{"cpu": 0, "gpu": 1e-5} // float sums on the GPU may round differently
		assert.Equal(t, wantTol[r["backend"].(string)], r["tolerance"])
	}
	assert.Contains(t, doc.Results[1], "speedup")
	assert.Zero(t, doc.Scale, "no scale with --op")
}

// TestBenchOpInvalidInput: an input error reads as it does for run, and no
// file is written.
func TestBenchOpInvalidInput(t *testing.T) {
	smallMemcpy(t)
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "r.json")
	inputs := userInputs(t, dir, 4, 3, 1, 7, -2, 9)
	code, _, stderr := runCLI(t, append([]string{"bench", "--backend", "cpu", "--json", jsonPath}, inputs...)...)
	requireOneErrorLine(t, code, stderr, "gpuscatter: ScatterNDUpdate-15: indices[5,0] = 9 is out of range [-8, 7] for axis 0 of data\n")
	code, _, runErr := runCLI(t, append([]string{"run", "--backend", "cpu", "--out", filepath.Join(dir, "o.npy")}, inputs...)...)
	require.Equal(t, exitError, code)
	assert.Equal(t, runErr, withoutProgress(stderr), "bench and run word it alike")
	assert.NoFileExists(t, jsonPath)

	code, _, stderr = runCLI(t, "bench", "--backend", "cpu", "--op", "ScatterNDUpdate-15",
		"--data", filepath.Join(dir, "missing.npy"), "--indices", filepath.Join(dir, "indices.npy"), "--updates", filepath.Join(dir, "updates.npy"))
	requireOneErrorLine(t, code, stderr, "--data "+filepath.Join(dir, "missing.npy")+": open: no such file or directory")
}

func TestBenchSkipsWhatDoesNotFit(t *testing.T) {
	smallMemcpy(t)
	saved := benchMemoryBudget
	benchMemoryBudget = 1
	t.Cleanup(func() { benchMemoryBudget = saved })
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "r.json")
	code, stdout, stderr := runCLI(t, "bench", "--backend", "cpu", "--workloads", "SU1,SE", "--json", jsonPath)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Regexp(t, `(?m)^SU1 +skipped: needs about [0-9.]+ GB of memory, over the budget of 1 B$`, stdout)
	assert.Regexp(t, `(?m)^SE +skipped: needs about [0-9.]+ MB of memory`, stdout)
	doc := readBenchJSON(t, jsonPath)
	require.Len(t, doc.Results, 2)
	for _, r := range doc.Results {
		assert.Contains(t, r["skipped"], "skipped: needs about")
		assert.Equal(t, false, r["verified"])
	}
}

// TestBenchCatchesAWrongGPU: a GPU that gets one element wrong fails the
// command with one line, after the table, and leaves no file behind (an
// existing one is kept as it was).
func TestBenchCatchesAWrongGPU(t *testing.T) {
	smallMemcpy(t)
	withBenchGPU(t, &benchGPU{corruptAt: 17})
	dir := t.TempDir()
	jsonPath, plotPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "p.png")
	require.NoError(t, os.WriteFile(jsonPath, []byte("old"), 0o644))
	code, stdout, stderr := runCLI(t, "bench", "--backend", "gpu", "--quick", "--workloads", "SE,SS", "--repeats", "2",
		"--json", jsonPath, "--plot", plotPath)
	requireOneErrorLine(t, code, stderr,
		"gpuscatter: SE on gpu: the output does not match the cpu's: 1 elements differ, the first at flat position 17, max |diff| 1 (and 1 more failed; see the table)")
	rows := tableRows(stdout)
	require.Len(t, rows, 4, stdout)
	assert.Equal(t, []string{"SE", "gpu"}, rows[1][:2])
	assert.Contains(t, strings.Join(rows[1], " "), "NO: 1 differ 1")
	assert.Equal(t, "yes", rows[0][len(rows[0])-2])
	assert.Equal(t, []string{"r.json"}, listDir(t, dir))
	b, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b))
}

func TestBenchGPUErrorsAndUnsupportedPlans(t *testing.T) {
	smallMemcpy(t)
	withBenchGPU(t, &benchGPU{err: &ops.Error{Op: "ScatterElements-18", Err: ops.ErrUnsupported, Msg: `vulkan: reduction "sum" has no GPU kernels yet`}})
	code, stdout, stderr := runCLI(t, "bench", "--backend", "gpu", "--quick", "--workloads", "SE-sum-dup")
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Regexp(t, `(?m)^SE-sum-dup +gpu +unsupported: ScatterElements-18: vulkan: reduction "sum" has no GPU kernels yet$`, stdout)

	withBenchGPU(t, &benchGPU{err: fmt.Errorf("vulkan: vkQueueSubmit: %w", ops.ErrDeviceLost)})
	code, stdout, stderr = runCLI(t, "bench", "--backend", "gpu", "--quick", "--workloads", "SE")
	requireOneErrorLine(t, code, stderr, "gpuscatter: SE on gpu: vulkan: vkQueueSubmit: device lost\n")
	assert.Regexp(t, `(?m)^SE +gpu +error: vulkan: vkQueueSubmit: device lost$`, stdout)
}

func TestBenchWithoutGPU(t *testing.T) {
	smallMemcpy(t)
	withGPU(t, func(context.Context) (ops.Backend, error) {
		return nil, &ops.Error{Err: ops.ErrNoDevice, Msg: "vulkan: no Vulkan device"}
	})
	code, stdout, stderr := runCLI(t, "bench", "--quick", "--workloads", "SE")
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Equal(t, "gpuscatter: --backend auto: vulkan: no Vulkan device; only the CPU ran\n", withoutProgress(stderr))
	rows := tableRows(stdout)
	require.Len(t, rows, 1)
	assert.Equal(t, "cpu", rows[0][1])

	code, stdout, stderr = runCLI(t, "bench", "--quick", "--workloads", "SE", "--backend", "gpu")
	requireOneErrorLine(t, code, stderr, "gpuscatter: --backend gpu: vulkan: no Vulkan device\n")
	assert.Empty(t, stdout)
}

func TestBenchOutputPathsAreCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "bench", "--backend", "cpu", "--json", filepath.Join(dir, "no", "r.json"))
	requireOneErrorLine(t, code, stderr, "--json "+filepath.Join(dir, "no", "r.json")+": ")
	assert.Empty(t, stdout, "nothing ran")
	code, _, stderr = runCLI(t, "bench", "--backend", "cpu", "--plot", dir+"/x.png", "--json", dir)
	requireOneErrorLine(t, code, stderr, "--json "+dir+": is a directory")
}

// syncBuffer is a bytes.Buffer safe for the progress goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestProgressLine(t *testing.T) {
	saved := progressDelay
	progressDelay = 0
	t.Cleanup(func() { progressDelay = saved })

	var out syncBuffer
	p := startProgress(&out, "bench", nil)
	p.update(bench.Progress{Workload: "SE", Index: 3, Count: 11, Backend: "gpu", Stage: "timing", Repeat: 2, Repeats: 5})
	p.draw()
	p.close()
	s := out.String()
	assert.True(t, strings.HasPrefix(s, "\rgpuscatter: bench [3/11] SE: gpu timing 2/5 (0s)\033[K"), "%q", s)
	assert.True(t, strings.HasSuffix(s, "\r\033[K"), "the line is erased: %q", s)
	assert.NotContains(t, s, "\n")

	// Before the delay nothing shows, and nothing is erased.
	progressDelay = saved
	out = syncBuffer{}
	p = startProgress(&out, "bench", nil)
	p.update(bench.Progress{Workload: "SE", Index: 1, Count: 1, Stage: "inputs"})
	p.draw()
	p.close()
	assert.Empty(t, out.String())

	var none *progressLine // stderr is not a terminal
	none.update(bench.Progress{})
	none.close()
}

// TestProgressLineExtra: check's line adds its live counts to each redraw.
func TestProgressLineExtra(t *testing.T) {
	saved := progressDelay
	progressDelay = 0
	t.Cleanup(func() { progressDelay = saved })

	var out syncBuffer
	n := 0
	p := startProgress(&out, "check", func() string {
		n++
		return fmt.Sprintf("%d cases, 0 failed", n)
	})
	p.set("[2/49] cas")
	p.draw()
	p.close()
	s := out.String()
	assert.True(t, strings.HasPrefix(s, "\rgpuscatter: check [2/49] cas: 1 cases, 0 failed (0s)\033[K"), "%q", s)
	assert.True(t, strings.HasSuffix(s, "\r\033[K"), "the line is erased: %q", s)

	var none *progressLine
	none.set("x")
	none.close()
}

// TestBenchProgressOnATerminal: on a terminal the progress line is erased
// before the command returns, so an error is still one line after it.
func TestBenchProgressOnATerminal(t *testing.T) {
	smallMemcpy(t)
	savedTerm, savedDelay, savedTick := isTerminal, progressDelay, progressTick
	isTerminal, progressDelay, progressTick = func(io.Writer) bool { return true }, 0, time.Millisecond
	t.Cleanup(func() { isTerminal, progressDelay, progressTick = savedTerm, savedDelay, savedTick })
	var stdout bytes.Buffer
	var stderr syncBuffer
	code := Main(context.Background(), []string{"bench", "--quick", "--backend", "cpu", "--workloads", "SE,SS,SU1", "--repeats", "20"}, &stdout, &stderr)
	require.Equal(t, exitOK, code, "stderr: %q", stderr.String())
	s := stderr.String()
	assert.Contains(t, s, "\rgpuscatter: bench [")
	assert.True(t, strings.HasSuffix(s, "\r\033[K"), "%q", s)
	assert.NotContains(t, s, "\n")
	assert.NotContains(t, stdout.String(), "\r", "stdout has only the table")
}
