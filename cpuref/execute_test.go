package cpuref

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// seqF32 returns a float32 tensor of shape holding 0.5, 1.5, 2.5, ...
func seqF32(shape []int, start float32) *tensor.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = start + float32(i) + 0.5
	}
	return tens(shape, v...)
}

// modIndices returns n indices i*step mod s, shifted into [-s, -1] for
// every third one when neg.
func modIndices(shape []int, s, step int, neg bool) *tensor.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(i * step % s)
		if neg && i%3 == 0 {
			v[i] -= int64(s)
		}
	}
	return idx(shape, v...)
}

// executionCases are requests of every kind big enough to reach the
// parallel paths with tinyGrain.
func executionCases() []struct {
	name string
	req  ops.Request
} {
	no := false
	return []struct {
		name string
		req  ops.Request
	}{
		{"ScatterUpdate-3", ops.Request{Op: "ScatterUpdate-3", Axis: tensor.Scalar(1), Data: seqF32([]int{3, 5, 4}, 0),
			Indices: modIndices([]int{4, 3}, 5, 2, false), Updates: seqF32([]int{3, 4, 3, 4}, 100)}},
		{"ScatterNDUpdate-15 none", ops.Request{Op: "ScatterNDUpdate-15", Data: seqF32([]int{6, 5}, 0),
			Indices: modIndices([]int{40, 1}, 6, 5, true), Updates: seqF32([]int{40, 5}, 100)}},
		{"ScatterNDUpdate-15 sum", ops.Request{Op: "ScatterNDUpdate-15", Reduction: "sum", Data: seqF32([]int{6, 5}, 0),
			Indices: modIndices([]int{40, 2}, 5, 3, true), Updates: seqF32([]int{40}, 100)}},
		{"ScatterElementsUpdate-12 mean", ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "mean", Axis: tensor.Scalar(0),
			Data: seqF32([]int{4, 6}, 0), Indices: modIndices([]int{30, 5}, 4, 7, true), Updates: seqF32([]int{30, 5}, 100)}},
		{"ScatterElementsUpdate-12 max without init", ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "max", UseInitVal: &no, Axis: tensor.Scalar(1),
			Data: seqF32([]int{4, 6}, 0), Indices: modIndices([]int{3, 50}, 6, 7, true), Updates: seqF32([]int{3, 50}, -100)}},
		{"ScatterElements-18 1-D", ops.Request{Op: "ScatterElements-18", Reduction: "mul",
			Data: seqF32([]int{9}, 0), Indices: modIndices([]int{200}, 9, 4, true), Updates: seqF32([]int{200}, -0.25)}},
		{"SliceScatter-15 partial", ops.Request{Op: "SliceScatter-15", Data: seqF32([]int{6, 7}, 0), Updates: seqF32([]int{3, 2}, 100),
			Start: tensor.Ints(-1, 1), Stop: tensor.Ints(0, 5), Step: tensor.Ints(-2, 3)}},
		{"SliceScatter-15 all of data", ops.Request{Op: "SliceScatter-15", Data: seqF32([]int{6, 7}, 0), Updates: seqF32([]int{6, 7}, 100),
			Start: tensor.Ints(-1), Stop: tensor.Ints(math.MinInt64), Step: tensor.Ints(-1), Axes: tensor.Ints(1)}},
		{"ScatterElements-18 strings", ops.Request{Op: "ScatterElements-18", Data: strs("a", "b", "c", "d"),
			Indices: modIndices([]int{30}, 4, 3, true), Updates: strs("0", "1", "2", "3", "4", "5", "6", "7", "8", "9",
				"10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29")}},
	}
}

// The in-place case: out is data itself, or a tensor sharing its storage.
// The result is the same as out of place.
func TestInPlaceExecution(t *testing.T) {
	for _, c := range executionCases() {
		t.Run(c.name, func(t *testing.T) {
			want, err := Run(c.req)
			require.NoError(t, err)
			for _, tb := range testBackends {
				for _, shared := range []bool{false, true} {
					req := c.req
					req.Data = c.req.Data.Clone()
					p, err := ops.Prepare(req)
					require.NoError(t, err)
					out := req.Data
					if shared {
						out = &tensor.Tensor{DType: out.DType, Shape: out.Shape, Data: out.Data, Strings: out.Strings}
					}
					require.NoError(t, tb.b.Execute(context.Background(), p, out))
					assert.True(t, tensor.Equal(want, out), "backend %s, shared %v:\n got  %v\n want %v", tb.name, shared, out, want)
				}
			}
		})
	}
}

// specs/README.md, "Out of range": an index outside its range is an error
// naming the first bad position; nothing is written.
func TestOutOfRangeLeavesOutUntouched(t *testing.T) {
	bigU64 := tensor.MustFromSlice([]int{3, 1}, []uint64{1, math.MaxUint64, 0})
	cases := []struct {
		name string
		req  ops.Request
		msg  string
	}{
		{"ScatterUpdate-3 first of several bad", ops.Request{Op: "ScatterUpdate-3", Axis: tensor.Scalar(0), Data: seqF32([]int{4, 3}, 0),
			Indices: idx([]int{2, 3}, 0, 1, 2, 3, 9, -1), Updates: seqF32([]int{2, 3, 3}, 0)},
			"ScatterUpdate-3: indices[1,1] = 9 is out of range [0, 3] for axis 0 of data"},
		{"ScatterNDUpdate-15 second component", ops.Request{Op: "ScatterNDUpdate-15", Data: seqF32([]int{2, 3, 5}, 0),
			Indices: idx([]int{3, 2}, 0, 0, -2, 2, 1, 7), Updates: seqF32([]int{3, 5}, 0)},
			"ScatterNDUpdate-15: indices[2,1] = 7 is out of range [-3, 2] for axis 1 of data"},
		{"ScatterNDUpdate-15 below -s", ops.Request{Op: "ScatterNDUpdate-15", Data: seqF32([]int{4}, 0),
			Indices: idx([]int{2, 1}, -5, 9), Updates: seqF32([]int{2}, 0)},
			"ScatterNDUpdate-15: indices[0,0] = -5 is out of range [-4, 3] for axis 0 of data"},
		{"ScatterND-18 uint64 above MaxInt64", ops.Request{Op: "ScatterND-18", Data: seqF32([]int{4}, 0),
			Indices: bigU64, Updates: seqF32([]int{3}, 0)},
			"ScatterND-18: indices[1,0] = 18446744073709551615 is out of range [-4, 3] for axis 0 of data"},
		{"ScatterElementsUpdate-12 axis 1", ops.Request{Op: "ScatterElementsUpdate-12", Reduction: "sum", Axis: tensor.Scalar(1), Data: seqF32([]int{2, 3}, 0),
			Indices: idx([]int{2, 2}, 0, 2, -4, 3), Updates: seqF32([]int{2, 2}, 0)},
			"ScatterElementsUpdate-12: indices[1,0] = -4 is out of range [-3, 2] for axis 1 of data"},
		{"ScatterElementsUpdate-3 zero-size axis", ops.Request{Op: "ScatterElementsUpdate-3", Axis: tensor.Scalar(0), Data: seqF32([]int{0, 2}, 0),
			Indices: idx([]int{1, 2}, 0, 0), Updates: seqF32([]int{1, 2}, 0)},
			"ScatterElementsUpdate-3: indices[0,0] = 0 is out of range: axis 0 of data has size 0"},
	}
	// Many positions, the bad ones spread over several tasks: the first in
	// row-major order is reported whichever task finds its own first.
	many := make([]int64, 1000)
	for i := range many {
		many[i] = int64(i % 7)
	}
	many[999], many[700], many[301], many[302] = 70, -1, 8, 9
	cases = append(cases, struct {
		name string
		req  ops.Request
		msg  string
	}{"Scatter-9 first of many bad", ops.Request{Op: "Scatter-9", Data: seqF32([]int{7}, 0),
		Indices: idx([]int{1000}, many...), Updates: seqF32([]int{1000}, 0)},
		"Scatter-9: indices[301] = 8 is out of range [0, 6] for axis 0 of data"})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := ops.Prepare(c.req)
			require.NoError(t, err)
			for _, tb := range testBackends {
				out, err := tensor.New(p.DType, p.Shape)
				require.NoError(t, err)
				for i := range out.Data {
					out.Data[i] = 0x5a
				}
				before := out.Clone()
				clones := cloneAll(inputs(c.req))
				err = tb.b.Execute(context.Background(), p, out)
				require.ErrorIs(t, err, ops.ErrIndexRange, tb.name)
				require.EqualError(t, err, c.msg, tb.name)
				var oe *ops.Error
				require.ErrorAs(t, err, &oe)
				assert.Equal(t, "indices", oe.Input)
				assert.True(t, tensor.Equal(before, out), "backend %s wrote to out", tb.name)
				requireInputsUnchanged(t, c.req, clones)
			}
		})
	}
}

// Execute checks its output tensor and refuses a nil plan.
func TestExecuteChecksItsArguments(t *testing.T) {
	req := executionCases()[0].req
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	b := New()
	require.ErrorIs(t, b.Execute(context.Background(), p, nil), ops.ErrOutput)
	wrong, err := tensor.New(tensor.Float64, p.Shape)
	require.NoError(t, err)
	require.ErrorIs(t, b.Execute(context.Background(), p, wrong), ops.ErrOutput)
	out, err := tensor.New(p.DType, p.Shape)
	require.NoError(t, err)
	require.ErrorIs(t, b.Execute(context.Background(), nil, out), ops.ErrMissingInput)
}

// cancelAt is a context that reports cancellation from the n-th call of
// Done on, so that a test can stop Execute at each of its phases in turn.
type cancelAt struct {
	context.Context
	n, calls atomic.Int64
	closed   chan struct{}
	open     chan struct{}
	fired    atomic.Bool
}

func newCancelAt(n int) *cancelAt {
	c := &cancelAt{Context: context.Background(), closed: make(chan struct{}), open: make(chan struct{})}
	close(c.closed)
	c.n.Store(int64(n))
	return c
}

func (c *cancelAt) Done() <-chan struct{} {
	if c.calls.Add(1) >= c.n.Load() {
		c.fired.Store(true)
		return c.closed
	}
	return c.open
}

func (c *cancelAt) Err() error {
	if c.fired.Load() {
		return context.Canceled
	}
	return nil
}

// Cancellation stops Execute between chunks of work; out then holds its
// previous contents or a copy of data, never a partial scatter, and an
// in-place scatter that has started runs to the end.
func TestContextCancellation(t *testing.T) {
	for _, c := range executionCases() {
		t.Run(c.name, func(t *testing.T) {
			p, err := ops.Prepare(c.req)
			require.NoError(t, err)
			want, err := Run(c.req)
			require.NoError(t, err)
			for _, tb := range testBackends {
				// Already cancelled: nothing happens.
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				out, _ := tensor.New(p.DType, p.Shape)
				before := out.Clone()
				require.ErrorIs(t, tb.b.Execute(ctx, p, out), context.Canceled)
				require.True(t, tensor.Equal(before, out))

				// Stopped at each phase in turn.
				for n := 1; n <= 6; n++ {
					out, _ := tensor.New(p.DType, p.Shape)
					before := out.Clone()
					err := tb.b.Execute(newCancelAt(n), p, out)
					switch {
					case err == nil:
						require.True(t, tensor.Equal(want, out), "%s: stop %d: finished with a wrong result", tb.name, n)
					case errors.Is(err, context.Canceled):
						require.True(t, tensor.Equal(before, out) || tensor.Equal(c.req.Data, out),
							"%s: stop %d: out is neither untouched nor a copy of data: %v", tb.name, n, out)
					default:
						t.Fatalf("%s: stop %d: %v", tb.name, n, err)
					}

					// In place: data is untouched, or the scatter finished.
					inPlace := c.req.Data.Clone()
					err = tb.b.Execute(newCancelAt(n), p, inPlace)
					if err == nil {
						require.True(t, tensor.Equal(want, inPlace), "%s: stop %d in place: wrong result", tb.name, n)
					} else {
						require.ErrorIs(t, err, context.Canceled)
						require.True(t, tensor.Equal(c.req.Data, inPlace), "%s: stop %d in place: data changed", tb.name, n)
					}
				}
			}
		})
	}
}

// A context cancelled from another goroutine while Execute runs.
func TestContextCancelledWhileRunning(t *testing.T) {
	req := ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: seqF32([]int{64}, 0),
		Indices: modIndices([]int{1 << 18}, 64, 7, true), Updates: seqF32([]int{1 << 18}, 0)}
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	want, err := Run(req)
	require.NoError(t, err)
	b := &Backend{Workers: 4, grain: &grain{task: 64, run: 64, piece: 16, decode: 64, copy: 64}}
	for _, delay := range []time.Duration{0, 10 * time.Microsecond, 100 * time.Microsecond, time.Millisecond} {
		ctx, cancel := context.WithCancel(context.Background())
		out, _ := tensor.New(p.DType, p.Shape)
		before := out.Clone()
		go func() {
			time.Sleep(delay)
			cancel()
		}()
		err := b.Execute(ctx, p, out)
		if err == nil {
			require.True(t, tensor.Equal(want, out))
		} else {
			require.ErrorIs(t, err, context.Canceled)
			require.True(t, tensor.Equal(before, out) || tensor.Equal(req.Data, out))
		}
		cancel()
	}
}

// One Backend runs several Execute calls at once.
func TestConcurrentExecutes(t *testing.T) {
	b := &Backend{Workers: 3, grain: tinyGrain}
	var wg sync.WaitGroup
	for _, c := range executionCases() {
		want, err := Run(c.req)
		require.NoError(t, err)
		for range 3 {
			wg.Go(func() {
				got, err := ops.Run(context.Background(), b, c.req)
				assert.NoError(t, err)
				assert.True(t, tensor.Equal(want, got), c.name)
			})
		}
	}
	wg.Wait()
}
