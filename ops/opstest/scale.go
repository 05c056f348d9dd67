package opstest

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// The scale suite runs requests whose chains are long: many rows per
// column (ScatterElements along an axis), many updates per element, index
// tuples of many components. A backend that gives each invocation or
// thread a chain to walk must split it somewhere; these requests sit on
// and around every such split (2^14, the GPU kernels' segment; 2^16, where
// a software Vulkan driver stops long shader loops) and far beyond, so
// that an off-by-one at an edge or a dropped tail shows.

// ScaleSize says how much of the scale suite runs.
type ScaleSize int

// The sizes.
const (
	// ScaleQuick runs the edges of 2^16 only, on a few reductions and
	// dtypes: what `gpuscatter check --quick` and CI afford.
	ScaleQuick ScaleSize = iota
	// ScaleDefault adds the edges of 2^14 and a chain far beyond both,
	// every reduction, and more dtypes.
	ScaleDefault
	// ScaleFull adds a chain of 2^20 + 3.
	ScaleFull
)

// ScaleEdges returns the chain lengths a size covers.
func ScaleEdges(size ScaleSize) []int {
	edges := []int{1<<16 - 1, 1 << 16, 1<<16 + 1}
	if size >= ScaleDefault {
		edges = append([]int{1<<14 - 1, 1 << 14, 1<<14 + 1}, edges...)
		edges = append(edges, 3<<16+5)
	}
	if size >= ScaleFull {
		edges = append(edges, 1<<20+3)
	}
	return edges
}

// ScaleCase is one request of the scale suite.
type ScaleCase struct {
	// Name says what the request stretches, e.g.
	// "rows/ScatterElements-18/add/float32/65537".
	Name string
	Req  ops.Request
	// Err, when not nil, is the sentinel the request must fail with (in
	// ops.Prepare, for every backend).
	Err error
	// NaN: the updates hold NaNs of both signs and with payloads, so that
	// exact results (and min and max, always) are compared with their NaN
	// bits (DiffExact).
	NaN bool
}

// ScaleCases returns the requests of the scale suite at size, built from
// seed:
//   - rows per column: ScatterElements-18 along axis 0 of a [n, 3] tensor,
//     every column's n updates landing on random rows (so duplicates fold,
//     or the last one in index order wins), reduction none and each;
//   - updates per element: n updates into the 4 elements of a vector
//     (ScatterElementsUpdate-12, every reduction, use_init_val both ways)
//     or the 2 rows of a [2, 3] matrix (ScatterNDUpdate-15);
//   - components per tuple: ScatterND-18 and ScatterElements-18 on data
//     of rank ops.MaxRank, which run, and of one more, which every backend
//     refuses;
//   - NaN signs: float16, bfloat16, float32 and float64 sum, sub, prod,
//     min and max whose updates hold NaNs of both signs (quiet and
//     signalling), many on one target, plus infinities of both signs that
//     create NaNs.
func ScaleCases(size ScaleSize, seed int64) []ScaleCase {
	rng := rand.New(rand.NewSource(seed))
	var cases []ScaleCase
	add := func(name string, req ops.Request) {
		cases = append(cases, ScaleCase{Name: name, Req: req})
	}
	no := false
	type red struct {
		op, red string
		dt      tensor.DType
		useInit *bool
	}
	rows := []red{{"ScatterElements-18", "none", tensor.Float32, nil}, {"ScatterElements-18", "add", tensor.Float32, nil},
		{"ScatterElementsUpdate-12", "mean", tensor.Float32, &no}, {"ScatterElements-18", "max", tensor.Int32, nil}}
	perElem := []red{{"ScatterElementsUpdate-12", "sum", tensor.Float32, nil}, {"ScatterNDUpdate-15", "sum", tensor.Float32, nil},
		{"ScatterElementsUpdate-12", "min", tensor.Int32, nil}, {"ScatterElementsUpdate-12", "none", tensor.Int64, nil}}
	if size >= ScaleDefault {
		rows = append(rows, red{"ScatterElements-18", "mul", tensor.Float64, nil}, red{"ScatterElements-18", "min", tensor.Float16, nil},
			red{"ScatterElementsUpdate-12", "mean", tensor.Int16, nil}, red{"ScatterElements-18", "none", tensor.Uint8, nil})
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float16, tensor.BFloat16, tensor.Int32, tensor.Uint8, tensor.Int64, tensor.Float64, tensor.Bool} {
			for _, r := range FoldNames("ScatterElementsUpdate-12", dt) {
				perElem = append(perElem, red{"ScatterElementsUpdate-12", r, dt, nil})
			}
			perElem = append(perElem, red{"ScatterElementsUpdate-12", "sum", dt, &no}, red{"ScatterNDUpdate-15", "sub", dt, nil})
		}
	}
	for _, n := range ScaleEdges(size) {
		for _, c := range rows {
			add(fmt.Sprintf("rows/%s/%s/%v/%d", c.op, c.red, c.dt, n), columnsRequest(rng, c.op, c.dt, c.red, n, 3, c.useInit))
		}
		for _, c := range perElem {
			targets := 4
			if strings.HasPrefix(c.op, "ScatterND") {
				targets = 2
			}
			add(fmt.Sprintf("updates/%s/%s/%v/%d", c.op, c.red, c.dt, n), oneTargetRequest(rng, c.op, c.dt, c.red, targets, n, c.useInit))
		}
	}
	cases = append(cases, tupleCases(rng)...)
	for _, dt := range []tensor.DType{tensor.Float16, tensor.BFloat16, tensor.Float32, tensor.Float64} {
		for _, r := range []string{"sub", "sum", "prod", "min", "max"} {
			n := 4096
			if size >= ScaleDefault {
				n = 1<<16 + 1
			}
			req := ContentionRequest(rng, "ScatterNDUpdate-15", dt, r, 2, n/2, nil)
			spoilNaN(rng, req)
			cases = append(cases, ScaleCase{Name: fmt.Sprintf("nan/ScatterNDUpdate-15/%s/%v/%d", r, dt, n), Req: req, NaN: true})
		}
	}
	return cases
}

// oneTargetRequest is ContentionRequest with all n updates on target 0,
// addressed as 0 or as -targets.
func oneTargetRequest(rng *rand.Rand, op string, dt tensor.DType, red string, targets, n int, useInit *bool) ops.Request {
	req := ContentionRequest(rng, op, dt, red, n, 1, useInit)
	req.Data.Data = req.Data.Data[:targets*len(req.Data.Data)/n]
	req.Data.Shape = append([]int{targets}, req.Data.Shape[1:]...)
	iv := tensor.View[int64](req.Indices)
	for i := range iv {
		iv[i] = 0
		if rng.Intn(3) == 0 {
			iv[i] = -int64(targets)
		}
	}
	if red == "none" {
		req.Reduction = ""
	}
	return req
}

// columnsRequest builds op (an Element operator, axis 0) on data of shape
// [rows, cols] whose every column receives rows updates on random rows.
func columnsRequest(rng *rand.Rand, op string, dt tensor.DType, red string, rows, cols int, useInit *bool) ops.Request {
	req := ContentionRequest(rng, op, dt, red, rows*cols, 1, useInit)
	shape := []int{rows, cols}
	req.Data.Shape, req.Updates.Shape, req.Indices.Shape = shape, shape, shape
	iv := tensor.View[int64](req.Indices)
	for i := range iv {
		iv[i] = int64(rng.Intn(rows))
		if rng.Intn(3) == 0 && op != "ScatterElements-9" {
			iv[i] -= int64(rows) // negative indices count from the end
		}
	}
	if red == "none" {
		req.Reduction = ""
	}
	return req
}

// tupleCases returns the requests of data rank ops.MaxRank, which run,
// and of ops.MaxRank+1, which fail with ops.ErrShape.
func tupleCases(rng *rand.Rand) []ScaleCase {
	var out []ScaleCase
	for _, rank := range []int{ops.MaxRank, ops.MaxRank + 1} {
		shape := make([]int, rank)
		for i := range shape {
			shape[i] = 1
		}
		shape[0], shape[rank/2], shape[rank-1] = 3, 2, 4
		var err error
		if rank > ops.MaxRank {
			err = ops.ErrShape
		}
		// ScatterND-18: tuples of rank-1 components, each update a row of 4.
		data := randTensor(rng, tensor.Float32, shape)
		idx, _ := tensor.New(tensor.Int64, []int{5, rank - 1})
		iv := tensor.View[int64](idx)
		for t := 0; t < 5; t++ {
			for c := 0; c < rank-1; c++ {
				iv[t*(rank-1)+c] = int64(rng.Intn(shape[c]))
			}
		}
		upd := randTensor(rng, tensor.Float32, []int{5, 4})
		out = append(out, ScaleCase{Name: fmt.Sprintf("tuple/ScatterND-18/add/rank%d", rank), Err: err,
			Req: ops.Request{Op: "ScatterND-18", Data: data, Indices: idx, Updates: upd, Reduction: "add"}})
		// ScatterElements-18 along the middle axis.
		ishape := append([]int(nil), shape...)
		ishape[rank/2] = 5
		eidx, _ := tensor.New(tensor.Int32, ishape)
		ev := tensor.View[int32](eidx)
		for i := range ev {
			ev[i] = int32(rng.Intn(2))
		}
		out = append(out, ScaleCase{Name: fmt.Sprintf("tuple/ScatterElements-18/none/rank%d", rank), Err: err,
			Req: ops.Request{Op: "ScatterElements-18", Data: randTensor(rng, tensor.Uint8, shape), Indices: eidx,
				Updates: randTensor(rng, tensor.Uint8, ishape), Axis: tensor.Scalar(int64(rank / 2))}})
	}
	return out
}

// spoilNaN puts NaNs into one update element in seven: quiet and
// signalling, positive and negative, with payloads; and infinities of
// both signs into one in eleven, whose sums and products create NaNs.
func spoilNaN(rng *rand.Rand, req ops.Request) {
	u := req.Updates
	bits := u.DType.Size() * 8
	mant := map[int]int{16: 10, 32: 23, 64: 52}[bits]
	if u.DType == tensor.BFloat16 {
		mant = 7
	}
	exp := uint64(1)<<(bits-1) - uint64(1)<<mant // all exponent bits
	for i := 0; i < u.Len(); i++ {
		var v uint64
		switch {
		case rng.Intn(7) == 0:
			payload := uint64(rng.Int63n(int64(1)<<mant-1)) + 1 // never 0: that would be an infinity
			v = exp | payload
		case rng.Intn(11) == 0:
			v = exp
		default:
			continue
		}
		if rng.Intn(2) == 0 {
			v |= 1 << (bits - 1)
		}
		for k := 0; k < bits/8; k++ {
			u.Data[i*bits/8+k] = byte(v >> (8 * k))
		}
	}
}

// Scale runs cases on b and through ref (Naive, or ops.Run on the CPU
// reference) and requires the same result: bit for bit, NaNs included in
// the NaN cases, where exact reports that b promised the reference's bits
// for the plan it just ran (always, for a backend that folds in index
// order); else equal for integers and bool, bit for bit for min and max
// (NaNs included: DiffFor), and within the bound of CheckReduction for
// float sum, sub, prod and mean. Requests with Err must fail with it, naming the limit.
func Scale(t T, b ops.Backend, ref func(ops.Request) (*tensor.Tensor, error), cases []ScaleCase, exact func(p *ops.Plan) bool) {
	t.Helper()
	ctx := context.Background()
	for _, c := range cases {
		if !BeginCase(t, c.Req) {
			continue
		}
		p, err := ops.Prepare(c.Req)
		if c.Err != nil {
			if !errors.Is(err, c.Err) {
				t.Errorf("%s: Prepare gave %v, want an error wrapping %q", c.Name, err, c.Err)
			} else if !strings.Contains(err.Error(), fmt.Sprint(ops.MaxRank)) {
				t.Errorf("%s: %q does not name the limit %d", c.Name, err, ops.MaxRank)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		want, err := ref(c.Req)
		if err != nil {
			t.Fatalf("%s: reference: %v", c.Name, err)
		}
		got := SentinelOutput(p)
		if err := b.Execute(ctx, p, got); err != nil {
			if Refused(t, c.Req, err) {
				continue
			}
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		ex := exact(p)
		if c.NaN && ex {
			if d := DiffExact(got, want); d != "" {
				reportMismatch(t, c.Req, got, want)
				t.Errorf("%s: NaN bits differ: %s", c.Name, d)
			}
			continue
		}
		if ex || !p.Reduction.OrderSensitive(p.DType) {
			reportMismatch(t, c.Req, got, want)
		}
		CheckReduction(t, p, got, want, ex, c.Name)
	}
}
