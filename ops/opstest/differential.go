package opstest

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// RunDifferential runs n seeded requests on b and on ref and requires the
// same outcome: equal results (DiffFor: bit for bit, any NaN matching any
// NaN but in min and max results) or the same error text. One request in eight is a RandomBadRequest. Case i
// is a subtest named "case<i>" whose request depends only on seed and i, so
// a failure reproduces with the same seed and -run '<Test>/case<i>$'.
func RunDifferential(t *testing.T, b ops.Backend, ref ops.Backend, seed int64, n int) {
	RunDifferentialConfig(t, b, ref, seed, n, Config{})
}

// RunDifferentialConfig is RunDifferential with requests drawn under cfg,
// for example larger tensors that reach a backend's parallel paths.
func RunDifferentialConfig(t *testing.T, b ops.Backend, ref ops.Backend, seed int64, n int, cfg Config) {
	Differential(WrapT(t), b, ref, seed, n, cfg)
}

// Differential is RunDifferentialConfig reporting to t.
func Differential(t T, b ops.Backend, ref ops.Backend, seed int64, n int, cfg Config) {
	ctx := context.Background()
	runPairs(t, seed, n, cfg, b.Name(), func(req ops.Request) (*tensor.Tensor, error) {
		return ops.Run(ctx, b, req)
	}, "reference "+ref.Name(), func(req ops.Request) (*tensor.Tensor, error) {
		return ops.Run(ctx, ref, req)
	})
}

// RunAgainstNaive is RunDifferential for a function that runs a request,
// such as cpuref.Run, with Naive as the reference.
func RunAgainstNaive(t *testing.T, run func(ops.Request) (*tensor.Tensor, error), seed int64, n int) {
	runPairs(WrapT(t), seed, n, Config{}, "run", run, "naive", Naive)
}

// CaseRequest returns request i of the sequence that seed and cfg define,
// and the sentinel its error must wrap (nil for a valid request).
func CaseRequest(seed int64, i int, cfg Config) (ops.Request, error) {
	rng := rand.New(rand.NewSource(seed*1_000_003 + int64(i)))
	if rng.Intn(8) == 0 {
		return RandomBadRequest(rng, cfg)
	}
	return RandomRequest(rng, cfg), nil
}

type runFunc func(ops.Request) (*tensor.Tensor, error)

func runPairs(t T, seed int64, n int, cfg Config, aName string, a runFunc, bName string, b runFunc) {
	t.Helper()
	for i := 0; i < n; i++ {
		req, sentinel := CaseRequest(seed, i, cfg)
		t.Run(fmt.Sprintf("case%d", i), func(t T) {
			if !BeginCase(t, req) {
				return
			}
			fail := func(format string, args ...any) {
				t.Helper()
				t.Fatalf("seed %d case %d (reproduce: go test -run '%s$' -seed %d): %s\nrequest: %s",
					seed, i, t.Name(), seed, fmt.Sprintf(format, args...), Describe(req))
			}
			before := cloneRequest(req)
			gotA, errA := a(req)
			gotB, errB := b(cloneRequest(req))
			requireInputsEqual(t, before, req, aName)
			if errA != nil && Refused(t, req, errA) {
				return
			}
			switch {
			case sentinel == nil && errA != nil:
				fail("%s rejects a valid request: %v", aName, errA)
			case sentinel == nil && errB != nil:
				fail("%s rejects a valid request: %v", bName, errB)
			case sentinel != nil && (errA == nil || errB == nil):
				fail("an invalid request (%v) was accepted: %s error %v, %s error %v", sentinel, aName, errA, bName, errB)
			case sentinel != nil:
				if !errors.Is(errA, sentinel) || errA.Error() != errB.Error() {
					fail("errors differ (want %v):\n  %s: %v\n  %s: %v", sentinel, aName, errA, bName, errB)
				}
			default:
				if d := DiffFor(ReductionOf(req), gotA, gotB); d != "" {
					reportMismatch(t, req, gotA, gotB)
					fail("%s and %s differ: %s", aName, bName, d)
				}
			}
		})
	}
}
