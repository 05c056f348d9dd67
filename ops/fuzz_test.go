package ops_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// fuzzBytes decodes fuzz input; past the end it reads zeros. Every choice
// decodes 0 as the common, valid option, so that short inputs make requests
// that Prepare accepts and the execution paths get fuzzed too.
type fuzzBytes struct{ b []byte }

func (f *fuzzBytes) next() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

func (f *fuzzBytes) n(k int) int { return int(f.next()) % k }

// value reads an integer: mostly small, sometimes any int64 or an extreme.
func (f *fuzzBytes) value() int64 {
	switch f.n(16) {
	case 15:
		var v uint64
		for i := 0; i < 8; i++ {
			v = v<<8 | uint64(f.next())
		}
		return int64(v)
	case 14:
		return []int64{math.MinInt64, math.MaxInt64, math.MinInt32, math.MaxInt32, math.MaxUint32, -129, 128, 255}[f.n(8)]
	}
	return int64(int8(f.next()))
}

// indexIn reads an index for a dimension of size s: mostly within [-s, s],
// sometimes anything.
func (f *fuzzBytes) indexIn(s int) int64 {
	if f.n(4) == 3 || s == 0 {
		return f.value()
	}
	return signedOf(f.n(2*s+1), s) // [-s, s]
}

// Caps that keep every fuzz tensor small.
const (
	fuzzMaxRank = 4
	fuzzMaxDim  = 4
)

// signedOf maps k in [0, 2m] onto 0, 1, ..., m, -1, ..., -m.
func signedOf(k, m int) int64 {
	if k <= m {
		return int64(k)
	}
	return int64(m - k)
}

// shape: rank minRank+1 ... maxRank mostly (minRank now and then), sizes
// 1 ... fuzzMaxDim and sometimes 0.
func (f *fuzzBytes) shape(minRank, maxRank int) []int {
	rank := minRank + 1 + f.n(maxRank-minRank)
	if f.n(16) == 15 {
		rank = minRank
	}
	s := make([]int, rank)
	for i := range s {
		s[i] = (f.n(fuzzMaxDim+1) + 1) % (fuzzMaxDim + 1)
	}
	return s
}

// perturb changes one dimension of shape now and then, or its rank, so that
// the shape rules are exercised on both sides.
func (f *fuzzBytes) perturb(shape []int) []int {
	s := append([]int{}, shape...)
	switch f.n(8) {
	case 7:
		if len(s) > 0 {
			s[f.n(len(s))] = f.n(fuzzMaxDim + 1)
		}
	case 6:
		if len(s) < fuzzMaxRank+1 {
			s = append(s, f.n(3))
		}
	case 5:
		if len(s) > 0 {
			s = s[:len(s)-1]
		}
	}
	return s
}

var fuzzIndexTypes = []tensor.DType{tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Uint16, tensor.Int32, tensor.Uint32,
	tensor.Int64, tensor.Uint64, tensor.Float32, tensor.Bool}

// indexType: an integer type mostly, now and then float32 or bool.
func (f *fuzzBytes) indexType() tensor.DType {
	if f.n(16) == 15 {
		return fuzzIndexTypes[8+f.n(2)]
	}
	return fuzzIndexTypes[f.n(8)]
}

// intTensor stores vals in a tensor of dtype dt (wrapping to its width; a
// float or bool tensor gets them converted).
func intTensor(dt tensor.DType, shape []int, vals []int64) *tensor.Tensor {
	t, err := tensor.New(dt, shape)
	if err != nil {
		return &tensor.Tensor{DType: dt, Shape: shape}
	}
	sz := dt.Size()
	for i, v := range vals {
		switch dt {
		case tensor.Float32:
			binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(float32(v)))
		case tensor.Bool:
			t.Data[i] = byte(v & 1)
		default:
			for j := 0; j < sz; j++ {
				t.Data[i*sz+j] = byte(uint64(v) >> (8 * j))
			}
		}
	}
	return t
}

// fill gives t's elements from the fuzz input: raw bytes (any NaN payload,
// subnormal or extreme), bools 0 or 1, strings from a small set.
func (f *fuzzBytes) fill(t *tensor.Tensor) {
	switch {
	case t.DType == tensor.String:
		words := []string{"", "a", "bb", "ü", "\x00"}
		for i := range t.Strings {
			t.Strings[i] = words[f.n(len(words))]
		}
	case t.DType == tensor.Bool:
		for i := range t.Data {
			t.Data[i] = f.next() & 1
		}
	default:
		for i := range t.Data {
			t.Data[i] = f.next()
		}
	}
}

func (f *fuzzBytes) tensorOf(dt tensor.DType, shape []int) *tensor.Tensor {
	t, err := tensor.New(dt, shape)
	if err != nil {
		return &tensor.Tensor{DType: dt, Shape: shape}
	}
	return t
}

// dataType: any dtype, and now and then an invalid one.
func (f *fuzzBytes) dataType() tensor.DType {
	all := tensor.DTypes()
	if f.n(32) == 31 {
		return tensor.Invalid
	}
	return all[f.n(len(all))]
}

func (f *fuzzBytes) reduction() string {
	if f.n(2) == 0 {
		return ""
	}
	names := []string{"none", "sum", "sub", "prod", "min", "max", "mean", "add", "mul", "SUM", "Max", "avg", " add", "None"}
	return names[f.n(len(names))]
}

func (f *fuzzBytes) useInitVal() *bool {
	switch f.n(3) {
	case 0:
		return nil
	case 1:
		v := true
		return &v
	}
	v := false
	return &v
}

// axisTensor: scalar or [1] mostly, sometimes [2] or [0]; nil when allowed.
func (f *fuzzBytes) axisTensor(r int, allowNil bool) *tensor.Tensor {
	if allowNil && f.n(4) == 3 {
		return nil
	}
	v := signedOf(f.n(2*r+3), r+1) // [-r-1, r+1]
	if f.n(16) == 15 {
		v = f.value()
	}
	dt := f.indexType()
	switch f.n(8) {
	case 7:
		return intTensor(dt, []int{2}, []int64{v, v})
	case 6:
		return intTensor(dt, []int{0}, nil)
	case 3, 4, 5:
		return intTensor(dt, []int{1}, []int64{v})
	}
	return intTensor(dt, []int{}, []int64{v})
}

// opOf picks one of the family's operators, sometimes in another case.
func (f *fuzzBytes) opOf(names []string) string {
	name := names[f.n(len(names))]
	if f.n(8) == 0 {
		b := []byte(name)
		for i := range b {
			if b[i] >= 'A' && b[i] <= 'Z' {
				b[i] += 'a' - 'A'
			}
		}
		return string(b)
	}
	return name
}

// finishFuzz fills data and updates and, now and then, adds an input the
// operator does not take.
func (f *fuzzBytes) finish(req *ops.Request) {
	f.fill(req.Data)
	if req.Updates != nil {
		f.fill(req.Updates)
	}
	switch f.n(32) {
	case 31:
		req.Start = intTensor(tensor.Int64, []int{1}, []int64{0})
	case 30:
		req.Indices = intTensor(tensor.Int64, []int{1}, []int64{0})
	case 29:
		req.Updates = nil
	}
}

// updatesOf: updates of the expected shape, sometimes perturbed, sometimes
// of another dtype.
func (f *fuzzBytes) updatesOf(dt tensor.DType, want []int) *tensor.Tensor {
	if f.n(16) == 15 {
		dt = f.dataType()
	}
	return f.tensorOf(dt, f.perturb(want))
}

func buildScatterUpdate(f *fuzzBytes) ops.Request {
	dt := f.dataType()
	ds := f.shape(0, fuzzMaxRank)
	r := len(ds)
	req := ops.Request{Op: f.opOf([]string{"ScatterUpdate-3"}), Reduction: f.reduction(), Data: f.tensorOf(dt, ds)}
	if f.n(8) == 7 {
		req.UseInitVal = f.useInitVal()
	}
	req.Axis = f.axisTensor(r, true)
	axis := 0
	if r > 0 {
		axis = f.n(r)
	}
	is := f.shape(0, 2)
	var s int
	if r > 0 {
		s = ds[axis]
	}
	vals := make([]int64, prod(is))
	for i := range vals {
		vals[i] = f.indexIn(s)
	}
	req.Indices = intTensor(f.indexType(), is, vals)
	var want []int
	if r > 0 {
		want = append(append(append(want, ds[:axis]...), is...), ds[axis+1:]...)
	}
	req.Updates = f.updatesOf(dt, want)
	f.finish(&req)
	return req
}

func buildND(f *fuzzBytes) ops.Request {
	dt := f.dataType()
	ds := f.shape(0, fuzzMaxRank)
	req := ops.Request{Op: f.opOf([]string{"ScatterNDUpdate-3", "ScatterNDUpdate-15", "ScatterND-11", "ScatterND-13", "ScatterND-16", "ScatterND-18"}),
		Reduction: f.reduction(), Data: f.tensorOf(dt, ds)}
	if f.n(8) == 7 {
		req.UseInitVal = f.useInitVal()
	}
	if f.n(16) == 15 {
		req.Axis = f.axisTensor(len(ds), false)
	}
	k := (f.n(len(ds)+2) + 1) % (len(ds) + 2) // 1, ..., rank+1, 0
	lead := f.shape(0, 2)
	is := append(append([]int{}, lead...), k)
	if f.n(16) == 15 {
		is = f.shape(0, 3)
	}
	vals := make([]int64, prod(is))
	for i := range vals {
		s := 0
		if len(is) > 0 && is[len(is)-1] > 0 && i%is[len(is)-1] < len(ds) {
			s = ds[i%is[len(is)-1]]
		}
		vals[i] = f.indexIn(s)
	}
	req.Indices = intTensor(f.indexType(), is, vals)
	want := append([]int{}, lead...)
	if k <= len(ds) {
		want = append(want, ds[k:]...)
	}
	if len(want) == 0 && f.n(2) == 0 {
		want = []int{1}
	}
	req.Updates = f.updatesOf(dt, want)
	f.finish(&req)
	return req
}

func buildElements(f *fuzzBytes) ops.Request {
	dt := f.dataType()
	ds := f.shape(0, fuzzMaxRank)
	r := len(ds)
	req := ops.Request{Op: f.opOf([]string{"ScatterElementsUpdate-3", "ScatterElementsUpdate-12", "Scatter-9", "Scatter-11",
		"ScatterElements-11", "ScatterElements-13", "ScatterElements-16", "ScatterElements-18"}),
		Reduction: f.reduction(), Data: f.tensorOf(dt, ds)}
	if f.n(4) == 3 || req.Op == "ScatterElementsUpdate-12" {
		req.UseInitVal = f.useInitVal()
	}
	axis := 0
	if r > 0 {
		axis = f.n(r)
	}
	req.Axis = f.axisTensor(r, true)
	is := make([]int, r)
	for d := range is {
		if d == axis {
			is[d] = (f.n(fuzzMaxDim+2) + 1) % (fuzzMaxDim + 2)
		} else {
			is[d] = ds[d] - f.n(ds[d]+1)
		}
	}
	is = f.perturb(is)
	s := 0
	if r > 0 {
		s = ds[axis]
	}
	vals := make([]int64, prod(is))
	for i := range vals {
		vals[i] = f.indexIn(s)
	}
	req.Indices = intTensor(f.indexType(), is, vals)
	req.Updates = f.updatesOf(dt, is)
	f.finish(&req)
	return req
}

func buildSlice(f *fuzzBytes) ops.Request {
	dt := f.dataType()
	ds := f.shape(0, fuzzMaxRank)
	r := len(ds)
	req := ops.Request{Op: f.opOf([]string{"SliceScatter-15"}), Data: f.tensorOf(dt, ds)}
	if f.n(8) == 7 {
		req.Reduction = f.reduction()
	}
	if f.n(8) == 7 {
		req.UseInitVal = f.useInitVal()
	}
	n := (f.n(r+2) + 1) % (r + 2) // 1, ..., rank+1, 0
	axes := make([]int64, n)
	for i := range axes {
		axes[i] = int64(i)
		if f.n(2) == 1 {
			axes[i] = signedOf(f.n(2*r+3), r+1)
		}
	}
	start, stop, step := make([]int64, n), make([]int64, n), make([]int64, n)
	for i := range start {
		start[i], stop[i], step[i] = f.value(), f.value(), f.value()
		if f.n(4) != 0 {
			step[i] = int64(f.n(7) - 3)
		}
	}
	lens := func() []int {
		if f.n(16) == 15 {
			return []int{n + 1}
		}
		return []int{n}
	}
	req.Start = intTensor(f.indexType(), lens(), start)
	req.Stop = intTensor(f.indexType(), lens(), stop)
	req.Step = intTensor(f.indexType(), lens(), step)
	if f.n(2) == 0 {
		req.Axes = intTensor(f.indexType(), lens(), axes)
	}
	// The slice's shape as Prepare will see it, when the parameters are
	// sound; updates then usually get exactly that shape.
	want := append([]int{}, ds...)
	if p, err := ops.Prepare(ops.Request{Op: "SliceScatter-15", Data: req.Data, Updates: req.Data, Start: req.Start, Stop: req.Stop,
		Step: req.Step, Axes: req.Axes}); err == nil {
		want = p.Shape
	} else {
		var e *ops.Error
		if errors.As(err, &e) && e.Input == "updates" {
			if slice, ok := sliceShape(req); ok {
				want = slice
			}
		}
	}
	req.Updates = f.updatesOf(dt, want)
	f.finish(&req)
	return req
}

// sliceShape works out the slice's shape with ops.SliceRange, for valid
// start, stop, step and axes.
func sliceShape(req ops.Request) ([]int, bool) {
	shape := append([]int{}, req.Data.Shape...)
	for i := 0; i < req.Start.Len(); i++ {
		axis := int64(i)
		if req.Axes != nil {
			axis, _ = req.Axes.IntAt(i)
			if axis < 0 {
				axis += int64(len(shape))
			}
		}
		if axis < 0 || axis >= int64(len(shape)) {
			return nil, false
		}
		start, _ := req.Start.IntAt(i)
		stop, _ := req.Stop.IntAt(i)
		step, _ := req.Step.IntAt(i)
		if step == 0 {
			return nil, false
		}
		_, shape[axis] = ops.SliceRange(start, stop, step, shape[axis])
	}
	return shape, true
}

func prod(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// checkFuzzRequest: Prepare must not panic and must return either a plan or
// an *ops.Error wrapping a sentinel; what it accepts, cpuref must run
// without panicking, with the result (or index error) that Naive gives.
func checkFuzzRequest(t *testing.T, req ops.Request) {
	p, err := ops.Prepare(req)
	checkPrepareShapes(t, req, p, err)
	if err != nil {
		var e *ops.Error
		if !errors.As(err, &e) {
			t.Fatalf("Prepare returned %T, not *ops.Error: %v", err, err)
		}
		var s ops.Sentinel
		if !errors.As(err, &s) {
			t.Fatalf("Prepare's error wraps no sentinel: %v", err)
		}
		if e.Input == "" || e.Msg == "" {
			t.Fatalf("Prepare's error names no input: %#v", e)
		}
		return
	}
	if p == nil {
		t.Fatal("Prepare returned neither a plan nor an error")
	}
	if r, ok := p.Op.Reductions[req.Reduction]; req.Reduction != "" && (!ok || r != p.Reduction) {
		t.Fatalf("Prepare took reduction %q, which %s does not spell so, as %v", req.Reduction, p.Op.Name, p.Reduction)
	}
	got, gerr := cpuref.Run(req)
	want, werr := opstest.Naive(req)
	switch {
	case gerr != nil && werr != nil:
		if gerr.Error() != werr.Error() {
			t.Fatalf("errors differ:\n  cpuref: %v\n  naive:  %v\nrequest: %s", gerr, werr, opstest.Describe(req))
		}
		if !errors.Is(gerr, ops.ErrIndexRange) {
			t.Fatalf("Prepare accepted the request, yet running it fails with %v\nrequest: %s", gerr, opstest.Describe(req))
		}
	case gerr != nil || werr != nil:
		t.Fatalf("cpuref: %v, naive: %v\nrequest: %s", gerr, werr, opstest.Describe(req))
	default:
		if d := opstest.DiffFor(opstest.ReductionOf(req), got, want); d != "" {
			t.Fatalf("cpuref and naive differ: %s\nrequest: %s", d, opstest.Describe(req))
		}
	}
}

// checkPrepareShapes: where data, indices and updates are well formed,
// PrepareShapes on payload-less copies gives Prepare's outcome (p, err).
func checkPrepareShapes(t *testing.T, req ops.Request, p *ops.Plan, err error) {
	desc := req
	for _, x := range []**tensor.Tensor{&desc.Data, &desc.Indices, &desc.Updates} {
		if *x == nil {
			continue
		}
		if (*x).Check() != nil {
			return
		}
		*x = &tensor.Tensor{DType: (*x).DType, Shape: (*x).Shape}
	}
	q, qerr := ops.PrepareShapes(desc)
	switch {
	case err != nil && qerr != nil:
		if err.Error() != qerr.Error() {
			t.Fatalf("Prepare: %v\nPrepareShapes: %v", err, qerr)
		}
	case err != nil || qerr != nil:
		t.Fatalf("Prepare: %v\nPrepareShapes: %v\nrequest: %s", err, qerr, opstest.Describe(req))
	default:
		q.Data, q.Indices, q.Updates = p.Data, p.Indices, p.Updates
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("plans differ:\n  Prepare:       %+v\n  PrepareShapes: %+v", p, q)
		}
	}
}

// fuzzSeeds adds a few inputs of random bytes, and the empty one.
func fuzzSeeds(f *testing.F) {
	rng := rand.New(rand.NewSource(1))
	f.Add([]byte{})
	for i := 0; i < 24; i++ {
		b := make([]byte, 16+rng.Intn(200))
		rng.Read(b)
		f.Add(b)
	}
}

func FuzzPrepareScatterUpdate(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { checkFuzzRequest(t, buildScatterUpdate(&fuzzBytes{b})) })
}

func FuzzPrepareND(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { checkFuzzRequest(t, buildND(&fuzzBytes{b})) })
}

func FuzzPrepareElements(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { checkFuzzRequest(t, buildElements(&fuzzBytes{b})) })
}

func FuzzPrepareSliceScatter(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { checkFuzzRequest(t, buildSlice(&fuzzBytes{b})) })
}

// FuzzParseReduction: a reduction name is taken exactly as the operator's
// spec spells it, or "" for none, and by no other spelling; Prepare
// refuses any other name with ErrReduction, naming it, and a name that is
// one of the operator's in another case or with spaces around gets that
// spelling as its hint.
func FuzzParseReduction(f *testing.F) {
	for _, s := range []string{"", "none", "add", "Add", "ADD", " sum", "sum ", "Mean", "mul", "prod", "NONE", "\tmax\n", "maxx"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(5))
	}
	all := ops.All()
	f.Fuzz(func(t *testing.T, name string, which uint8) {
		op := all[int(which)%len(all)]
		r, ok := op.ParseReduction(name)
		want, exact := op.Reductions[name]
		if name == "" {
			want, exact = ops.None, true
		}
		if ok != exact || (ok && r != want) {
			t.Fatalf("%s.ParseReduction(%q) = %v, %v; want %v, %v", op.Name, name, r, ok, want, exact)
		}
		data, _ := tensor.New(tensor.Float32, []int{2})
		upd, _ := tensor.New(tensor.Float32, []int{1})
		req := ops.Request{Op: op.Name, Reduction: name, Data: data, Updates: upd}
		switch op.Kind {
		case ops.KindND:
			req.Indices = index([]int{1, 1}, 0)
		case ops.KindAxis, ops.KindElements:
			req.Indices, req.Axis = index([]int{1}, 0), tensor.Scalar(0)
		default:
			return // slice and cache operators take no reduction beyond none
		}
		_, err := ops.Prepare(req)
		if ok {
			if err != nil {
				t.Fatalf("%s reduction %q: %v", op.Name, name, err)
			}
			return
		}
		if !errors.Is(err, ops.ErrReduction) || !strings.Contains(err.Error(), fmt.Sprintf("reduction %q", name)) {
			t.Fatalf("%s reduction %q: want ErrReduction naming it, got %v", op.Name, name, err)
		}
		if low := strings.ToLower(strings.TrimSpace(name)); low != "" {
			if _, taken := op.Reductions[low]; taken && !strings.Contains(err.Error(), "did you mean "+low+"?") {
				t.Fatalf("%s reduction %q: no hint naming %s: %v", op.Name, name, low, err)
			}
		}
	})
}
