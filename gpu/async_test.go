//go:build cgo

package gpu

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// chainRequests returns n ScatterElements-18 add calls on an int32 [64]
// tensor, call k adding k+1 at positions k and 63-k, and the CPU
// reference's result of running them one after the other.
func chainRequests(t *testing.T, n int) ([]ops.Request, *tensor.Tensor) {
	t.Helper()
	data := tensor.MustFromSlice([]int{64}, make([]int32, 64))
	var reqs []ops.Request
	cur := data
	for k := 0; k < n; k++ {
		req := ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: cur,
			Indices: tensor.MustFromSlice([]int{2}, []int64{int64(k % 64), int64(63 - k%64)}),
			Updates: tensor.MustFromSlice([]int{2}, []int32{int32(k + 1), int32(k + 1)})}
		next, err := ops.Run(context.Background(), cpuref.New(), req)
		require.NoError(t, err)
		reqs = append(reqs, req)
		cur = next
	}
	return reqs, cur
}

// TestSubmissionsInFlight: batches submitted one after the other without
// waiting, each a call on the previous one's output, more of them than
// may be in flight, give the CPU reference's chained result; Submit never
// leaves more than maxInFlight in flight, and waits on no fence until
// then. On unified memory and with staging.
func TestSubmissionsInFlight(t *testing.T) {
	for _, staged := range []bool{false, true} {
		t.Run(fmt.Sprintf("staged=%v", staged), func(t *testing.T) {
			b := openTest(t, Options{NoUnifiedMemory: staged})
			ctx := context.Background()
			const n = 3 * maxInFlight
			reqs, want := chainRequests(t, n)
			acc := upload(t, b, reqs[0].Data)
			var subs []*Submission
			for k, req := range reqs {
				c := Call{Op: req.Op, Reduction: req.Reduction, Data: acc, Out: acc,
					Indices: upload(t, b, req.Indices), Updates: upload(t, b, req.Updates)}
				bt := b.NewBatch()
				require.NoError(t, bt.Add(c))
				before := b.dev.Counters()
				s, err := bt.Submit(ctx)
				require.NoError(t, err)
				if k < maxInFlight {
					assert.Zero(t, b.dev.Counters().Sub(before).Waits, "submission %d waited", k)
				}
				assert.LessOrEqual(t, len(b.inflight), maxInFlight)
				subs = append(subs, s)
			}
			assert.Empty(t, opstest.DiffExact(download(t, acc), want), "the chained result")
			for _, s := range subs {
				assert.True(t, s.Done())
				assert.NoError(t, s.Wait(ctx))
			}
			assert.Empty(t, b.inflight)
		})
	}
}

// TestFailedSubmissionIsReported: a batch whose call 2 of 3 finds a bad
// index, followed by a good batch submitted before anyone waits. The
// failure is never silent: the next Download (of any tensor) returns it
// as an earlier batch's failure, once; the failed batch's Wait returns it
// too, every time; the good batch's Wait returns nil and its call ran on
// what the failed batch left. Without a Wait or a Download, Close returns
// it.
func TestFailedSubmissionIsReported(t *testing.T) {
	for _, staged := range []bool{false, true} {
		t.Run(fmt.Sprintf("staged=%v", staged), func(t *testing.T) {
			b := openTest(t, Options{NoUnifiedMemory: staged})
			ctx := context.Background()
			data := tensor.MustFromSlice([]int{4}, []int32{1, 2, 3, 4})
			good := ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: data,
				Indices: tensor.MustFromSlice([]int{1}, []int64{0}), Updates: tensor.MustFromSlice([]int{1}, []int32{10})}
			bad := good
			bad.Indices = tensor.MustFromSlice([]int{1}, []int64{4})
			_, wantErr := ops.Run(ctx, cpuref.New(), bad)
			require.ErrorIs(t, wantErr, ops.ErrIndexRange)

			c := residentCall(t, b, good, true)
			cb := c
			cb.Indices = upload(t, b, bad.Indices)
			failing := b.NewBatch()
			for _, x := range []Call{c, cb, c} {
				require.NoError(t, failing.Add(x))
			}
			s1, err := failing.Submit(ctx)
			require.NoError(t, err, "Submit does not wait for the outcome")
			later := b.NewBatch()
			require.NoError(t, later.Add(c))
			s2, err := later.Submit(ctx)
			require.NoError(t, err)

			_, err = c.Data.Download(ctx)
			require.ErrorIs(t, err, ops.ErrIndexRange)
			assert.Equal(t, "vulkan: a batch submitted earlier failed: batch call 2 of 3: "+wantErr.Error(), err.Error())
			got := download(t, c.Data) // reported once
			assert.Empty(t, opstest.DiffExact(got, tensor.MustFromSlice([]int{4}, []int32{31, 2, 3, 4})),
				"calls 1 and 3 of the failed batch and the later batch's call ran")
			for range 2 {
				err = s1.Wait(ctx)
				require.ErrorIs(t, err, ops.ErrIndexRange)
				assert.Equal(t, "batch call 2 of 3: "+wantErr.Error(), err.Error())
			}
			assert.NoError(t, s2.Wait(ctx))

			// Waited for: not reported again.
			bt := b.NewBatch()
			require.NoError(t, bt.Add(cb))
			s3, err := bt.Submit(ctx)
			require.NoError(t, err)
			require.ErrorIs(t, s3.Wait(ctx), ops.ErrIndexRange)
			_, err = c.Data.Download(ctx)
			assert.NoError(t, err)

			// Never waited for: Close reports it.
			bt = b.NewBatch()
			require.NoError(t, bt.Add(cb))
			_, err = bt.Submit(ctx)
			require.NoError(t, err)
			err = b.Close()
			require.ErrorIs(t, err, ops.ErrIndexRange)
			assert.Contains(t, err.Error(), "a batch submitted earlier failed: "+wantErr.Error())
		})
	}
}

// TestWaitHonoursContext: a Wait whose context is done returns the
// context's error and leaves the submission in flight; a later Wait
// returns its outcome.
func TestWaitHonoursContext(t *testing.T) {
	b := openTest(t, Options{})
	req := reversedRequest(1 << 20)
	want, err := ops.Run(context.Background(), cpuref.New(), req)
	require.NoError(t, err)
	c := residentCall(t, b, req, true)
	bt := b.NewBatch()
	for range 4 {
		require.NoError(t, bt.Add(c))
	}
	s, err := bt.Submit(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = s.Wait(ctx)
	if err != nil { // the device may have finished already
		require.True(t, errors.Is(err, context.Canceled), "%v", err)
	}
	require.NoError(t, s.Wait(context.Background()))
	assert.True(t, s.Done())
	assert.Empty(t, opstest.DiffExact(download(t, c.Data), want))
	assert.Positive(t, s.Stats().Dispatches)
	var nilSub *Submission
	assert.NoError(t, nilSub.Wait(context.Background()), "an empty batch's Submission")
	assert.True(t, nilSub.Done())
}
