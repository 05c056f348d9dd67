package ops_test

import (
	"math"
	"math/big"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// pythonRange returns list(range(n))[start:stop:step] the way CPython
// computes it: slice.indices(n) (PySlice_AdjustIndices, with unbounded
// integers) and then range(start, stop, step), walked one coordinate at a
// time.
func pythonRange(start, stop, step int64, n int) []int {
	size := big.NewInt(int64(n))
	st := big.NewInt(step)
	neg := step < 0
	adjust := func(v int64) *big.Int {
		x := big.NewInt(v)
		if x.Sign() < 0 {
			x.Add(x, size)
			if x.Sign() < 0 {
				if neg {
					return big.NewInt(-1)
				}
				return big.NewInt(0)
			}
			return x
		}
		if x.Cmp(size) >= 0 {
			if neg {
				return new(big.Int).Sub(size, big.NewInt(1))
			}
			return new(big.Int).Set(size)
		}
		return x
	}
	i, end := adjust(start), adjust(stop)
	var out []int
	for (!neg && i.Cmp(end) < 0) || (neg && i.Cmp(end) > 0) {
		out = append(out, int(i.Int64()))
		i.Add(i, st)
	}
	return out
}

// expand lists the coordinates SliceRange's answer stands for; step only
// matters when there is more than one.
func expand(first, count int, step int64) []int {
	var out []int
	for m := 0; m < count; m++ {
		out = append(out, first+m*int(step))
	}
	return out
}

func TestSliceRangeMatchesPython(t *testing.T) {
	bounds := []int64{
		math.MinInt64, math.MinInt64 + 1, math.MaxInt64, math.MaxInt64 - 1,
		math.MinInt32, math.MaxInt32, math.MinInt16, math.MaxInt16, math.MinInt8, math.MaxInt8,
		math.MaxUint8, math.MaxUint16, math.MaxUint32,
	}
	for v := int64(-10); v <= 10; v++ {
		bounds = append(bounds, v)
	}
	steps := []int64{1, 2, 3, 4, 7, -1, -2, -3, -4, -7,
		math.MaxInt64, math.MinInt64, math.MinInt64 + 1, math.MaxInt32, math.MinInt32, math.MaxInt8, math.MinInt8, math.MaxUint32}
	checked := 0
	for n := 0; n <= 9; n++ {
		for _, step := range steps {
			for _, start := range bounds {
				for _, stop := range bounds {
					want := pythonRange(start, stop, step, n)
					first, count := ops.SliceRange(start, stop, step, n)
					got := expand(first, count, step)
					if !slices.Equal(want, got) {
						assert.Equal(t, want, got, "range(%d)[%d:%d:%d]: SliceRange = (%d, %d)", n, start, stop, step, first, count)
						return
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d slices checked against Python's rules", checked)
}

// TestSliceRangeSpecExamples: SliceScatter-15 examples 2 and 3.
func TestSliceRangeSpecExamples(t *testing.T) {
	first, count := ops.SliceRange(-25, 25, 2, 5) // "silently clamped to 0" and "to 5"
	assert.Equal(t, [2]int{0, 3}, [2]int{first, count})
	first, count = ops.SliceRange(1, 5, 2, 5)
	assert.Equal(t, [2]int{1, 2}, [2]int{first, count})
	first, count = ops.SliceRange(0, 3, 2, 3)
	assert.Equal(t, [2]int{0, 2}, [2]int{first, count})
}

// TestSlicePlanUsesPythonRules: what Prepare puts in the plan for INT_MIN and
// INT_MAX of each index type agrees with Python.
func TestSlicePlanUsesPythonRules(t *testing.T) {
	type bound struct {
		dt       tensor.DType
		min, max int64
	}
	for _, b := range []bound{{tensor.Int8, math.MinInt8, math.MaxInt8}, {tensor.Int16, math.MinInt16, math.MaxInt16},
		{tensor.Int32, math.MinInt32, math.MaxInt32}, {tensor.Int64, math.MinInt64, math.MaxInt64}} {
		for _, c := range []struct{ start, stop, step int64 }{
			{0, b.max, 1}, {b.max, b.min, -1}, {-1, b.min, -2}, {b.min, b.max, 3}, {b.max, 0, -1}, {b.min, b.min, 1},
		} {
			enc := func(v int64) *tensor.Tensor {
				t, _ := tensor.New(b.dt, []int{1})
				for i := 0; i < b.dt.Size(); i++ {
					t.Data[i] = byte(v >> (8 * i))
				}
				return t
			}
			want := pythonRange(c.start, c.stop, c.step, 6)
			data := tensor.MustFromSlice([]int{2, 6}, make([]float32, 12))
			upd, _ := tensor.New(tensor.Float32, []int{2, len(want)})
			p, err := ops.Prepare(ops.Request{Op: "SliceScatter-15", Data: data, Updates: upd,
				Start: enc(c.start), Stop: enc(c.stop), Step: enc(c.step), Axes: tensor.Ints(-1)})
			require.NoError(t, err, "%v %v", b.dt, c)
			assert.Equal(t, want, expand(p.SliceStart[1], p.SliceCount[1], int64(p.SliceStep[1])), "%v %v", b.dt, c)
			assert.Equal(t, [3]int{0, 1, 2}, [3]int{p.SliceStart[0], p.SliceStep[0], p.SliceCount[0]}, "axis 0 is whole")
		}
	}
}
