package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/gpuscatter/gpuscatter/internal/onnxpb"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// scatterModel is a ScatterElements-18 model with its indices as an
// initializer.
func scatterModel() *onnxpb.ModelProto {
	idx := must(encode(tensor.Ints(0)))
	idx.Name = proto.String("indices")
	return &onnxpb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String("ai.onnx"), Version: proto.Int64(18)}},
		Graph: &onnxpb.GraphProto{
			Node: []*onnxpb.NodeProto{{
				OpType: proto.String("ScatterElements"), Input: []string{"data", "indices", "updates"}, Output: []string{"y"},
				Attribute: []*onnxpb.AttributeProto{
					{Name: proto.String("axis"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(-1)},
					{Name: proto.String("reduction"), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte("max")},
				},
			}},
			Input: []*onnxpb.ValueInfoProto{
				{Name: proto.String("data")}, {Name: proto.String("indices")}, {Name: proto.String("updates")},
			},
			Initializer: []*onnxpb.TensorProto{idx},
		},
	}
}

func TestSingleNode(t *testing.T) {
	n, err := singleNode(scatterModel())
	require.NoError(t, err)
	assert.Equal(t, "ScatterElements", n.OpType)
	assert.Equal(t, "", n.Domain, "ai.onnx is the default domain")
	assert.Equal(t, int64(18), n.Opset)
	assert.Equal(t, []string{"data", "indices", "updates"}, n.Inputs)
	assert.Equal(t, []string{"y"}, n.Outputs)
	assert.Equal(t, []string{"axis", "reduction"}, n.AttrNames())
	assert.Equal(t, int64(-1), n.Attrs["axis"].Int)
	assert.Equal(t, "max", n.Attrs["reduction"].S)
	assert.Equal(t, []string{"data", "updates"}, n.GraphInputs)
	require.Contains(t, n.Initializers, "indices")
	assert.True(t, tensor.Equal(tensor.Ints(0), n.Initializers["indices"]))
}

func TestSingleNodeErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(m *onnxpb.ModelProto)
		kind   error
		msg    string
	}{
		{"no graph", func(m *onnxpb.ModelProto) { m.Graph = nil }, ErrFormat, "the model has no graph"},
		{"no node", func(m *onnxpb.ModelProto) { m.Graph.Node = nil }, ErrFormat, "the graph holds no node"},
		{"two nodes", func(m *onnxpb.ModelProto) {
			m.Graph.Node = append(m.Graph.Node, &onnxpb.NodeProto{OpType: proto.String("Tanh"), Domain: proto.String("com.example")})
		}, ErrUnsupported, "the graph holds 2 nodes (ScatterElements, com.example.Tanh); want exactly one"},
		{"no opset", func(m *onnxpb.ModelProto) { m.OpsetImport[0].Domain = proto.String("ai.onnx.ml") }, ErrFormat, "imports no opset for the default domain"},
		{"duplicate opset import", func(m *onnxpb.ModelProto) {
			m.OpsetImport = append(m.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: proto.String("ai.onnx"), Version: proto.Int64(11)})
		}, ErrFormat, "the model imports the default domain (ai.onnx) twice (opsets 18 and 11); ONNX's checker rejects it"},
		{"duplicate initializer", func(m *onnxpb.ModelProto) {
			m.Graph.Initializer = append(m.Graph.Initializer, m.Graph.Initializer[0])
		}, ErrFormat, `two initializers are named "indices"; ONNX's checker rejects duplicate names`},
		{"duplicate attribute", func(m *onnxpb.ModelProto) {
			n := m.Graph.Node[0]
			n.Attribute = append(n.Attribute, &onnxpb.AttributeProto{Name: proto.String("axis"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(1)})
		}, ErrFormat, `the ScatterElements node gives attribute "axis" twice; ONNX's checker rejects repeated attributes`},
		{"bad initializer", func(m *onnxpb.ModelProto) { m.Graph.Initializer[0].Dims = []int64{5} }, ErrFormat,
			`initializer "indices": dims [5] of int64 need 40 bytes of raw_data, have 8`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := scatterModel()
			c.change(m)
			_, err := singleNode(m)
			require.ErrorIs(t, err, c.kind)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

func TestReadModelFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.onnx")
	b, err := proto.Marshal(scatterModel())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, b, 0o666))
	m, err := ReadModelFile(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"ScatterElements"}, OpTypes(m))
	require.NoError(t, os.WriteFile(p, []byte{0x0a, 0xff}, 0o666))
	_, err = ReadModelFile(p)
	require.ErrorIs(t, err, ErrFormat)
	assert.Contains(t, err.Error(), "onnx: "+p+": not an ONNX model")
}

func FuzzSingleNode(f *testing.F) {
	b, err := proto.Marshal(scatterModel())
	require.NoError(f, err)
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := UnmarshalModel(data)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error does not wrap ErrFormat: %v", err)
			}
			return
		}
		OpTypes(m)
		n, err := SingleNode(m)
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error wraps neither ErrFormat nor ErrUnsupported: %v", err)
			}
			return
		}
		for name, x := range n.Initializers {
			if err := x.Check(); err != nil {
				t.Fatalf("initializer %q is invalid: %v", name, err)
			}
		}
	})
}

// TestAttrTypesAreOnnxProtos: the AttrType constants are onnx.proto's.
func TestAttrTypesAreOnnxProtos(t *testing.T) {
	assert.Equal(t, AttrType(onnxpb.AttributeProto_FLOAT), AttrFloat)
	assert.Equal(t, AttrType(onnxpb.AttributeProto_INT), AttrInt)
	assert.Equal(t, AttrType(onnxpb.AttributeProto_STRING), AttrString)
	assert.Equal(t, "STRING", AttrString.String())
}
