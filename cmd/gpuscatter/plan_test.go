//go:build cgo

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpubench"
	"github.com/gpuscatter/gpuscatter/internal/onnxpb"
	"github.com/gpuscatter/gpuscatter/internal/treetests"
	"github.com/gpuscatter/gpuscatter/npy"
	"github.com/gpuscatter/gpuscatter/onnx"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// discreteFacts is the discrete GPU's description the gpu package's
// plan table is planned for.
const discreteFacts = "../../gpu/testdata/facts/discrete.json"

// planInputs writes a ScatterElements-18 call of n random updates into m
// elements and returns the run flags that name it, and the call without
// payloads.
func planInputs(t *testing.T, dir string, m, n int) ([]string, ops.Request) {
	seed := uint64(n)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	idx := make([]int64, n)
	upd := make([]float32, n)
	for i := range idx {
		idx[i], upd[i] = rng.Int64N(int64(m)), rng.Float32()
	}
	d := f32([]int{m}, make([]float32, m)...)
	args := []string{"--op", "ScatterElements-18", "--reduction", "add",
		"--data", writeNPY(t, dir, "d.npy", d), "--indices", writeNPY(t, dir, "i.npy", i64([]int{n}, idx...)),
		"--updates", writeNPY(t, dir, "u.npy", f32([]int{n}, upd...))}
	req := ops.Request{Op: "ScatterElements-18", Reduction: "add", Data: &tensor.Tensor{DType: tensor.Float32, Shape: []int{m}},
		Indices: &tensor.Tensor{DType: tensor.Int64, Shape: []int{n}}, Updates: &tensor.Tensor{DType: tensor.Float32, Shape: []int{n}}}
	return args, req
}

// requirePlanJSON checks that plan --json printed n's figures.
func requirePlanJSON(t *testing.T, stdout string, n gpu.PlanNeeds, what string) planJSON {
	t.Helper()
	var got planJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &got), what)
	assert.Equal(t, n.Path, got.Path, what)
	require.Len(t, got.Passes, len(n.Passes), what)
	for i, ps := range n.Passes {
		assert.Equal(t, passJSON{ps.Name, ps.Dispatches, ps.Invocations, ps.Read, ps.Written}, got.Passes[i], "%s: pass %d", what, i+1)
	}
	assert.Equal(t, n.Dispatches, got.Dispatches, what)
	assert.Equal(t, n.TrafficBytes, got.TrafficBytes, what)
	assert.Equal(t, n.OnePassBytes, got.OnePassBytes, what)
	assert.Equal(t, n.DeviceBytes, got.DeviceMemoryBytes, what)
	assert.Equal(t, n.Plan, got.Plan, what)
	// The keys tools read.
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &raw))
	for _, k := range []string{"passes", "dispatches", "traffic_bytes", "one_pass_bytes", "device_memory_bytes"} {
		assert.Contains(t, raw, k, what)
	}
	return got
}

// TestPlanIsTheDevicesPlan: plan prints the plan the Vulkan backend makes
// for the call on this machine's device, as text and as JSON, in both
// modes, and writes nothing.
func TestPlanIsTheDevicesPlan(t *testing.T) {
	dir := t.TempDir()
	args, req := planInputs(t, dir, 64, 5000)
	before := snapshot(t, dir)
	p, err := ops.PrepareShapes(req)
	require.NoError(t, err)
	for _, det := range []bool{false, true} {
		b, err := gpu.Open(testGPUOptions(t, gpu.Options{Deterministic: det, MaxPoolBytes: -1}))
		require.NoError(t, err)
		want, err := b.Needs(p)
		require.NoError(t, err)
		info := gpubench.Of(b).Device().Info()
		require.NoError(t, b.Close())
		flags := append([]string{"plan"}, args...)
		if det {
			flags = append(flags, "--deterministic")
		}
		code, stdout, stderr := runCLI(t, append(flags, "--json")...)
		require.Equal(t, exitOK, code, stderr)
		got := requirePlanJSON(t, stdout, want, "json")
		assert.Equal(t, info.Name, got.Device)
		assert.Equal(t, det, got.Deterministic)
		assert.Equal(t, "add", got.Reduction, "the reduction as ScatterElements-18 spells it")

		code, stdout, stderr = runCLI(t, flags...)
		require.Equal(t, exitOK, code, stderr)
		assert.Empty(t, stderr)
		assert.Contains(t, stdout, "ScatterElements-18 float32[64] reduction add on "+`"`+info.Name+`"`)
		assert.Contains(t, stdout, "path "+want.Path+"\n")
		for i, ps := range want.Passes {
			assert.Regexp(t, `\n +`+itoa(i+1)+` `+ps.Name+` +`+itoa(ps.Dispatches)+` +`+u64toa(ps.Invocations)+` +`+u64toa(ps.Read)+` +`+u64toa(ps.Written)+`\n`, stdout)
		}
		assert.Contains(t, stdout, "dispatches: "+itoa(want.Dispatches)+"\n")
		assert.Contains(t, stdout, "traffic: "+u64toa(want.TrafficBytes)+" bytes read and written; one pass: "+u64toa(want.OnePassBytes)+" bytes")
		assert.Contains(t, stdout, "device memory: "+u64toa(want.DeviceBytes)+" bytes")
		assert.Contains(t, stdout, strings.ReplaceAll(want.Plan, "\n", "\n  "))
	}
	assert.Equal(t, before, snapshot(t, dir), "plan writes nothing")
}

// TestPlanForFacts: --facts plans for the device a file describes, one
// element of devices --json or an array of that one, with no device
// needed, as gpu.PlanFor does.
func TestPlanForFacts(t *testing.T) {
	treetests.Require(t) // the discrete GPU's description in gpu/testdata
	dir := t.TempDir()
	args, req := planInputs(t, dir, 1000, 40000)
	p, err := ops.PrepareShapes(req)
	require.NoError(t, err)
	raw, err := os.ReadFile(discreteFacts)
	require.NoError(t, err)
	info, err := vk.ParseDeviceInfo(raw)
	require.NoError(t, err)
	array := filepath.Join(dir, "devices.json")
	require.NoError(t, os.WriteFile(array, []byte("[\n"+string(raw)+"]\n"), 0o644))
	for _, det := range []bool{false, true} {
		want, err := gpu.PlanFor(info, gpu.Options{Deterministic: det, MaxPoolBytes: -1}, p)
		require.NoError(t, err)
		for _, facts := range []string{discreteFacts, array} {
			flags := append([]string{"plan", "--json", "--facts", facts}, args...)
			if det {
				flags = append(flags, "--deterministic")
			}
			code, stdout, stderr := runCLI(t, flags...)
			require.Equal(t, exitOK, code, stderr)
			got := requirePlanJSON(t, stdout, want, facts)
			assert.Equal(t, "NVIDIA H100 80GB HBM3", got.Device)
			assert.Equal(t, "discrete", got.DeviceType)
		}
	}
}

// TestPlanInPlace: --in-place plans the call on resident tensors with
// data as the output, as gpu.PlanInPlaceFor and Backend.NeedsInPlace do:
// no host transfers, no copy of data, and for a sum with duplicates on
// the discrete profile more traffic than Execute's (the index check's
// pass before the scatter).
func TestPlanInPlace(t *testing.T) {
	treetests.Require(t) // the discrete GPU's description in gpu/testdata
	dir := t.TempDir()
	args, req := planInputs(t, dir, 1000, 40000)
	p, err := ops.PrepareShapes(req)
	require.NoError(t, err)
	info := discreteInfo(t)
	// In place, as a runtime keeps its backend, with buffers kept.
	want, err := gpu.PlanInPlaceFor(info, gpu.Options{}, p)
	require.NoError(t, err)
	execute, err := gpu.PlanFor(info, gpu.Options{MaxPoolBytes: -1}, p)
	require.NoError(t, err)
	code, stdout, stderr := runCLI(t, append([]string{"plan", "--json", "--in-place", "--facts", discreteFacts}, args...)...)
	require.Equal(t, exitOK, code, stderr)
	got := requirePlanJSON(t, stdout, want, "in place")
	assert.True(t, got.InPlace)
	assert.Zero(t, got.HostBytes)
	assert.Zero(t, got.DataCopyBytes)
	assert.Equal(t, execute.OnePassBytes, got.OnePassBytes, "one definition of the one-pass bytes")
	assert.Greater(t, got.TrafficBytes, execute.TrafficBytes)

	b, err := gpu.Open(testGPUOptions(t, gpu.Options{}))
	require.NoError(t, err)
	here, err := b.NeedsInPlace(p)
	require.NoError(t, err)
	require.NoError(t, b.Close())
	code, stdout, stderr = runCLI(t, append([]string{"plan", "--json", "--in-place"}, args...)...)
	require.Equal(t, exitOK, code, stderr)
	requirePlanJSON(t, stdout, here, "this device in place")
}

// TestPlanReadsHeadersAlone: plan reads only the .npy headers, so files
// of the header alone, or whose payload is short or too long, plan as the
// whole files do; run still needs the payloads.
func TestPlanReadsHeadersAlone(t *testing.T) {
	treetests.Require(t) // the discrete GPU's description in gpu/testdata
	dir := t.TempDir()
	args, _ := planInputs(t, dir, 64, 5000)
	code, want, stderr := runCLI(t, append([]string{"plan", "--json", "--facts", discreteFacts}, args...)...)
	require.Equal(t, exitOK, code, stderr)
	// cut rewrites each input file with keep(payload) after its header.
	cut := func(name string, keep func(payload []byte) []byte) []string {
		out := append([]string(nil), args...)
		for i := 1; i < len(out); i += 2 {
			if !strings.HasSuffix(out[i], ".npy") {
				continue
			}
			raw, err := os.ReadFile(out[i])
			require.NoError(t, err)
			h, err := npy.ReadHeader(bytes.NewReader(raw))
			require.NoError(t, err)
			path := filepath.Join(dir, name+"-"+filepath.Base(out[i]))
			require.NoError(t, os.WriteFile(path, append(raw[:h.Offset:h.Offset], keep(raw[h.Offset:])...), 0o644))
			out[i] = path
		}
		return out
	}
	headers := cut("header", func([]byte) []byte { return nil })
	for name, files := range map[string][]string{
		"header only": headers,
		"short":       cut("short", func(b []byte) []byte { return b[:len(b)/2] }),
		"trailing":    cut("trailing", func(b []byte) []byte { return append(b, 1, 2, 3) }),
	} {
		code, got, stderr := runCLI(t, append([]string{"plan", "--json", "--facts", discreteFacts}, files...)...)
		require.Equal(t, exitOK, code, "%s: %s", name, stderr)
		assert.Equal(t, want, got, name)
	}
	code, stdout, stderr := runCLI(t, append([]string{"run", "--backend", "cpu", "--out", filepath.Join(dir, "out.npy")}, headers...)...)
	requireInputError(t, code, stdout, stderr, "--data ", "only 0 bytes follow")
}

// TestPlanFactsLimits: a description missing a limit that planning reads,
// or with one 0 or out of the range a device can have, is one line naming
// the file and the field (exit 1), never a plan: without its workgroup
// memory the in-order fold's sort would seem to fit any device.
func TestPlanFactsLimits(t *testing.T) {
	treetests.Require(t) // the discrete GPU's description in gpu/testdata
	dir := t.TempDir()
	args, _ := planInputs(t, dir, 64, 5000)
	raw, err := os.ReadFile(discreteFacts)
	require.NoError(t, err)
	// edit returns a copy of the description with f applied to its
	// object and to that of its capabilities, written to a file.
	n := 0
	edit := func(f func(dev, caps map[string]any)) string {
		var dev map[string]any
		require.NoError(t, json.Unmarshal(raw, &dev))
		f(dev, dev["capabilities"].(map[string]any))
		b, err := json.Marshal(dev)
		require.NoError(t, err)
		n++
		path := filepath.Join(dir, "facts"+itoa(n)+".json")
		require.NoError(t, os.WriteFile(path, b, 0o644))
		return path
	}
	for _, c := range []struct {
		field  string // the JSON key, in capabilities unless top-level
		top    bool
		absurd any
		want   string // what the absurd value's error says
	}{
		{"deviceLocalMemory", true, 1 << 60, "deviceLocalMemory is 1152921504606846976, more than any device has"},
		{"maxMemoryAllocationSize", false, 4096, "capabilities.maxMemoryAllocationSize is 4096, less than any device has"},
		{"maxComputeWorkGroupCount", false, []int{65535, 1, 65535}, "capabilities.maxComputeWorkGroupCount[1] is 1, less than any device has"},
		{"maxComputeWorkGroupSize", false, []int{1024, 1024, 1}, "capabilities.maxComputeWorkGroupSize[2] is 1, less than any device has"},
		{"maxComputeWorkGroupInvocations", false, 32, "capabilities.maxComputeWorkGroupInvocations is 32, less than any device has"},
		{"maxComputeSharedMemorySize", false, 1 << 30, "capabilities.maxComputeSharedMemorySize is 1073741824, more than any device has"},
	} {
		name := c.field
		if !c.top {
			name = "capabilities." + c.field
		}
		zero := any(0)
		if _, isList := c.absurd.([]int); isList {
			zero, name = []int{0, 0, 0}, name+"[0]"
		}
		set := func(v any) func(dev, caps map[string]any) {
			return func(dev, caps map[string]any) {
				m := caps
				if c.top {
					m = dev
				}
				if v == nil {
					delete(m, c.field)
				} else {
					m[c.field] = v
				}
			}
		}
		for _, v := range []struct {
			value any
			want  string
		}{{nil, name + " is 0 or missing"}, {zero, name + " is 0 or missing"}, {c.absurd, c.want}} {
			facts := edit(set(v.value))
			for _, det := range []string{"--deterministic=false", "--deterministic"} {
				code, stdout, stderr := runCLI(t, append([]string{"plan", "--facts", facts, det}, args...)...)
				requireInputError(t, code, stdout, stderr, "--facts "+facts+": "+v.want)
			}
		}
	}
}

// holeNPY writes dir/name, a float32 [n] .npy file whose payload is a
// hole (no disk blocks), and returns its path.
func holeNPY(t *testing.T, dir, name string, n int64) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, npy.WriteHeader(f, tensor.Float32, []int{int(n)}))
	at, err := f.Seek(0, 1)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(at+4*n))
	require.NoError(t, f.Close())
	return path
}

// TestPlanReadsNoPayload: the shapes come from the headers: a data file
// of 4 GiB whose payload is a hole, and indices in a .pb file, plan
// without being read.
func TestPlanReadsNoPayload(t *testing.T) {
	treetests.Require(t) // the discrete GPU's description in gpu/testdata
	dir := t.TempDir()
	const m = 1 << 30
	data := holeNPY(t, dir, "data.npy", m)
	pb, err := onnx.Marshal(i64([]int{3, 1}, 0, m-1, 5))
	require.NoError(t, err)
	indices := filepath.Join(dir, "indices.pb")
	require.NoError(t, os.WriteFile(indices, pb, 0o644))
	updates := writeNPY(t, dir, "updates.npy", f32([]int{3}, 1, 2, 3))
	code, stdout, stderr := runCLI(t, "plan", "--json", "--facts", discreteFacts, "--op", "ScatterND-18",
		"--data", data, "--indices", indices, "--updates", updates)
	require.Equal(t, exitOK, code, stderr)
	var got planJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	assert.GreaterOrEqual(t, got.DeviceMemoryBytes, uint64(4*m), "the output is on the device")
	assert.Less(t, got.TrafficBytes, uint64(1<<20), "three updates move a few bytes")
}

// TestPlanSaysRunWouldRefuse: a call that needs more device memory than
// the device has is planned, and the plan says that run would refuse it and
// why, in the text and in --json's refused, with run's message (the
// backend's own rule, Backend.CheckFits) and run's exit status 1; a call
// that fits says nothing of it.
func TestPlanSaysRunWouldRefuse(t *testing.T) {
	treetests.Require(t) // the device descriptions in gpu/testdata
	dir := t.TempDir()
	// 4 GiB of data, a hole, and three updates: more than lavapipe's 2 GiB.
	const m = 1 << 30
	data := holeNPY(t, dir, "data.npy", m)
	args := []string{"--op", "ScatterND-18", "--data", data,
		"--indices", writeNPY(t, dir, "i.npy", i64([]int{3, 1}, 0, m-1, 5)), "--updates", writeNPY(t, dir, "u.npy", f32([]int{3}, 1, 2, 3))}
	p, err := ops.PrepareShapes(ops.Request{Op: "ScatterND-18", Data: &tensor.Tensor{DType: tensor.Float32, Shape: []int{m}},
		Indices: &tensor.Tensor{DType: tensor.Int64, Shape: []int{3, 1}}, Updates: &tensor.Tensor{DType: tensor.Float32, Shape: []int{3}}})
	require.NoError(t, err)

	// requireRefused runs plan with flags, as text and as JSON, and
	// checks that it says run would refuse the call with want, or, for
	// want "", that it does not.
	requireRefused := func(what string, flags []string, want string) {
		t.Helper()
		code, stdout, stderr := runCLI(t, append([]string{"plan", "--json"}, flags...)...)
		var got planJSON
		require.NoError(t, json.Unmarshal([]byte(stdout), &got), "%s: %s", what, stderr)
		assert.Equal(t, want, got.Refused, what)
		textCode, text, textStderr := runCLI(t, append([]string{"plan"}, flags...)...)
		assert.Contains(t, text, "device memory: "+u64toa(got.DeviceMemoryBytes)+" bytes", what)
		if want == "" {
			assert.Equal(t, exitOK, code, "%s: %s", what, stderr)
			assert.Equal(t, exitOK, textCode, "%s: %s", what, textStderr)
			assert.NotContains(t, text, "refused", what)
			return
		}
		for _, out := range []struct {
			code   int
			stderr string
		}{{code, stderr}, {textCode, textStderr}} {
			requireInputError(t, out.code, "", out.stderr, "run --backend gpu would refuse this call: "+want)
		}
		assert.Contains(t, text, "\nrefused: run --backend gpu would refuse this call before any work "+
			"(--backend auto runs it on the CPU): "+want+"\n", what)
	}

	// The device a file describes, holding nothing yet.
	for _, c := range []struct {
		facts string
		want  string
	}{
		{"../../gpu/testdata/facts/lavapipe.json", "ScatterND-18: vulkan: needs 4097 MiB of device memory; the device has 2048 MiB free"},
		{discreteFacts, ""},
	} {
		requireRefused(c.facts, append([]string{"--facts", c.facts}, args...), c.want)
	}

	// This machine's device, as run would find it.
	b, err := gpu.Open(testGPUOptions(t, gpu.Options{MaxPoolBytes: -1}))
	require.NoError(t, err)
	n, err := b.Needs(p)
	require.NoError(t, err)
	want := ""
	if refused := b.CheckFits(p, n); refused != nil {
		want = refused.Error()
	}
	require.NoError(t, b.Close())
	requireRefused("this device", args, want)
}

// TestPlanErrors: every failure is one line naming the input at fault
// (exit 1) or a usage error (exit 2).
func TestPlanErrors(t *testing.T) {
	treetests.Require(t) // the discrete GPU's description in gpu/testdata
	dir := t.TempDir()
	args, _ := planInputs(t, dir, 64, 100)
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	raw, err := os.ReadFile(discreteFacts)
	require.NoError(t, err)
	noBDA := write("nobda.json", strings.Replace(string(raw), `"bufferDeviceAddress": true`, `"bufferDeviceAddress": false`, 1))
	notNPY := write("text.npy", "x,y\n1,2\n")
	badUpdates := writeNPY(t, dir, "bad.npy", f32([]int{99}, make([]float32, 99)...))
	with := func(extra ...string) []string { return append(append([]string{"plan"}, args...), extra...) }
	replace := func(flag, value string) []string {
		out := append([]string{"plan"}, args...)
		for i := range out {
			if out[i] == flag {
				out[i+1] = value
			}
		}
		return out
	}
	noFloat64 := write("nofloat64.json", strings.Replace(string(raw), `"shaderFloat64": true`, `"shaderFloat64": false`, 1))
	data64 := writeNPY(t, dir, "d64.npy", tensor.MustFromSlice([]int{64}, make([]float64, 64)))
	updates64 := writeNPY(t, dir, "u64.npy", tensor.MustFromSlice([]int{100}, make([]float64, 100)))
	float64Args := func(extra ...string) []string {
		out := replace("--data", data64)
		for i := range out {
			if out[i] == "--updates" {
				out[i+1] = updates64
			}
		}
		return append(out, extra...)
	}
	for _, c := range []struct {
		name  string
		args  []string
		parts []string
	}{
		{"a device selector that selects none", with("--device", "no-such-device"), []string{`--device "no-such-device" matches no device name (devices: `}},
		{"missing facts file", with("--facts", filepath.Join(dir, "none.json")), []string{"--facts", "none.json: open: no such file or directory"}},
		{"facts not JSON", with("--facts", write("bad.json", "{")), []string{"--facts", "bad.json: not a device description"}},
		{"facts of two devices", with("--facts", write("two.json", "["+string(raw)+","+string(raw)+"]")), []string{"two.json: an array of 2 devices"}},
		{"a device no kernel runs on", with("--facts", noBDA), []string{"lacks", "bufferDeviceAddress"}},
		{"float64 add without shaderFloat64", float64Args("--facts", noFloat64),
			[]string{"ScatterElements-18: vulkan: reduction add on float64 data needs shaderFloat64"}},
		{"the sort in 16 KiB of workgroup memory", with("--deterministic", "--facts", "../../gpu/testdata/facts/lavapipe-16KiB-shared.json"),
			[]string{"ScatterElements-18: vulkan: the in-order fold's sort takes 27712 bytes of workgroup memory; the device's maxComputeSharedMemorySize is 16384"}},
		{"data not .npy", replace("--data", notNPY), []string{"--data " + notNPY, "not an .npy file"}},
		{"updates of the wrong shape", replace("--updates", badUpdates), []string{"ScatterElements-18", "updates"}},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		requireInputError(t, code, stdout, stderr, c.parts...)
	}
	for _, c := range []struct {
		name string
		args []string
		msg  string
	}{
		{"no --op", []string{"plan", "--data", "x.npy", "--updates", "y.npy"}, "missing required flag --op"},
		{"no --indices", []string{"plan", "--op", "ScatterND-18", "--data", "x.npy", "--updates", "y.npy"}, "missing required flag --indices"},
		{"--device with --facts", with("--device", "0", "--facts", discreteFacts), "--device and --facts are exclusive"},
		{"--out is run's", with("--out", "y.npy"), "unknown flag --out"},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		requireUsageError(t, code, stdout, stderr, c.msg)
	}
}

func itoa(n int) string { return u64toa(uint64(n)) }

func u64toa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestPlanModel: plan --model plans the model's node as run --model runs
// it, inputs from flags (shapes from the headers) or initializers, and
// refuses what run --model refuses.
func TestPlanModel(t *testing.T) {
	treetests.Require(t) // the discrete GPU's description in gpu/testdata
	dir := t.TempDir()
	raw, err := os.ReadFile(discreteFacts)
	require.NoError(t, err)
	info, err := vk.ParseDeviceInfo(raw)
	require.NoError(t, err)
	// ScatterElements at opset 17 is ScatterElements-16: add, axis 1.
	indices := i64([]int{4, 300}, make([]int64, 1200)...)
	m := writeModel(t, dir, "se.onnx", model("ScatterElements", 17,
		[]*onnxpb.AttributeProto{intAttr("axis", 1), strAttr("reduction", "add")},
		map[string]*tensor.Tensor{"indices": indices}))
	data, updates := f32([]int{4, 1000}, make([]float32, 4000)...), f32([]int{4, 300}, make([]float32, 1200)...)
	req := ops.Request{Op: "ScatterElements-16", Reduction: "add", Data: data, Indices: indices, Updates: updates, Axis: tensor.Scalar(1)}
	p, err := ops.PrepareShapes(req)
	require.NoError(t, err)
	want, err := gpu.PlanFor(info, gpu.Options{MaxPoolBytes: -1}, p)
	require.NoError(t, err)
	code, stdout, stderr := runCLI(t, "plan", "--json", "--facts", discreteFacts, "--model", m,
		"--data", writePB(t, dir, "d.pb", data), "--updates", writeNPY(t, dir, "u.npy", updates))
	require.Equal(t, exitOK, code, stderr)
	got := requirePlanJSON(t, stdout, want, "plan --model")
	assert.Equal(t, "ScatterElements-16", got.Op)

	// Every input an initializer.
	inits := map[string]*tensor.Tensor{"data": i32([]int{3}, 5, 5, 5), "indices": i64([]int{2, 1}, 2, 0), "updates": i32([]int{2}, 9, 1)}
	nd := writeModel(t, dir, "nd.onnx", model("ScatterND", 18, []*onnxpb.AttributeProto{strAttr("reduction", "max")}, inits))
	p, err = ops.PrepareShapes(ops.Request{Op: "ScatterND-18", Reduction: "max", Data: inits["data"], Indices: inits["indices"], Updates: inits["updates"]})
	require.NoError(t, err)
	want, err = gpu.PlanFor(info, gpu.Options{MaxPoolBytes: -1}, p)
	require.NoError(t, err)
	code, stdout, stderr = runCLI(t, "plan", "--json", "--facts", discreteFacts, "--model", nd)
	require.Equal(t, exitOK, code, stderr)
	requirePlanJSON(t, stdout, want, "plan --model, initializers")

	code, stdout, stderr = runCLI(t, "plan", "--facts", discreteFacts, "--model", nd, "--reduction", "add")
	requireUsageError(t, code, stdout, stderr, "--reduction cannot be combined with --model")
	code, stdout, stderr = runCLI(t, "plan", "--facts", discreteFacts, "--model", m)
	requireInputError(t, code, stdout, stderr, "--model "+m, `input 0 ("data")`, "give --data")
}

// parsePlanText reads back every figure of plan's text, in the form plan
// --json prints them: the header (operator, device, type, mode, path), the
// passes, the totals, the device memory, the host transfers, the refusal
// and the passes as recorded, whose tensors line gives the tensors. The
// ratio to the one-pass bytes and the device memory in MiB, which only the
// text prints, are checked against the figures they come from.
func parsePlanText(t *testing.T, text string) planJSON {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	require.NotEmpty(t, lines)
	var got planJSON
	m := regexp.MustCompile(`^(\S+) \S+(?: reduction (\S+))? on (".*") \((\w+)(, deterministic)?(, in place on resident tensors)?\): path (\S+)$`).FindStringSubmatch(lines[0])
	require.NotNil(t, m, "header %q", lines[0])
	device, err := strconv.Unquote(m[3])
	require.NoError(t, err)
	got.Op, got.Reduction, got.Device, got.DeviceType, got.Deterministic, got.InPlace, got.Path = m[1], m[2], device, m[4], m[5] != "", m[6] != "", m[7]
	if got.Reduction == "" {
		got.Reduction = "none"
	}
	num := func(s string) uint64 {
		n, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, s)
		return n
	}
	got.Passes, got.Tensors = []passJSON{}, []tensorJSON{}
	row := regexp.MustCompile(`^ +(\d+) (\S+) +(\d+) +(\d+) +(\d+) +(\d+)$`)
	var passes int
	var ratio string
	i := 1
	for ; i < len(lines) && lines[i] != "as recorded:"; i++ {
		l := lines[i]
		if m := row.FindStringSubmatch(l); m != nil {
			assert.Equal(t, uint64(len(got.Passes)+1), num(m[1]), l)
			got.Passes = append(got.Passes, passJSON{m[2], int(num(m[3])), num(m[4]), num(m[5]), num(m[6])})
			continue
		}
		if m := regexp.MustCompile(`^passes: (\d+), dispatches: (\d+)$`).FindStringSubmatch(l); m != nil {
			passes, got.Dispatches = int(num(m[1])), int(num(m[2]))
			continue
		}
		if m := regexp.MustCompile(`^traffic: (\d+) bytes read and written; one pass: (\d+) bytes(?:; (\S+)x that)?$`).FindStringSubmatch(l); m != nil {
			got.TrafficBytes, got.OnePassBytes, ratio = num(m[1]), num(m[2]), m[3]
			continue
		}
		if m := regexp.MustCompile(`^device memory: (\d+) bytes(?: \((.*)\))?$`).FindStringSubmatch(l); m != nil {
			got.DeviceMemoryBytes = num(m[1])
			if got.DeviceMemoryBytes >= 1<<20 {
				assert.Equal(t, mib(got.DeviceMemoryBytes), m[2], l)
			}
			continue
		}
		if m := regexp.MustCompile(`^host transfers: (\d+) bytes$`).FindStringSubmatch(l); m != nil {
			got.HostBytes = num(m[1])
			continue
		}
		if m := regexp.MustCompile(`^  not in the traffic: data's (\d+) bytes, `).FindStringSubmatch(l); m != nil {
			got.DataCopyBytes = num(m[1])
			continue
		}
		if m := regexp.MustCompile(`^  not in the traffic: the owner words' (\d+) bytes, `).FindStringSubmatch(l); m != nil {
			got.FirstClearBytes = num(m[1])
			continue
		}
		if reason, ok := strings.CutPrefix(l, "refused: run --backend gpu would refuse this call before any work (--backend auto runs it on the CPU): "); ok {
			got.Refused = reason
			continue
		}
		if strings.HasPrefix(l, "    # pass ") {
			continue
		}
		t.Errorf("a line of the plan's text that says nothing the JSON says: %q", l)
	}
	assert.Equal(t, len(got.Passes), passes, "passes: N")
	if got.OnePassBytes > 0 {
		assert.Equal(t, fmt.Sprintf("%.2f", float64(got.TrafficBytes)/float64(got.OnePassBytes)), ratio)
	}
	require.Less(t, i, len(lines), "no 'as recorded:'")
	var rec []string
	for _, l := range lines[i+1:] {
		require.True(t, strings.HasPrefix(l, "  "), "%q", l)
		rec = append(rec, l[2:])
	}
	got.Plan = strings.Join(rec, "\n")
	for _, l := range rec {
		if list, ok := strings.CutPrefix(l, "  tensors: "); ok && list != "none" {
			for _, tn := range strings.Split(strings.TrimSuffix(list, " bytes"), ", ") {
				at := strings.LastIndexByte(tn, ' ')
				got.Tensors = append(got.Tensors, tensorJSON{tn[:at], num(tn[at+1:])})
			}
		}
	}
	return got
}

// TestPlanTextAndJSONAgree: plan's text and plan --json print every figure
// they both print as one value, for plans of several operators, paths and
// devices, the discrete GPU's among them, and a plan run would refuse.
func TestPlanTextAndJSONAgree(t *testing.T) {
	treetests.Require(t) // the device descriptions in gpu/testdata
	dir := t.TempDir()
	const facts = "../../gpu/testdata/facts/"
	se, _ := planInputs(t, dir, 64, 5000)
	nd := []string{"--op", "ScatterND-18", "--data", writeNPY(t, dir, "nd-d.npy", f32([]int{300, 7}, make([]float32, 2100)...)),
		"--indices", writeNPY(t, dir, "nd-i.npy", i64([]int{40, 1}, make([]int64, 40)...)),
		"--updates", writeNPY(t, dir, "nd-u.npy", f32([]int{40, 7}, make([]float32, 280)...))}
	empty := []string{"--op", "ScatterND-18", "--data", writeNPY(t, dir, "e-d.npy", f32([]int{5}, 1, 2, 3, 4, 5)),
		"--indices", writeNPY(t, dir, "e-i.npy", i64([]int{0, 1})), "--updates", writeNPY(t, dir, "e-u.npy", f32([]int{0}))}
	slice := []string{"--op", "SliceScatter-15", "--data", writeNPY(t, dir, "s-d.npy", f32([]int{64, 64}, make([]float32, 4096)...)),
		"--updates", writeNPY(t, dir, "s-u.npy", f32([]int{32, 64}, make([]float32, 2048)...)), "--start", "0", "--stop", "64", "--step", "2"}
	big := holeNPY(t, dir, "big.npy", 1<<30)
	refused := []string{"--op", "ScatterND-18", "--data", big, "--indices", writeNPY(t, dir, "b-i.npy", i64([]int{3, 1}, 0, 1, 2)),
		"--updates", writeNPY(t, dir, "b-u.npy", f32([]int{3}, 1, 2, 3))}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"discrete add", append([]string{"--facts", discreteFacts}, se...)},
		{"discrete add deterministic", append([]string{"--facts", discreteFacts, "--deterministic"}, se...)},
		{"discrete none", append([]string{"--facts", discreteFacts}, nd...)},
		{"discrete slice", append([]string{"--facts", discreteFacts}, slice...)},
		{"lavapipe add", append([]string{"--facts", facts + "lavapipe.json"}, se...)},
		{"lavapipe none", append([]string{"--facts", facts + "lavapipe.json"}, nd...)},
		{"16 KiB of workgroup memory", append([]string{"--facts", facts + "lavapipe-16KiB-shared.json"}, se...)},
		{"no updates", append([]string{"--facts", discreteFacts}, empty...)},
		{"refused", append([]string{"--facts", facts + "lavapipe.json"}, refused...)},
		{"this device", se},
		{"this device deterministic", append([]string{"--deterministic"}, se...)},
		{"discrete add in place", append([]string{"--facts", discreteFacts, "--in-place"}, se...)},
		{"discrete none in place deterministic", append([]string{"--facts", discreteFacts, "--in-place", "--deterministic"}, nd...)},
		{"this device in place", append([]string{"--in-place"}, se...)},
	} {
		code, stdout, stderr := runCLI(t, append([]string{"plan", "--json"}, c.args...)...)
		var want planJSON
		require.NoError(t, json.Unmarshal([]byte(stdout), &want), "%s: %s", c.name, stderr)
		textCode, text, textStderr := runCLI(t, append([]string{"plan"}, c.args...)...)
		assert.Equal(t, code, textCode, c.name)
		assert.Equal(t, stderr, textStderr, c.name)
		text = estimateLines(t, c.name, text, &want)
		assert.Equal(t, want, parsePlanText(t, text), "%s:\n%s", c.name, text)
	}
}

// estimateLines checks the estimate lines of a plan's text against its
// JSON, want: the estimates as cost.Estimate formats them, and auto's
// choice; it returns the text without them and clears them in want.
func estimateLines(t *testing.T, name, text string, want *planJSON) string {
	t.Helper()
	var lines []string
	var est []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "estimate: ") || strings.HasPrefix(l, "cpu estimate: ") || strings.HasPrefix(l, "--backend auto: ") {
			est = append(est, l)
			continue
		}
		lines = append(lines, l)
	}
	if want.Estimate == nil {
		assert.Equal(t, []string{"estimate: none (no measured figures for the device)"}, est, name)
	} else {
		assert.Equal(t, *want.EstimateMS, want.Estimate.Ms, name)
		wantLines := []string{fmt.Sprintf("estimate: %s on the device", want.Estimate)}
		if want.CPUEstimate != nil {
			assert.Equal(t, *want.CPUEstimateMS, want.CPUEstimate.Ms, name)
			wantLines = append(wantLines, fmt.Sprintf("cpu estimate: %s", want.CPUEstimate))
		}
		if want.InPlace {
			assert.Equal(t, "gpu", want.AutoChoice, name)
			wantLines = append(wantLines, "--backend auto: in place, the tensors stay on the device")
		} else {
			wantLines = append(wantLines, "--backend auto: runs it on the "+want.AutoChoice)
		}
		assert.Equal(t, wantLines, est, name)
	}
	want.EstimateMS, want.Estimate, want.CPUEstimateMS, want.CPUEstimate, want.AutoChoice = nil, nil, nil, nil, ""
	want.Figures = nil // the JSON's alone
	return strings.Join(lines, "\n")
}

// TestPlanInPlaceKeepsOwnersClear: a last-writer ScatterElements call
// whose updates collide, planned in place for the discrete profile (a
// backend that keeps its buffers) leaves its owner words clear between
// calls: no clear pass, the words' bytes in first_clear_bytes; run's one
// call (without --in-place) clears them.
func TestPlanInPlaceKeepsOwnersClear(t *testing.T) {
	treetests.Require(t) // the discrete GPU's description in gpu/testdata
	dir := t.TempDir()
	args, _ := planInputs(t, dir, 3000, 12000)
	for i, a := range args {
		if a == "--reduction" {
			args = append(args[:i:i], args[i+2:]...)
			break
		}
	}
	for _, inPlace := range []bool{false, true} {
		flags := append([]string{"plan", "--json", "--facts", discreteFacts}, args...)
		if inPlace {
			flags = append(flags, "--in-place")
		}
		code, stdout, stderr := runCLI(t, flags...)
		require.Equal(t, exitOK, code, stderr)
		var got planJSON
		require.NoError(t, json.Unmarshal([]byte(stdout), &got))
		require.Equal(t, "owner", got.Path)
		if inPlace {
			assert.Equal(t, uint64(4*3000), got.FirstClearBytes)
			assert.Equal(t, []string{"resolve", "scatter"}, []string{got.Passes[0].Name, got.Passes[1].Name})
			assert.Len(t, got.Passes, 2)
		} else {
			assert.Zero(t, got.FirstClearBytes)
			assert.Equal(t, "clear", got.Passes[0].Name, "run's one call clears the words")
		}
	}
}
