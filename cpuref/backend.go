package cpuref

import (
	"context"
	"math"
	"runtime"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/internal/backendkit"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Backend is the CPU reference implementation of ops.Backend. The zero value
// is ready to use; a Backend holds no resources and may run several Execute
// calls at once.
type Backend struct {
	// Workers is the number of goroutines an Execute call uses; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// Figures, when set, are this machine's CPU figures (Measure, or
	// those kept from it) by which Execute chooses, call by call, how to
	// fold a float sum, sub, prod or mean onto single elements of a large
	// output: serially, in one goroutine, or binned on every worker (the
	// same bits either way). Where they are nil or lack the fold figures
	// (cost.CPU.Fold), the first call that must choose measures this
	// machine's figures (Measure, about half a second on a 2-core
	// machine) once for the process.
	Figures *cost.CPU
	// Keep, when set, is called with the figures that the Backend
	// measured for want of Figures, once, by the call that measured them,
	// so that the caller can keep them for later processes (the
	// gpuscatter command keeps them in its cache folder).
	Keep func(cost.CPU)

	// keepOverwritten makes ScatterUpdate-3 apply every update, including
	// those a later update to the same slice overwrites. Benchmarks use it
	// to measure the plain scatter.
	keepOverwritten bool
	// grain overrides the task sizes (tests use tiny ones to reach the
	// parallel paths with small tensors); nil means defaultGrain.
	grain *grain
}

// grain holds the smallest amounts of work worth a task of their own.
type grain struct {
	task     int // update elements of a scatter task
	run      int // contiguous elements of a task that splits runs along k
	piece    int // elements of a k range of a ScatterElements task split along k
	decode   int // index positions of an index-pass task
	copy     int // bytes of a copy task
	bigOut   int // bytes of an output too large for the caches
	bucket   int // bytes of the targets of one group of updates grouped by target
	owned    int // the most workers that split a reduction by owning target ranges
	binOut   int // bytes of the smallest output that runs binned; 0: none does
	bin      int // bytes of the targets of one bin
	binBlock int // log2 of the entries of a block of a bin's list
	binWC    int // the fewest bins whose entries gather in write-combining buffers
	// binRound is the entries of a round of a binned scatter whose out
	// has binRoundOut bytes or fewer (0: no rounds), and binRoundBin the
	// bytes of the targets of one bin in rounds. Rounds are off by
	// default: on an idle 2-core machine they made SE-sum-dup about 2.5
	// times slower (47-60 ms against 18), the workers meeting at every
	// round; they helped only while other processes held the cores. The
	// tests run them through this grain.
	binRound, binRoundOut, binRoundBin int
	// binNoStream flushes the write-combining buffers with plain copies
	// (as where the lists are not aligned to cache lines).
	binNoStream bool
	// binNoAsm partitions with the Go loops where the assembly ones
	// (binsimd.go) would run.
	binNoAsm bool
	// binNoVector keeps to the scalar assembly loop (binPartitionKeys,
	// after the Go decode), as on processors without AVX-512.
	binNoVector bool
	// rowNoAsm folds the owned path's batches of rows with the Go loop
	// where the assembly one (rowadd.go) would run; rowNoAVX512 keeps to
	// its AVX2 loop, as on processors without AVX-512.
	rowNoAsm, rowNoAVX512 bool
	// fold forces the choice between the serial and the binned fold of a
	// plan that runs binned (foldForceSerial, foldForceBinned); 0 chooses
	// by the figures (foldSerial).
	fold int
	// serialNoDirect keeps the serial fold to its decode-then-fold loop
	// where the one-pass loop (serialDirect) would run.
	serialNoDirect bool
	// serialNoAsm keeps the serial fold's float32 sums to the Go loop
	// where the assembly one (serialSumAsm) would run, as on processors
	// other than amd64.
	serialNoAsm bool
	// serialNoBand keeps the serial fold's float32 sums to one worker
	// where the banded loops (serialBanded) would run; serialBandUnits is
	// the fewest units that run banded.
	serialNoBand    bool
	serialBandUnits int
	// sliceNoBuild keeps a fused SliceScatter with a step of 2 to a copy
	// of each row and strided stores into it; sliceNoAsm builds its rows
	// with the Go loop (interleave.go).
	sliceNoBuild, sliceNoAsm bool
}

var defaultGrain = grain{task: 1 << 15, run: 1 << 10, piece: 256, decode: 1 << 14, copy: 1 << 20, bigOut: 8 << 20, bucket: 64 << 10, owned: 4,
	binOut: 2 << 20, bin: 512 << 10, binBlock: 12, binWC: 32, binRound: 0, binRoundOut: 8 << 20, binRoundBin: 1 << 20,
	serialBandUnits: 1 << 16}

var _ ops.Backend = (*Backend)(nil)

// New returns a Backend that uses every available CPU.
func New() *Backend { return &Backend{} }

// Name returns "cpu".
func (b *Backend) Name() string { return "cpu" }

// Close does nothing and returns nil; a Backend holds no resources.
func (b *Backend) Close() error { return nil }

// Run validates req and executes it on a new Backend: ops.Run with the CPU
// reference.
func Run(req ops.Request) (*tensor.Tensor, error) {
	return ops.Run(context.Background(), New(), req)
}

// Execute writes the result of p into out (ops.Backend). out must have p's
// dtype and shape; it may be p.Data itself (or share its storage), and then
// the scatter happens in place. The other inputs are never modified. An
// out-of-range index is reported, before anything is written, as the error
// p.IndexAt gives for the first bad position; with p.SkipBadIndices the
// call then runs again with the bad indices' updates left out
// (backendkit.ExecuteSkipping) and reports the error once out holds that.
func (b *Backend) Execute(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error {
	ctx, err := backendkit.BeginExecute(ctx, "cpuref", p, out)
	if err != nil {
		return err
	}
	if p.SkipBadIndices {
		return backendkit.ExecuteSkipping(ctx, p, out, b.execute)
	}
	return b.execute(ctx, p, out)
}

// execute is Execute after its checks.
func (b *Backend) execute(ctx context.Context, p *ops.Plan, out *tensor.Tensor) error {
	w := b.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	g := defaultGrain
	if b.grain != nil {
		g = *b.grain
	}
	x := &exec{
		g:               g,
		ctx:             ctx,
		p:               p,
		out:             out,
		w:               w,
		inPlace:         sameStorage(out, p.Data),
		keepOverwritten: b.keepOverwritten,
		fig:             b.Figures,
		keep:            b.Keep,
	}
	return x.run()
}

// sameStorage reports whether a and b hold their elements in the same
// memory.
func sameStorage(a, b *tensor.Tensor) bool {
	if a == b {
		return true
	}
	if a.DType == tensor.String {
		return len(a.Strings) > 0 && len(a.Strings) == len(b.Strings) && &a.Strings[0] == &b.Strings[0]
	}
	return len(a.Data) > 0 && len(a.Data) == len(b.Data) && &a.Data[0] == &b.Data[0]
}

// exec is one Execute call.
type exec struct {
	g               grain
	ctx             context.Context
	p               *ops.Plan
	out             *tensor.Tensor
	w               int
	inPlace         bool
	keepOverwritten bool
	fig             *cost.CPU
	keep            func(cost.CPU)

	// Set by planGroups for a grouped scatter: the keys (target elements,
	// or rows of keyElems elements for ScatterND runs) lie in [0,
	// keyRange); group b holds keys b<<groupShift to (b+1)<<groupShift - 1.
	keyElems, keyRange, groups int
	groupShift                 uint
	// Set by planBins for a binned scatter.
	binShift uint
}

func (x *exec) run() error {
	p := x.p
	if p.NumUpdates() == 0 {
		// specs/README.md: zero-size updates give a copy of data. (Zero-size
		// indices with updates are ScatterND tuples of length 0, each
		// addressing all of data, as the ScatterNDUpdate-15 snippet computes
		// them.) Indices that no update uses are still checked: an index out
		// of range is an error whether or not updates land through it.
		for pos := range p.NumIndices() {
			if _, err := p.IndexAt(pos); err != nil {
				return err
			}
		}
		return x.copyData()
	}
	switch p.Kind {
	case ops.KindSlice:
		return x.slice()
	case ops.KindAxis:
		return x.axis()
	case ops.KindCache:
		return x.cache()
	}
	// Offsets and positions are int32 when they fit, halving the memory
	// traffic of the per-update target offsets.
	if x.out.Len() <= math.MaxInt32 && p.NumUpdates() <= math.MaxInt32 {
		return scatter[int32](x)
	}
	return scatter[int](x)
}

// done is the channel that stops the phases before the scatter: the index
// pass and the grouping of updates by target.
func (x *exec) done() <-chan struct{} { return x.ctx.Done() }

// scatterDone is the channel that stops the scatter phase: none in place,
// where a stopped scatter could not be undone.
func (x *exec) scatterDone() <-chan struct{} {
	if x.inPlace {
		return nil
	}
	return x.ctx.Done()
}

// copyData makes out a copy of data, unless they are the same memory. It
// checks the context first and then copies to the end, so that out is never
// left half copied.
func (x *exec) copyData() error {
	if err := x.ctx.Err(); err != nil {
		return err
	}
	x.forceCopy()
	return nil
}

func (x *exec) forceCopy() {
	if x.inPlace {
		return
	}
	if x.p.DType == tensor.String {
		copyParallel(x.w, x.g.copy, x.out.Strings, x.p.Data.Strings)
		return
	}
	copyParallel(x.w, x.g.copy, x.out.Data, x.p.Data.Data)
}

// cancelled is what a stopped scatter phase returns: out is made a copy of
// data again and the context's error is returned.
func (x *exec) cancelled() error {
	x.forceCopy()
	return x.ctx.Err()
}

// want returns how many tasks to split work (update elements) into: enough
// for every worker to take several, none smaller than the task grain.
func (x *exec) want(work int) int {
	return max(1, min(4*x.w, work/x.g.task))
}
