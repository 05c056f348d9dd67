//go:build cgo

package gpu

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/internal/knobs"
	"github.com/gpuscatter/gpuscatter/internal/testdevice"
	"github.com/gpuscatter/gpuscatter/internal/vkfault"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// deviceFault is a failure of the device injected at one Vulkan call.
type deviceFault struct {
	name   string
	call   vkfault.Call
	result int32
	// want is the sentinel the caller gets; lost: the device is lost
	// from then on.
	want error
	lost bool
	// says is a text the error contains: the failing call, or what the
	// timeout says.
	says string
}

// faultTimeout is the device timeout of the fault tests: a wait that
// never ends fails after it.
const faultTimeout = 300 * time.Millisecond

// deviceFaults are the failures TestFaultMatrix injects: each way a
// device fails mid-work, at each call where it can.
var deviceFaults = []deviceFault{
	{"pipeline/out-of-host-memory", vkfault.Pipeline, vkfault.OutOfHostMemory, ops.ErrOutOfMemory, false, "vkCreateComputePipelines: VK_ERROR_OUT_OF_HOST_MEMORY"},
	{"allocate/out-of-device-memory", vkfault.Allocate, vkfault.OutOfDeviceMemory, ops.ErrOutOfMemory, false, "vkAllocateMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY"},
	{"bind/out-of-device-memory", vkfault.Bind, vkfault.OutOfDeviceMemory, ops.ErrOutOfMemory, false, "vkBindBufferMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY"},
	{"map/out-of-host-memory", vkfault.Map, vkfault.OutOfHostMemory, ops.ErrOutOfMemory, false, "vkMapMemory: VK_ERROR_OUT_OF_HOST_MEMORY"},
	{"allocate/device-lost", vkfault.Allocate, vkfault.DeviceLost, ops.ErrDeviceLost, true, "vkAllocateMemory: VK_ERROR_DEVICE_LOST"},
	{"submit/device-lost", vkfault.Submit, vkfault.DeviceLost, ops.ErrDeviceLost, true, "vkQueueSubmit: VK_ERROR_DEVICE_LOST"},
	{"submit/out-of-device-memory", vkfault.Submit, vkfault.OutOfDeviceMemory, ops.ErrOutOfMemory, false, "vkQueueSubmit: VK_ERROR_OUT_OF_DEVICE_MEMORY"},
	{"wait/device-lost", vkfault.Wait, vkfault.DeviceLost, ops.ErrDeviceLost, true, "vkWaitForFences: VK_ERROR_DEVICE_LOST"},
	{"wait/never-signals", vkfault.Wait, vkfault.Timeout, ops.ErrDeviceLost, true, "the device stopped answering"},
	// vulkan-go panics when it cannot allocate the C copy of a call's
	// create info (vkCreateShaderModule beside vkCreateComputePipelines,
	// vkAllocateMemory): the call fails as out of memory, and what was
	// held at that point (the pipeline being created, which later
	// requests and Close wait for; the objects made so far; the count of
	// allocations) is released. Submissions and waits pass no converted
	// struct, so they never meet it.
	{"pipeline/binding-alloc", vkfault.Pipeline, vkfault.BindingAlloc, ops.ErrOutOfMemory, false, "host memory for a Vulkan call"},
	{"allocate/binding-alloc", vkfault.Allocate, vkfault.BindingAlloc, ops.ErrOutOfMemory, false, "host memory for a Vulkan call"},
}

// faultOp is an operation of the backend that a fault may hit: prepare
// sets it up on b (uploads, which the fault does not aim at) and returns
// the operation. The operation returns its error and, when it succeeds,
// checks its result against the CPU reference.
type faultOp struct {
	name  string
	opts  Options
	knobs knobs.Knobs
	// tune sets test fields of b.
	tune func(b *Backend)
	// batchCall, when not 0, aims the fault at the calls that batch call
	// batchCall (from 1) makes while its buffers and pipelines are
	// acquired.
	batchCall int
	// op names the operator, which the error names.
	op string
	// resident: the calls are on resident tensors, so a lost device's
	// error says they are lost too. closes: the operation ends with
	// Close.
	resident, closes bool
	prepare          func(t *testing.T, b *Backend) func(ctx context.Context, t *testing.T) error
}

// executeOp is an Execute of req on host tensors: the inputs stay as they
// were, and a result is the CPU reference's.
func executeOp(req ops.Request) func(t *testing.T, b *Backend) func(ctx context.Context, t *testing.T) error {
	return func(t *testing.T, b *Backend) func(ctx context.Context, t *testing.T) error {
		want, err := ops.Run(context.Background(), cpuref.New(), req)
		require.NoError(t, err)
		inputs := []*tensor.Tensor{req.Data, req.Indices, req.Updates}
		var saved []*tensor.Tensor
		for _, in := range inputs {
			saved = append(saved, in.Clone())
		}
		return func(ctx context.Context, t *testing.T) error {
			got, err := ops.Run(ctx, b, req)
			for i, in := range inputs {
				assert.True(t, opstest.Same(in, saved[i]), "input %d of %s changed", i, req.Op)
			}
			if err == nil {
				assert.Empty(t, opstest.DiffExact(got, want))
			}
			return err
		}
	}
}

// dupRequest is a ScatterElements call of op and reduction on n elements
// of dt taking 4n updates, every element targeted four times.
func dupRequest(op, reduction string, dt tensor.DType, n int) ops.Request {
	data, _ := tensor.New(dt, []int{n})
	upd, _ := tensor.New(dt, []int{4 * n})
	idx, _ := tensor.New(tensor.Int64, []int{4 * n})
	for i := range 4 * n {
		tensor.View[int64](idx)[i] = int64((i * 7919) % n)
		switch dt {
		case tensor.Int32:
			tensor.View[int32](upd)[i] = int32(i%13 - 6)
		case tensor.Float32:
			tensor.View[float32](upd)[i] = float32(i%13)*0.25 - 1
		}
	}
	return ops.Request{Op: op, Reduction: reduction, Data: data, Indices: idx, Updates: upd}
}

// faultOps are the operations TestFaultMatrix runs: Execute of each path
// kind, a Run on a resident tensor, a batch of 100 calls hit at calls 1, 50
// and 100, a Close while a batch is in flight, and an asynchronous Submit
// waited for on another goroutine.
func faultOps() []faultOp {
	batch := func(k int) faultOp {
		return faultOp{name: fmt.Sprintf("batch-of-100/call-%d", k), batchCall: k, op: "ScatterElements-18", resident: true,
			prepare: func(t *testing.T, b *Backend) func(ctx context.Context, t *testing.T) error {
				reqs, want := chainRequests(t, 100)
				acc := upload(t, b, reqs[0].Data)
				bt := b.NewBatch()
				for _, req := range reqs {
					require.NoError(t, bt.Add(Call{Op: req.Op, Reduction: req.Reduction, Data: acc, Out: acc,
						Indices: upload(t, b, req.Indices), Updates: upload(t, b, req.Updates)}))
				}
				return func(ctx context.Context, t *testing.T) error {
					s, err := bt.Submit(ctx)
					if err == nil {
						err = s.Wait(ctx)
					}
					if err == nil {
						assert.Empty(t, opstest.DiffExact(download(t, acc), want))
					} else if k > 0 && !strings.Contains(err.Error(), "stopped answering") && !strings.Contains(err.Error(), "vkQueueSubmit") &&
						!strings.Contains(err.Error(), "vkWaitForFences") {
						assert.Contains(t, err.Error(), fmt.Sprintf("batch call %d of 100: ", k))
					}
					return err
				}
			}}
	}
	return []faultOp{
		{name: "execute/data-movement", op: "ScatterND-18",
			prepare: executeOp(ops.Request{Op: "ScatterND-18", Data: tensor.MustFromSlice([]int{6, 2}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}),
				Indices: tensor.MustFromSlice([]int{2, 1}, []int64{4, -1}),
				Updates: tensor.MustFromSlice([]int{2, 2}, []float32{-1, -2, -3, -4})})},
		{name: "execute/atomics", op: "ScatterElements-18",
			prepare: executeOp(dupRequest("ScatterElements-18", "add", tensor.Int32, 4096))},
		{name: "execute/ordered-fold", op: "ScatterElements-18", opts: Options{Deterministic: true},
			prepare: executeOp(dupRequest("ScatterElements-18", "add", tensor.Float32, 4096))},
		{name: "execute/owner-words", op: "ScatterElements-11", tune: func(b *Backend) { b.noTable = true },
			prepare: executeOp(dupRequest("ScatterElements-11", "", tensor.Float32, 4096))},
		{name: "execute/streamed-output", op: "ScatterElements-18", opts: Options{MaxPoolBytes: -1},
			knobs: knobs.Knobs{ChunkBytes: testChunk}, tune: func(b *Backend) { b.streamMin = testChunk },
			prepare: executeOp(dupRequest("ScatterElements-18", "max", tensor.Int32, 4096))},
		{name: "run/resident-in-place", op: "ScatterElements-18", resident: true,
			prepare: func(t *testing.T, b *Backend) func(ctx context.Context, t *testing.T) error {
				req := dupRequest("ScatterElements-18", "add", tensor.Int32, 1024)
				want, err := ops.Run(context.Background(), cpuref.New(), req)
				require.NoError(t, err)
				c := residentCall(t, b, req, true)
				return func(ctx context.Context, t *testing.T) error {
					err := b.Run(ctx, c)
					if err == nil {
						assert.Empty(t, opstest.DiffExact(download(t, c.Out), want))
					}
					return err
				}
			}},
		batch(1), batch(50), batch(100),
		{name: "close/batch-in-flight", op: "ScatterElements-18", resident: true, closes: true,
			prepare: func(t *testing.T, b *Backend) func(ctx context.Context, t *testing.T) error {
				req := dupRequest("ScatterElements-18", "min", tensor.Int32, 1024)
				c := residentCall(t, b, req, false)
				return func(ctx context.Context, t *testing.T) error {
					bt := b.NewBatch()
					require.NoError(t, bt.Add(c))
					_, err := bt.Submit(ctx)
					return errors.Join(err, b.Close())
				}
			}},
		{name: "submit/wait-on-another-goroutine", op: "ScatterElements-18", resident: true,
			prepare: func(t *testing.T, b *Backend) func(ctx context.Context, t *testing.T) error {
				req := dupRequest("ScatterElements-18", "mul", tensor.Int32, 1024)
				want, err := ops.Run(context.Background(), cpuref.New(), req)
				require.NoError(t, err)
				c := residentCall(t, b, req, false)
				return func(ctx context.Context, t *testing.T) error {
					bt := b.NewBatch()
					require.NoError(t, bt.Add(c))
					s, err := bt.Submit(ctx)
					if err != nil {
						return err
					}
					errc := make(chan error)
					go func() { errc <- s.Wait(ctx) }()
					err = <-errc
					if err == nil {
						assert.Empty(t, opstest.DiffExact(download(t, c.Out), want))
					}
					return err
				}
			}},
	}
}

// standardCall is the call a test makes on a backend after a fault: a
// small Execute whose result is the CPU reference's.
func standardCall(ctx context.Context, t *testing.T, b *Backend) error {
	t.Helper()
	req := ops.Request{Op: "ScatterElements-18", Reduction: "add",
		Data:    tensor.MustFromSlice([]int{4}, []int32{1, 2, 3, 4}),
		Indices: tensor.MustFromSlice([]int{3}, []int64{0, 3, 0}), Updates: tensor.MustFromSlice([]int{3}, []int32{10, 20, 30})}
	got, err := ops.Run(ctx, b, req)
	if err == nil {
		assert.Empty(t, opstest.DiffExact(got, tensor.MustFromSlice([]int{4}, []int32{41, 2, 3, 24})))
	}
	return err
}

// openFaulty opens a backend for op whose device injects plan, with
// validation, as openTest does, but leaves Close to the caller.
func openFaulty(t *testing.T, op faultOp, plan *vkfault.Plan) *Backend {
	t.Helper()
	opts := op.opts
	opts.Validation = true
	opts.NoUnifiedMemory = testdevice.Staged(t, opts.NoUnifiedMemory)
	opts.PipelineCacheDir = "off"
	opts.DeviceTimeout = faultTimeout
	k := op.knobs
	k.Faults = plan
	b, err := open(opts, k)
	require.NoError(t, err, "no usable Vulkan device")
	if op.tune != nil {
		op.tune(b)
	}
	return b
}

// settledGoroutines waits briefly for the goroutine count to fall to at
// most n and returns it.
func settledGoroutines(n int) int {
	got := runtime.NumGoroutine()
	for deadline := time.Now().Add(3 * time.Second); got > n && time.Now().Before(deadline); got = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	return got
}

// aim returns the count of calls of kind c that the fault fails, counted
// from the end of prepare: the first one for most operations; for a batch
// call, the first the call makes, found by running the same batch with no
// fault (which also checks its result).
func aim(t *testing.T, op faultOp, c vkfault.Call) (uint64, bool) {
	if op.batchCall == 0 || c == vkfault.Submit || c == vkfault.Wait {
		return 1, true // the first from now on; a batch is one submission
	}
	plan := &vkfault.Plan{Call: c}
	b := openFaulty(t, op, plan)
	defer closeAndCheck(t, b)
	var at []uint64
	b.onBuild = func(k int) { at = append(at, plan.Count(c)) }
	run := op.prepare(t, b)
	base := plan.Count(c)
	require.NoError(t, run(context.Background(), t))
	require.Len(t, at, 101)
	if at[op.batchCall] == at[op.batchCall-1] {
		return 0, false // call k makes no such call
	}
	return at[op.batchCall-1] - base + 1, true
}

// TestFaultMatrix injects each way a device fails (deviceFaults) into each
// operation (faultOps) on the real backend, one subtest per cell, and
// checks what the caller gets: an error matching ops.ErrDeviceLost or
// ops.ErrOutOfMemory that names the failed call; the host inputs
// unchanged; after a lost device every later call fails at once with
// ops.ErrDeviceLost, after running out of memory the next call computes
// correctly; Close returns, leaving no Vulkan object alive and the
// validation layer silent; no goroutine left behind; and a new backend
// computes correctly. A cell whose operation makes no call of the fault's
// kind (a batch's call 50 compiles no pipeline) is listed, not run.
func TestFaultMatrix(t *testing.T) {
	var notApplicable []string
	for _, op := range faultOps() {
		for _, f := range deviceFaults {
			name := op.name + "/" + f.name
			if op.batchCall > 1 && (f.call == vkfault.Submit || f.call == vkfault.Wait) {
				continue // one submission: batch-of-100/call-1 covers it
			}
			t.Run(name, func(t *testing.T) {
				nth, ok := aim(t, op, f.call)
				if !ok {
					notApplicable = append(notApplicable, name)
					return
				}
				goroutines := runtime.NumGoroutine()
				plan := &vkfault.Plan{Call: f.call}
				b := openFaulty(t, op, plan)
				run := op.prepare(t, b)
				plan.Arm(nth, f.result)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				err := run(ctx, t)
				if !plan.Fired() {
					require.NoError(t, err)
					closeAndCheck(t, b)
					notApplicable = append(notApplicable, name)
					return
				}
				require.Error(t, err, "%v", plan)
				require.NoError(t, ctx.Err(), "the call returned only when its context ended")
				assert.ErrorIs(t, err, f.want)
				assert.Contains(t, err.Error(), f.says)
				assert.Contains(t, err.Error(), op.op, "the error names the operator")
				t.Logf("%s: %v", name, err)
				if op.resident && f.lost {
					assert.Contains(t, err.Error(), "; "+ErrResidentLost.Error())
					assert.ErrorIs(t, err, ErrResidentLost)
				}

				// The next call: at once ErrDeviceLost on a lost device;
				// correct after running out of memory.
				start := time.Now()
				err = standardCall(ctx, t, b)
				if op.closes {
					assert.ErrorIs(t, err, ErrClosed, "a call after Close")
				} else if f.lost {
					assert.ErrorIs(t, err, ops.ErrDeviceLost, "a later call on a lost device")
					assert.Less(t, time.Since(start), faultTimeout, "a later call on a lost device waits")
					_, err = b.Upload(ctx, tensor.MustFromSlice([]int{1}, []int32{1}))
					assert.ErrorIs(t, err, ops.ErrDeviceLost, "an upload to a lost device")
				} else {
					assert.NoError(t, err, "the call after an allocation failure")
				}

				err = b.Close()
				if f.lost && !op.closes {
					if err != nil {
						assert.ErrorIs(t, err, ops.ErrDeviceLost)
					}
				} else {
					assert.NoError(t, err)
				}
				assert.Empty(t, b.ValidationMessages(), "validation messages")
				assert.Empty(t, b.device().LiveObjects(), "Vulkan objects alive after Close")
				assert.LessOrEqual(t, settledGoroutines(goroutines), goroutines, "goroutines left behind")

				nb := openTest(t, Options{})
				assert.NoError(t, standardCall(ctx, t, nb), "a new backend after the fault")
			})
		}
	}
	t.Logf("not applicable (the operation makes no such call): %s", strings.Join(notApplicable, ", "))
}
