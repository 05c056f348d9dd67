package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/gpuscatter/gpuscatter/cpuref"
	"github.com/gpuscatter/gpuscatter/internal/onnxpb"
	"github.com/gpuscatter/gpuscatter/onnx"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

func writePB(t *testing.T, dir, name string, x *tensor.Tensor) string {
	t.Helper()
	path := filepath.Join(dir, name)
	b, err := onnx.Marshal(x)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o666))
	return path
}

func readPB(t *testing.T, path string) *tensor.Tensor {
	t.Helper()
	x, err := onnx.ReadFile(path)
	require.NoError(t, err)
	return x
}

func bf16s(shape []int, v ...float32) *tensor.Tensor {
	b := make([]tensor.BF16, len(v))
	for i, f := range v {
		b[i] = tensor.BF16From(f)
	}
	return tensor.MustFromSlice(shape, b)
}

// TestOnnxRunPBFiles runs ScatterElements-18 max on bfloat16 .pb inputs,
// with the axis in a .pb file, and writes .pb and .npy outputs.
func TestOnnxRunPBFiles(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.pb")
	args := []string{"run", "--op", "ScatterElements-18", "--reduction", "max", "--backend", "cpu",
		"--data", writePB(t, dir, "data.pb", bf16s([]int{2, 2}, 1, 2, 3, 4)),
		"--indices", writePB(t, dir, "indices.pb", i32([]int{2, 1}, 1, 0)),
		"--updates", writePB(t, dir, "updates.pb", bf16s([]int{2, 1}, 9, -9)),
		"--axis", writePB(t, dir, "axis.PB", i64([]int{}, 1)),
		"--out", out}
	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Empty(t, stdout+stderr)
	requireEqualTensor(t, bf16s([]int{2, 2}, 1, 9, 3, 4), readPB(t, out))

	// .pb inputs, .npy output; .npy inputs, .pb output.
	npyOut := filepath.Join(dir, "out.npy")
	code, _, stderr = runCLI(t, "run", "--op", "ScatterND-18", "--backend", "cpu",
		"--data", writePB(t, dir, "d32.pb", f32([]int{3}, 1, 2, 3)),
		"--indices", writePB(t, dir, "i.pb", i64([]int{1, 1}, 2)),
		"--updates", writeNPY(t, dir, "u.npy", f32([]int{1}, 7)), "--out", npyOut)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	requireEqualTensor(t, f32([]int{3}, 1, 2, 7), readNPY(t, npyOut))

	// bfloat16 has no .npy form: the error names --out.
	code, _, stderr = runCLI(t, append(args[:len(args)-1], npyOut)...)
	require.Equal(t, exitError, code)
	assert.Contains(t, stderr, "--out "+npyOut+": bfloat16 has no standard NPY dtype")
}

func TestOnnxSliceParametersFromPB(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.pb")
	code, _, stderr := runCLI(t, "run", "--op", "SliceScatter-15", "--backend", "cpu",
		"--data", writePB(t, dir, "data.pb", f32([]int{4}, 0, 0, 0, 0)),
		"--updates", writePB(t, dir, "updates.pb", f32([]int{2}, 1, 2)),
		"--start", writePB(t, dir, "start.pb", i32([]int{1}, 1)),
		"--stop", writePB(t, dir, "stop.pb", i32([]int{1}, 4)),
		"--step", "2", "--out", out)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	requireEqualTensor(t, f32([]int{4}, 0, 1, 0, 2), readPB(t, out))
}

func TestOnnxBadPBNamesFlagAndPath(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pb")
	tp := &onnxpb.TensorProto{DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: []int64{1 << 20, 1 << 20}, RawData: []byte{1, 2, 3, 4}}
	b, err := proto.Marshal(tp)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bad, b, 0o666))
	code, _, stderr := runCLI(t, "run", "--op", "ScatterND-18", "--backend", "cpu", "--data", bad,
		"--indices", writePB(t, dir, "i.pb", i64([]int{1, 1}, 0)),
		"--updates", writePB(t, dir, "u.pb", f32([]int{1}, 1)), "--out", filepath.Join(dir, "o.pb"))
	require.Equal(t, exitError, code)
	assert.Equal(t, "gpuscatter: --data "+bad+": dims [1048576,1048576] of float32 need 4398046511104 bytes of raw_data, have 4\n", stderr)
	assert.NoFileExists(t, filepath.Join(dir, "o.pb"))
}

// model returns a one-node model of opType at opset, with inputs data,
// indices, updates (those in inits as initializers) and output y.
func model(opType string, opset int64, attrs []*onnxpb.AttributeProto, inits map[string]*tensor.Tensor) *onnxpb.ModelProto {
	g := &onnxpb.GraphProto{
		Name: proto.String("g"),
		Node: []*onnxpb.NodeProto{{OpType: proto.String(opType), Input: []string{"data", "indices", "updates"}, Output: []string{"y"}, Attribute: attrs}},
	}
	for _, name := range []string{"data", "indices", "updates"} {
		g.Input = append(g.Input, &onnxpb.ValueInfoProto{Name: proto.String(name)})
		if x, ok := inits[name]; ok {
			tp, err := encodeTensor(x)
			if err != nil {
				panic(err)
			}
			tp.Name = proto.String(name)
			g.Initializer = append(g.Initializer, tp)
		}
	}
	return &onnxpb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(opset)}},
		Graph:       g,
	}
}

func writeModel(t *testing.T, dir, name string, m *onnxpb.ModelProto) string {
	t.Helper()
	b, err := proto.Marshal(m)
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, b, 0o666))
	return path
}

func intAttr(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func strAttr(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func TestOnnxRunModel(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "y.pb")
	// ScatterElements at opset 17 is ScatterElements-16: add, axis 1; the
	// indices come from an initializer, the rest from flags.
	m := writeModel(t, dir, "se.onnx", model("ScatterElements", 17,
		[]*onnxpb.AttributeProto{intAttr("axis", 1), strAttr("reduction", "add")},
		map[string]*tensor.Tensor{"indices": i64([]int{1, 2}, 0, 0)}))
	code, _, stderr := runCLI(t, "run", "--model", m, "--backend", "cpu", "--out", out,
		"--data", writePB(t, dir, "d.pb", f32([]int{1, 3}, 1, 2, 3)),
		"--updates", writeNPY(t, dir, "u.npy", f32([]int{1, 2}, 10, 20)))
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	requireEqualTensor(t, f32([]int{1, 3}, 31, 2, 3), readPB(t, out))

	// Every input from initializers; max needs version 18.
	inits := map[string]*tensor.Tensor{"data": i32([]int{3}, 5, 5, 5), "indices": i64([]int{2, 1}, 2, 0), "updates": i32([]int{2}, 9, 1)}
	m = writeModel(t, dir, "nd.onnx", model("ScatterND", 18, []*onnxpb.AttributeProto{strAttr("reduction", "max")}, inits))
	code, _, stderr = runCLI(t, "run", "--model", m, "--backend", "cpu", "--out", out)
	require.Equal(t, exitOK, code, "stderr: %s", stderr)
	requireEqualTensor(t, i32([]int{3}, 5, 5, 9), readPB(t, out))

	m = writeModel(t, dir, "nd16.onnx", model("ScatterND", 16, []*onnxpb.AttributeProto{strAttr("reduction", "max")}, inits))
	code, _, stderr = runCLI(t, "run", "--model", m, "--backend", "cpu", "--out", out)
	require.Equal(t, exitError, code)
	assert.Contains(t, stderr, "ScatterND-16")
	assert.Contains(t, stderr, "max")
}

func TestOnnxRunModelErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "y.pb")
	two := model("ScatterND", 18, nil, nil)
	two.Graph.Node = append(two.Graph.Node, &onnxpb.NodeProto{OpType: proto.String("Relu")})
	noOpset := model("ScatterND", 18, nil, nil)
	noOpset.OpsetImport = nil
	dupInit := model("ScatterND", 18, nil, map[string]*tensor.Tensor{"data": f32([]int{2}, 1, 2)})
	dupInit.Graph.Initializer = append(dupInit.Graph.Initializer, dupInit.Graph.Initializer[0])
	dupOpset := model("ScatterND", 18, nil, nil)
	dupOpset.OpsetImport = append(dupOpset.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: proto.String(""), Version: proto.Int64(11)})
	for _, c := range []struct {
		name string
		m    *onnxpb.ModelProto
		args []string
		want string
	}{
		{"another operator", model("Gather", 13, nil, nil), nil, "the graph's node is Gather, not one of Scatter, ScatterElements, ScatterND, TensorScatter"},
		{"TensorScatter before opset 24", model("TensorScatter", 23, nil, nil), nil,
			"the model imports opset 23, where TensorScatter does not exist yet (its first version is TensorScatter-24)"},
		// model names its inputs data, indices, updates by position:
		// TensorScatter's are past_cache, update, write_indices.
		{"TensorScatter mode attribute type", model("TensorScatter", 24, []*onnxpb.AttributeProto{intAttr("mode", 1)}, nil), nil,
			`TensorScatter-24: attribute "mode" is of type INT; want STRING`},
		{"TensorScatter bad mode", model("TensorScatter", 24, []*onnxpb.AttributeProto{strAttr("mode", "ring")}, map[string]*tensor.Tensor{
			"data": f32([]int{1, 2, 1}, 1, 2), "indices": f32([]int{1, 1, 1}, 5), "updates": i64([]int{1}, 0)}), nil,
			`TensorScatter-24: mode "ring" is not accepted by TensorScatter-24; it takes linear or circular, matched exactly (ONNX attribute strings are case-sensitive)`},
		{"TensorScatter mode in capitals", model("TensorScatter", 24, []*onnxpb.AttributeProto{strAttr("mode", "LINEAR")}, nil), nil,
			`TensorScatter-24: mode "LINEAR" is not accepted by TensorScatter-24 (did you mean linear?); it takes linear or circular, matched exactly (ONNX attribute strings are case-sensitive)`},
		{"reduction in capitals", model("ScatterElements", 18, []*onnxpb.AttributeProto{strAttr("reduction", "Add")}, map[string]*tensor.Tensor{
			"data": f32([]int{2}, 1, 2), "indices": i64([]int{1}, 0), "updates": f32([]int{1}, 5)}), nil,
			`ScatterElements-18: reduction "Add" is not accepted by ScatterElements-18 (did you mean add? reduction names are matched exactly, as ONNX's spec spells them); it takes none, add, mul, min, max`},
		{"TensorScatter empty mode", model("TensorScatter", 24, []*onnxpb.AttributeProto{strAttr("mode", "")}, nil), nil,
			`TensorScatter-24: mode "" is not accepted by TensorScatter-24; it takes linear or circular, matched exactly (ONNX attribute strings are case-sensitive)`},
		{"TensorScatter linear overflow in an initializer", model("TensorScatter", 24, nil, map[string]*tensor.Tensor{
			"data": f32([]int{1, 2, 1}, 1, 2), "indices": f32([]int{1, 1, 1}, 5), "updates": i64([]int{1}, 2)}), nil,
			"TensorScatter-24: write_indices[0] = 2 is out of range [0, 1]: in linear mode write_indices[0] + sequence_length 1 must be at most max_sequence_length 2 (axis 1 of past_cache)"},
		{"two nodes", two, nil, "the graph holds 2 nodes (ScatterND, Relu); want exactly one"},
		{"no opset", noOpset, nil, "the model imports no opset for the default domain (ai.onnx) of its ScatterND node"},
		{"too old an opset", model("ScatterND", 10, nil, nil), nil, "the model imports opset 10, where ScatterND does not exist yet (its first version is ScatterND-11)"},
		{"missing input", model("ScatterND", 18, nil, nil), nil, `input 0 ("data") of the ScatterND node is not an initializer of the graph; give --data`},
		{"unknown attribute", model("ScatterND", 18, []*onnxpb.AttributeProto{intAttr("axis", 0)}, nil), nil, `ScatterND-18: the node has attribute "axis", which ScatterND-18 does not take`},
		{"attribute type", model("Scatter", 9, []*onnxpb.AttributeProto{strAttr("axis", "0")}, nil), nil, `Scatter-9: attribute "axis" is of type STRING; want INT`},
		{"float indices initializer", model("ScatterND", 18, nil, map[string]*tensor.Tensor{
			"data": f32([]int{2}, 1, 2), "indices": f32([]int{1, 1}, 0), "updates": f32([]int{1}, 5)}), nil, "ScatterND-18: indices has dtype float32; it must be an integer type (int8 ... uint64)"},
		{"index out of range in an initializer", model("ScatterElements", 18, nil, map[string]*tensor.Tensor{
			"data": f32([]int{2}, 1, 2), "indices": i64([]int{1}, 7), "updates": f32([]int{1}, 5)}), nil, "ScatterElements-18: indices[0] = 7 is out of range [-2, 1] for axis 0 of data"},
		{"duplicate initializer", dupInit, nil, `two initializers are named "data"; ONNX's checker rejects duplicate names`},
		{"duplicate attribute", model("ScatterElements", 18, []*onnxpb.AttributeProto{intAttr("axis", 0), intAttr("axis", 1)}, nil), nil,
			`the ScatterElements node gives attribute "axis" twice; ONNX's checker rejects repeated attributes`},
		{"duplicate opset import", dupOpset, nil, "the model imports the default domain (ai.onnx) twice (opsets 18 and 11); ONNX's checker rejects it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeModel(t, dir, strings.ReplaceAll(c.name, " ", "_")+".onnx", c.m)
			code, _, stderr := runCLI(t, append([]string{"run", "--model", path, "--backend", "cpu", "--out", out}, c.args...)...)
			require.Equal(t, exitError, code, stderr)
			assert.Equal(t, "gpuscatter: --model "+path+": "+c.want+"\n", stderr)
		})
	}
	code, _, stderr := runCLI(t, "run", "--model", filepath.Join(dir, "x.onnx"), "--op", "ScatterND-18", "--out", out)
	require.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--op cannot be combined with --model")
}

// nodeTest writes a node test into dir/name: model m and one data set.
func nodeTest(t *testing.T, dir, name string, m *onnxpb.ModelProto, inputs []*tensor.Tensor, want *tensor.Tensor) {
	t.Helper()
	d := filepath.Join(dir, name)
	set := filepath.Join(d, "test_data_set_0")
	require.NoError(t, os.MkdirAll(set, 0o777))
	writeModel(t, d, "model.onnx", m)
	for i, x := range inputs {
		writePB(t, set, "input_"+string(rune('0'+i))+".pb", x)
	}
	writePB(t, set, "output_0.pb", want)
}

func TestOnnxTestCommand(t *testing.T) {
	dir := t.TempDir()
	in := []*tensor.Tensor{f32([]int{3}, 1, 2, 3), i64([]int{1, 1}, 1), f32([]int{1}, 9)}
	nodeTest(t, dir, "test_good", model("ScatterND", 13, nil, nil), in, f32([]int{3}, 1, 9, 3))
	nodeTest(t, dir, "test_bad", model("ScatterND", 13, nil, nil), in, f32([]int{3}, 1, 8, 3))
	nodeTest(t, dir, "test_relu", model("Relu", 14, nil, nil), in[:1], in[0])

	code, stdout, stderr := runCLI(t, "onnx-test", "--backend", "cpu", filepath.Join(dir, "test_good"))
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "PASS test_good (ScatterND-13, 1 data set)\nonnx-test: 1 passed, 0 failed, 0 skipped on cpu\n", stdout)

	code, stdout, stderr = runCLI(t, "onnx-test", "--backend=cpu", dir)
	require.Equal(t, exitError, code)
	assert.Equal(t, "FAIL test_bad (ScatterND-13: test_data_set_0: 1 of 3 elements differ from output_0.pb; the first at [1]: got 9, want 8)\n"+
		"PASS test_good (ScatterND-13, 1 data set)\n"+
		"SKIP test_relu (Relu)\n"+
		"onnx-test: 1 passed, 1 failed, 1 skipped on cpu\n", stdout)
	assert.Equal(t, "gpuscatter: onnx-test: 1 of 2 tests failed\n", stderr)

	code, _, stderr = runCLI(t, "onnx-test", "--backend", "cpu", filepath.Join(dir, "test_good", "test_data_set_0"))
	require.Equal(t, exitError, code)
	assert.Contains(t, stderr, "holds no model.onnx and no node-test directory")
	code, _, stderr = runCLI(t, "onnx-test", "--backend", "cpu", filepath.Join(dir, "missing"))
	require.Equal(t, exitError, code)
	assert.Equal(t, "gpuscatter: "+filepath.Join(dir, "missing")+": no such file or directory\n", stderr)
	code, _, stderr = runCLI(t, "onnx-test", "--backend", "cpu")
	require.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "no test directory given")
	code, _, stderr = runCLI(t, "onnx-test", dir, "--backend", "cpu")
	require.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "flag --backend must come before the directories")
}

// TestOnnxNodeTestsOnCPU runs every scatter node test of Debian's
// libonnx-testdata on the CPU reference (make test runs them on the GPU
// too, through the binary).
func TestOnnxNodeTestsOnCPU(t *testing.T) {
	dirs, _ := filepath.Glob("/usr/share/libonnx-testdata/data/node/test_scatter*")
	if len(dirs) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("libonnx-testdata is not installed (make deps installs it)")
		}
		t.Skip("libonnx-testdata is not installed (make deps installs it)")
	}
	code, stdout, stderr := runCLI(t, append([]string{"onnx-test", "--backend", "cpu"}, dirs...)...)
	require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
	assert.Contains(t, stdout, "onnx-test: 9 passed, 0 failed, 0 skipped on cpu")
}

// encodeTensor returns x as a TensorProto message, as onnx.Marshal encodes
// it, for building models.
func encodeTensor(x *tensor.Tensor) (*onnxpb.TensorProto, error) {
	b, err := onnx.Marshal(x)
	if err != nil {
		return nil, err
	}
	var tp onnxpb.TensorProto
	if err := proto.Unmarshal(b, &tp); err != nil {
		return nil, err
	}
	return &tp, nil
}

// TestCompareOutputSaysWhatNeededTheBound: an output equal to
// output_0.pb matches with no element within the bound (bit for bit); one
// a rounding away matches, when tolerant, with the elements that needed
// the bound counted (onnx-test's PASS line names them), and fails
// otherwise.
func TestCompareOutputSaysWhatNeededTheBound(t *testing.T) {
	ctx := context.Background()
	req := ops.Request{Op: "ScatterElements-18", Reduction: "add", Axis: tensor.Scalar(0),
		Data: f32([]int{2}, 1, 2), Indices: i64([]int{3}, 0, 0, 1), Updates: f32([]int{3}, 0.1, 0.2, 0.3)}
	want, err := ops.Run(ctx, cpuref.New(), req)
	require.NoError(t, err)
	msg, n, err := compareOutput(ctx, req, want, want.Clone(), true)
	require.NoError(t, err)
	assert.Empty(t, msg)
	assert.Zero(t, n, "bit for bit")

	got := want.Clone()
	v := tensor.View[float32](got)
	v[0] = math.Nextafter32(v[0], 10)
	msg, n, err = compareOutput(ctx, req, want, got, true)
	require.NoError(t, err)
	assert.Empty(t, msg)
	assert.Equal(t, int64(1), n, "one element needed the bound")

	msg, n, err = compareOutput(ctx, req, want, got, false)
	require.NoError(t, err)
	assert.Contains(t, msg, "1 of 2 elements differ from output_0.pb")
	assert.Zero(t, n)
}
