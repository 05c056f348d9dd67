package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/gpuscatter/gpuscatter/internal/onnxpb"
	"github.com/gpuscatter/gpuscatter/internal/treetests"
	"github.com/gpuscatter/gpuscatter/ops/examples"
	"github.com/gpuscatter/gpuscatter/tensor"
)

var updateNodeTests = flag.Bool("update-node-tests", false, "rewrite testdata/node/test_tensorscatter* from tensorScatterNodeTests")

// tensorScatterNodeDir holds the ONNX node tests of TensorScatter, which
// Debian's libonnx-testdata (ONNX 1.12) predates.
const tensorScatterNodeDir = "testdata/node"

// tensorScatterNodeTest is one node test ONNX ships for TensorScatter
// (onnx/backend/test/case/node/tensorscatter.py), with the values its
// text gives.
type tensorScatterNodeTest struct {
	name                            string
	mode                            string // "" leaves the attribute out
	pastCache, update, writeIndices *tensor.Tensor
	presentCache                    *tensor.Tensor
}

// tensorScatterNodeTests returns the node tests from the spec examples
// that hold their values (ops/examples), so that the examples and
// testdata/node cannot differ.
func tensorScatterNodeTests() []tensorScatterNodeTest {
	names := map[string]string{"TensorScatter-24/onnx-linear": "test_tensorscatter",
		"TensorScatter-24/onnx-circular": "test_tensorscatter_circular", "TensorScatter-24/onnx-3d": "test_tensorscatter_3d"}
	var out []tensorScatterNodeTest
	for _, ex := range examples.All() {
		if name, ok := names[ex.Name]; ok {
			r := ex.Request
			out = append(out, tensorScatterNodeTest{name: name, mode: r.Mode, pastCache: r.Data, update: r.Updates,
				writeIndices: r.Indices, presentCache: ex.Want})
		}
	}
	if len(out) != len(names) {
		panic("tensorScatterNodeTests: an example of ops/examples is missing")
	}
	return out
}

// valueInfo describes a graph input or output of x's dtype and shape.
func valueInfo(name string, x *tensor.Tensor) *onnxpb.ValueInfoProto {
	tp, err := encodeTensor(x)
	if err != nil {
		panic(err)
	}
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range x.Shape {
		shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(tp.GetDataType()), Shape: shape}}}}
}

// files returns the node test's files by path under its directory: the
// model (one TensorScatter node, opset 24) and its one data set.
func (nt tensorScatterNodeTest) files(t *testing.T) map[string][]byte {
	node := &onnxpb.NodeProto{OpType: proto.String("TensorScatter"),
		Input: []string{"past_cache", "update", "write_indices"}, Output: []string{"present_cache"}}
	if nt.mode != "" {
		node.Attribute = []*onnxpb.AttributeProto{strAttr("mode", nt.mode)}
	}
	m := &onnxpb.ModelProto{
		IrVersion:    proto.Int64(11),
		ProducerName: proto.String("backend-test"),
		OpsetImport:  []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(24)}},
		Graph: &onnxpb.GraphProto{
			Name: proto.String(nt.name),
			Node: []*onnxpb.NodeProto{node},
			Input: []*onnxpb.ValueInfoProto{valueInfo("past_cache", nt.pastCache), valueInfo("update", nt.update),
				valueInfo("write_indices", nt.writeIndices)},
			Output: []*onnxpb.ValueInfoProto{valueInfo("present_cache", nt.presentCache)},
		},
	}
	out := map[string][]byte{}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	require.NoError(t, err)
	out["model.onnx"] = b
	for name, x := range map[string]*tensor.Tensor{"input_0.pb": nt.pastCache, "input_1.pb": nt.update,
		"input_2.pb": nt.writeIndices, "output_0.pb": nt.presentCache} {
		tp, err := encodeTensor(x)
		require.NoError(t, err)
		tp.Name = proto.String(map[string]string{"input_0.pb": "past_cache", "input_1.pb": "update",
			"input_2.pb": "write_indices", "output_0.pb": "present_cache"}[name])
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(tp)
		require.NoError(t, err)
		out[filepath.Join("test_data_set_0", name)] = b
	}
	return out
}

// TestTensorScatterNodeTestsAreCurrent keeps testdata/node in step with
// the values above; -update-node-tests rewrites it.
func TestTensorScatterNodeTestsAreCurrent(t *testing.T) {
	treetests.Require(t) // testdata/node
	for _, nt := range tensorScatterNodeTests() {
		for rel, want := range nt.files(t) {
			path := filepath.Join(tensorScatterNodeDir, nt.name, rel)
			if *updateNodeTests {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, want, 0o644))
				continue
			}
			got, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./cmd/gpuscatter -run TestTensorScatterNodeTestsAreCurrent -update-node-tests")
			assert.Equal(t, want, got, "%s is stale (-update-node-tests rewrites it)", path)
		}
	}
}

// TestTensorScatterNodeTests runs the three node tests through onnx-test
// on every backend, and the circular one through run --model. It writes
// them from the values above (TestTensorScatterNodeTestsAreCurrent holds
// testdata/node to the same bytes), so that it runs outside the source
// tree too.
func TestTensorScatterNodeTests(t *testing.T) {
	nodeDir := t.TempDir()
	for _, nt := range tensorScatterNodeTests() {
		for rel, b := range nt.files(t) {
			path := filepath.Join(nodeDir, nt.name, rel)
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, b, 0o644))
		}
	}
	for _, be := range tensorScatterBackends {
		t.Run(be.name, func(t *testing.T) {
			be.setup(t)
			code, stdout, stderr := runCLI(t, "onnx-test", "--backend", be.name, nodeDir)
			require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
			assert.Contains(t, stdout, "PASS test_tensorscatter (TensorScatter-24, 1 data set)\n")
			assert.Contains(t, stdout, "PASS test_tensorscatter_3d (TensorScatter-24, 1 data set)\n")
			assert.Contains(t, stdout, "PASS test_tensorscatter_circular (TensorScatter-24, 1 data set)\n")
			assert.Contains(t, stdout, "onnx-test: 3 passed, 0 failed, 0 skipped")

			dir := filepath.Join(nodeDir, "test_tensorscatter_circular")
			set := filepath.Join(dir, "test_data_set_0")
			out := filepath.Join(t.TempDir(), "y.pb")
			code, _, stderr = runCLI(t, "run", "--model", filepath.Join(dir, "model.onnx"), "--backend", be.name,
				"--data", filepath.Join(set, "input_0.pb"), "--updates", filepath.Join(set, "input_1.pb"),
				"--indices", filepath.Join(set, "input_2.pb"), "--out", out)
			require.Equal(t, exitOK, code, stderr)
			requireEqualTensor(t, readPB(t, filepath.Join(set, "output_0.pb")), readPB(t, out))
		})
	}
}
