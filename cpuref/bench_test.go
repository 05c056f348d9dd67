package cpuref

import (
	"context"
	"math"
	"math/rand"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// The benchmarks report GB/s of memory traffic: data read, output written,
// updates read and indices read, per second. Each runs next to a parallel
// memcpy that moves the same traffic (half the bytes read, half written),
// so the ratio of the two says how close the scatter comes to the memory
// bandwidth. The output tensor is allocated once and reused, so that page
// faults on fresh memory do not dominate.

// traffic returns the bytes a scatter of req reads and writes.
func traffic(req ops.Request) int64 {
	t := 2*int64(len(req.Data.Data)) + int64(len(req.Updates.Data))
	if req.Indices != nil {
		t += int64(len(req.Indices.Data))
	}
	return t
}

func benchScatter(b *testing.B, be *Backend, req ops.Request) {
	p, err := ops.Prepare(req)
	require.NoError(b, err)
	out, err := tensor.New(p.DType, p.Shape)
	require.NoError(b, err)
	ctx := context.Background()
	require.NoError(b, be.Execute(ctx, p, out)) // fault the output's pages in
	bytes := traffic(req)
	b.SetBytes(bytes)
	n := 0
	cpu0 := cpuTime()
	for b.Loop() {
		if err := be.Execute(ctx, p, out); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(bytes)*float64(n)/b.Elapsed().Seconds()/1e9, "GB/s")
	// CPU time per call, all threads: steadier than wall time on a machine
	// shared with other work.
	b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(n), "cpu-ms/op")
}

// cpuTime returns the user and system time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchMemcpy copies bytes/2 bytes with every CPU: the traffic of bytes.
func benchMemcpy(b *testing.B, bytes int64) {
	src := make([]byte, bytes/2)
	dst := make([]byte, bytes/2)
	for i := range src {
		src[i] = byte(i)
	}
	w := runtime.GOMAXPROCS(0)
	copyParallel(w, defaultGrain.copy, dst, src) // fault the pages in
	b.SetBytes(bytes)
	n := 0
	for b.Loop() {
		copyParallel(w, defaultGrain.copy, dst, src)
		n++
	}
	b.ReportMetric(float64(bytes)*float64(n)/b.Elapsed().Seconds()/1e9, "GB/s")
}

func f32Tensor(shape []int, seed int64) *tensor.Tensor {
	t, err := tensor.New(tensor.Float32, shape)
	if err != nil {
		panic(err)
	}
	v := tensor.View[float32](t)
	x := uint32(seed)*2654435761 + 1
	for i := range v {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		v[i] = float32(x>>8) / (1 << 24)
	}
	return t
}

func randIndices(rng *rand.Rand, shape []int, bound func(pos int) int) *tensor.Tensor {
	t, err := tensor.New(tensor.Int64, shape)
	if err != nil {
		panic(err)
	}
	v := tensor.View[int64](t)
	for i := range v {
		v[i] = int64(rng.Intn(bound(i)))
	}
	return t
}

// ScatterNDUpdate-15 example 5: data [1000,256,10,15], indices [25,125,3],
// updates [25,125,15], random indices in range.
func ndExample5() ops.Request {
	rng := rand.New(rand.NewSource(5))
	ds := []int{1000, 256, 10, 15}
	return ops.Request{
		Op:      "ScatterNDUpdate-15",
		Data:    f32Tensor(ds, 1),
		Indices: randIndices(rng, []int{25, 125, 3}, func(pos int) int { return ds[pos%3] }),
		Updates: f32Tensor([]int{25, 125, 15}, 2),
	}
}

// ScatterUpdate-3 example 1: data [1000,256,10,15], indices [125,20],
// updates [1000,125,20,10,15] (1.5 GB, built once), axis 1, random indices.
var scatterUpdateExample1 = sync.OnceValue(func() ops.Request {
	rng := rand.New(rand.NewSource(1))
	return ops.Request{
		Op:      "ScatterUpdate-3",
		Data:    f32Tensor([]int{1000, 256, 10, 15}, 1),
		Indices: randIndices(rng, []int{125, 20}, func(int) int { return 256 }),
		Updates: f32Tensor([]int{1000, 125, 20, 10, 15}, 2),
		Axis:    tensor.Scalar(1),
	}
})

func BenchmarkScatterNDUpdate15Example5(b *testing.B) {
	req := ndExample5()
	b.Run("scatter", func(b *testing.B) { benchScatter(b, New(), req) })
	b.Run("memcpy", func(b *testing.B) { benchMemcpy(b, traffic(req)) })
}

func BenchmarkScatterUpdate3Example1(b *testing.B) {
	req := scatterUpdateExample1()
	// Of 2500 indices into 256 slices, about 256 are the last to their
	// slice; the others are overwritten and skipped.
	b.Run("scatter", func(b *testing.B) { benchScatter(b, New(), req) })
	b.Run("scatter-every-update", func(b *testing.B) { benchScatter(b, &Backend{keepOverwritten: true}, req) })
	b.Run("memcpy", func(b *testing.B) { benchMemcpy(b, traffic(req)) })
}

// BenchmarkScatterElementsSumDuplicates: small data, many updates per
// element. "rows" has 128 updates to every element along axis 0 of a
// [256, 64] tensor (tasks split the columns); "flat" has 256 updates to
// every element of a 1-D tensor of 1024 (tasks take ranges of targets).
func BenchmarkScatterElementsSumDuplicates(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	rows := ops.Request{
		Op: "ScatterElements-18", Reduction: "add",
		Data:    f32Tensor([]int{256, 64}, 1),
		Indices: randIndices(rng, []int{1 << 15, 64}, func(int) int { return 256 }),
		Updates: f32Tensor([]int{1 << 15, 64}, 2),
	}
	flat := ops.Request{
		Op: "ScatterElements-18", Reduction: "add",
		Data:    f32Tensor([]int{1024}, 1),
		Indices: randIndices(rng, []int{1 << 18}, func(int) int { return 1024 }),
		Updates: f32Tensor([]int{1 << 18}, 2),
	}
	b.Run("rows", func(b *testing.B) { benchScatter(b, New(), rows) })
	b.Run("flat", func(b *testing.B) { benchScatter(b, New(), flat) })
	b.Run("memcpy", func(b *testing.B) { benchMemcpy(b, traffic(rows)) })
}

func i32Tensor(n int, seed int64) *tensor.Tensor {
	t, err := tensor.New(tensor.Int32, []int{n})
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewSource(seed))
	v := tensor.View[int32](t)
	for i := range v {
		v[i] = rng.Int31() - 1<<30
	}
	return t
}

// BenchmarkScatterReduceLarge: the random-access reductions of the peer
// benchmark, far larger than the caches. "elements-sum" folds 16M float32
// updates into 1M elements, "nd-sum" folds 1M rows of 16 float32 into 1M
// rows, "nd-max" folds 8M int32 updates into 4M elements, and
// "elements-none" writes 4M float32 updates along axis 0 of a [4096, 4096]
// tensor (no reduction; random rows).
func BenchmarkScatterReduceLarge(b *testing.B) {
	rng := rand.New(rand.NewSource(7))
	const mi = 1 << 20
	cases := []struct {
		name string
		req  ops.Request
	}{
		{"elements-sum", ops.Request{Op: "ScatterElements-18", Reduction: "add",
			Data:    f32Tensor([]int{mi}, 1),
			Indices: randIndices(rng, []int{16 * mi}, func(int) int { return mi }),
			Updates: f32Tensor([]int{16 * mi}, 2)}},
		{"nd-sum", ops.Request{Op: "ScatterND-18", Reduction: "add",
			Data:    f32Tensor([]int{mi, 16}, 1),
			Indices: randIndices(rng, []int{mi, 1}, func(int) int { return mi }),
			Updates: f32Tensor([]int{mi, 16}, 2)}},
		{"nd-max", ops.Request{Op: "ScatterND-18", Reduction: "max",
			Data:    i32Tensor(4*mi, 1),
			Indices: randIndices(rng, []int{8 * mi, 1}, func(int) int { return 4 * mi }),
			Updates: i32Tensor(8*mi, 2)}},
		{"elements-none", ops.Request{Op: "ScatterElements-18",
			Data:    f32Tensor([]int{4096, 4096}, 1),
			Indices: randIndices(rng, []int{1024, 4096}, func(int) int { return 4096 }),
			Updates: f32Tensor([]int{1024, 4096}, 2)}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) { benchScatter(b, New(), c.req) })
		b.Run(c.name+"-memcpy", func(b *testing.B) { benchMemcpy(b, traffic(c.req)) })
	}
}

// BenchmarkSliceScatterEverySecond: SliceScatter-15 onto every second row
// and column of a [8192, 8192] float32 tensor (the SS workload). "scatter"
// builds each written row in one pass from data and its updates;
// "copy-then-store" copies each row and then stores the updates into it
// with a stride, as before the row builds.
func BenchmarkSliceScatterEverySecond(b *testing.B) {
	req := ops.Request{Op: "SliceScatter-15",
		Data:    f32Tensor([]int{8192, 8192}, 1),
		Updates: f32Tensor([]int{4096, 4096}, 2),
		Start:   tensor.MustFromSlice([]int{2}, []int64{0, 0}),
		Stop:    tensor.MustFromSlice([]int{2}, []int64{math.MaxInt64, math.MaxInt64}),
		Step:    tensor.MustFromSlice([]int{2}, []int64{2, 2}),
	}
	g := defaultGrain
	g.sliceNoBuild = true
	b.Run("scatter", func(b *testing.B) { benchScatter(b, New(), req) })
	b.Run("copy-then-store", func(b *testing.B) { benchScatter(b, &Backend{grain: &g}, req) })
	b.Run("memcpy", func(b *testing.B) { benchMemcpy(b, traffic(req)) })
}

// BenchmarkSerialFold: the serial fold of SE-sum-dup (16M float32 sums
// with int64 indices into 1M elements) banded on the workers and on one,
// and the binned fold, each forced; the bits are the same.
func BenchmarkSerialFold(b *testing.B) {
	rng := rand.New(rand.NewSource(7))
	const mi = 1 << 20
	req := ops.Request{Op: "ScatterElements-18", Reduction: "add",
		Data:    f32Tensor([]int{mi}, 1),
		Indices: randIndices(rng, []int{16 * mi}, func(int) int { return mi }),
		Updates: f32Tensor([]int{16 * mi}, 2)}
	for _, c := range []struct {
		name string
		fold int
		one  bool
	}{{"banded", foldForceSerial, false}, {"one-worker", foldForceSerial, true}, {"binned", foldForceBinned, false}} {
		g := defaultGrain
		g.fold, g.serialNoBand = c.fold, c.one
		b.Run(c.name, func(b *testing.B) { benchScatter(b, &Backend{grain: &g}, req) })
	}
}
