//go:build cgo

package gpucheck

import (
	"context"
	"fmt"
	"math/rand"
	"strings"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpubench"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// exactPath reports whether a reduction path (gpu.Stats.Reduction) must
// give the CPU reference's bits for float sum, sub, prod and mean: the
// in-order fold, the column walk (also in index order), and reduction
// none ("").
func exactPath(path string) bool {
	return path == "ordered" || path == "walk" || path == ""
}

// runBoth runs p, the plan of req, on b (into an output filled with a
// pattern) and on the CPU reference and returns both results and the path
// b took; ran is false when b refused p and t took the refusal
// (opstest.Refused).
func runBoth(t opstest.T, b *gpu.Backend, req ops.Request, p *ops.Plan) (got, want *tensor.Tensor, path string, ran bool) {
	t.Helper()
	want, _ = tensor.New(p.DType, p.Shape)
	require.NoError(t, cpuref.New().Execute(context.Background(), p, want))
	got = opstest.SentinelOutput(p)
	err := b.Execute(context.Background(), p, got)
	if opstest.Refused(t, req, err) {
		return nil, nil, "", false
	}
	require.NoError(t, err)
	return got, want, b.LastStats().Reduction, true
}

// checkReductionCase is opstest.CheckReduction, reporting the first
// mismatching element to t first when the result is not Same.
func checkReductionCase(t opstest.T, req ops.Request, p *ops.Plan, got, want *tensor.Tensor, exact bool, what string) int {
	t.Helper()
	if m, ok := t.(opstest.MismatchReporter); ok && (exact || !p.Reduction.OrderSensitive(p.DType)) {
		if mm, found := opstest.FirstMismatch(req, got, want); found {
			m.Mismatch(mm)
		}
	}
	return opstest.CheckReduction(t, p, got, want, exact, what)
}

// reductionCase runs case i, req of contentionCase c, on b and on the
// CPU reference and checks the result (checkReductionCase), counting the
// path it took in paths; ran is false when t does not want the case or b
// refused it. It returns the plan, the path, the case's description and
// the elements checked against the bound.
func reductionCase(t opstest.T, b *gpu.Backend, req ops.Request, c contentionCase, i int, seed int64, paths map[string]int) (p *ops.Plan, path, what string, checked int, ran bool) {
	t.Helper()
	if !opstest.BeginCase(t, req) {
		return nil, "", "", 0, false
	}
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	got, want, path, ran := runBoth(t, b, req, p)
	if !ran {
		paths["refused"]++
		return nil, "", "", 0, false
	}
	paths[path]++
	what = fmt.Sprintf("case %d: %s %s %v use_init_val=%v on %s (seed %d)", i, c.op, c.red, c.dt, p.UseInitVal, path, seed)
	return p, path, what, checkReductionCase(t, req, p, got, want, exactPath(path), what), true
}

// hotTargets returns the targets of hotKeys' requests on b: more than
// the workgroup-memory scatter holds on its device at every element size
// (shaders.PrivateCapacity), so that the plans take the global atomics.
func hotTargets(b *gpu.Backend) int {
	shared := gpubench.Of(b).Device().Capabilities().MaxComputeSharedMemorySize
	return 4*int(shaders.PrivateCapacity(uint64(shared))) + 1000
}

// hotKeys runs every contentionCase with targets drawn from a bounded
// Zipf law (opstest.SkewedRequest, s = 1.1: the hottest target takes
// about a tenth of the updates), n updates into hotTargets targets: the
// atomic scatter must fold the hot targets in workgroup memory (a path
// ending "+hot") wherever planHot serves, and give the CPU reference's
// result, exactly where the reduction is exact and within the bound for
// float sum, sub and prod. every > 1 keeps one case in every.
func hotKeys(t opstest.T, b *gpu.Backend, seed int64, n, every int) {
	rng := rand.New(rand.NewSource(seed))
	paths := map[string]int{}
	targets := hotTargets(b)
	for i, c := range contentionCases() {
		if every > 1 && (i+int(seed))%every != 0 {
			continue
		}
		req := opstest.SkewedRequest(rng, c.op, c.dt, c.red, targets, n, 1.1, c.useInit)
		p, path, what, _, ran := reductionCase(t, b, req, c, i, seed, paths)
		if !ran {
			continue
		}
		hot := strings.HasSuffix(path, "+hot")
		if want := p.DType.Size() <= 4 && p.DType != tensor.Bool && p.Reduction != ops.Mean && !exactPath(path); hot != want {
			t.Errorf("%s: folds hot targets %v, want %v", what, hot, want)
		}
	}
	t.Logf("%d cases by path %v", len(contentionCases()), paths)
}

// wideAccumulation runs every contentionCase the workgroup-memory scatter
// serves (elements of at most 4 bytes, not bool, not mean) with
// perTarget updates per target into outputs wider than the
// shaders.PrivateWords words it was generated with: alternately the most
// the device holds (shaders.PrivateCapacity) and one element past the
// generated words. Each must take "+private" with its kernel specialised
// to more words (":words=" in Stats.Variants) and give the CPU
// reference's result, exactly where the reduction is exact and within the
// bound for float sum, sub and prod. every > 1 keeps one case in every.
func wideAccumulation(t opstest.T, b *gpu.Backend, seed int64, perTarget, every int) {
	rng := rand.New(rand.NewSource(seed))
	shared := gpubench.Of(b).Device().Capabilities().MaxComputeSharedMemorySize
	capacity := int(shaders.PrivateCapacity(uint64(shared)))
	if capacity <= shaders.PrivateWords {
		t.Errorf("the device's %d bytes of workgroup memory hold no more than %d words", shared, shaders.PrivateWords)
		return
	}
	// The workgroup-memory scatter takes 4 updates per target or more
	// (gpu's privateMinRatio).
	perTarget = max(perTarget, 4)
	paths := map[string]int{}
	for i, c := range contentionCases() {
		if every > 1 && (i+int(seed))%every != 0 || c.dt.Size() > 4 || c.dt == tensor.Bool || c.red == "mean" {
			continue
		}
		perWord, inner := 4/c.dt.Size(), 1
		if c.op == "ScatterNDUpdate-15" {
			inner = 3
		}
		targets := capacity * perWord / inner
		if i%2 == 1 {
			targets = shaders.PrivateWords*perWord/inner + 1
		}
		req := opstest.ContentionRequest(rng, c.op, c.dt, c.red, targets, perTarget, c.useInit)
		_, path, what, _, ran := reductionCase(t, b, req, c, i, seed, paths)
		if !ran {
			continue
		}
		if !strings.HasSuffix(path, "+private") {
			t.Errorf("%s into %d targets: took %q, want the workgroup-memory scatter", what, targets, path)
		} else if v := b.LastStats().Variants; !strings.Contains(strings.Join(v, " "), ":words=") {
			t.Errorf("%s into %d targets: kernels %v, want one with more than %d words", what, targets, v, shaders.PrivateWords)
		}
	}
	t.Logf("%d cases by path %v", len(contentionCases()), paths)
}

// randomReductions runs n random reduction requests (every operator with
// reductions, dtype and reduction, use_init_val both ways; one in three
// larger when large) and checks each against the CPU reference: exactly
// where the path folds in order or the reduction is exact, within the
// documented bound for float sum, sub, prod and mean on atomics. With
// atomicsOnly, such float plans must not have folded in order.
func randomReductions(t opstest.T, b *gpu.Backend, seed int64, n int, large, atomicsOnly bool) {
	rng := rand.New(rand.NewSource(seed))
	big := opstest.Config{MaxRank: 3, MaxDim: 40, MaxElements: 5000}
	var floats, bounded, refused int
	for c := 0; c < n; c++ {
		cfg := opstest.Config{}
		if large && c%3 == 0 {
			cfg = big
		}
		req := opstest.RandomReductionRequest(rng, cfg)
		p, err := ops.Prepare(req)
		require.NoError(t, err, "case %d (seed %d): %s", c, seed, opstest.Describe(req))
		if p.Reduction == ops.None {
			continue
		}
		if !opstest.BeginCase(t, req) {
			continue
		}
		got, want, path, ran := runBoth(t, b, req, p)
		if !ran {
			refused++
			continue
		}
		what := fmt.Sprintf("case %d (seed %d) on %s\n%s", c, seed, path, opstest.Describe(req))
		bounded += checkReductionCase(t, req, p, got, want, exactPath(path), what)
		if atomicsOnly && p.Reduction.OrderSensitive(p.DType) && p.NumUpdates() > 0 {
			floats++
			if path == "ordered" {
				t.Errorf("%s: folded in order with NoOrderedSmall", what)
			}
		}
	}
	t.Logf("%d requests, %d float sum/sub/prod/mean ones on atomics, %d elements checked against the bound, %d refused for a missing device feature",
		n, floats, bounded, refused)
}

// contentionCase is one request shape of contention.
type contentionCase struct {
	op, red string
	dt      tensor.DType
	useInit *bool
}

// contentionCases: every numeric dtype and reduction of
// ScatterElementsUpdate-12 (use_init_val true and false) and
// ScatterNDUpdate-15.
func contentionCases() []contentionCase {
	no := false
	var cases []contentionCase
	for _, dt := range tensor.DTypes() {
		if !dt.IsNumeric() {
			continue
		}
		for _, red := range opstest.FoldNames("ScatterElementsUpdate-12", dt) {
			cases = append(cases, contentionCase{"ScatterElementsUpdate-12", red, dt, nil}, contentionCase{"ScatterElementsUpdate-12", red, dt, &no})
		}
		for _, red := range opstest.FoldNames("ScatterNDUpdate-15", dt) {
			cases = append(cases, contentionCase{"ScatterNDUpdate-15", red, dt, nil})
		}
	}
	return cases
}

// contention runs every contentionCase with perTarget updates per target
// (half as many for ScatterNDUpdate-15's rows): atomics must stay exact
// where the reduction is and within the bound for float sum, sub, prod and
// mean; the walk path must walk every ScatterElementsUpdate-12 plan (but
// 8-byte elements on a device without 64-bit atomics, which fold in
// order), and
// float sum, sub, prod and mean must fold in order exactly when the path
// is deterministic.
//
// every > 1 keeps one case in every (the quick size), starting at one
// the seed picks.
func contention(t opstest.T, b *gpu.Backend, seed int64, perTarget, every int, deterministic, walk bool) {
	rng := rand.New(rand.NewSource(seed))
	paths := map[string]int{}
	bounded := 0
	caps := gpubench.Of(b).Device().Capabilities()
	atomics64 := caps.ShaderInt64 && caps.Int64BufferAtomics
	for i, c := range contentionCases() {
		if every > 1 && (i+int(seed))%every != 0 {
			continue
		}
		targets, per := 8, perTarget
		if c.op == "ScatterNDUpdate-15" {
			targets, per = 5, max(perTarget/2, 1)
		}
		req := opstest.ContentionRequest(rng, c.op, c.dt, c.red, targets, per, c.useInit)
		p, path, what, checked, ran := reductionCase(t, b, req, c, i, seed, paths)
		if !ran {
			continue
		}
		bounded += checked
		switch {
		case walk && c.op == "ScatterElementsUpdate-12":
			if path != "walk" && (atomics64 || p.DType.Size() != 8 || path != "ordered") {
				t.Errorf("%s: took %q, want walk", what, path)
			}
		case p.Reduction.OrderSensitive(p.DType):
			if exactPath(path) != deterministic {
				t.Errorf("%s: took %q with Deterministic %v", what, path, deterministic)
			}
		}
	}
	t.Logf("%d cases by path %v, %d elements checked against the bound", len(contentionCases()), paths, bounded)
}
