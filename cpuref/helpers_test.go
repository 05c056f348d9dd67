package cpuref

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// tinyGrain makes every split happen on tensors of a few elements, so that
// small test cases take the parallel paths (ranges of o and k, groups by
// target, split runs and copies).
var tinyGrain = &grain{task: 2, run: 2, piece: 1, decode: 3, copy: 8, bigOut: 1 << 40, owned: 4}

// testBackends are the configurations every case runs on; they must agree
// bit for bit.
var testBackends = []struct {
	name string
	b    *Backend
}{
	{"serial", &Backend{Workers: 1}},
	{"default", New()},
	{"3-workers", &Backend{Workers: 3, grain: tinyGrain}},
	{"8-workers", &Backend{Workers: 8, grain: tinyGrain}},
	{"every-update", &Backend{Workers: 2, grain: tinyGrain, keepOverwritten: true}},
	{"grouped", &Backend{Workers: 2, grain: &grain{task: 2, run: 2, piece: 1, decode: 3, copy: 8, bucket: 8}}},
	{"binned", &Backend{Workers: 3, grain: &grain{task: 2, run: 2, piece: 1, decode: 3, copy: 8, bigOut: 1 << 40, owned: 4, binOut: 1, fold: foldForceBinned, bin: 8, binBlock: 1}}},
	{"serial-fold", &Backend{Workers: 3, grain: &grain{task: 2, run: 2, piece: 1, decode: 3, copy: 8, bigOut: 1 << 40, owned: 4, binOut: 1, fold: foldForceSerial}}},
	{"binned-rounds", &Backend{Workers: 3, grain: &grain{task: 2, run: 2, piece: 1, decode: 3, copy: 8, bigOut: 1 << 40, owned: 4, binOut: 1, fold: foldForceBinned, bin: 8, binBlock: 1,
		binRound: 5, binRoundOut: 1 << 40}}},
}

// vec returns a 1-D tensor of vals.
func vec[T tensor.Element](vals ...T) *tensor.Tensor {
	return tensor.MustFromSlice([]int{len(vals)}, vals)
}

// tens returns a tensor of shape holding vals.
func tens[T tensor.Element](shape []int, vals ...T) *tensor.Tensor {
	return tensor.MustFromSlice(shape, vals)
}

// idx returns an int64 index tensor of shape.
func idx(shape []int, vals ...int64) *tensor.Tensor { return tensor.MustFromSlice(shape, vals) }

func strs(vals ...string) *tensor.Tensor {
	t, err := tensor.FromStrings([]int{len(vals)}, vals)
	if err != nil {
		panic(err)
	}
	return t
}

func f16s(vals ...float32) *tensor.Tensor {
	h := make([]tensor.F16, len(vals))
	for i, v := range vals {
		h[i] = tensor.F16From(v)
	}
	return vec(h...)
}

func bf16s(vals ...float32) *tensor.Tensor {
	h := make([]tensor.BF16, len(vals))
	for i, v := range vals {
		h[i] = tensor.BF16From(v)
	}
	return vec(h...)
}

func negZero32() float32 { return float32(math.Copysign(0, -1)) }

func negZero64() float64 { return math.Copysign(0, -1) }

func boolPtr(b bool) *bool { return &b }

// inputs returns the request's tensors.
func inputs(req ops.Request) []*tensor.Tensor {
	var ts []*tensor.Tensor
	for _, t := range []*tensor.Tensor{req.Data, req.Indices, req.Updates, req.Axis, req.Start, req.Stop, req.Step, req.Axes} {
		if t != nil {
			ts = append(ts, t)
		}
	}
	return ts
}

func cloneAll(ts []*tensor.Tensor) []*tensor.Tensor {
	cs := make([]*tensor.Tensor, len(ts))
	for i, t := range ts {
		cs[i] = t.Clone()
	}
	return cs
}

// requireInputsUnchanged checks that no input of req differs from its clone.
func requireInputsUnchanged(t *testing.T, req ops.Request, clones []*tensor.Tensor) {
	t.Helper()
	for i, in := range inputs(req) {
		require.True(t, tensor.Equal(in, clones[i]), "input %d changed: %v, was %v", i, in, clones[i])
	}
}

// runAll runs req on every test backend, checking that the inputs are left
// alone, and returns the results (or the first error).
func runAll(t *testing.T, req ops.Request) ([]*tensor.Tensor, error) {
	t.Helper()
	var outs []*tensor.Tensor
	var firstErr error
	for i, tb := range testBackends {
		clones := cloneAll(inputs(req))
		got, err := ops.Run(context.Background(), tb.b, req)
		requireInputsUnchanged(t, req, clones)
		if i == 0 {
			firstErr = err
		} else if firstErr != nil || err != nil {
			require.Equal(t, firstErr, err, "backend %s", tb.name)
		}
		outs = append(outs, got)
	}
	return outs, firstErr
}

// check runs req on every test backend and requires want, bit for bit.
func check(t *testing.T, req ops.Request, want *tensor.Tensor) {
	t.Helper()
	outs, err := runAll(t, req)
	require.NoError(t, err)
	for i, got := range outs {
		assert.True(t, tensor.Equal(got, want), "backend %s:\n got  %v\n want %v", testBackends[i].name, got, want)
	}
}

// checkErr runs req on every test backend and requires an error wrapping
// sentinel whose text is msg.
func checkErr(t *testing.T, req ops.Request, sentinel error, msg string) {
	t.Helper()
	_, err := runAll(t, req)
	require.ErrorIs(t, err, sentinel)
	require.EqualError(t, err, msg)
}
