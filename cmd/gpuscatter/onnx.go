package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuscatter/gpuscatter/bench"
	"github.com/gpuscatter/gpuscatter/onnx"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// onnxInputFlags are the run flags that feed a node's inputs, in the
// node's input order: data, indices, updates.
var onnxInputFlags = []string{"data", "indices", "updates"}

// cacheInputFlags are TensorScatter's: past_cache, update and the optional
// write_indices.
var cacheInputFlags = []string{"data", "updates", "indices"}

// nodeInputFlags returns the run flags that feed op's node inputs, in the
// node's order.
func nodeInputFlags(op *ops.Op) []string {
	if op.Kind == ops.KindCache {
		return cacheInputFlags
	}
	return onnxInputFlags
}

// runModel is run --model: the single Scatter, ScatterElements or ScatterND
// node of an ONNX model, with inputs from --data, --indices, --updates or
// the graph's initializers.
func runModel(ctx context.Context, c *cli, f *runFlags, path string) error {
	if err := f.modelExcludes(); err != nil {
		return err
	}
	if !f.out.given {
		return usagef("missing required flag --out")
	}
	if err := checkOutPath("out", f.out.value); err != nil {
		return err
	}
	load, err := modelRequest(ctx, f, path, (*tensorArg).load)
	if err != nil {
		return err
	}
	f.model = path
	return runAndWrite(ctx, c, f, load)
}

// modelExcludes refuses the flags that do not combine with --model: the
// model's node names the operator and its attributes.
func (f *runFlags) modelExcludes() error {
	for _, other := range []struct {
		name  string
		given bool
	}{
		{"op", f.op.given}, {"axis", f.axis.given}, {"reduction", f.reduction.given},
		{"use-init-val", f.useInitVal.value != nil}, {"mode", f.mode.given}, {"start", f.start.given}, {"stop", f.stop.given},
		{"step", f.step.given}, {"axes", f.axes.given},
	} {
		if other.given {
			return usagef("--%s cannot be combined with --model: the model's node names the operator and its attributes", other.name)
		}
	}
	return nil
}

// modelRequest reads the model at path (run --model's and plan --model's)
// and returns the loader of its node's request: each input from its flag
// through loadArg, where given, or from the graph's initializer.
func modelRequest(ctx context.Context, f *runFlags, path string, loadArg func(*tensorArg) (*tensor.Tensor, error)) (func() (ops.Request, error), error) {
	var m *onnx.Model
	err := interruptible(ctx, func() (err error) {
		m, err = onnx.ReadModelFile(path)
		return err
	})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, fileError("model", path, err)
	}
	node, op, err := scatterNode(m)
	if err != nil {
		return nil, fmt.Errorf("--model %s: %w", path, trimOnnx(err))
	}
	if _, err := nodeAttributes(node, op); err != nil {
		return nil, fmt.Errorf("--model %s: %w", path, err)
	}
	args := map[string]*tensorArg{"data": &f.data, "indices": &f.indices, "updates": &f.updates}
	return func() (ops.Request, error) {
		return nodeRequest(node, op, func(i int) (*tensor.Tensor, error) {
			flag := nodeInputFlags(op)[i]
			if args[flag].given {
				return loadArg(args[flag])
			}
			if t, ok := node.Initializers[node.Inputs[i]]; ok {
				return t, nil
			}
			return nil, fmt.Errorf("--model %s: input %d (%q) of the %s node is not an initializer of the graph; give --%s",
				path, i, node.Inputs[i], node.OpType, flag)
		})
	}, nil
}

// trimOnnx drops the "onnx: " that starts the package's messages, for
// messages that already name the file.
func trimOnnx(err error) error {
	msg := err.Error()
	if !strings.HasPrefix(msg, "onnx: ") {
		return err
	}
	return &wrapped{msg: strings.TrimPrefix(msg, "onnx: "), err: err}
}

// wrapped is an error with another message, still unwrapping to err.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// scatterFamilies are the ONNX operators a model's node may be.
var scatterFamilies = []string{"Scatter", "ScatterElements", "ScatterND", "TensorScatter"}

// scatterNode returns the single node of m and the operator version that
// runs it: the newest version of the node's operator that is not newer
// than the opset the model imports (an ONNX opset holds, for each
// operator, its newest version up to the opset's number).
func scatterNode(m *onnx.Model) (*onnx.Node, *ops.Op, error) {
	node, err := onnx.SingleNode(m)
	if err != nil {
		return nil, nil, err
	}
	name := node.OpType
	if node.Domain != "" {
		name = node.Domain + "." + name
	}
	family := ""
	for _, fam := range scatterFamilies {
		if node.Domain == "" && node.OpType == fam {
			family = fam
		}
	}
	if family == "" {
		return nil, nil, fmt.Errorf("the graph's node is %s, not one of %s", name, strings.Join(scatterFamilies, ", "))
	}
	var op *ops.Op
	var first *ops.Op
	for _, o := range ops.All() {
		if o.Source != "ONNX" || o.Family != family {
			continue
		}
		if first == nil || o.Version < first.Version {
			first = o
		}
		if int64(o.Version) <= node.Opset && (op == nil || o.Version > op.Version) {
			op = o
		}
	}
	if op == nil {
		return nil, nil, fmt.Errorf("the model imports opset %d, where %s does not exist yet (its first version is %s)", node.Opset, family, first.Name)
	}
	flags := nodeInputFlags(op)
	if op.IndicesOptional && len(node.Inputs) == 2 {
		// TensorScatter's write_indices may be left out.
	} else if len(node.Inputs) != 3 {
		want := "3 (data, indices, updates)"
		if op.IndicesOptional {
			want = "2 or 3 (past_cache, update, optional write_indices)"
		}
		return nil, nil, fmt.Errorf("the %s node has %d inputs; want %s", family, len(node.Inputs), want)
	}
	for i, in := range node.Inputs {
		if in == "" && !(op.IndicesOptional && flags[i] == "indices") {
			return nil, nil, fmt.Errorf("the %s node omits its input %d (%s)", family, i, flags[i])
		}
	}
	if len(node.Outputs) != 1 {
		return nil, nil, fmt.Errorf("the %s node has %d outputs; want 1", family, len(node.Outputs))
	}
	return node, op, nil
}

// nodeRequest builds the request for node, run as op, with its attributes
// and the inputs that input returns by position. An optional input the
// node leaves out (TensorScatter's write_indices) stays nil.
func nodeRequest(node *onnx.Node, op *ops.Op, input func(i int) (*tensor.Tensor, error)) (ops.Request, error) {
	req, err := nodeAttributes(node, op)
	if err != nil {
		return ops.Request{}, err
	}
	dsts := map[string]**tensor.Tensor{"data": &req.Data, "indices": &req.Indices, "updates": &req.Updates}
	for i, flag := range nodeInputFlags(op) {
		if i >= len(node.Inputs) || node.Inputs[i] == "" {
			continue // scatterNode let only an optional input be left out
		}
		t, err := input(i)
		if err != nil {
			return ops.Request{}, err
		}
		*dsts[flag] = t
	}
	return req, nil
}

// nodeAttributes returns the request for node, run as op, with its
// attributes (axis, reduction) and no inputs.
func nodeAttributes(node *onnx.Node, op *ops.Op) (ops.Request, error) {
	req := ops.Request{Op: op.Name}
	for _, name := range node.AttrNames() {
		a := node.Attrs[name]
		want := onnx.AttrInt
		switch {
		case name == "axis" && op.TakesAxis():
			req.Axis = tensor.Scalar(a.Int)
		case name == "reduction" && len(op.Reductions) > 1:
			want = onnx.AttrString
			req.Reduction = a.S
		case name == "mode" && op.TakesMode():
			want = onnx.AttrString
			if a.Type == want {
				// An empty attribute string is a mode, not the attribute's absence.
				if err := op.CheckMode(a.S); err != nil {
					return ops.Request{}, err
				}
			}
			req.Mode = a.S
		default:
			return ops.Request{}, fmt.Errorf("%s: the node has attribute %q, which %s does not take", op.Name, name, op.Name)
		}
		if a.Type != want {
			return ops.Request{}, fmt.Errorf("%s: attribute %q is of type %v; want %v", op.Name, name, a.Type, want)
		}
	}
	return req, nil
}

var onnxTestCommand = &command{
	name:    "onnx-test",
	summary: "run ONNX backend node tests of the scatter operators",
	flags: func() []flagSpec {
		backend := newOnnxBackendArg()
		return onnxTestSpecs(&backend, new(gpuSettings))
	},
	operands: "DIR...",
	details: `Runs ONNX backend node tests as ONNX ships them (Debian's libonnx-testdata
holds them under /usr/share/libonnx-testdata/data/node). Each DIR is a
node-test directory (model.onnx and test_data_set_*/input_N.pb,
output_N.pb) or a folder of them. For each test whose model is a single
Scatter, ScatterElements, ScatterND or TensorScatter node, the node runs on every
test_data_set_* and its output is compared with output_0.pb: bit for bit,
except float add and mul reductions on the GPU, which may differ in
rounding by the bound 'gpuscatter help bench' states (a PASS that needed
it says how many elements did). A test of another operator is listed as
skipped with its operator.

Prints PASS, FAIL or SKIP per test and a summary line.

Exit status: 0 when no test fails; 1 when one fails or a DIR holds no
test; 2 for a malformed command line.
`,
	run: onnxTestMain,
}

func newOnnxBackendArg() stringArg {
	return stringArg{name: "backend", value: backendAuto, check: checkBackendName}
}

// onnxTestSpecs returns the flags of the onnx-test command; --device and
// --deterministic set g.
func onnxTestSpecs(backend *stringArg, g *gpuSettings) []flagSpec {
	return []flagSpec{backend.spec().with("auto|cpu|gpu", "auto (the default), cpu or gpu, as for run", false), deviceSpec(g), deterministicSpec(g)}
}

func onnxTestMain(ctx context.Context, c *cli, args []string) error {
	backend := newOnnxBackendArg()
	// Flags first, then DIRs: split at the first argument that is not a
	// flag or a flag's value.
	flagArgs, rest := splitFlags(args, map[string]bool{"backend": true, "device": true})
	if err := parseFlags(flagArgs, onnxTestSpecs(&backend, &c.gpu)); err != nil {
		return err
	}
	for _, a := range rest {
		if strings.HasPrefix(a, "-") && a != "-" {
			return usagef("flag %s must come before the directories", a)
		}
	}
	dirs := rest
	if len(dirs) == 0 {
		return usagef("no test directory given")
	}
	tests, err := findNodeTests(dirs)
	if err != nil {
		return err
	}
	b, notice, err := openBackend(ctx, c.gpu, backend.value, false)
	if err != nil {
		return err
	}
	defer b.Close()
	resolved := backend.value
	if resolved == backendAuto {
		resolved = backendGPU
		if notice != "" {
			resolved = backendCPU
		}
	}
	var passed, failed, skipped int
	for _, dir := range tests {
		res := runNodeTest(ctx, b, resolved != backendCPU, dir)
		fmt.Fprintf(c.stdout, "%s %s (%s)\n", res.status, filepath.Base(dir), res.detail)
		switch res.status {
		case "PASS":
			passed++
		case "FAIL":
			failed++
		default:
			skipped++
		}
	}
	if n := runNotice(b); n != "" {
		notice = n
	}
	fmt.Fprintf(c.stdout, "onnx-test: %d passed, %d failed, %d skipped on %s\n", passed, failed, skipped, b.Name())
	if notice != "" {
		fmt.Fprintf(c.stderr, "%s%s\n", prefix, notice)
	}
	if failed > 0 {
		return fmt.Errorf("onnx-test: %d of %d tests failed", failed, passed+failed)
	}
	return nil
}

// splitFlags splits args into the leading flags (with the values of the
// flags in valued that are written as separate arguments) and the rest.
func splitFlags(args []string, valued map[string]bool) (flags, rest []string) {
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" {
			return args[:i], args[i+1:]
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name := strings.TrimLeft(a, "-")
		i++
		if !strings.Contains(name, "=") && valued[name] && i < len(args) {
			i++
		}
	}
	return args[:i], args[i:]
}

// findNodeTests returns the node-test directories under dirs: each DIR
// that holds a model.onnx, and the subdirectories of each other DIR that
// do, in name order.
func findNodeTests(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("%s: not a directory", d)
		}
		if isFile(filepath.Join(d, "model.onnx")) {
			out = append(out, d)
			continue
		}
		ents, err := os.ReadDir(d)
		if err != nil {
			return nil, err
		}
		n := len(out)
		for _, e := range ents {
			if sub := filepath.Join(d, e.Name()); e.IsDir() && isFile(filepath.Join(sub, "model.onnx")) {
				out = append(out, sub)
			}
		}
		if len(out) == n {
			return nil, fmt.Errorf("%s: holds no model.onnx and no node-test directory", d)
		}
	}
	return out, nil
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// nodeResult is the outcome of one node test: PASS, FAIL or SKIP, and what
// to say about it.
type nodeResult struct {
	status, detail string
}

// runNodeTest runs the node test in dir on b. tolerant allows float
// add and mul reductions the GPU's rounding bound.
func runNodeTest(ctx context.Context, b ops.Backend, tolerant bool, dir string) nodeResult {
	fail := func(format string, args ...any) nodeResult {
		return nodeResult{"FAIL", fmt.Sprintf(format, args...)}
	}
	m, err := onnx.ReadModelFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return fail("%v", err)
	}
	opTypes := onnx.OpTypes(m)
	isScatter := len(opTypes) == 1
	if isScatter {
		isScatter = false
		for _, fam := range scatterFamilies {
			isScatter = isScatter || opTypes[0] == fam
		}
	}
	if !isScatter {
		return nodeResult{"SKIP", strings.Join(opTypes, ", ")}
	}
	node, op, err := scatterNode(m)
	if err != nil {
		return fail("model.onnx: %v", trimOnnx(err))
	}
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	sort.Strings(sets)
	if len(sets) == 0 {
		return fail("%s: no test_data_set_* directory", op.Name)
	}
	var what string
	var tolerated int64 // elements of every set that matched only within the bound
	for _, set := range sets {
		req, want, err := loadDataSet(node, op, set)
		if err != nil {
			return fail("%s: %s: %v", op.Name, filepath.Base(set), err)
		}
		what = op.Name
		if req.Reduction != "" {
			what += " " + req.Reduction
		}
		got, err := ops.Run(ctx, b, req)
		if err != nil {
			return fail("%s: %s: %v", what, filepath.Base(set), err)
		}
		msg, n, err := compareOutput(ctx, req, want, got, tolerant)
		if err != nil || msg != "" {
			if err != nil {
				msg = err.Error()
			}
			return fail("%s: %s: %s", what, filepath.Base(set), msg)
		}
		tolerated += n
	}
	plural := "s"
	if len(sets) == 1 {
		plural = ""
	}
	detail := fmt.Sprintf("%s, %d data set%s", what, len(sets), plural)
	if tolerated > 0 {
		// Say so where a PASS was not bit for bit.
		detail += fmt.Sprintf(", %d elements within the rounding bound", tolerated)
	}
	return nodeResult{"PASS", detail}
}

// loadDataSet reads the inputs and the expected output of one
// test_data_set_* directory for node.
func loadDataSet(node *onnx.Node, op *ops.Op, set string) (ops.Request, *tensor.Tensor, error) {
	feeds := map[string]*tensor.Tensor{}
	for i, name := range node.GraphInputs {
		p := filepath.Join(set, "input_"+strconv.Itoa(i)+".pb")
		if !isFile(p) {
			break // an input the node does not use may be left out
		}
		t, err := onnx.ReadFile(p)
		if err != nil {
			return ops.Request{}, nil, trimOnnx(err)
		}
		feeds[name] = t
	}
	req, err := nodeRequest(node, op, func(i int) (*tensor.Tensor, error) {
		name := node.Inputs[i]
		if t, ok := feeds[name]; ok {
			return t, nil
		}
		if t, ok := node.Initializers[name]; ok {
			return t, nil
		}
		return nil, fmt.Errorf("no input_N.pb and no initializer for input %q (%s)", name, nodeInputFlags(op)[i])
	})
	if err != nil {
		return ops.Request{}, nil, err
	}
	want, err := onnx.ReadFile(filepath.Join(set, "output_0.pb"))
	if err != nil {
		return ops.Request{}, nil, trimOnnx(err)
	}
	return req, want, nil
}

// compareOutput compares got with want: bit for bit, or within bench's
// bound for float add and mul reductions when tolerant. It returns "" when
// they match, with the elements whose bits differ that the bound accepted
// (0: bit for bit), else what differs.
func compareOutput(ctx context.Context, req ops.Request, want, got *tensor.Tensor, tolerant bool) (msg string, tolerated int64, err error) {
	if want.DType != got.DType || !tensor.SameShape(want.Shape, got.Shape) {
		return fmt.Sprintf("output is %v%s, output_0.pb holds %v%s",
			got.DType, tensor.FormatShape(got.Shape), want.DType, tensor.FormatShape(want.Shape)), 0, nil
	}
	if tensor.Equal(want, got) {
		return "", 0, nil
	}
	if tolerant {
		bound, err := bench.Bounds(ctx, req, 0)
		if err != nil {
			return "", 0, err
		}
		if bound != nil {
			c, err := bench.Compare(want, got, bound)
			if err != nil {
				return "", 0, err
			}
			if c.Mismatches == 0 {
				return "", c.Tolerated, nil
			}
			return fmt.Sprintf("%d elements differ beyond the rounding bound; the first at %d: got %s, want %s",
				c.Mismatches, c.First, got.FormatAt(c.First), want.FormatAt(c.First)), 0, nil
		}
	}
	n := want.Len()
	first, count := -1, 0
	size := want.DType.Size()
	for i := 0; i < n; i++ {
		var same bool
		if want.DType == tensor.String {
			same = want.Strings[i] == got.Strings[i]
		} else {
			same = string(want.Data[i*size:(i+1)*size]) == string(got.Data[i*size:(i+1)*size])
		}
		if !same {
			count++
			if first < 0 {
				first = i
			}
		}
	}
	coord := make([]int, len(want.Shape))
	tensor.Unravel(first, want.Shape, coord)
	return fmt.Sprintf("%d of %d elements differ from output_0.pb; the first at %v: got %s, want %s",
		count, n, coord, got.FormatAt(first), want.FormatAt(first)), 0, nil
}
