//go:build cgo

package gpu

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/internal/callerdev"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// BenchmarkEmbeddingGradient runs one embedding-gradient batch (ScatterND-18
// add of 4096 rows of 64 float32 into a [50000, 64] table, 100 calls in
// place) three ways in each iteration (in a rotated order), on the same
// physical device:
// recorded into the program's command buffer on its own buffers
// (OpenExternal, WrapBuffer, Record); on the Backend's own resident
// tensors (Open, Upload, Submit); and through the host, as a program
// without OpenExternal must (its table, indices and updates read from its
// buffers, written into resident tensors, Run, the table read back and
// written into its buffer, per call). It reports each way's median time
// per call and the payload bytes per call that cross the host.
//
//	go test ./gpu -run '^$' -bench EmbeddingGradient -benchtime 5x
func BenchmarkEmbeddingGradient(b *testing.B) {
	const rows, width, tableRows, calls = 4096, 64, 50000, 100
	ctx := context.Background()
	rng := rand.New(rand.NewSource(7))
	table, err := tensor.New(tensor.Float32, []int{tableRows, width})
	require.NoError(b, err)
	idx, err := tensor.New(tensor.Int64, []int{rows, 1})
	require.NoError(b, err)
	upd, err := tensor.New(tensor.Float32, []int{rows, width})
	require.NoError(b, err)
	for i := 0; i < rows; i++ {
		binary.LittleEndian.PutUint64(idx.Data[8*i:], uint64(rng.Intn(tableRows)))
	}
	for i := 0; i < rows*width; i++ {
		binary.LittleEndian.PutUint32(upd.Data[4*i:], math.Float32bits(rng.Float32()))
	}
	call := func(data, indices, updates *Tensor) Call {
		return Call{Op: "ScatterND-18", Reduction: "add", Data: data, Out: data, Indices: indices, Updates: updates}
	}

	// The program's device and buffers, adopted.
	d, err := callerdev.Open(callerdev.Options{Features: Requirements().Features})
	require.NoError(b, err)
	defer d.Close()
	ext, err := OpenExternal(externalOf(d), Options{})
	require.NoError(b, err)
	defer ext.Close()
	bufs := make([]*callerdev.Buffer, 3)
	wrapped := make([]*Tensor, 3)
	for i, x := range []*tensor.Tensor{table, idx, upd} {
		bufs[i], err = d.NewBuffer(uint64(len(x.Data)), WrapUsage)
		require.NoError(b, err)
		defer bufs[i].Close()
		copy(bufs[i].Bytes, x.Data)
		wrapped[i], err = ext.WrapBuffer(bufs[i].Handle64(), 0, uint64(len(x.Data)), x.DType, x.Shape, WrapUsage)
		require.NoError(b, err)
	}
	cmd, err := d.NewCommands()
	require.NoError(b, err)
	defer cmd.Close()
	recorded := func() {
		bt := ext.NewBatch()
		for k := 0; k < calls; k++ {
			require.NoError(b, bt.Add(call(wrapped[0], wrapped[1], wrapped[2])))
		}
		require.NoError(b, cmd.Begin())
		cmd.BarrierBefore()
		r, err := bt.Record(ctx, cmd.Pointer(), RecordOptions{})
		require.NoError(b, err)
		cmd.BarrierAfter()
		require.NoError(b, cmd.End())
		require.NoError(b, cmd.SubmitWait())
		require.NoError(b, r.Result(ctx))
		require.NoError(b, r.Release())
	}

	// The Backend's own device and resident tensors.
	own, err := Open(Options{})
	require.NoError(b, err)
	defer own.Close()
	res := make([]*Tensor, 3)
	for i, x := range []*tensor.Tensor{table, idx, upd} {
		res[i], err = own.Upload(ctx, x)
		require.NoError(b, err)
	}
	resident := func() {
		bt := own.NewBatch()
		for k := 0; k < calls; k++ {
			require.NoError(b, bt.Add(call(res[0], res[1], res[2])))
		}
		s, err := bt.Submit(ctx)
		require.NoError(b, err)
		require.NoError(b, s.Wait(ctx))
	}

	// Through the host: the program's buffers copied into host memory,
	// into resident tensors, and the table back, every call.
	hostT := []*tensor.Tensor{table.Clone(), idx.Clone(), upd.Clone()}
	var hostBytes uint64
	hostCopy := func() {
		hostBytes = 0
		for k := 0; k < calls; k++ {
			for i, h := range hostT {
				copy(h.Data, bufs[i].Bytes) // download from the program's device
				require.NoError(b, res[i].Write(ctx, h))
				hostBytes += 2 * uint64(len(h.Data))
			}
			require.NoError(b, own.Run(ctx, call(res[0], res[1], res[2])))
			require.NoError(b, res[0].Read(ctx, hostT[0]))
			copy(bufs[0].Bytes, hostT[0].Data) // upload into the program's device
			hostBytes += 2 * uint64(len(hostT[0].Data))
		}
	}

	recorded() // compile the pipelines of both devices first
	resident()
	var tRec, tRes, tHost []time.Duration
	timed := func(f func()) time.Duration {
		t0 := time.Now()
		f()
		return time.Since(t0) / calls
	}
	// Each iteration runs the three ways in a rotated order, so that none
	// always follows the host copy's traffic through the caches.
	ways := []struct {
		run func()
		ts  *[]time.Duration
	}{{recorded, &tRec}, {resident, &tRes}, {hostCopy, &tHost}}
	for i := 0; b.Loop(); i++ {
		for k := range ways {
			w := ways[(i+k)%len(ways)]
			*w.ts = append(*w.ts, timed(w.run))
		}
	}
	median := func(ts []time.Duration) float64 {
		s := slices.Clone(ts)
		slices.Sort(s)
		return float64(s[len(s)/2].Nanoseconds())
	}
	b.ReportMetric(median(tRec), "recorded-ns/call")
	b.ReportMetric(median(tRes), "resident-ns/call")
	b.ReportMetric(median(tHost), "hostcopy-ns/call")
	b.ReportMetric(median(tRec)/median(tRes), "recorded/resident")
	b.ReportMetric(0, "recorded-hostB/call")
	b.ReportMetric(0, "resident-hostB/call")
	b.ReportMetric(float64(hostBytes)/calls, "hostcopy-hostB/call")
}
