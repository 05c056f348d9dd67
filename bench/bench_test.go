package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// benchScale is the size of the Go benchmarks: 1/64 of full size, a few MB
// per workload, so that 'go test -bench .' finishes quickly on 2 cores.
// 'gpuscatter bench' runs the full sizes.
const benchScale = 1.0 / 64

// benchWorkload times the built-in workload name on the CPU reference.
// b.SetBytes is its traffic (Workload.Traffic), so the MB/s column is its
// effective bandwidth. The output is allocated once and reused.
func benchWorkload(b *testing.B, name string) {
	w, err := Builtin(name, benchScale, 1)
	require.NoError(b, err)
	req, err := w.Request()
	require.NoError(b, err)
	p, err := ops.Prepare(req)
	require.NoError(b, err)
	out, err := tensor.New(p.DType, p.Shape)
	require.NoError(b, err)
	be := cpuref.New()
	ctx := context.Background()
	require.NoError(b, be.Execute(ctx, p, out)) // fault the output's pages in
	b.SetBytes(w.Traffic())
	for b.Loop() {
		if err := be.Execute(ctx, p, out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSU1(b *testing.B)       { benchWorkload(b, "SU1") }
func BenchmarkSND5(b *testing.B)      { benchWorkload(b, "SND5") }
func BenchmarkSE(b *testing.B)        { benchWorkload(b, "SE") }
func BenchmarkSESumDup(b *testing.B)  { benchWorkload(b, "SE-sum-dup") }
func BenchmarkSNDSumDup(b *testing.B) { benchWorkload(b, "SND-sum-dup") }
func BenchmarkSS(b *testing.B)        { benchWorkload(b, "SS") }
func BenchmarkSNDMaxI32(b *testing.B) { benchWorkload(b, "SND-max-i32") }
func BenchmarkSND5F16(b *testing.B)   { benchWorkload(b, "SND5-f16") }
func BenchmarkSND5I64(b *testing.B)   { benchWorkload(b, "SND5-i64") }
func BenchmarkSEF16(b *testing.B)     { benchWorkload(b, "SE-f16") }
func BenchmarkSEI64(b *testing.B)     { benchWorkload(b, "SE-i64") }
