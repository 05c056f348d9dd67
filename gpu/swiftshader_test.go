//go:build cgo

package gpu

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// EnvSwiftShaderICD names SwiftShader's Vulkan driver manifest
// (vk_swiftshader_icd.json): TestSwiftShader then runs this package's
// device tests on SwiftShader too, the device without shaderInt64, 8- and
// 16-bit storage, float or 64-bit atomics, with subgroups of 4.
const EnvSwiftShaderICD = "GPUSCATTER_SWIFTSHADER_ICD"

// EnvSwiftShaderChild marks the copy of the test binary that
// TestSwiftShader starts.
const EnvSwiftShaderChild = "GPUSCATTER_SWIFTSHADER_CHILD"

// swiftShaderTests are the tests TestSwiftShader runs on SwiftShader
// (-test.run patterns), at the quick size, in two copies of the test
// binary at once, one group each (SwiftShader runs a test on about one
// core; the groups take about as long): the child's own check of its
// device, the baseline's planning and 64-bit reductions, float steps that
// meet subnormals (which SwiftShader flushes to zero in shader
// arithmetic: the backend computes them in integer arithmetic there),
// the bucketed fold, split too, float min and max NaN bits on every path, index
// errors, TensorScatter and the last-writer table against the reference,
// the device figures and the pipeline index (TestFigures,
// TestUncompiledPipelines), owner words kept clear between calls
// (TestOwnersKeptClear), bad indices skipped with SkipBadIndices
// (TestSkipBadIndices, TestSkipBadIndicesPlans), the atomics counted
// with hot targets folded in workgroup memory, bits checked
// (TestCountAtomics), and the suites of gpucheck that run random requests (moves
// with bad indices, in chunks, runs of one, walks; random requests of
// every operator; random reductions on atomics, in order and walking;
// resident calls skipping bad indices; outputs accumulated in more
// workgroup memory than the kernels are generated with),
// the device faults of TestFaultMatrix on an Execute on atomics and a
// Close with a batch in flight, and the program's own device adopted
// (TestExternal...: its buffers as tensors, recordings into its command
// buffers, its timeline semaphores). Each group runs TestSwiftShaderChild.
var swiftShaderTests = [2]string{
	"^(TestSwiftShaderChild|TestBaseline64BitReductions|TestBucketedFoldBitIdentity|TestMinMaxNaNBits|TestMinMaxNaNBitsHot|TestIndexErrorsMatchReference|TestFigures|TestCountAtomics)$|^TestExternal(Operators|Baseline|Refusals|Exports|BadIndices|FoldFurther|Scratch|SubmitWith|BesideOwnInstances|SubmitHook|HostTransfers|AliasesOrdered)$",
	strings.Join([]string{
		"^(TestSwiftShaderChild|TestBaselineWithoutShaderInt64|TestSubnormalSteps|TestSubnormalSums|TestTensorScatterMatchesReference|TestLastWriterTable|TestUncompiledPipelines|TestOwnersKeptClear|TestSkipBadIndices|TestSkipBadIndicesPlans|TestSplitBucketsBitIdentity|TestExternalRandom)$",
		"^TestCheck$/^none$/^(default|chunks4KiB|run1|walk)$",
		"^TestCheck$/^random$/^(default|deterministic)$",
		"^TestCheck$/^reduce$/^chunks16B$/",
		"^TestCheck$/^skip$/^(default|walk)$",
		"^TestCheck$/^accumulate$/^wide$",
		"^TestFaultMatrix$/^(execute|close)$/^(atomics|batch-in-flight)$/",
	}, "|"),
}

// TestSwiftShader runs swiftShaderTests in copies of the test binary whose
// Vulkan loader sees SwiftShader alone, when EnvSwiftShaderICD names its
// manifest, and fails when any of them fails there (or, under CI=true,
// when EnvSwiftShaderICD is unset).
func TestSwiftShader(t *testing.T) {
	icd := os.Getenv(EnvSwiftShaderICD)
	if icd == "" {
		// make test sets it; under CI=true it fetches SwiftShader, so a
		// missing one there is a failure, never a skip.
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s names no SwiftShader driver manifest (make swiftshader fetches it)", EnvSwiftShaderICD)
		}
		t.Skipf("%s names no SwiftShader driver manifest", EnvSwiftShaderICD)
	}
	_, err := os.Stat(icd)
	require.NoError(t, err, "%s", EnvSwiftShaderICD)
	// The quick size keeps the run within CI's budget and, with 16-byte
	// chunks, within SwiftShader's 4096 memory allocations (a process's).
	type child struct {
		out []byte
		err error
	}
	var children [len(swiftShaderTests)]child
	var wg sync.WaitGroup
	for i, pattern := range swiftShaderTests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run="+pattern, "-test.count=1", "-test.v", "-test.short")
			cmd.Env = append(os.Environ(), "VK_ICD_FILENAMES="+icd, "VK_DRIVER_FILES="+icd, "GPUSCATTER_DEVICE=", EnvSwiftShaderChild+"=1")
			children[i].out, children[i].err = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i, c := range children {
		var summary []string
		for _, l := range strings.Split(string(c.out), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "--- ") && strings.Count(l, "/") < 3 {
				summary = append(summary, l)
			}
		}
		t.Logf("on SwiftShader, group %d:\n%s", i+1, strings.Join(summary, "\n"))
		assert.NoError(t, c.err, "the tests of group %d on SwiftShader failed:\n%s", i+1, c.out)
		assert.Contains(t, string(c.out), "--- PASS: TestSwiftShaderChild", "group %d: the child checked its device", i+1)
	}
}

// TestSwiftShaderChild, in the copy TestSwiftShader starts, checks that
// the default device is SwiftShader and that it lacks shaderInt64, so
// that the tests beside it run the 32-bit baseline kernels.
func TestSwiftShaderChild(t *testing.T) {
	if os.Getenv(EnvSwiftShaderChild) == "" {
		t.Skip("started by TestSwiftShader only")
	}
	b := openTest(t, Options{})
	info := b.device().Info()
	assert.Contains(t, info.Name, "SwiftShader")
	assert.False(t, info.Capabilities.ShaderInt64, "SwiftShader has no shaderInt64")
	b.mu.Lock()
	f := b.facts(true)
	b.mu.Unlock()
	assert.True(t, f.noInt64, "the plans take the 32-bit baseline")
}
