//go:build cgo

// Package gpucheck is the conformance suite of the GPU backend (package
// gpu) on one Vulkan device: the shared suite of ops/opstest (spec
// examples, the validation table, index errors with guard regions,
// unchanged inputs, in place, random requests against cpuref), run through
// every execution path the backend has, each forced by gpu.Options and
// the knobs of package internal/knobs. `go test ./gpu` (TestCheck) runs
// it at the Quick size, with validation and a seed of its own;
// `gpuscatter check` runs it on any device at any size and prints one row
// per operator and path.
package gpucheck

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpubench"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Size scales the number of random requests of every path.
type Size int

// The sizes.
const (
	// Quick is about a tenth of Default: every path, fewer random cases.
	Quick Size = iota
	// Default is what `gpuscatter check` runs.
	Default
	// Full runs three times Default's random cases, and tensors beyond
	// the device's storage binding limit.
	Full
)

// String returns "quick", "default" or "full".
func (s Size) String() string {
	switch s {
	case Quick:
		return "quick"
	case Full:
		return "full"
	}
	return "default"
}

// scale returns n (Default's count) at size s, at least 1.
func (s Size) scale(n int) int {
	switch s {
	case Quick:
		n /= 10
	case Full:
		n *= 3
	}
	return max(n, 1)
}

// testChunk is the chunk size of the chunked paths: 4 KiB buffers, so that
// tensors of more than 4 KiB span several chunks.
const testChunk = 4 << 10

// The suites a path runs.
const (
	// suiteConformance is opstest.Conformance.
	suiteConformance = "conformance"
	// suiteDifferential is opstest.Differential against cpuref.
	suiteDifferential = "differential"
	// suiteNone is differentialNone: reduction none, with out-of-range
	// indices, against cpuref.
	suiteNone = "none"
	// suiteResident is resident tensors against cpuref.
	suiteResident = "resident"
	// suiteHot is hotKeys: power-law targets, folded in workgroup memory.
	suiteHot = "hot"
	// suiteWide is wideAccumulation: outputs that fill the device's
	// workgroup memory past shaders.PrivateWords.
	suiteWide = "wide"
	// suiteSkip is residentSkip: resident calls with SkipBadIndices and
	// bad indices against cpuref.
	suiteSkip = "skip"
	// suiteReduce is randomReductions: random reductions, exact or
	// within the bound.
	suiteReduce = "reduce"
	// suiteContention is contention: thousands of updates per target.
	suiteContention = "contention"
	// suiteBig is big: tensors beyond the storage binding limit.
	suiteBig = "big"
	// suiteScale is opstest.Scale: chains on and around the kernels'
	// segment and loop limits, against cpuref.
	suiteScale = "scale"
)

// Path is one execution path of the backend: the options that force it
// and the suite run through it.
type Path struct {
	// Name names the path in test names and in check's rows.
	Name string
	// Doc says what the path forces.
	Doc string
	// Opts and Knobs force the path; Run adds Device, Validation and
	// GPUAssistedValidation.
	Opts  gpu.Options
	Knobs knobs.Knobs
	// Suite is the suite run: conformance, differential, none or resident.
	Suite string
	// N is the number of random requests at the Default size.
	N int
	// Large draws larger random requests (more chunks, wider grids).
	Large bool
	// Seed is added to the run's seed.
	Seed int64
	// Deterministic and Walk say what the reduction suites expect of the
	// path: float sums folded in order, and Element plans walked.
	Deterministic, Walk bool
	// FullOnly paths run at the Full size only.
	FullOnly bool
}

// Withholds reports whether the path withholds feature from the backend
// on purpose, so that its calls that need it are refused on a device that
// has it: shaderInt64 on the paths of the 32-bit baseline
// (knobs.Knobs.NoShaderInt64), shaderFloat64 where a path's knobs set
// NoShaderFloat64. (Config.NoShaderFloat64 acts as the device lacking it.)
func (p Path) Withholds(feature string) bool {
	switch feature {
	case "shaderInt64":
		return p.Knobs.NoShaderInt64
	case "shaderFloat64":
		return p.Knobs.NoShaderFloat64
	}
	return false
}

var (
	chunked    = knobs.Knobs{MaxAllocationBytes: testChunk}
	chunkPaths = knobs.Knobs{ChunkBytes: 16}
	wide       = knobs.Knobs{WidePositions: true}
	grids      = knobs.Knobs{MaxWorkGroups: [3]uint32{1, 2, 65535}} // 1, 2 or more groups: 2-D, 3-D and split dispatches
	copies     = knobs.Knobs{CopyMinBytes: 1}
	walk       = knobs.Knobs{WalkMinColumns: 1}
	noInt64    = knobs.Knobs{NoShaderInt64: true}
)

// Paths lists the paths in the order Run runs them.
func Paths() []Path {
	paths := []Path{
		{Name: "default", Doc: "the device's own choices", Suite: suiteConformance, N: opstest.DefaultRandom},
		{Name: "cas", Doc: "compare-and-swap loops for every reduction", Knobs: knobs.Knobs{ForceCAS: true}, Suite: suiteConformance, N: opstest.DefaultRandom},
		{Name: "deterministic", Doc: "float reductions folded in index order", Opts: gpu.Options{Deterministic: true}, Suite: suiteConformance, N: opstest.DefaultRandom},
		{Name: "chunks4KiB", Doc: "4 KiB buffers: tensors in many chunks", Knobs: chunked, Suite: suiteConformance, N: opstest.DefaultRandom},
		{Name: "noInt64", Doc: "the 32-bit baseline kernels (no shaderInt64)", Knobs: noInt64, Suite: suiteConformance, N: opstest.DefaultRandom},
		{Name: "noInt64Chunks4KiB", Doc: "the 32-bit baseline, 4 KiB buffers", Knobs: knobs.Knobs{NoShaderInt64: true, MaxAllocationBytes: testChunk}, Suite: suiteConformance, N: opstest.DefaultRandom},
		{Name: "random/default", Doc: "random requests against cpuref", Suite: suiteDifferential, N: 4000, Seed: 0},
		{Name: "random/cas", Doc: "compare-and-swap loops", Knobs: knobs.Knobs{ForceCAS: true}, Suite: suiteDifferential, N: 4000, Seed: 1},
		{Name: "random/deterministic", Doc: "in-order folds", Opts: gpu.Options{Deterministic: true}, Suite: suiteDifferential, N: 4000, Seed: 2},
		{Name: "random/noInt64", Doc: "the 32-bit baseline kernels", Knobs: noInt64, Suite: suiteDifferential, N: 4000, Seed: 4},
		{Name: "random/walk", Doc: "every Element plan walks its columns", Knobs: walk, Suite: suiteDifferential, N: 4000, Seed: 3},
		{Name: "none/default", Doc: "reduction none with bad indices", Suite: suiteNone, N: 12000, Seed: 100},
		{Name: "none/large", Doc: "larger tensors", Suite: suiteNone, N: 1500, Large: true, Seed: 107},
		{Name: "none/chunks4KiB", Doc: "4 KiB buffers, larger tensors", Knobs: chunked, Suite: suiteNone, N: 1500, Large: true, Seed: 101},
		{Name: "none/chunks16B", Doc: "16-byte chunks", Knobs: chunkPaths, Suite: suiteNone, N: 3000, Seed: 102},
		{Name: "none/wide", Doc: "64-bit positions", Knobs: wide, Suite: suiteNone, N: 3000, Seed: 103},
		{Name: "none/wideChunked", Doc: "64-bit positions, 4 KiB buffers", Knobs: knobs.Knobs{MaxAllocationBytes: testChunk, WidePositions: true}, Suite: suiteNone, N: 600, Large: true, Seed: 108},
		{Name: "none/run1", Doc: "one position per invocation, as on GPUs", Knobs: knobs.Knobs{Run: 1}, Suite: suiteNone, N: 3000, Seed: 105},
		{Name: "none/run3", Doc: "three positions per invocation, 4 KiB buffers", Knobs: knobs.Knobs{MaxAllocationBytes: testChunk, Run: 3}, Suite: suiteNone, N: 1000, Large: true, Seed: 106},
		{Name: "none/grids", Doc: "2-D and 3-D grids, split dispatches", Knobs: grids, Suite: suiteNone, N: 1000, Large: true, Seed: 104},
		{Name: "none/staging", Doc: "staged transfers, no buffer pool", Opts: gpu.Options{NoUnifiedMemory: true, MaxPoolBytes: -1}, Suite: suiteNone, N: 1500, Seed: 109},
		{Name: "none/copies", Doc: "contiguous slices by copy commands", Knobs: copies, Suite: suiteNone, N: 3000, Seed: 113},
		{Name: "none/copiesChunked", Doc: "copy regions split at 4 KiB chunks", Knobs: knobs.Knobs{MaxAllocationBytes: testChunk, CopyMinBytes: 1}, Suite: suiteNone, N: 1000, Large: true, Seed: 114},
		{Name: "none/copies16B", Doc: "copy regions split at 16-byte chunks", Knobs: knobs.Knobs{CopyMinBytes: 1, ChunkBytes: 16}, Suite: suiteNone, N: 1000, Seed: 115},
		{Name: "none/walk", Doc: "every Element plan walks its columns", Knobs: walk, Suite: suiteNone, N: 3000, Seed: 110},
		{Name: "none/walkWideChunked", Doc: "walks, 64-bit positions, 4 KiB buffers", Knobs: knobs.Knobs{MaxAllocationBytes: testChunk, WalkMinColumns: 1, WidePositions: true}, Suite: suiteNone, N: 600, Large: true, Seed: 111},
		{Name: "none/walkGrids", Doc: "walks in split dispatches", Knobs: knobs.Knobs{WalkMinColumns: 1, MaxWorkGroups: grids.MaxWorkGroups}, Suite: suiteNone, N: 1000, Large: true, Seed: 112},
		{Name: "none/noInt64", Doc: "the 32-bit baseline kernels (no shaderInt64)", Knobs: noInt64, Suite: suiteNone, N: 3000, Seed: 116},
		{Name: "none/noInt64Chunked", Doc: "the 32-bit baseline, 4 KiB buffers, larger tensors", Knobs: knobs.Knobs{NoShaderInt64: true, MaxAllocationBytes: testChunk}, Suite: suiteNone, N: 1000, Large: true, Seed: 117},
		{Name: "none/noInt64Chunks16B", Doc: "the 32-bit baseline, 16-byte chunks", Knobs: knobs.Knobs{NoShaderInt64: true, ChunkBytes: 16}, Suite: suiteNone, N: 1500, Seed: 118},
		{Name: "none/noInt64Run1", Doc: "the 32-bit baseline, one position per invocation", Knobs: knobs.Knobs{NoShaderInt64: true, Run: 1}, Suite: suiteNone, N: 1500, Seed: 119},
		{Name: "none/noInt64Walk", Doc: "the 32-bit baseline, every Element plan walking its columns", Knobs: knobs.Knobs{NoShaderInt64: true, WalkMinColumns: 1}, Suite: suiteNone, N: 1500, Seed: 120},
		{Name: "none/noInt64Grids", Doc: "the 32-bit baseline, split dispatches", Knobs: knobs.Knobs{NoShaderInt64: true, MaxWorkGroups: grids.MaxWorkGroups}, Suite: suiteNone, N: 600, Large: true, Seed: 121},
		{Name: "reduce/native", Doc: "random reductions on native atomics, small plans too", Knobs: knobs.Knobs{NoOrderedSmall: true}, Suite: suiteReduce, N: 1000, Seed: 300},
		{Name: "reduce/cas", Doc: "random reductions on compare-and-swap loops, small plans too", Knobs: knobs.Knobs{ForceCAS: true, NoOrderedSmall: true}, Suite: suiteReduce, N: 1000, Seed: 301},
		{Name: "reduce/noFloatAtomics", Doc: "random reductions as without float atomics: float32 min and max on integer atomics alone", Knobs: knobs.Knobs{NoFloatAtomics: true, NoOrderedSmall: true}, Suite: suiteReduce, N: 1000, Seed: 302},
		{Name: "reduce/exactAtomics", Doc: "float atomic add for the updates no flush of subnormals can change, as on GPUs", Knobs: knobs.Knobs{ExactAtomics: true, NoOrderedSmall: true}, Suite: suiteReduce, N: 1000, Seed: 303},
		{Name: "reduce/softFloats", Doc: "every float sum, sub, prod and mean step in integer arithmetic", Knobs: knobs.Knobs{SoftFloats: true, NoOrderedSmall: true}, Suite: suiteReduce, N: 1000, Seed: 304},
		{Name: "reduce/noBuckets", Doc: "in-order folds slot by slot, none bucketed", Opts: gpu.Options{Deterministic: true}, Knobs: knobs.Knobs{NoOrderedSmall: true, NoBuckets: true}, Suite: suiteReduce, N: 1000, Seed: 305, Deterministic: true},
	}
	paths = append(paths, reduceShapes()...)
	return append(paths, []Path{
		{Name: "contention/native", Doc: "thousands of updates per target on native atomics", Knobs: knobs.Knobs{NoOrderedSmall: true}, Suite: suiteContention, N: 2000, Seed: 400},
		{Name: "contention/native-global", Doc: "native atomics without workgroup accumulation", Knobs: knobs.Knobs{NoOrderedSmall: true, NoWorkgroupAccumulation: true}, Suite: suiteContention, N: 2000, Seed: 401},
		{Name: "contention/cas", Doc: "compare-and-swap loops", Knobs: knobs.Knobs{ForceCAS: true, NoOrderedSmall: true}, Suite: suiteContention, N: 2000, Seed: 402},
		{Name: "contention/exactAtomics", Doc: "float atomic add for the updates no flush of subnormals can change, as on GPUs", Knobs: knobs.Knobs{ExactAtomics: true, NoOrderedSmall: true}, Suite: suiteContention, N: 2000, Seed: 407},
		{Name: "contention/noFloatAtomics", Doc: "as without float atomics: float32 min and max on integer atomics alone", Knobs: knobs.Knobs{NoFloatAtomics: true, NoOrderedSmall: true}, Suite: suiteContention, N: 2000, Seed: 406},
		{Name: "contention/cas-global", Doc: "compare-and-swap loops without workgroup accumulation", Knobs: knobs.Knobs{ForceCAS: true, NoOrderedSmall: true, NoWorkgroupAccumulation: true}, Suite: suiteContention, N: 2000, Seed: 403},
		{Name: "contention/deterministic", Doc: "in-order folds", Opts: gpu.Options{Deterministic: true}, Knobs: knobs.Knobs{NoOrderedSmall: true}, Suite: suiteContention, N: 2000, Seed: 404, Deterministic: true},
		{Name: "contention/noBuckets", Doc: "in-order folds slot by slot, none bucketed", Opts: gpu.Options{Deterministic: true}, Knobs: knobs.Knobs{NoOrderedSmall: true, NoBuckets: true}, Suite: suiteContention, N: 2000, Seed: 408, Deterministic: true},
		{Name: "contention/walk", Doc: "every Element plan walks its columns", Knobs: knobs.Knobs{NoOrderedSmall: true, WalkMinColumns: 1}, Suite: suiteContention, N: 2000, Seed: 405, Walk: true},
		{Name: "scale/default", Doc: "long columns, many updates per element, rank-64 tuples, NaN signs", Suite: suiteScale, N: 1, Seed: 600},
		{Name: "scale/native-global", Doc: "as scale/default, native atomics without workgroup accumulation", Knobs: knobs.Knobs{NoOrderedSmall: true, NoWorkgroupAccumulation: true}, Suite: suiteScale, N: 1, Seed: 601},
		{Name: "scale/cas", Doc: "as scale/default, compare-and-swap loops", Knobs: knobs.Knobs{ForceCAS: true, NoOrderedSmall: true}, Suite: suiteScale, N: 1, Seed: 602},
		{Name: "scale/deterministic", Doc: "as scale/default, folded in order", Opts: gpu.Options{Deterministic: true}, Suite: suiteScale, N: 1, Seed: 603},
		{Name: "scale/noBuckets", Doc: "as scale/deterministic, folded slot by slot", Opts: gpu.Options{Deterministic: true}, Knobs: knobs.Knobs{NoBuckets: true}, Suite: suiteScale, N: 1, Seed: 605},
		{Name: "scale/splitBuckets", Doc: "as scale/deterministic, each bucket of the bucketed fold split four ways after a radix pass more", Opts: gpu.Options{Deterministic: true}, Knobs: knobs.Knobs{SplitBuckets: true}, Suite: suiteScale, N: 1, Seed: 606},
		{Name: "scale/walk", Doc: "as scale/default, every Element plan walking its columns", Knobs: walk, Suite: suiteScale, N: 1, Seed: 604},
		{Name: "resident/default", Doc: "resident tensors, in place and not", Suite: suiteResident, N: 150, Seed: 200},
		{Name: "resident/chunks4KiB", Doc: "resident tensors in 4 KiB buffers", Knobs: chunked, Suite: suiteResident, N: 150, Seed: 200},
		{Name: "hot/default", Doc: "power-law targets: hot targets folded in workgroup memory before the atomics", Knobs: knobs.Knobs{NoOrderedSmall: true}, Suite: suiteHot, N: 30000, Seed: 230},
		{Name: "hot/cas", Doc: "as hot/default, compare-and-swap loops", Knobs: knobs.Knobs{ForceCAS: true, NoOrderedSmall: true}, Suite: suiteHot, N: 30000, Seed: 231, FullOnly: true},
		{Name: "accumulate/wide", Doc: "workgroup accumulation into outputs wider than the generated 2048 words, up to what the device's workgroup memory holds (on GPUs by default)", Knobs: knobs.Knobs{NoOrderedSmall: true, WideWorkgroupAccumulation: true}, Suite: suiteWide, N: 4, Seed: 240},
		{Name: "accumulate/cas", Doc: "as accumulate/wide, compare-and-swap loops", Knobs: knobs.Knobs{ForceCAS: true, NoOrderedSmall: true, WideWorkgroupAccumulation: true}, Suite: suiteWide, N: 4, Seed: 241},
		{Name: "skip/default", Doc: "resident calls with SkipBadIndices: bad indices skipped, in place and not", Suite: suiteSkip, N: 200, Seed: 220},
		{Name: "skip/cas", Doc: "as skip/default, compare-and-swap loops", Knobs: knobs.Knobs{ForceCAS: true, NoOrderedSmall: true}, Suite: suiteSkip, N: 200, Seed: 221},
		{Name: "skip/walk", Doc: "as skip/default, every Element plan walking its columns", Knobs: walk, Suite: suiteSkip, N: 200, Seed: 222},
		{Name: "skip/global", Doc: "as skip/default, no workgroup accumulation and no last-writer table", Knobs: knobs.Knobs{NoOrderedSmall: true, NoWorkgroupAccumulation: true, NoTable: true}, Suite: suiteSkip, N: 200, Seed: 223},
		{Name: "skip/chunks4KiB", Doc: "as skip/default, in 4 KiB buffers", Knobs: chunked, Suite: suiteSkip, N: 200, Seed: 224},
		{Name: "big/default", Doc: "tensors beyond the storage binding limit", Suite: suiteBig, N: 1, Seed: 500, FullOnly: true},
		{Name: "big/chunks64MiB", Doc: "tensors beyond the storage binding limit in 64 MiB buffers", Knobs: knobs.Knobs{MaxAllocationBytes: 64 << 20}, Suite: suiteBig, N: 1, Seed: 501, FullOnly: true},
	}...)
}

// reduceShapes returns the paths that run random reductions (one in three
// larger) in the device shapes of the none paths (16-byte chunks, 64-bit
// positions, runs of 1 and 3, split dispatches), each on the atomics
// (within the bound), deterministic (bit for bit) and walking.
func reduceShapes() []Path {
	var out []Path
	for i, shape := range []struct {
		name, doc string
		knobs     knobs.Knobs
	}{
		{"chunks16B", "16-byte chunks", chunkPaths},
		{"wide", "64-bit positions, 4 KiB buffers", knobs.Knobs{MaxAllocationBytes: testChunk, WidePositions: true}},
		{"run1", "one position per invocation, 4 KiB buffers", knobs.Knobs{MaxAllocationBytes: testChunk, Run: 1}},
		{"run3", "three positions per invocation, 4 KiB buffers", knobs.Knobs{MaxAllocationBytes: testChunk, Run: 3}},
		{"grids", "2-D and 3-D grids, split dispatches", grids},
		{"noInt64", "the 32-bit baseline, 4 KiB buffers", knobs.Knobs{NoShaderInt64: true, MaxAllocationBytes: testChunk}},
		{"noInt64Chunks16B", "the 32-bit baseline, 16-byte chunks", knobs.Knobs{NoShaderInt64: true, ChunkBytes: 16}},
	} {
		for _, mode := range []string{"atomics", "deterministic", "walk"} {
			var o gpu.Options
			k := shape.knobs
			k.NoOrderedSmall = true
			doc := shape.doc + ", on atomics"
			switch mode {
			case "deterministic":
				o.Deterministic = true
				doc = shape.doc + ", folded in order"
			case "walk":
				k.WalkMinColumns = 1
				doc = shape.doc + ", Element plans walking"
			}
			out = append(out, Path{Name: "reduce/" + shape.name + "/" + mode, Doc: doc, Opts: o, Knobs: k, Suite: suiteReduce, N: 250, Large: true, Seed: 310 + int64(i)})
		}
	}
	return out
}

// Config is what Run runs.
type Config struct {
	// Base holds the device selector, Validation and
	// GPUAssistedValidation; each path's options are added to it.
	Base gpu.Options
	// Fault is injected into every backend opened (mutation tests: check
	// must catch it); the zero value injects none.
	Fault knobs.Fault
	// NoShaderFloat64 opens every backend as on a device without
	// shaderFloat64 (knobs.Knobs.NoShaderFloat64), so that the refusals
	// of float64 sum, sub, prod and mean can be checked on any device.
	NoShaderFloat64 bool
	// Size scales the random requests.
	Size Size
	// Seed is the base of every path's seed.
	Seed int64
	// Match keeps the paths whose name contains it (case-insensitive);
	// empty keeps all. A comma-separated list keeps the paths whose name
	// contains any of its terms. Where no path's name contains one and
	// the terms name operator versions (ScatterElements-18) or operators
	// (TensorScatter: each of its versions), every path runs, with the
	// cases of those versions alone (Operators).
	Match string
}

// Selected returns the paths cfg runs.
func (cfg Config) Selected() []Path {
	var out []Path
	byOp := len(cfg.Operators()) > 0
	for _, p := range Paths() {
		if p.FullOnly && cfg.Size != Full {
			continue
		}
		if cfg.Match == "" || byOp || p.Matches(cfg.Match) {
			out = append(out, p)
		}
	}
	return out
}

// Matches reports whether the path's name contains text, ignoring case,
// or where text is a comma-separated list, any of its terms.
func (p Path) Matches(text string) bool {
	name := strings.ToLower(p.Name)
	for _, term := range matchTerms(text) {
		if strings.Contains(name, strings.ToLower(term)) {
			return true
		}
	}
	return false
}

// matchTerms splits a Match text at its commas, each term trimmed of
// spaces; empty terms are dropped, unless text is a single one (which
// every name contains).
func matchTerms(text string) []string {
	if !strings.Contains(text, ",") {
		return []string{text}
	}
	var terms []string
	for _, t := range strings.Split(text, ",") {
		if t = strings.TrimSpace(t); t != "" {
			terms = append(terms, t)
		}
	}
	return terms
}

// Operators returns the operator versions whose cases alone run: those
// that cfg.Match names, where it is no path's (Match); nil where every
// operator's run.
func (cfg Config) Operators() []string {
	if cfg.Match == "" {
		return nil
	}
	for _, p := range Paths() {
		if p.Matches(cfg.Match) {
			return nil
		}
	}
	var names []string
	add := func(name string) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for _, term := range matchTerms(cfg.Match) {
		if op, err := ops.Lookup(term); err == nil {
			add(op.Name)
			continue
		}
		for _, op := range ops.All() {
			if strings.EqualFold(op.Family, strings.TrimSpace(term)) {
				add(op.Name)
			}
		}
	}
	return names
}

// Run runs the selected paths, each as a subtest of t named after it.
// Every backend is opened with cfg.Base's device and validation, cfg.Fault
// and cfg.NoShaderFloat64, closed at the end of its path, and then must
// have reported no validation message and left no Vulkan object alive. A
// refusal that Refusal accepts is an outcome of its own (the T's
// opstest.RefusalReporter), not a failure.
func Run(t opstest.T, cfg Config) {
	for _, p := range cfg.Selected() {
		t.Run(p.Name, func(t opstest.T) { RunPath(t, cfg, p) })
	}
}

// RunPath runs path p (Run, for one path).
func RunPath(t opstest.T, cfg Config, p Path) {
	opts := p.Opts
	opts.Device, opts.Validation, opts.GPUAssistedValidation = cfg.Base.Device, cfg.Base.Validation, cfg.Base.GPUAssistedValidation
	if opts.PipelineCacheDir == "" {
		opts.PipelineCacheDir = cfg.Base.PipelineCacheDir
	}
	k := p.Knobs
	k.Fault = cfg.Fault
	k.NoShaderFloat64 = k.NoShaderFloat64 || cfg.NoShaderFloat64
	var opened []*gpu.Backend
	open := func(t opstest.T) *gpu.Backend {
		t.Helper()
		// A suite asks for a backend per group of subtests, one group
		// after another, and uses it only in its group: the last
		// group's is closed (and checked) before the next opens, so
		// that the next takes over its device and the pipelines it
		// compiled (gpu.KeepDevices) instead of compiling them again
		// on a device of its own.
		for _, b := range opened {
			closeAndCheck(t, b)
		}
		opened = opened[:0]
		b, err := knobs.Open[gpu.Options, *gpu.Backend](opts, k)
		if err != nil {
			t.Fatalf("no usable Vulkan device: %v", err)
		}
		opened = append(opened, b)
		return b
	}
	defer func() {
		for _, b := range opened {
			closeAndCheck(t, b)
		}
	}()
	n := cfg.Size.scale(p.N)
	seed := cfg.Seed + p.Seed
	switch p.Suite {
	case suiteConformance:
		opstest.Conformance(t, func(t opstest.T) ops.Backend { return open(t) }, n)
	case suiteDifferential:
		opstest.Differential(t, open(t), cpuref.New(), seed, n, opstest.Config{})
	case suiteNone:
		cfgReq := opstest.Config{}
		if p.Large {
			cfgReq = opstest.Config{MaxRank: 4, MaxDim: 24, MaxElements: 6000}
		}
		b := open(t)
		differentialNone(t, b, seed, n, cfgReq)
		if opts.MaxPoolBytes < 0 && gpubench.Of(b).Device().PooledBuffers() != 0 {
			t.Errorf("MaxPoolBytes < 0 keeps no idle buffer, yet %d are pooled", gpubench.Of(b).Device().PooledBuffers())
		}
	case suiteResident:
		residentVsReference(t, open(t), seed, n)
	case suiteSkip:
		residentSkip(t, open(t), seed, n)
	case suiteHot:
		every := 1
		if cfg.Size == Quick {
			every = 3
		}
		hotKeys(t, open(t), seed, n, every)
	case suiteWide:
		// Each case compiles a pipeline of its own (SwiftShader takes a
		// second for one): the quick size keeps one in six.
		every := 1
		if cfg.Size == Quick {
			every = 6
		}
		wideAccumulation(t, open(t), seed, n, every)
	case suiteReduce:
		randomReductions(t, open(t), seed, n, p.Large, p.Name == "reduce/native" || p.Name == "reduce/cas")
	case suiteContention:
		every := 1
		if cfg.Size == Quick {
			every = 3
		}
		contention(t, open(t), seed, n, every, p.Deterministic, p.Walk)
	case suiteBig:
		big(t, open(t), seed)
	case suiteScale:
		size := map[Size]opstest.ScaleSize{Quick: opstest.ScaleQuick, Default: opstest.ScaleDefault, Full: opstest.ScaleFull}[cfg.Size]
		b := open(t)
		ref := func(req ops.Request) (*tensor.Tensor, error) { return ops.Run(context.Background(), cpuref.New(), req) }
		paths := map[string]int{}
		opstest.Scale(t, b, ref, opstest.ScaleCases(size, seed), func(*ops.Plan) bool {
			path := b.LastStats().Reduction
			paths[path]++
			return exactPath(path)
		})
		t.Logf("cases by reduction path (\"\": reduction none): %v", paths)
	default:
		t.Fatalf("path %s: unknown suite %q", p.Name, p.Suite)
	}
}

// validationPrefix starts the failure of each validation message, which
// the Report also keeps in its row's Validation.
const validationPrefix = "validation: "

// closeAndCheck closes b and reports an error from Close, each validation
// message and any Vulkan object left alive.
func closeAndCheck(t opstest.T, b *gpu.Backend) {
	t.Helper()
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	for _, m := range b.ValidationMessages() {
		// Each message is a failed case of its own, in the row
		// "validation".
		if c, ok := t.(opstest.CaseReporter); ok {
			c.BeginCase(ops.Request{Op: "validation"})
		}
		t.Errorf("%s%s", validationPrefix, m)
	}
	if live := gpubench.Of(b).Device().LiveObjects(); len(live) > 0 {
		var names []string
		for k, v := range live {
			names = append(names, fmt.Sprintf("%s x%d", k, v))
		}
		sort.Strings(names)
		if c, ok := t.(opstest.CaseReporter); ok {
			c.BeginCase(ops.Request{Op: "-"})
		}
		t.Errorf("Vulkan objects alive after Close: %s", strings.Join(names, ", "))
	}
}

// differentialNone runs n seeded random requests with reduction none
// (valid ones, and one in five with out-of-range indices) on b and on the
// CPU reference and requires the same result or the same error text, with
// out untouched after an error.
func differentialNone(t opstest.T, b *gpu.Backend, seed int64, n int, cfg opstest.Config) {
	t.Helper()
	ctx := context.Background()
	ref := cpuref.New()
	rng := rand.New(rand.NewSource(seed))
	var bad int
	for i := 0; i < n; i++ {
		req := opstest.RandomRequest(rng, cfg)
		req.Reduction, req.UseInitVal = "", nil
		if req.Indices != nil && req.Indices.Len() > 0 && rng.Intn(5) == 0 {
			for k := rng.Intn(3); k >= 0; k-- {
				SpoilIndex(rng, req.Indices)
			}
		}
		if !opstest.BeginCase(t, req) {
			continue
		}
		p, err := ops.Prepare(req)
		require.NoError(t, err)
		want, _ := tensor.New(p.DType, p.Shape)
		werr := ref.Execute(ctx, p, want)
		got := opstest.SentinelOutput(p)
		before := got.Clone()
		gerr := b.Execute(ctx, p, got)
		if werr != nil {
			bad++
			require.Error(t, gerr, "case %d (seed %d): the GPU accepts what the CPU rejects (%v)\n%s", i, seed, werr, opstest.Describe(req))
			require.Equal(t, werr.Error(), gerr.Error(), "case %d (seed %d)\n%s", i, seed, opstest.Describe(req))
			require.ErrorIs(t, gerr, ops.ErrIndexRange)
			require.True(t, tensor.Equal(got, before), "case %d: out changed after an error", i)
			continue
		}
		require.NoError(t, gerr, "case %d (seed %d)\n%s", i, seed, opstest.Describe(req))
		if d := opstest.Diff(got, want); d != "" {
			if m, ok := t.(opstest.MismatchReporter); ok {
				if mm, found := opstest.FirstMismatch(req, got, want); found {
					m.Mismatch(mm)
				}
			}
			t.Fatalf("case %d (seed %d): %s\n%s", i, seed, d, opstest.Describe(req))
		}
	}
	t.Logf("%d requests, %d with an out-of-range index", n, bad)
}

// SpoilIndex puts an out-of-range value into a random element of an index
// tensor: a large positive value, or the type's minimum or maximum.
func SpoilIndex(rng *rand.Rand, idx *tensor.Tensor) {
	pos := rng.Intn(idx.Len())
	n := idx.DType.Size()
	var v uint64
	switch rng.Intn(3) {
	case 0:
		v = 100 + uint64(rng.Intn(27))
	case 1: // the type's maximum (uint64: above MaxInt64)
		v = 1<<(8*n) - 1
		if idx.DType.IsSigned() {
			v >>= 1
		}
		if n == 8 && !idx.DType.IsSigned() {
			v = math.MaxUint64
		}
	default: // the type's minimum; unsigned: a middle value (0 is valid)
		v = 1 << (8*n - 1)
	}
	for b := 0; b < n; b++ {
		idx.Data[pos*n+b] = byte(v >> (8 * b))
	}
}
