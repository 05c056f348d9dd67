package bench

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// ErrUnknownWorkload is wrapped by the error Select returns for a name that
// is not a built-in workload.
var ErrUnknownWorkload = errors.New("unknown workload")

// QuickScale is the scale of --quick: small enough that every built-in
// workload runs in a few milliseconds per backend on a 2-core machine, large
// enough that every kernel path (several tasks, duplicates) is taken.
const QuickScale = 1.0 / 256

// Workload is one benchmark case: an operator call whose inputs are built
// when it runs and dropped after it. Builtin and Select return the built-in
// workloads; Custom wraps an operator call on inputs the caller already
// holds.
type Workload struct {
	// Name selects the workload: "SU1", "SE-sum-dup", ...
	Name string
	// Summary says what the workload is, in a few words.
	Summary string
	// Op and Reduction are the operator call, the reduction spelled as the
	// operator spells it ("add" for ScatterND-18).
	Op, Reduction string
	// DType is the element type of data, updates and the output.
	DType tensor.DType
	// DataShape is the shape of data and the output; IndicesShape and
	// UpdatesShape those of the other inputs (IndicesShape is nil for
	// SliceScatter-15).
	DataShape, IndicesShape, UpdatesShape []int
	// DataBytes, IndicesBytes and UpdatesBytes are the sizes of the inputs.
	DataBytes, IndicesBytes, UpdatesBytes int64
	// Calls is the number of times one execution runs the operator call:
	// 1 for most workloads; SND-1000 makes 1000 small calls, each writing
	// the same output, to show the fixed cost of a call. Times are those
	// of all the calls of an execution.
	Calls int
	// Decode: the calls are the steps of a decode loop (KV-decode), each in
	// place on the cache that data starts it from, call i with indices
	// (write indices) advanced by i (StepIndices).
	Decode bool

	build func() (ops.Request, error)
	// shapes returns the call without payloads (Shapes).
	shapes func() ops.Request
	// red is the reduction Reduction names.
	red ops.Reduction
	// held: the inputs exist already (Custom), so running the workload
	// needs no memory for them.
	held bool
	// numIndices is the number of index elements.
	numIndices int64
}

// Traffic returns the bytes one execution moves at the least: data read,
// the output written, updates read and indices read. Effective bandwidth is
// Traffic divided by the time of an execution.
func (w *Workload) Traffic() int64 {
	if w.Decode {
		return w.ResidentTraffic() // in place: data is neither read nor copied
	}
	return int64(w.calls()) * (2*w.DataBytes + w.UpdatesBytes + w.IndicesBytes)
}

// calls returns Calls, at least 1.
func (w *Workload) calls() int { return max(1, w.Calls) }

// ResidentTraffic returns the bytes one call in place on inputs resident on
// the device moves at the least: the one-pass bytes (ops.Plan.OnePassBytes:
// indices and updates read once, each data element the call may change
// read and written once), per call. Data is not copied whole.
func (w *Workload) ResidentTraffic() int64 {
	p, err := ops.PrepareShapes(w.shapes())
	if err != nil {
		return int64(w.calls()) * (w.UpdatesBytes + w.IndicesBytes)
	}
	return int64(w.calls()) * int64(p.OnePassBytes())
}

// Describe returns the operator call with its shapes, e.g.
// "ScatterND-18 add: data float32[1048576,16], indices int64[1048576,1], updates float32[1048576,16]".
func (w *Workload) Describe() string {
	var b strings.Builder
	b.WriteString(w.Op)
	if w.Reduction != "" && w.Reduction != "none" {
		b.WriteString(" " + w.Reduction)
	}
	fmt.Fprintf(&b, ": data %v%s", w.DType, tensor.FormatShape(w.DataShape))
	if w.IndicesShape != nil {
		fmt.Fprintf(&b, ", indices %s", tensor.FormatShape(w.IndicesShape))
	}
	fmt.Fprintf(&b, ", updates %s", tensor.FormatShape(w.UpdatesShape))
	switch {
	case w.Decode:
		fmt.Fprintf(&b, ", %d decode steps in place", w.calls())
	case w.calls() > 1:
		fmt.Fprintf(&b, ", %d calls", w.calls())
	}
	return b.String()
}

// StepIndices returns the indices of every call of a Decode workload: the
// write indices of req advanced by one per step (call i's are
// req.Indices + i).
func (w *Workload) StepIndices(req ops.Request) []*tensor.Tensor {
	base := tensor.View[int64](req.Indices)
	steps := make([]*tensor.Tensor, w.calls())
	for i := range steps {
		v := make([]int64, len(base))
		for b, x := range base {
			v[b] = x + int64(i)
		}
		steps[i] = tensor.MustFromSlice(append([]int(nil), req.Indices.Shape...), v)
	}
	return steps
}

// Request builds the workload's inputs. Built-in workloads generate them
// from their seed on every call (in parallel, a few hundred MB/s per core);
// a Custom workload returns the request it was made with.
func (w *Workload) Request() (ops.Request, error) { return w.build() }

// Shapes returns the workload's operator call with data, indices and
// updates as tensors of their dtypes and shapes without payloads (the
// other inputs as they are), for ops.PrepareShapes: what a backend plans
// from, without building the inputs.
func (w *Workload) Shapes() ops.Request { return w.shapes() }

// shapesOf returns req with its data, indices and updates without
// payloads.
func shapesOf(req ops.Request) ops.Request {
	for _, t := range []**tensor.Tensor{&req.Data, &req.Indices, &req.Updates} {
		if *t != nil {
			*t = &tensor.Tensor{DType: (*t).DType, Shape: (*t).Shape, StringFormat: (*t).StringFormat}
		}
	}
	return req
}

// Custom returns a workload named name that runs req, whose tensors the
// caller holds. It fails when req is not a valid operator call.
func Custom(name string, req ops.Request) (*Workload, error) {
	p, err := ops.Prepare(req)
	if err != nil {
		return nil, err
	}
	w := &Workload{
		Name: name, Summary: "the operator call given on the command line",
		Op: p.Op.Name, Reduction: reductionName(p.Op, p.Reduction), red: p.Reduction, DType: p.DType,
		DataShape:    append([]int{}, p.Shape...),
		UpdatesShape: append([]int{}, req.Updates.Shape...),
		DataBytes:    tensorBytes(req.Data),
		Calls:        1,
		UpdatesBytes: tensorBytes(req.Updates),
		build:        func() (ops.Request, error) { return req, nil },
		shapes:       func() ops.Request { return shapesOf(req) },
		held:         true,
	}
	if req.Indices != nil {
		w.IndicesShape = append([]int{}, req.Indices.Shape...)
		w.IndicesBytes = tensorBytes(req.Indices)
		w.numIndices = int64(req.Indices.Len())
	}
	return w, nil
}

// reductionName returns r as op spells it.
func reductionName(op *ops.Op, r ops.Reduction) string {
	name, _ := op.ReductionName(r) // r is one op takes: Prepare or ParseReduction gave it
	return name
}

// tensorBytes returns the size of t's elements as a device holds them.
func tensorBytes(t *tensor.Tensor) int64 {
	return int64(t.Len()) * int64(t.DType.Size())
}

// spec is a built-in workload at one scale.
type spec struct {
	op, reduction     string
	dt                tensor.DType
	data, idx, upd    []int
	bounds            []int // the range of each index tuple component
	axis              int64
	start, stop, step []int64 // SliceScatter-15
	calls             int     // Workload.Calls; 0 means 1
	mode              string  // TensorScatter-24's mode
	decode            bool    // Workload.Decode
	// zipf, when not 0, draws the indices from a bounded Zipf law of this
	// exponent over bounds[0] (zipfIndices) instead of uniformly.
	zipf float64
}

// def is a built-in workload: a name, a summary and its shapes at a scale.
type def struct {
	name, summary string
	at            func(sc scaler) spec
}

// scaler scales one dimension of a full-size workload.
type scaler float64

// n returns round(full*s), at least 1; absurd sizes saturate and are
// rejected later by the shape checks.
func (s scaler) n(full int) int {
	v := math.Round(float64(full) * float64(s))
	if v > 1<<50 {
		return 1 << 50
	}
	return max(1, int(v))
}

// mi is 2^20, the "M" of the workload sizes.
const mi = 1 << 20

// defs lists the built-in workloads in the order they run.
var defs = []def{
	{"SU1", "ScatterUpdate-3 spec example 1", func(s scaler) spec {
		d0 := s.n(1000)
		return spec{op: "ScatterUpdate-3", dt: tensor.Float32, axis: 1,
			data: []int{d0, 256, 10, 15}, idx: []int{125, 20}, upd: []int{d0, 125, 20, 10, 15}, bounds: []int{256}}
	}},
	nd5("SND5", tensor.Float32),
	elems("SE", tensor.Float32),
	{"SE-sum-dup", "ScatterElements-18 add, 16 updates per element", func(s scaler) spec {
		n, u := s.n(mi), s.n(16*mi)
		return spec{op: "ScatterElements-18", reduction: "add", dt: tensor.Float32,
			data: []int{n}, idx: []int{u}, upd: []int{u}, bounds: []int{n}}
	}},
	{"SE-zipf", "ScatterElements-18 add, 16 updates per element, targets by a Zipf law (s=1.1)", func(s scaler) spec {
		n, u := s.n(mi), s.n(16*mi)
		return spec{op: "ScatterElements-18", reduction: "add", dt: tensor.Float32,
			data: []int{n}, idx: []int{u}, upd: []int{u}, bounds: []int{n}, zipf: 1.1}
	}},
	{"SND-sum-dup", "ScatterND-18 add, rows with duplicate targets", func(s scaler) spec {
		n := s.n(mi)
		return spec{op: "ScatterND-18", reduction: "add", dt: tensor.Float32,
			data: []int{n, 16}, idx: []int{n, 1}, upd: []int{n, 16}, bounds: []int{n}}
	}},
	{"SS", "SliceScatter-15, every second row and column", func(s scaler) spec {
		r := s.n(8192)
		return spec{op: "SliceScatter-15", dt: tensor.Float32,
			data: []int{r, 8192}, upd: []int{(r + 1) / 2, 4096},
			start: []int64{0, 0}, stop: []int64{math.MaxInt64, math.MaxInt64}, step: []int64{2, 2}}
	}},
	{"SND-max-i32", "ScatterND-18 max on int32, 2 updates per element", func(s scaler) spec {
		n, u := s.n(4*mi), s.n(8*mi)
		return spec{op: "ScatterND-18", reduction: "max", dt: tensor.Int32,
			data: []int{n}, idx: []int{u, 1}, upd: []int{u}, bounds: []int{n}}
	}},
	{"SND-1000", "ScatterND-18, 1000 small calls of 16 rows each", func(s scaler) spec {
		return spec{op: "ScatterND-18", dt: tensor.Float32,
			data: []int{4096, 16}, idx: []int{16, 1}, upd: []int{16, 16}, bounds: []int{4096}, calls: s.n(1000)}
	}},
	nd5("SND5-f16", tensor.Float16),
	nd5("SND5-i64", tensor.Int64),
	elems("SE-f16", tensor.Float16),
	elems("SE-i64", tensor.Int64),
	{"KV-decode", "TensorScatter-24 circular, 1000 decode steps of one token into a float16 KV cache", func(s scaler) spec {
		b := s.n(8) // the batch of sequences; every step writes one token of each
		return spec{op: "TensorScatter-24", mode: "circular", dt: tensor.Float16,
			data: []int{b, 32, 4096, 128}, idx: []int{b}, upd: []int{b, 32, 1, 128}, bounds: []int{4096}, calls: 1000, decode: true}
	}},
}

// nd5 is ScatterNDUpdate-15 spec example 5 on dt.
func nd5(name string, dt tensor.DType) def {
	return def{name, "ScatterNDUpdate-15 spec example 5" + dtSuffix(dt), func(s scaler) spec {
		d0, j := s.n(1000), s.n(25)
		return spec{op: "ScatterNDUpdate-15", dt: dt,
			data: []int{d0, 256, 10, 15}, idx: []int{j, 125, 3}, upd: []int{j, 125, 15}, bounds: []int{d0, 256, 10}}
	}}
}

// elems is ScatterElements-18 along axis 0 of a square matrix on dt.
func elems(name string, dt tensor.DType) def {
	return def{name, "ScatterElements-18 axis 0" + dtSuffix(dt), func(s scaler) spec {
		r, j := s.n(4096), s.n(1024)
		return spec{op: "ScatterElements-18", dt: dt,
			data: []int{r, 4096}, idx: []int{j, 4096}, upd: []int{j, 4096}, bounds: []int{r}}
	}}
}

func dtSuffix(dt tensor.DType) string {
	if dt == tensor.Float32 {
		return ""
	}
	return ", " + dt.String()
}

// Names returns the names of the built-in workloads, in the order they run.
func Names() []string {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.name
	}
	return names
}

// Builtin returns the built-in workload called name (case-insensitive) with
// every size scaled by scale (the full sizes are those of the workload's
// description; scale 1 is full size) and inputs generated from seed. It
// fails with ErrUnknownWorkload for an unknown name, and when scale is not
// positive or makes a shape larger than a tensor may be.
func Builtin(name string, scale float64, seed uint64) (*Workload, error) {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return nil, fmt.Errorf("bench: scale %v is not a positive number", scale)
	}
	for _, d := range defs {
		if strings.EqualFold(d.name, strings.TrimSpace(name)) {
			return d.workload(scaler(scale), seed)
		}
	}
	return nil, fmt.Errorf("%w %q; the workloads are %s", ErrUnknownWorkload, name, strings.Join(Names(), ", "))
}

// Select returns the built-in workloads named in names, in the order given
// and without repeats, or every one of them when names is empty; see
// Builtin.
func Select(names []string, scale float64, seed uint64) ([]*Workload, error) {
	if len(names) == 0 {
		names = Names()
	}
	var out []*Workload
	seen := map[string]bool{}
	for _, n := range names {
		w, err := Builtin(n, scale, seed)
		if err != nil {
			return nil, err
		}
		if seen[w.Name] {
			continue
		}
		seen[w.Name] = true
		out = append(out, w)
	}
	return out, nil
}

// workload sizes d at scale s; the inputs are built by Request.
func (d def) workload(s scaler, seed uint64) (*Workload, error) {
	sp := d.at(s)
	op, err := ops.Lookup(sp.op)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", d.name, err)
	}
	red, ok := op.ParseReduction(sp.reduction)
	if !ok {
		return nil, fmt.Errorf("bench: %s: %s takes no reduction %q", d.name, op.Name, sp.reduction)
	}
	w := &Workload{
		Name: d.name, Summary: d.summary, Op: op.Name, Reduction: reductionName(op, red), red: red, DType: sp.dt,
		DataShape: sp.data, IndicesShape: sp.idx, UpdatesShape: sp.upd, Calls: max(1, sp.calls), Decode: sp.decode,
	}
	for _, x := range []struct {
		shape []int
		size  int
		dst   *int64
	}{{sp.data, sp.dt.Size(), &w.DataBytes}, {sp.idx, 8, &w.IndicesBytes}, {sp.upd, sp.dt.Size(), &w.UpdatesBytes}} {
		if x.shape == nil {
			continue
		}
		n, err := tensor.NumElements(x.shape)
		if err != nil || int64(n) > tensor.MaxBytes/int64(x.size) {
			return nil, fmt.Errorf("bench: %s at this scale has shape %s, larger than a tensor may be", d.name, tensor.FormatShape(x.shape))
		}
		*x.dst = int64(n) * int64(x.size)
	}
	w.numIndices = w.IndicesBytes / 8
	w.build = func() (ops.Request, error) { return sp.request(seed) }
	w.shapes = sp.shapes
	return w, nil
}

// request generates the inputs of sp from seed.
func (sp spec) request(seed uint64) (ops.Request, error) {
	req := sp.shapes()
	var err error
	if req.Data, err = randomValues(sp.dt, sp.data, seed, streamData); err != nil {
		return ops.Request{}, err
	}
	if req.Updates, err = randomValues(sp.dt, sp.upd, seed, streamUpdates); err != nil {
		return ops.Request{}, err
	}
	switch {
	case sp.idx != nil && sp.zipf != 0:
		if req.Indices, err = zipfIndices(sp.idx, sp.bounds[0], sp.zipf, seed); err != nil {
			return ops.Request{}, err
		}
	case sp.idx != nil:
		if req.Indices, err = randomIndices(sp.idx, sp.bounds, seed); err != nil {
			return ops.Request{}, err
		}
	}
	return req, nil
}

// shapes returns the call of sp with data, indices and updates as
// tensors without payloads (Workload.Shapes).
func (sp spec) shapes() ops.Request {
	req := ops.Request{Op: sp.op, Reduction: sp.reduction, Mode: sp.mode,
		Data: &tensor.Tensor{DType: sp.dt, Shape: sp.data}, Updates: &tensor.Tensor{DType: sp.dt, Shape: sp.upd}}
	if sp.idx != nil {
		req.Indices = &tensor.Tensor{DType: tensor.Int64, Shape: sp.idx}
	}
	if sp.op == "ScatterUpdate-3" {
		req.Axis = tensor.Scalar(sp.axis)
	}
	if sp.step != nil {
		req.Start, req.Stop, req.Step = tensor.Ints(sp.start...), tensor.Ints(sp.stop...), tensor.Ints(sp.step...)
	}
	return req
}
