//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// plainTypes reports the exported fields of struct type t, at any depth
// through structs, slices and arrays, whose type is not a plain value: a
// pointer, map, channel, function or interface, or a type of another
// package of this module (such as vk's).
func plainTypes(t reflect.Type, path string) []string {
	var bad []string
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
		return []string{path + " is " + t.String()}
	case reflect.Slice, reflect.Array:
		return plainTypes(t.Elem(), path+"[]")
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if f.IsExported() {
				bad = append(bad, plainTypes(f.Type, path+"."+f.Name)...)
			}
		}
	}
	if pkg := t.PkgPath(); pkg != "" && pkg != "time" && pkg != reflect.TypeFor[Stats]().PkgPath() {
		bad = append(bad, path+" is "+t.String())
	}
	return bad
}

// TestStatsArePlainValues: the fields of Stats are durations, counts and
// strings, of no package but gpu and time.
func TestStatsArePlainValues(t *testing.T) {
	assert.Empty(t, plainTypes(reflect.TypeFor[Stats](), "Stats"))
}

// TestStatsString: printed with %v (or %s, %+v, inside a slice) the
// figures of an Execute and of a batch of two calls read as one line
// naming the times, the passes, the counts, the kernels and the
// reduction's path, with no memory address.
func TestStatsString(t *testing.T) {
	ctx := context.Background()
	b := openTest(t, Options{})
	req := ops.Request{Op: "ScatterElements-18", Reduction: "max",
		Data:    tensor.MustFromSlice([]int{4}, []float32{1, 2, 3, 4}),
		Indices: tensor.MustFromSlice([]int{3}, []int64{0, 3, 0}),
		Updates: tensor.MustFromSlice([]int{3}, []float32{10, 20, 30}),
		Axis:    tensor.Scalar(int64(0))}
	_, err := ops.Run(ctx, b, req)
	require.NoError(t, err)
	exec := b.LastStats()

	data, err := b.Upload(ctx, req.Data)
	require.NoError(t, err)
	idx, err := b.Upload(ctx, req.Indices)
	require.NoError(t, err)
	upd, err := b.Upload(ctx, req.Updates)
	require.NoError(t, err)
	bt := b.NewBatch()
	c := Call{Op: req.Op, Data: data, Indices: idx, Updates: upd, Out: data, Axis: req.Axis, Reduction: req.Reduction}
	require.NoError(t, bt.Add(c))
	require.NoError(t, bt.Add(c))
	sub, err := bt.Submit(ctx)
	require.NoError(t, err)
	require.NoError(t, sub.Wait(ctx))
	batch := sub.Stats()

	address := regexp.MustCompile(`0x[0-9a-f]+|\{0x|\n`)
	for name, st := range map[string]Stats{"execute": exec, "batch": batch} {
		t.Run(name, func(t *testing.T) {
			require.NotEmpty(t, st.Variants)
			s := fmt.Sprintf("%v", st)
			t.Log(s)
			for _, printed := range []string{s, fmt.Sprintf("%s", st), fmt.Sprintf("%+v", st), fmt.Sprintf("%v", []Stats{st})} {
				assert.NotRegexp(t, address, printed, "no address, one line")
			}
			assert.Regexp(t, `^total \S+ \(pipelines \S+, upload \S+, submit \S+, download \S+\), device \S+`, s)
			assert.Contains(t, s, fmt.Sprintf(", %d submit", st.Submits))
			assert.Contains(t, s, fmt.Sprintf("%d transfer pieces", st.TransferPieces))
			assert.Contains(t, s, "kernels "+st.Variants[0])
			assert.Contains(t, s, ", reduction "+st.Reduction)
			for _, p := range st.Passes {
				assert.Contains(t, s, p.Label+" "+p.Duration.String())
			}
		})
	}
	assert.Equal(t, "total 0s (pipelines 0s, upload 0s, submit 0s, download 0s), device 0s, 0 dispatches, 0 submits, 0 waits, 0 transfer pieces",
		Stats{}.String())
	assert.Equal(t, "scatter 1.5ms", PassTime{Label: "scatter", Duration: 1500 * time.Microsecond}.String())
}
