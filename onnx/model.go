package onnx

import (
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/gpuscatter/gpuscatter/internal/onnxpb"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Attr is one attribute of a node: an integer, a float or a string
// (other attribute types are kept as their type only).
type Attr struct {
	Type AttrType
	Int  int64
	F    float32
	S    string
}

// AttrType is the type of an attribute, as onnx.proto's
// AttributeProto.AttributeType numbers it.
type AttrType int32

// The attribute types a scatter node's attributes have, numbered as in
// onnx.proto.
const (
	AttrFloat  AttrType = 1
	AttrInt    AttrType = 2
	AttrString AttrType = 3
)

// String returns the type's name in onnx.proto: "INT", "STRING", ...
func (t AttrType) String() string { return onnxpb.AttributeProto_AttributeType(t).String() }

// Model is an ONNX model (a ModelProto), as ReadModelFile and
// UnmarshalModel read it.
type Model struct {
	proto *onnxpb.ModelProto
}

// Node is the single operator node of a model, with what it needs from the
// rest of the model.
type Node struct {
	// OpType is the node's operator, e.g. "ScatterElements"; Domain its
	// domain ("" for the default ONNX domain).
	OpType, Domain string
	// Opset is the version the model imports for the node's domain.
	Opset int64
	// Inputs and Outputs are the names of the node's inputs and outputs, in
	// order ("" for an omitted optional input).
	Inputs, Outputs []string
	// Attrs holds the node's attributes by name.
	Attrs map[string]Attr
	// Initializers holds the graph's initializers by name.
	Initializers map[string]*tensor.Tensor
	// GraphInputs lists the graph's inputs that are not initializers, in
	// order: the tensors a test_data_set's input_N.pb files feed.
	GraphInputs []string
}

// ReadModelFile reads the ONNX model at path. Errors name path.
func ReadModelFile(path string) (*Model, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, withPath(path, err)
	}
	m, err := UnmarshalModel(b)
	return m, withPath(path, err)
}

// UnmarshalModel parses b as an ONNX ModelProto.
func UnmarshalModel(b []byte) (*Model, error) {
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(b, &m); err != nil {
		return nil, formatErr("not an ONNX model: %v", err)
	}
	return &Model{proto: &m}, nil
}

// OpTypes lists the operators of m's graph, in order of first use.
func OpTypes(m *Model) []string { return opTypes(m.proto) }

// opTypes is OpTypes on the message.
func opTypes(m *onnxpb.ModelProto) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range m.GetGraph().GetNode() {
		name := n.GetOpType()
		if d := n.GetDomain(); d != "" && d != "ai.onnx" {
			name = d + "." + name
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// SingleNode returns the one node of m's graph with its opset version,
// attributes and the graph's initializers, decoded. A model whose graph
// holds no node or more than one, or whose node's domain is not imported,
// is an error that says what it holds.
func SingleNode(m *Model) (*Node, error) { return singleNode(m.proto) }

// singleNode is SingleNode on the message.
func singleNode(m *onnxpb.ModelProto) (*Node, error) {
	g := m.GetGraph()
	if g == nil {
		return nil, formatErr("the model has no graph")
	}
	nodes := g.GetNode()
	if len(nodes) != 1 {
		ops := opTypes(m)
		if len(ops) == 0 {
			return nil, formatErr("the graph holds no node; want exactly one")
		}
		return nil, unsupportedErr("the graph holds %d nodes (%s); want exactly one", len(nodes), strings.Join(ops, ", "))
	}
	n := nodes[0]
	dom := n.GetDomain()
	if dom == "ai.onnx" {
		dom = ""
	}
	node := &Node{
		OpType: n.GetOpType(), Domain: dom,
		Inputs: n.GetInput(), Outputs: n.GetOutput(),
		Attrs:        map[string]Attr{},
		Initializers: map[string]*tensor.Tensor{},
	}
	// ONNX's checker (check_model, checker.cc) refuses a model that
	// imports one domain twice: which opset applies would be a guess.
	found := false
	imported := map[string]int64{}
	for _, o := range m.GetOpsetImport() {
		d := o.GetDomain()
		if d == "ai.onnx" {
			d = ""
		}
		if v, dup := imported[d]; dup {
			name := d
			if name == "" {
				name = "the default domain (ai.onnx)"
			}
			return nil, formatErr("the model imports %s twice (opsets %d and %d); ONNX's checker rejects it", name, v, o.GetVersion())
		}
		imported[d] = o.GetVersion()
		if d == dom {
			node.Opset, found = o.GetVersion(), true
		}
	}
	if !found {
		name := dom
		if name == "" {
			name = "the default domain (ai.onnx)"
		}
		return nil, formatErr("the model imports no opset for %s of its %s node", name, n.GetOpType())
	}
	for _, a := range n.GetAttribute() {
		// The checker refuses a node that gives one attribute twice
		// ("Attribute 'axis' appeared multiple times"): which value
		// applies would be a guess.
		if _, dup := node.Attrs[a.GetName()]; dup {
			return nil, formatErr("the %s node gives attribute %q twice; ONNX's checker rejects repeated attributes", n.GetOpType(), a.GetName())
		}
		if a.GetRefAttrName() != "" {
			return nil, unsupportedErr("attribute %s of the %s node refers to %s; only a function body may", a.GetName(), n.GetOpType(), a.GetRefAttrName())
		}
		node.Attrs[a.GetName()] = Attr{Type: AttrType(a.GetType()), Int: a.GetI(), F: a.GetF(), S: string(a.GetS())}
	}
	for _, init := range g.GetInitializer() {
		// The checker refuses duplicate names in a graph: which of two
		// initializers feeds the node would be a guess.
		if _, dup := node.Initializers[init.GetName()]; dup {
			return nil, formatErr("two initializers are named %q; ONNX's checker rejects duplicate names", init.GetName())
		}
		t, err := decode(init, false)
		if err != nil {
			return nil, prefixed(fmt.Sprintf("initializer %q", init.GetName()), err)
		}
		node.Initializers[init.GetName()] = t
	}
	for _, in := range g.GetInput() {
		if _, ok := node.Initializers[in.GetName()]; !ok {
			node.GraphInputs = append(node.GraphInputs, in.GetName())
		}
	}
	return node, nil
}

// AttrNames returns the names of n's attributes, sorted.
func (n *Node) AttrNames() []string {
	out := make([]string, 0, len(n.Attrs))
	for k := range n.Attrs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
