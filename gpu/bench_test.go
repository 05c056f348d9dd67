//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// benchRequests are mid-sized requests of every kind, float32 data.
func benchRequests() map[string]ops.Request {
	rng := rand.New(rand.NewSource(3))
	elemIdx, _ := tensor.New(tensor.Int64, []int{200, 64, 150})
	for i, v := 0, tensor.View[int64](elemIdx); i < len(v); i++ {
		v[i] = int64(rng.Intn(256))
	}
	start, stop, step := tensor.Ints(0, 1), tensor.Ints(1000, 256), tensor.Ints(2, 3)
	return map[string]ops.Request{
		"ScatterNDUpdate-15/spec": specShapes[0].req(rng),
		"ScatterElements-11/axis1": {Op: "ScatterElements-11", Data: randomFloats(rng, []int{200, 256, 150}),
			Indices: elemIdx, Updates: randomFloats(rng, []int{200, 64, 150}), Axis: tensor.Scalar(1)},
		"SliceScatter-15/strided": {Op: "SliceScatter-15", Data: randomFloats(rng, []int{1000, 256, 150}),
			Updates: randomFloats(rng, []int{500, 85, 150}), Start: start, Stop: stop, Step: step},
	}
}

// BenchmarkExecute measures end-to-end Execute calls on the default device
// and on the CPU reference; SetBytes counts the update bytes.
func BenchmarkExecute(b *testing.B) {
	for name, req := range benchRequests() {
		p, err := ops.Prepare(req)
		require.NoError(b, err)
		out, _ := tensor.New(p.DType, p.Shape)
		b.Run(name+"/gpu", func(b *testing.B) {
			g, err := Open(Options{})
			require.NoError(b, err)
			defer g.Close()
			require.NoError(b, g.Execute(context.Background(), p, out)) // pipelines, first touch
			b.SetBytes(int64(len(req.Updates.Data)))
			for b.Loop() {
				if err := g.Execute(context.Background(), p, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(g.LastStats().Device.Nanoseconds()), "device-ns/last-op")
		})
		b.Run(name+"/cpuref", func(b *testing.B) {
			c := cpuref.New()
			b.SetBytes(int64(len(req.Updates.Data)))
			for b.Loop() {
				if err := c.Execute(context.Background(), p, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkResident measures the same requests on resident tensors: one
// call per Run (into a separate output, data's device copy included, and in
// place), and batches of 4 calls per submission (in place).
func BenchmarkResident(b *testing.B) {
	ctx := context.Background()
	for name, req := range benchRequests() {
		g, err := Open(Options{})
		require.NoError(b, err)
		up := func(x *tensor.Tensor) *Tensor {
			if x == nil {
				return nil
			}
			t, err := g.Upload(ctx, x)
			require.NoError(b, err)
			return t
		}
		c := Call{Op: req.Op, Data: up(req.Data), Indices: up(req.Indices), Updates: up(req.Updates),
			Axis: req.Axis, Start: req.Start, Stop: req.Stop, Step: req.Step}
		c.Out, err = g.NewTensor(ctx, req.Data.DType, req.Data.Shape)
		require.NoError(b, err)
		inPlace := c
		inPlace.Out = c.Data
		for _, v := range []struct {
			name  string
			c     Call
			calls int
		}{{"run", c, 1}, {"in-place", inPlace, 1}, {"batch4-in-place", inPlace, 4}} {
			b.Run(name+"/"+v.name, func(b *testing.B) {
				require.NoError(b, g.Run(ctx, v.c)) // pipelines, first touch
				b.SetBytes(int64(v.calls * len(req.Updates.Data)))
				for b.Loop() {
					batch := g.NewBatch()
					for range v.calls {
						if err := batch.Add(v.c); err != nil {
							b.Fatal(err)
						}
					}
					if err := batch.submitWait(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(g.LastStats().Device.Nanoseconds()), "device-ns/last-op")
			})
		}
		require.NoError(b, g.Close())
	}
}

// benchSumRequest is a ScatterElements-18 sum of n float32 updates at
// random targets into a 1-D tensor of size elements (int32 indices).
func benchSumRequest(n, size int) ops.Request {
	rng := rand.New(rand.NewSource(11))
	idx, _ := tensor.New(tensor.Int32, []int{n})
	for i, v := 0, tensor.View[int32](idx); i < len(v); i++ {
		v[i] = int32(rng.Intn(size))
	}
	data, _ := tensor.New(tensor.Float32, []int{size})
	for i, v := 0, tensor.View[float32](data); i < len(v); i++ {
		v[i] = float32(rng.Intn(100))
	}
	upd, _ := tensor.New(tensor.Float32, []int{n})
	for i, v := 0, tensor.View[float32](upd); i < len(v); i++ {
		v[i] = float32(rng.NormFloat64())
	}
	return ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: data, Indices: idx, Updates: upd}
}

// BenchmarkReduceContention measures a float32 sum of 16M updates at
// random targets into 1M elements and into 64 (extreme contention): on the
// device with native float atomics, with compare-and-swap loops, both
// without the workgroup-memory accumulation ("-global"), in deterministic
// mode, and on the CPU reference. It reports the device time of the last
// call (device-ns/op), and of its passes after resolve (reduce-ns/op: the
// part that differs between configurations), beside the end-to-end time.
// -short uses 1M updates.
func BenchmarkReduceContention(b *testing.B) {
	n := 16 << 20
	if testing.Short() {
		n = 1 << 20
	}
	for _, size := range []int{1 << 20, 64} {
		req := benchSumRequest(n, size)
		p, err := ops.Prepare(req)
		require.NoError(b, err)
		out, _ := tensor.New(p.DType, p.Shape)
		name := fmt.Sprintf("into%d", size)
		for _, cfg := range []struct {
			name      string
			opts      config
			noPrivate bool
		}{
			{"native", config{}, false},
			{"native-global", config{}, true},
			{"cas", config{Knobs: knobs.Knobs{ForceCAS: true}}, false},
			{"cas-global", config{Knobs: knobs.Knobs{ForceCAS: true}}, true},
			{"deterministic", config{Options: Options{Deterministic: true}}, false},
			// The bucketed fold split four ways (DESIGN.md, "Bucketed"):
			// against deterministic, the timing that decides whether GPUs
			// take it.
			{"deterministic-split", config{Options: Options{Deterministic: true}, Knobs: knobs.Knobs{SplitBuckets: true}}, false},
		} {
			if size > shaders.MaxPrivateWords && cfg.noPrivate {
				continue // the same run as without the flag
			}
			if size <= radixDigits && cfg.opts.Knobs.SplitBuckets {
				continue // no bucketed fold: the same run as deterministic
			}
			b.Run(name+"/"+cfg.name, func(b *testing.B) {
				g, err := open(cfg.opts.Options, cfg.opts.Knobs)
				require.NoError(b, err)
				defer g.Close()
				g.noPrivate = cfg.noPrivate
				require.NoError(b, g.Execute(context.Background(), p, out)) // pipelines, first touch
				b.SetBytes(int64(len(req.Updates.Data)))
				for b.Loop() {
					if err := g.Execute(context.Background(), p, out); err != nil {
						b.Fatal(err)
					}
				}
				st := g.LastStats()
				b.ReportMetric(float64(st.Device.Nanoseconds()), "device-ns/op")
				// The passes after resolve, which every configuration shares.
				var reduce time.Duration
				for _, ps := range st.Passes {
					if ps.Label != "resolve" && ps.Label != "clear" {
						reduce += ps.Duration
					}
				}
				b.ReportMetric(float64(reduce.Nanoseconds()), "reduce-ns/op")
				b.Logf("%s: %s, %v", st.Reduction, st.Variants, st.Passes)
			})
		}
		b.Run(name+"/cpuref", func(b *testing.B) {
			c := cpuref.New()
			b.SetBytes(int64(len(req.Updates.Data)))
			for b.Loop() {
				if err := c.Execute(context.Background(), p, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
