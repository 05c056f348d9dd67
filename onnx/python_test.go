package onnx

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/tensor"
)

// python is the interpreter whose onnx package (Debian's python3-onnx)
// the interoperability test checks against.
const python = "/usr/bin/python3"

// pythonCanon is shared by both directions: canon(a) describes a NumPy
// array as its dtype name, shape and elements, each a decimal string of
// the element's integer value or float bits (complex numbers as two
// entries), or the string itself. onnx.numpy_helper.to_array returns
// bfloat16 as float32, so bfloat16 elements compare as float32 bits.
const pythonCanon = `
import json, sys
import numpy as np
from onnx import helper, numpy_helper, TensorProto

def canon(a):
    a = np.asarray(a)
    flat = a.reshape(-1)
    k = a.dtype.kind
    if k in "UOS":
        name, vals = "str", [x.decode() if isinstance(x, bytes) else str(x) for x in flat]
    elif k == "b":
        name, vals = "bool", [str(int(x)) for x in flat]
    elif k in "iu":
        name, vals = a.dtype.name, [str(int(x)) for x in flat]
    elif k == "f":
        name, vals = a.dtype.name, [str(int(x)) for x in flat.view("u%d" % a.itemsize)]
    elif k == "c":
        part = flat.view("f%d" % (a.itemsize // 2))
        name, vals = a.dtype.name, [str(int(x)) for x in part.view("u%d" % (a.itemsize // 2))]
    else:
        raise SystemExit("unexpected dtype %s" % a.dtype)
    return {"dtype": name, "shape": list(a.shape), "values": vals}
`

// pythonRead loads every .pb file named on the command line with
// numpy_helper.to_array and prints their canonical forms as JSON.
const pythonRead = pythonCanon + `
out = {}
for path in sys.argv[1:]:
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    out[path] = canon(numpy_helper.to_array(t))
json.dump(out, sys.stdout)
`

// pythonWrite writes TensorProtos into the directory sys.argv[1], each
// from the raw_data that numpy_helper.from_array writes and from the typed
// fields that helper.make_tensor(raw=False) writes, and prints the
// canonical form of the array each one holds.
const pythonWrite = pythonCanon + `
d = sys.argv[1]
rng = np.random.default_rng(7)
out = {}
def save(name, t, a):
    path = "%s/%s.pb" % (d, name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())
    out[path] = canon(a)
    # to_array of ONNX 1.12 fails on complex numbers in float_data and
    # double_data (it casts the pairs it combined back to float).
    if not name.startswith("typed_complex"):
        assert canon(numpy_helper.to_array(t)) == out[path], path

for shape in [(), (0,), (2, 3), (2, 0, 3)]:
    n = int(np.prod(shape))
    tag = "x".join(map(str, shape)) or "scalar"
    for dt in ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
               "float16", "float32", "float64", "complex64", "complex128"]:
        if dt == "bool":
            a = rng.integers(0, 2, n).astype(bool)
        elif dt[0] in "iu":
            info = np.iinfo(dt)
            a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        elif dt[0] == "f":
            a = (rng.standard_normal(n) * 100).astype(dt)
        else:
            a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
        a = a.reshape(shape)
        save("raw_%s_%s" % (dt, tag), numpy_helper.from_array(a), a)
        code = helper.np_dtype_to_tensor_dtype(a.dtype) if hasattr(helper, "np_dtype_to_tensor_dtype") else \
            __import__("onnx").mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]
        save("typed_%s_%s" % (dt, tag), helper.make_tensor("t", code, shape, a.reshape(-1).tolist() if dt[0] != "f" else a.reshape(-1), raw=False), a)
    s = np.array(["", "a", "héllo", "xyz", "😀", "q"][:n], dtype=object).reshape(shape)
    save("str_%s" % tag, numpy_helper.from_array(s), s)
    # bfloat16: values that are exact in bfloat16, written to int32_data.
    b = np.array([1.5, -2.0, 0.0, -0.0, 2.0 ** 127, 2.0 ** -130][:n] if n <= 6 else [], dtype=np.float32).reshape(shape)
    save("typed_bfloat16_%s" % tag, helper.make_tensor("t", TensorProto.BFLOAT16, shape, b.reshape(-1).tolist(), raw=False), b)
json.dump(out, sys.stdout)
`

// canonical is the form pythonCanon prints.
type canonical struct {
	DType  string   `json:"dtype"`
	Shape  []int    `json:"shape"`
	Values []string `json:"values"`
}

// canon describes t as pythonCanon describes the array numpy_helper.to_array
// makes of it.
func canon(t *tensor.Tensor) canonical {
	c := canonical{DType: t.DType.String(), Shape: append([]int{}, t.Shape...), Values: []string{}}
	switch t.DType {
	case tensor.BFloat16:
		c.DType = "float32"
	case tensor.String:
		c.DType = "str"
	}
	le := binary.LittleEndian
	d := t.Data
	for i := range t.Len() {
		var v string
		switch t.DType {
		case tensor.Bool:
			v = strconv.Itoa(int(d[i]))
		case tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Uint16, tensor.Int32, tensor.Uint32, tensor.Int64:
			n, _ := t.IntAt(i)
			v = strconv.FormatInt(n, 10)
		case tensor.Uint64:
			v = strconv.FormatUint(le.Uint64(d[8*i:]), 10)
		case tensor.Float16:
			v = strconv.FormatUint(uint64(le.Uint16(d[2*i:])), 10)
		case tensor.BFloat16:
			v = strconv.FormatUint(uint64(le.Uint16(d[2*i:]))<<16, 10)
		case tensor.Float32:
			v = strconv.FormatUint(uint64(le.Uint32(d[4*i:])), 10)
		case tensor.Float64:
			v = strconv.FormatUint(le.Uint64(d[8*i:]), 10)
		case tensor.Complex64:
			c.Values = append(c.Values, strconv.FormatUint(uint64(le.Uint32(d[8*i:])), 10))
			v = strconv.FormatUint(uint64(le.Uint32(d[8*i+4:])), 10)
		case tensor.Complex128:
			c.Values = append(c.Values, strconv.FormatUint(le.Uint64(d[16*i:]), 10))
			v = strconv.FormatUint(le.Uint64(d[16*i+8:]), 10)
		case tensor.String:
			v = t.Strings[i]
		}
		c.Values = append(c.Values, v)
	}
	return c
}

// needPython skips the test when python3-onnx is missing, except under
// CI=true, where it fails.
func needPython(t *testing.T) {
	t.Helper()
	out, err := exec.Command(python, "-c", "import onnx.numpy_helper").CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("%s cannot import onnx (make deps installs python3-onnx): %v: %s", python, err, out)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

func runPython(t *testing.T, script string, args ...string) map[string]canonical {
	t.Helper()
	cmd := exec.Command(python, append([]string{"-c", script}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err)
	var got map[string]canonical
	require.NoError(t, json.Unmarshal(out, &got))
	return got
}

// TestPythonReadsWhatWeWrite writes a tensor of every element type and
// several shapes and checks that numpy_helper.to_array reads the same
// values.
func TestPythonReadsWhatWeWrite(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(8, 9))
	want := map[string]canonical{}
	var paths []string
	for _, dt := range tensor.DTypes() {
		for _, shape := range [][]int{{}, {0}, {2, 3}, {2, 0, 3}} {
			var x *tensor.Tensor
			if dt == tensor.String {
				x = must(tensor.FromStrings(shape, []string{"", "a", "héllo", "xyz", "😀", "q"}[:must(tensor.NumElements(shape))]))
			} else {
				x = randomTensor(rng, dt, shape)
			}
			if dt == tensor.Float16 || dt == tensor.BFloat16 || dt == tensor.Float32 || dt == tensor.Float64 {
				// A NaN's payload may change on its way through
				// Python floats; keep the bits of numbers.
				for i := range x.Len() {
					if x.FormatAt(i) == "NaN" {
						copy(x.Data[i*dt.Size():], make([]byte, dt.Size()))
					}
				}
			}
			p := filepath.Join(dir, fmt.Sprintf("%v_%s.pb", dt, tensor.FormatShape(shape)))
			b, err := Marshal(x)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, b, 0o666))
			paths = append(paths, p)
			want[p] = canon(x)
		}
	}
	got := runPython(t, pythonRead, paths...)
	require.Len(t, got, len(want))
	for p, w := range want {
		assert.Equal(t, w, got[p], filepath.Base(p))
	}
}

// TestWeReadWhatPythonWrites reads the TensorProtos that from_array and
// make_tensor write, raw_data and typed fields, for every element type.
func TestWeReadWhatPythonWrites(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	want := runPython(t, pythonWrite, dir)
	require.NotEmpty(t, want)
	seen := map[tensor.DType]bool{}
	for p, w := range want {
		x, err := ReadFile(p)
		require.NoError(t, err, filepath.Base(p))
		seen[x.DType] = true
		got := canon(x)
		assert.Equal(t, w, got, filepath.Base(p))
	}
	for _, dt := range tensor.DTypes() {
		assert.True(t, seen[dt], "no file of %v", dt)
	}
}
