package tensor_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/tensor"
)

func TestDTypeNamesRoundTrip(t *testing.T) {
	for _, d := range tensor.DTypes() {
		got, err := tensor.ParseDType(d.String())
		require.NoError(t, err)
		assert.Equal(t, d, got)
		assert.Positive(t, d.Size(), d.String())
	}
	_, err := tensor.ParseDType("float8")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "float8")
	assert.Equal(t, "dtype(200)", tensor.DType(200).String())
}

func TestNumElementsRejectsNegativeAndHuge(t *testing.T) {
	n, err := tensor.NumElements(nil)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "a scalar holds one element")
	n, err = tensor.NumElements([]int{3, 0, 5})
	require.NoError(t, err)
	assert.Zero(t, n)
	_, err = tensor.NumElements([]int{2, -1})
	require.ErrorIs(t, err, tensor.ErrInvalid)
	_, err = tensor.NumElements([]int{1 << 30, 1 << 30, 1 << 30})
	require.ErrorIs(t, err, tensor.ErrInvalid)
	_, err = tensor.New(tensor.Float64, []int{1 << 38})
	require.ErrorIs(t, err, tensor.ErrInvalid, "2^38 float64 is 2 TiB")
}

func TestCheckCatchesPayloadMismatch(t *testing.T) {
	x := tensor.MustFromSlice([]int{2, 2}, []float32{1, 2, 3, 4})
	require.NoError(t, x.Check())
	x.Data = x.Data[:12]
	require.ErrorIs(t, x.Check(), tensor.ErrInvalid)
	s := &tensor.Tensor{DType: tensor.String, Shape: []int{2}, Strings: []string{"a"}}
	require.ErrorIs(t, s.Check(), tensor.ErrInvalid)
	var nilT *tensor.Tensor
	require.ErrorIs(t, nilT.Check(), tensor.ErrInvalid)
	require.ErrorIs(t, (&tensor.Tensor{Shape: []int{1}}).Check(), tensor.ErrInvalid)
}

func TestViewAndClone(t *testing.T) {
	x := tensor.MustFromSlice([]int{3}, []int16{-1, 2, 300})
	v := tensor.View[int16](x)
	require.Equal(t, []int16{-1, 2, 300}, v)
	assert.Nil(t, tensor.View[int32](x), "a view of the wrong type is nil")
	c := x.Clone()
	v[0] = 7
	assert.Equal(t, int16(-1), tensor.View[int16](c)[0], "clone does not share memory")
	assert.False(t, tensor.Equal(x, c))
}

func TestIntAtEveryIntegerType(t *testing.T) {
	cases := []*tensor.Tensor{
		tensor.MustFromSlice([]int{2}, []int8{-128, 127}),
		tensor.MustFromSlice([]int{2}, []uint8{0, 255}),
		tensor.MustFromSlice([]int{2}, []int16{-32768, 32767}),
		tensor.MustFromSlice([]int{2}, []uint16{0, 65535}),
		tensor.MustFromSlice([]int{2}, []int32{math.MinInt32, math.MaxInt32}),
		tensor.MustFromSlice([]int{2}, []uint32{0, math.MaxUint32}),
		tensor.MustFromSlice([]int{2}, []int64{math.MinInt64, math.MaxInt64}),
	}
	want := [][2]int64{{-128, 127}, {0, 255}, {-32768, 32767}, {0, 65535}, {math.MinInt32, math.MaxInt32}, {0, math.MaxUint32}, {math.MinInt64, math.MaxInt64}}
	for i, c := range cases {
		for j := 0; j < 2; j++ {
			v, ok := c.IntAt(j)
			assert.True(t, ok)
			assert.Equal(t, want[i][j], v, c.DType.String())
		}
	}
	u := tensor.MustFromSlice([]int{2}, []uint64{5, math.MaxUint64})
	v, ok := u.IntAt(1)
	assert.False(t, ok, "uint64 above MaxInt64 does not fit")
	assert.Equal(t, int64(math.MaxInt64), v)
	assert.Equal(t, "18446744073709551615", u.FormatAt(1))
}

func TestHalfPrecisionRounding(t *testing.T) {
	// bfloat16 keeps 8 significant bits: 1 + 2^-8 is a tie and rounds to even (1).
	assert.Equal(t, float32(1), tensor.BF16From(1+1.0/256).Float32())
	assert.Equal(t, float32(1+2.0/128), tensor.BF16From(1+3.0/256).Float32(), "1+1.5/128 is a tie; the even neighbour is 1+2/128")
	assert.True(t, math.IsNaN(float64(tensor.BF16From(float32(math.NaN())).Float32())))
	assert.True(t, math.IsInf(float64(tensor.BF16From(float32(math.Inf(-1))).Float32()), -1))
	assert.Equal(t, float32(2048), tensor.F16From(2049).Float32(), "float16 has 11 significant bits")
}

func TestStringRendering(t *testing.T) {
	x := tensor.MustFromSlice([]int{2, 2}, []float32{1, 2.5, -0, 4})
	assert.Equal(t, "float32[2,2] [1 2.5 0 4]", x.String())
	s, err := tensor.FromStrings([]int{2}, []string{"a", "b c"})
	require.NoError(t, err)
	assert.Equal(t, `string[2] ["a" "b c"]`, s.String())
	assert.Equal(t, "int64[] [3]", tensor.Scalar(3).String())
	big, err := tensor.New(tensor.Uint8, []int{100})
	require.NoError(t, err)
	assert.Contains(t, big.String(), "(80 more)")
}

func TestUnravelAndStrides(t *testing.T) {
	assert.Equal(t, []int{12, 4, 1}, tensor.Strides([]int{2, 3, 4}))
	c := make([]int, 3)
	tensor.Unravel(23, []int{2, 3, 4}, c)
	assert.Equal(t, []int{1, 2, 3}, c)
}

// TestFormatShapeAbbreviates: a shape from a hostile file may have a
// hundred thousand dimensions; its text in an error stays short.
func TestFormatShapeAbbreviates(t *testing.T) {
	assert.Equal(t, "[]", tensor.FormatShape(nil))
	assert.Equal(t, "[2,3]", tensor.FormatShape([]int{2, 3}))
	long := make([]int, 100000)
	for i := range long {
		long[i] = i
	}
	s := tensor.FormatShape(long)
	assert.Less(t, len(s), 300, s)
	assert.Contains(t, s, "[0,1,2,")
	assert.Contains(t, s, ",15,...(100000 dims)...,99984,")
	assert.Contains(t, s, ",99999]")
	exact := make([]int, 32)
	assert.NotContains(t, tensor.FormatShape(exact), "dims")
}
