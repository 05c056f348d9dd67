package gpu

import (
	"context"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
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
