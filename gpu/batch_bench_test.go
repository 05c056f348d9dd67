//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"testing"

	"github.com/gpuscatter/gpuscatter/tensor"
)

// BenchmarkBatch1000 times one resident batch of 1000 small ScatterND-18
// calls in place on the same tensors (the bench's SND-1000 workload, as
// countsRequest), on unified memory and staged as on a discrete GPU
// (NoUnifiedMemory), and reports the time per call and the submissions,
// waits and transfer pieces of a batch.
func BenchmarkBatch1000(b *testing.B) {
	const calls = 1000
	ctx := context.Background()
	for _, staged := range []bool{false, true} {
		b.Run(fmt.Sprintf("staged=%v", staged), func(b *testing.B) {
			// Without validation, whose checks would dominate the time.
			g, err := Open(Options{NoUnifiedMemory: staged})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			data, _ := tensor.New(tensor.Float32, []int{64, 4})
			idx := tensor.MustFromSlice([]int{4, 1}, []int64{3, 17, 40, 63})
			upd := tensor.MustFromSlice([]int{4, 4}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
			c := Call{Op: "ScatterND-18"}
			for _, in := range []struct {
				h *tensor.Tensor
				d **Tensor
			}{{data, &c.Data}, {idx, &c.Indices}, {upd, &c.Updates}} {
				t, err := g.Upload(ctx, in.h)
				if err != nil {
					b.Fatal(err)
				}
				*in.d = t
			}
			c.Out = c.Data
			run := func() {
				bt := g.NewBatch()
				for range calls {
					if err := bt.Add(c); err != nil {
						b.Fatal(err)
					}
				}
				if err := bt.submitWait(ctx); err != nil {
					b.Fatal(err)
				}
			}
			run() // pipelines
			for b.Loop() {
				run()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
			s := g.LastStats()
			b.ReportMetric(float64(s.Submits), "submits/batch")
			b.ReportMetric(float64(s.Waits), "waits/batch")
			b.ReportMetric(float64(s.TransferPieces), "pieces/batch")
		})
	}
}
