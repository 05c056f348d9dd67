package cpuref_test

import (
	"flag"
	"testing"
	"time"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
)

var seedFlag = flag.Int64("seed", 0, "seed of the random requests (0: from the clock); printed on failure")

// testSeed returns -seed, or a seed from the clock, and logs it.
func testSeed(t *testing.T) int64 {
	s := *seedFlag
	if s == 0 {
		s = time.Now().UnixNano()
	}
	t.Logf("seed %d (rerun with -seed %d)", s, s)
	return s
}

func TestConformance(t *testing.T) {
	opstest.RunConformance(t, func(t *testing.T) ops.Backend {
		b := cpuref.New()
		t.Cleanup(func() { _ = b.Close() })
		return b
	})
}

// TestMatchesNaive compares cpuref with the naive reference, which shares no
// index arithmetic with it, over a few thousand random requests.
func TestMatchesNaive(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 500
	}
	opstest.RunAgainstNaive(t, cpuref.Run, testSeed(t), n)
}

// TestWorkersAgree: the result must not depend on the number of goroutines.
// Small requests do not reach the parallel paths (cpuref only splits work
// above its grain sizes), so larger ones run too.
func TestWorkersAgree(t *testing.T) {
	seed := testSeed(t)
	one, four := &cpuref.Backend{Workers: 1}, &cpuref.Backend{Workers: 4}
	t.Run("small", func(t *testing.T) {
		opstest.RunDifferential(t, four, one, seed, 1000)
	})
	t.Run("large", func(t *testing.T) {
		n := 60
		if testing.Short() {
			n = 10
		}
		opstest.RunDifferentialConfig(t, four, one, seed, n, opstest.Config{MaxRank: 3, MaxDim: 160, MaxElements: 1 << 17})
	})
}

// TestScale runs the scale suite (long columns, many updates per element,
// tuples of ops.MaxRank components, NaN signs) against the naive
// reference, which folds every chain in one loop: cpuref must give its
// bits, NaNs included.
func TestScale(t *testing.T) {
	size := opstest.ScaleDefault
	if testing.Short() {
		size = opstest.ScaleQuick
	}
	b := cpuref.New()
	defer b.Close()
	opstest.Scale(opstest.WrapT(t), b, opstest.Naive, opstest.ScaleCases(size, testSeed(t)), func(*ops.Plan) bool { return true })
}
