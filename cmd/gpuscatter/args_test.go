package main

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/tensor"
)

func TestParseIntList(t *testing.T) {
	ok := []struct {
		in   string
		want []int64
	}{
		{"0", []int64{0}},
		{"0,-1", []int64{0, -1}},
		{" 2 , 4,6 ", []int64{2, 4, 6}},
		{"+5,-0", []int64{5, 0}},
		{"", []int64{}},
		{"  ", []int64{}},
		{"9223372036854775807,-9223372036854775808", []int64{math.MaxInt64, math.MinInt64}},
		{"007", []int64{7}},
	}
	for _, tt := range ok {
		got, err := parseIntList(tt.in)
		require.NoError(t, err, "%q", tt.in)
		assert.Equal(t, tt.want, got, "%q", tt.in)
	}
	bad := []struct {
		in, msg string
	}{
		{"1,,2", "element 2 of the comma list is empty"},
		{",1", "element 1 of the comma list is empty"},
		{"1,", "element 2 of the comma list is empty"},
		{"1,x", `element 2 ("x") is not a decimal integer`},
		{"1.5", "is not a decimal integer"},
		{"0x10", "is not a decimal integer"},
		{"1_000", "is not a decimal integer"},
		{"1 2", "is not a decimal integer"},
		{"--1", "is not a decimal integer"},
		{"9223372036854775808", "does not fit in an int64"},
		{"-9223372036854775809", "does not fit in an int64"},
		{"start.npz", "or a path ending in .npy"},
	}
	for _, tt := range bad {
		_, err := parseIntList(tt.in)
		require.Error(t, err, "%q", tt.in)
		assert.Contains(t, err.Error(), tt.msg, "%q", tt.in)
	}
}

func TestParseIntListTensor(t *testing.T) {
	x, err := parseIntListTensor("3,-1")
	require.NoError(t, err)
	requireEqualTensor(t, tensor.Ints(3, -1), x)
	x, err = parseIntListTensor("")
	require.NoError(t, err)
	assert.Equal(t, []int{0}, x.Shape)
	assert.Equal(t, tensor.Int64, x.DType)
}

func TestIsNPYPath(t *testing.T) {
	for s, want := range map[string]bool{
		"a.npy": true, "dir/A.NPY": true, ".npy": true, "0,1": false, "a.npz": false, "npy": false, "": false,
	} {
		assert.Equal(t, want, isNPYPath(s), "%q", s)
	}
}

func TestParseIntScalar(t *testing.T) {
	x, err := parseIntScalar("-2")
	require.NoError(t, err)
	requireEqualTensor(t, tensor.Scalar(-2), x)
	for _, s := range []string{"", "1,2", "1.0", "x", "99999999999999999999"} {
		_, err := parseIntScalar(s)
		assert.Error(t, err, "%q", s)
	}
}

// FuzzParseIntList checks that parseIntList never panics and that every
// list it accepts formats back to a string that parses to the same list.
func FuzzParseIntList(f *testing.F) {
	for _, s := range []string{
		"0", "0,-1", "", " ", " 1 , 2 ", "1,,2", ",", "+5", "-0", "007",
		"9223372036854775807", "-9223372036854775808", "9223372036854775808",
		"0x10", "1_000", "1e3", "１", "\t3\n", "a.npy",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vals, err := parseIntList(s)
		if err != nil {
			if vals != nil {
				t.Fatalf("parseIntList(%q) returned values %v with error %v", s, vals, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("parseIntList(%q): error spans lines: %q", s, err)
			}
			return
		}
		if strings.TrimSpace(s) != "" && len(vals) != strings.Count(s, ",")+1 {
			t.Fatalf("parseIntList(%q) = %v: %d values for %d commas", s, vals, len(vals), strings.Count(s, ","))
		}
		canon := formatIntList(vals)
		again, err := parseIntList(canon)
		if err != nil {
			t.Fatalf("parseIntList(%q) = %v, but its formatting %q does not parse: %v", s, vals, canon, err)
		}
		if len(again) != len(vals) {
			t.Fatalf("round trip of %q: %v -> %q -> %v", s, vals, canon, again)
		}
		for i := range vals {
			if again[i] != vals[i] {
				t.Fatalf("round trip of %q: %v -> %q -> %v", s, vals, canon, again)
			}
		}
		if formatIntList(again) != canon {
			t.Fatalf("formatting is not canonical: %q then %q", canon, formatIntList(again))
		}
		x, err := parseIntListTensor(s)
		if err != nil || x.Check() != nil || x.Len() != len(vals) || x.DType != tensor.Int64 || x.Rank() != 1 {
			t.Fatalf("parseIntListTensor(%q) = %v, %v", s, x, err)
		}
	})
}
