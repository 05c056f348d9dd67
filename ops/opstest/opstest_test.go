package opstest

import (
	"cmp"
	"context"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/examples"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// planBackend executes plans straight from ops.Plan's layout, with Naive's
// reduction code. It lets the suite be checked without cpuref, and checks
// Naive's own target arithmetic against the Plan's.
type planBackend struct{ closed int }

func (b *planBackend) Name() string { return "plan" }

func (b *planBackend) Close() error { b.closed++; return nil }

func (b *planBackend) Execute(_ context.Context, p *ops.Plan, out *tensor.Tensor) error {
	if err := p.CheckOutput(out); err != nil {
		return err
	}
	n := p.NumUpdates()
	idx := make([]int, 0, p.NumIndices())
	var first error                             // SkipBadIndices: the first bad index, whose value is noTarget
	for pos := 0; pos < p.NumIndices(); pos++ { // every index is checked, updates or not
		v, err := p.IndexAt(pos)
		if err != nil {
			if !p.SkipBadIndices {
				return err
			}
			first = cmp.Or(first, err)
			v = noTarget
		}
		idx = append(idx, v)
	}
	targets := make([]int, n)
	for u := range targets {
		o, j, k := u/(p.J*p.Inner), (u/p.Inner)%p.J, u%p.Inner
		if first != nil && p.Kind != ops.KindSlice {
			// An update whose index (or any component of its tuple) is bad
			// lands nowhere.
			var used []int
			switch p.Kind {
			case ops.KindAxis:
				used = idx[j : j+1]
			case ops.KindND:
				used = idx[j*p.TupleLen : (j+1)*p.TupleLen]
			case ops.KindElements:
				used = idx[u : u+1]
			case ops.KindCache:
				if p.Indices != nil {
					b := o / p.CacheRowsPerBatch()
					used = idx[b : b+1]
				}
			}
			if slices.Contains(used, noTarget) {
				targets[u] = noTarget
				continue
			}
		}
		switch p.Kind {
		case ops.KindAxis:
			targets[u] = (o*p.Shape[p.Axis]+idx[j])*p.Inner + k
		case ops.KindND:
			base := 0
			for c := 0; c < p.TupleLen; c++ {
				base = base*p.Shape[c] + idx[j*p.TupleLen+c]
			}
			targets[u] = base*p.Inner + k
		case ops.KindElements:
			c := unravel(u, p.IndicesShape)
			c[p.Axis] = idx[u]
			targets[u] = ravel(c, p.Shape)
		case ops.KindCache:
			start := 0
			if p.Indices != nil {
				start = idx[o/p.CacheRowsPerBatch()]
			}
			targets[u] = (o*p.Shape[p.Axis]+(start+j)%p.Shape[p.Axis])*p.Inner + k
		case ops.KindSlice:
			c := unravel(u, p.SliceCount)
			for d := range c {
				c[d] = p.SliceStart[d] + c[d]*p.SliceStep[d]
			}
			targets[u] = ravel(c, p.Shape)
		}
	}
	if p.DType == tensor.String {
		copy(out.Strings, p.Data.Strings)
	} else {
		copy(out.Data, p.Data.Data)
	}
	red := map[ops.Reduction]naiveReduction{ops.None: redNone, ops.Sum: redSum, ops.Sub: redSub, ops.Prod: redProd,
		ops.Min: redMin, ops.Max: redMax, ops.Mean: redMean}[p.Reduction]
	apply(out, p.Data, p.Updates, targets, red, p.Reduction, p.UseInitVal)
	return first
}

func TestConformanceOfPlanBackend(t *testing.T) {
	RunConformance(t, func(t *testing.T) ops.Backend { return &planBackend{} })
}

func TestDifferentialPlanBackendVsItself(t *testing.T) {
	RunDifferential(t, &planBackend{}, &planBackend{}, 7, 300)
}

func TestPlanBackendMatchesNaive(t *testing.T) {
	b := &planBackend{}
	RunAgainstNaive(t, func(req ops.Request) (*tensor.Tensor, error) {
		return ops.Run(context.Background(), b, req)
	}, 11, 3000)
}

func TestNaiveGivesEverySpecExample(t *testing.T) {
	all := examples.All()
	require.Len(t, all, 31)
	names := map[string]bool{}
	for _, ex := range all {
		assert.False(t, names[ex.Name], "duplicate example name %s", ex.Name)
		names[ex.Name] = true
		assert.NotEmpty(t, ex.Source)
		got, err := Naive(ex.Request)
		require.NoError(t, err, ex.Name)
		assert.Empty(t, DiffExact(got, ex.Want), ex.Name)
	}
	for _, want := range []string{"ScatterNDUpdate-15/xml-2-sum", "ScatterNDUpdate-15/xml-4-prod", "ScatterUpdate-3/xml-2",
		"ScatterNDUpdate-3/text-2", "SliceScatter-15/xml-3", "Scatter-9/onnx-2", "ScatterElementsUpdate-12/onnx-1",
		"TensorScatter-24/onnx-linear", "TensorScatter-24/onnx-circular", "TensorScatter-24/onnx-3d"} {
		assert.True(t, names[want], want)
	}
}

func TestNaiveGivesContractCases(t *testing.T) {
	for _, ex := range ContractCases() {
		got, err := Naive(ex.Request)
		require.NoError(t, err, ex.Name)
		assert.Empty(t, DiffFor(ReductionOf(ex.Request), got, ex.Want), "%s: %s", ex.Name, ex.Source)
	}
}

func TestNaiveFollowsValidationTable(t *testing.T) {
	for _, c := range ValidationCases() {
		t.Run(c.Name, func(t *testing.T) {
			_, err := Naive(c.Request)
			if c.Err == nil {
				require.NoError(t, err)
				return
			}
			RequireCaseError(t, c, err)
			_, perr := ops.Prepare(c.Request)
			assert.Equal(t, c.AtExecute, perr == nil, "AtExecute must say whether Prepare accepts it")
		})
	}
}

func TestRandomRequestsCoverEverything(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	seen := map[string]int{}
	for i := 0; i < 6000; i++ {
		req := RandomRequest(rng, Config{})
		p, err := ops.Prepare(req)
		require.NoError(t, err, Describe(req))
		_, err = Naive(req)
		require.NoError(t, err, Describe(req))
		seen["op "+p.Op.Name]++
		seen["dtype "+p.DType.String()]++
		seen["reduction "+p.Reduction.String()]++
		seen["rank "+itoa(len(p.Shape))]++
		if req.Indices != nil {
			seen["index "+req.Indices.DType.String()]++
			for j := 0; j < req.Indices.Len(); j++ {
				if v, _ := readIndex(req.Indices, j); v < 0 {
					seen["negative index"]++
					break
				}
			}
			if req.Indices.Len() == 0 {
				seen["empty indices"]++
			}
		}
		if req.Data.Len() == 0 {
			seen["empty data"]++
		}
		if req.UseInitVal != nil {
			seen["use_init_val "+map[bool]string{true: "true", false: "false"}[*req.UseInitVal]]++
		}
		if req.Axis != nil {
			if v, _ := readIndex(req.Axis, 0); v < 0 {
				seen["negative axis"]++
			}
		}
		if p.Kind == ops.KindSlice {
			seen[map[bool]string{true: "slice with axes", false: "slice without axes"}[req.Axes != nil]]++
			for j := 0; j < req.Step.Len(); j++ {
				if v, _ := readIndex(req.Step, j); v < 0 {
					seen["negative step"]++
				}
				if v, _ := readIndex(req.Start, j); v == intMin(req.Start.DType) || v == intMax(req.Start.DType) {
					seen["extreme start"]++
				}
			}
		}
	}
	for _, op := range ops.All() {
		assert.Positive(t, seen["op "+op.Name], op.Name)
	}
	for _, d := range tensor.DTypes() {
		assert.Positive(t, seen["dtype "+d.String()], d.String())
	}
	for _, d := range indexDTypes {
		assert.Positive(t, seen["index "+d.String()], d.String())
	}
	for r := 1; r <= 5; r++ {
		assert.Positive(t, seen["rank "+itoa(r)])
	}
	for _, k := range []string{"negative index", "empty indices", "empty data", "use_init_val true", "use_init_val false",
		"negative axis", "slice with axes", "slice without axes", "negative step", "extreme start",
		"reduction none", "reduction sum", "reduction sub", "reduction prod", "reduction min", "reduction max", "reduction mean"} {
		assert.Positive(t, seen[k], k)
	}
}

func TestRandomBadRequestsFail(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	count := map[string]int{}
	for i := 0; i < 3000; i++ {
		req, sentinel := RandomBadRequest(rng, Config{})
		_, err := Naive(req)
		require.ErrorIs(t, err, sentinel, Describe(req))
		var e *ops.Error
		require.ErrorAs(t, err, &e)
		count[sentinel.Error()]++
	}
	for _, s := range []error{ops.ErrIndexRange, ops.ErrShape, ops.ErrAxis, ops.ErrDType, ops.ErrReduction, ops.ErrMissingInput,
		ops.ErrUnexpectedInput, ops.ErrSlice} {
		assert.Positive(t, count[s.Error()], s.Error())
	}
}

func TestNaiveLeavesInputsAlone(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 500; i++ {
		req := RandomRequest(rng, Config{})
		before := cloneRequest(req)
		_, _ = Naive(req)
		requireInputsEqual(t, before, req, "Naive")
	}
}

func TestPythonSlice(t *testing.T) {
	// Results of list(range(n))[start:stop:step] in CPython.
	cases := []struct {
		start, stop, step int64
		n                 int
		want              []int
	}{
		{0, 5, 1, 5, []int{0, 1, 2, 3, 4}},
		{-25, 25, 2, 5, []int{0, 2, 4}},
		{-1, math.MinInt64, -2, 5, []int{4, 2, 0}},
		{100, -3, -1, 4, []int{3, 2}},
		{3, 1, 1, 5, nil},
		{1, 3, -1, 5, nil},
		{math.MaxInt64, math.MinInt64, -1, 3, []int{2, 1, 0}},
		{math.MinInt64, math.MaxInt64, math.MaxInt64, 3, []int{0}},
		{2, -10, math.MinInt64, 5, []int{2}},
		{0, 0, 1, 0, nil},
		{-1, -1, -1, 0, nil},
		{-2, 7, 3, 7, []int{5}},
		{-8, -1, 3, 7, []int{0, 3}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, pythonSlice(c.start, c.stop, c.step, c.n), "%d:%d:%d of %d", c.start, c.stop, c.step, c.n)
	}
}

func TestDiffReadsWell(t *testing.T) {
	a := tensor.MustFromSlice([]int{2, 2}, []float32{1, float32(math.NaN()), 0, 4})
	b := tensor.MustFromSlice([]int{2, 2}, []float32{1, math.Float32frombits(0x7fc00123), float32(math.Copysign(0, -1)), 5})
	d := Diff(a, b)
	assert.Contains(t, d, "2 of 4 elements differ")
	assert.Contains(t, d, "at [1,0]: got 0 (0x00000000), want -0 (0x80000000)")
	assert.Contains(t, d, "at [1,1]: got 4")
	assert.NotContains(t, d, "[0,1]", "NaNs match any NaN")
	assert.Contains(t, DiffExact(a, b), "[0,1]", "DiffExact tells NaN payloads apart")
	assert.Contains(t, Diff(a, tensor.MustFromSlice([]int{4}, []float32{1, 2, 3, 4})), "float32[2,2]")
	c1 := tensor.MustFromSlice([]int{1}, []complex64{complex(float32(math.NaN()), 1)})
	c2 := tensor.MustFromSlice([]int{1}, []complex64{complex(math.Float32frombits(0x7fc00001), 1)})
	c3 := tensor.MustFromSlice([]int{1}, []complex64{complex(float32(math.NaN()), 2)})
	assert.True(t, Same(c1, c2))
	assert.False(t, Same(c1, c3))
	s := mustStrings([]int{2}, "a", "b")
	assert.Contains(t, Diff(s, mustStrings([]int{2}, "a", "c")), `got "b", want "c"`)
	assert.True(t, strings.HasPrefix(Describe(ContractCases()[0].Request), `op="ScatterElements-11"`))
}

// TestDiffForComparesMinMaxNaNBits: the contract fixes the NaN bits of min
// and max results in any order of the fold, and only those; a request's
// reduction is read as its operator spells it.
func TestDiffForComparesMinMaxNaNBits(t *testing.T) {
	a := tensor.MustFromSlice([]int{1}, []float32{math.Float32frombits(0x7FC00000)})
	b := tensor.MustFromSlice([]int{1}, []float32{math.Float32frombits(0xFFC00000)})
	for _, r := range []ops.Reduction{ops.Min, ops.Max} {
		assert.Contains(t, DiffFor(r, a, b), "[0]", "%v", r)
	}
	for _, r := range []ops.Reduction{ops.None, ops.Sum, ops.Sub, ops.Prod, ops.Mean} {
		assert.Empty(t, DiffFor(r, a, b), "%v", r)
	}
	assert.Equal(t, ops.Max, ReductionOf(ops.Request{Op: "scatterelements-18", Reduction: "max"}))
	assert.Equal(t, ops.None, ReductionOf(ops.Request{Op: "ScatterElements-18", Reduction: "MAX"}), "reduction names are matched exactly")
	assert.Equal(t, ops.Sum, ReductionOf(ops.Request{Op: "ScatterND-18", Reduction: "add"}))
	assert.Equal(t, ops.None, ReductionOf(ops.Request{Op: "ScatterND-18"}))
	assert.Equal(t, ops.None, ReductionOf(ops.Request{Op: "NoSuchOp", Reduction: "max"}))
	m, found := FirstMismatch(ops.Request{Op: "ScatterND-18", Reduction: "min"}, a, b)
	assert.True(t, found)
	assert.Equal(t, []int{0}, m.Position)
	_, found = FirstMismatch(ops.Request{Op: "ScatterND-18", Reduction: "mul"}, a, b)
	assert.False(t, found)
}

func TestPlanBackendCloseCounts(t *testing.T) {
	b := &planBackend{}
	require.NoError(t, b.Close())
	assert.Equal(t, 1, b.closed)
}

// filterT is a T (testing's) that counts cases and wants those of one
// operator alone.
type filterT struct {
	T
	op    string
	begun map[string]int // cases begun, by operator
}

func (t *filterT) Run(name string, f func(T)) bool {
	return t.T.Run(name, func(c T) { f(&filterT{T: c, op: t.op, begun: t.begun}) })
}

func (t *filterT) Wants(req ops.Request) bool { return req.Op == t.op }

func (t *filterT) BeginCase(req ops.Request) { t.begun[req.Op]++ }

// TestCaseFilter: the suites skip the cases a CaseFilter does not want,
// before running or counting them, and check those it wants.
func TestCaseFilter(t *testing.T) {
	ft := &filterT{T: WrapT(t), op: "ScatterElements-18", begun: map[string]int{}}
	Conformance(ft, func(T) ops.Backend { return &planBackend{} }, 20)
	Differential(ft, &planBackend{}, &planBackend{}, 1, 200, Config{})
	assert.Equal(t, []string{"ScatterElements-18"}, keys(ft.begun), "the cases begun")
	assert.Greater(t, ft.begun["ScatterElements-18"], 20)
}

func keys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestSkipBadRequestsCoverEveryOperator: SkipBadRequest draws every
// operator that takes indices, every reduction, and calls whose bad index
// Naive reports while giving a result.
func TestSkipBadRequestsCoverEveryOperator(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	seen := map[string]int{}
	for i := 0; i < 3000; i++ {
		req := SkipBadRequest(rng, Config{})
		require.True(t, req.SkipBadIndices)
		got, err := Naive(req)
		require.ErrorIs(t, err, ops.ErrIndexRange, Describe(req))
		require.NotNil(t, got, Describe(req))
		op, _ := ops.Lookup(req.Op)
		seen[op.Name]++
		seen["reduction "+ReductionOf(req).String()]++
	}
	for _, op := range ops.All() {
		if op.TakesIndices() {
			assert.Positive(t, seen[op.Name], op.Name)
		}
	}
	for _, r := range []string{"none", "sum", "sub", "prod", "min", "max", "mean"} {
		assert.Positive(t, seen["reduction "+r], r)
	}
}

// TestNaiveSkipsBadIndices: with SkipBadIndices a bad index's updates are
// left out, the others applied as if they were absent, and the first bad
// index reported; without it the same calls fail with no result.
func TestNaiveSkipsBadIndices(t *testing.T) {
	f32 := func(shape []int, v ...float32) *tensor.Tensor { return tensor.MustFromSlice(shape, v) }
	cases := []struct {
		name string
		req  ops.Request
		want *tensor.Tensor
		err  string
	}{{
		// The last writer of element 2 is a bad index: the valid one
		// before it wins.
		name: "elements, last writer",
		req: ops.Request{Op: "ScatterElements-18", Data: f32([]int{3}, 0, 0, 0),
			Indices: tensor.Ints(2, 1, 2, 9), Updates: f32([]int{4}, 1, 2, 3, 4)},
		want: f32([]int{3}, 0, 2, 3),
		err:  "indices[3] = 9 is out of range [-3, 2] for axis 0 of data",
	}, {
		// Tuple 1 has a bad second component: the whole tuple is skipped.
		name: "nd sum, a bad tuple",
		req: ops.Request{Op: "ScatterNDUpdate-15", Data: f32([]int{2, 2}, 0, 0, 0, 0), Reduction: "sum",
			Indices: tensor.MustFromSlice([]int{3, 2}, []int64{0, 1, 1, 5, 0, 1}), Updates: f32([]int{3}, 1, 2, 3)},
		want: f32([]int{2, 2}, 0, 4, 0, 0),
		err:  "indices[1,1] = 5 is out of range [-2, 1] for axis 1 of data",
	}, {
		// The mean of element 0 counts its valid update alone.
		name: "elements mean",
		req: ops.Request{Op: "ScatterElementsUpdate-12", Data: f32([]int{2}, 10, 20), Reduction: "mean", Axis: tensor.Scalar(0),
			Indices: tensor.Ints(0, -7, 0), Updates: f32([]int{3}, 4, 100, 7)},
		want: f32([]int{2}, 7, 20),
		err:  "indices[1] = -7 is out of range [-2, 1] for axis 0 of data",
	}, {
		// Batch entry 0's write index 3 leaves no room for 2 rows.
		name: "tensorscatter linear",
		req: ops.Request{Op: "TensorScatter-24", Data: f32([]int{2, 4, 1}, 0, 0, 0, 0, 0, 0, 0, 0), Indices: tensor.Ints(3, 1),
			Updates: f32([]int{2, 2, 1}, 1, 2, 3, 4)},
		want: f32([]int{2, 4, 1}, 0, 0, 0, 0, 0, 3, 4, 0),
		err:  "write_indices[0] = 3 is out of range [0, 2]",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.SkipBadIndices = true
			got, err := Naive(c.req)
			require.ErrorIs(t, err, ops.ErrIndexRange)
			assert.Contains(t, err.Error(), c.err)
			assert.Empty(t, DiffExact(got, c.want))

			got, err = (&planBackend{}).run(c.req)
			require.ErrorIs(t, err, ops.ErrIndexRange)
			assert.Contains(t, err.Error(), c.err)
			assert.Empty(t, DiffExact(got, c.want), "planBackend")

			c.req.SkipBadIndices = false
			got, err = Naive(c.req)
			require.ErrorIs(t, err, ops.ErrIndexRange)
			assert.Nil(t, got)
		})
	}
}

// run is ops.Run on b.
func (b *planBackend) run(req ops.Request) (*tensor.Tensor, error) {
	return ops.Run(context.Background(), b, req)
}
