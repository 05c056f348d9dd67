//go:build cgo

package gpu

import (
	"context"
	"encoding/json"
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
// figures of an Execute and of batches of two and of 200 calls read as
// one short line, whatever the number of calls, naming the calls,
// dispatches, submissions, device time, bytes and total time, with no
// memory address; the time of each pass, the kernels and the path stay
// fields, and in the figures' JSON.
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
	p, err := ops.Prepare(req)
	require.NoError(t, err)
	needs, err := b.Needs(p)
	require.NoError(t, err)
	assert.Equal(t, 1, exec.Calls)
	assert.Equal(t, needs.TrafficBytes, exec.Bytes)
	assert.Equal(t, needs.HostBytes, exec.HostBytes)
	assert.Equal(t, uint64(16+24+12+16), exec.HostBytes, "data, indices and updates up, the output down")

	data, err := b.Upload(ctx, req.Data)
	require.NoError(t, err)
	idx, err := b.Upload(ctx, req.Indices)
	require.NoError(t, err)
	upd, err := b.Upload(ctx, req.Updates)
	require.NoError(t, err)
	batchOf := func(n int) Stats {
		bt := b.NewBatch()
		c := Call{Op: req.Op, Data: data, Indices: idx, Updates: upd, Out: data, Axis: req.Axis, Reduction: req.Reduction}
		for range n {
			require.NoError(t, bt.Add(c))
		}
		sub, err := bt.Submit(ctx)
		require.NoError(t, err)
		require.NoError(t, sub.Wait(ctx))
		return sub.Stats()
	}
	two, many := batchOf(2), batchOf(200)
	assert.Equal(t, 2, two.Calls)
	assert.Equal(t, 200, many.Calls)
	assert.Equal(t, 100*two.Bytes, many.Bytes, "each call's passes move the same bytes")
	assert.Zero(t, many.HostBytes, "calls on resident tensors copy nothing to or from the host")

	address := regexp.MustCompile(`0x[0-9a-f]+|\{0x|\n`)
	line := regexp.MustCompile(`^(\d+) calls?, (\d+) dispatch(?:es)?, (\d+) submits?, device (\S+), \d+(?:\.\d)? [kMG]?B on the device, ` +
		`\d+(?:\.\d)? [kMG]?B to and from the host, total (\S+)$`)
	for name, st := range map[string]Stats{"execute": exec, "batch of 2": two, "batch of 200": many} {
		t.Run(name, func(t *testing.T) {
			require.NotEmpty(t, st.Variants)
			require.NotEmpty(t, st.Passes)
			require.NotZero(t, st.Bytes)
			s := fmt.Sprintf("%v", st)
			t.Log(s)
			for _, printed := range []string{s, fmt.Sprintf("%s", st), fmt.Sprintf("%+v", st), fmt.Sprintf("%v", []Stats{st})} {
				assert.NotRegexp(t, address, printed, "no address, one line")
			}
			assert.Less(t, len(s), 200, "one short line")
			m := line.FindStringSubmatch(s)
			require.NotNil(t, m, "%q", s)
			assert.Equal(t, fmt.Sprint(st.Calls), m[1])
			assert.Equal(t, fmt.Sprint(st.Dispatches), m[2])
			assert.Equal(t, fmt.Sprint(st.Submits), m[3])
			assert.Equal(t, roundDuration(st.Device).String(), m[4])
			assert.Equal(t, roundDuration(st.Total).String(), m[5])
			assert.Contains(t, s, formatBytes(st.Bytes)+" on the device")
			assert.Contains(t, s, formatBytes(st.HostBytes)+" to and from the host")
			// The detail is in the fields and their JSON.
			js, err := json.Marshal(st)
			require.NoError(t, err)
			for _, p := range st.Passes {
				assert.Contains(t, string(js), fmt.Sprintf(`{"Label":%q,"Duration":%d}`, p.Label, p.Duration))
			}
			assert.Contains(t, string(js), fmt.Sprintf(`"Variants":["%s"`, st.Variants[0]))
			assert.Contains(t, string(js), fmt.Sprintf(`"Reduction":%q`, st.Reduction))
		})
	}
	assert.Greater(t, len(many.Passes), 200, "a pass time per call or more")
	assert.Equal(t, "0 calls, 0 dispatches, 0 submits, device 0s, 0 B on the device, 0 B to and from the host, total 0s",
		Stats{}.String())
	assert.Equal(t, "1 call, 1 dispatch, 1 submit, device 1.5ms, 1.5 kB on the device, 12.6 MB to and from the host, total 2ms",
		Stats{Calls: 1, Dispatches: 1, Submits: 1, Device: 1500 * time.Microsecond, Bytes: 1500, HostBytes: 12_600_000, Total: 2 * time.Millisecond}.String())
	assert.Equal(t, "1 call, 0 dispatches, 0 submits, device 1.235s, 0 B on the device, 0 B to and from the host, total 2.5s",
		Stats{Calls: 1, Device: 1234567890, Total: 2500*time.Millisecond + 400*time.Microsecond}.String(), "rounded to the millisecond from a second up")
	assert.Equal(t, "scatter 1.5ms", PassTime{Label: "scatter", Duration: 1500 * time.Microsecond}.String())
}
