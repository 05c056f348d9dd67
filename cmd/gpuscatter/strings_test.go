package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// str returns a string tensor stored as f.
func str(f tensor.StringFormat, shape []int, v ...string) *tensor.Tensor {
	t, err := tensor.FromStrings(shape, v)
	if err != nil {
		panic(err)
	}
	t.StringFormat = f
	return t
}

// TestStringOutputKeepsDataDType runs every operator that moves strings on
// data stored as '<U4' and '|S4' whose result strings are at most 3 long:
// the output is '<U4' or '|S4' too, not the width of its longest string.
func TestStringOutputKeepsDataDType(t *testing.T) {
	moved := 0
	for _, op := range ops.All() {
		if !op.AnyDType {
			continue
		}
		for _, f := range []tensor.StringFormat{{Width: 4}, {Bytes: true, Width: 4}} {
			t.Run(op.Name+" "+f.String(), func(t *testing.T) {
				dir := t.TempDir()
				dataShape, updShape := []int{4}, []int{1}
				var extra []string
				if op.Kind == ops.KindCache {
					// One sequence of 4 positions; the update writes
					// position 3 (the write index) along axis 1.
					dataShape, updShape, extra = []int{1, 4}, []int{1, 1}, []string{"--axis", "1"}
				}
				data := writeNPY(t, dir, "data.npy", str(f, dataShape, "a", "bb", "ccc", ""))
				var indices string
				switch op.Kind {
				case ops.KindND:
					indices = writeNPY(t, dir, "indices.npy", i64([]int{1, 1}, 3))
				case ops.KindElements, ops.KindAxis, ops.KindCache:
					indices = writeNPY(t, dir, "indices.npy", i64([]int{1}, 3))
				default:
					t.Fatalf("no inputs for %s", op.Name)
				}
				// updates of another width: the output still takes data's.
				updates := writeNPY(t, dir, "updates.npy", str(tensor.StringFormat{Bytes: f.Bytes, Width: 9}, updShape, "xyz"))
				out := filepath.Join(dir, "out.npy")
				code, stdout, stderr := runCLI(t, append([]string{"run", "--op", op.Name, "--data", data, "--indices", indices,
					"--updates", updates, "--out", out, "--backend", "cpu"}, extra...)...)
				require.Equal(t, exitOK, code, stderr)
				assert.Empty(t, stdout)
				got := readNPY(t, out)
				assert.Equal(t, f, got.StringFormat, "the output's dtype is %s", got.StringFormat)
				assert.Equal(t, []string{"a", "bb", "ccc", "xyz"}, got.Strings)
				raw, err := os.ReadFile(out)
				require.NoError(t, err)
				assert.Contains(t, string(raw), "'descr': '"+f.String()+"'")

				// An update too long for data's dtype is an error naming it.
				long := writeNPY(t, dir, "long.npy", str(tensor.StringFormat{Bytes: f.Bytes, Width: 9}, updShape, "toolong"))
				code, stdout, stderr = runCLI(t, append([]string{"run", "--op", op.Name, "--data", data, "--indices", indices,
					"--updates", long, "--out", filepath.Join(dir, "none.npy"), "--backend", "cpu"}, extra...)...)
				requireInputError(t, code, stdout, stderr, "--updates "+long, `element 0 ("toolong") is 7`, "wider than data's dtype "+f.String())
				assert.NoFileExists(t, filepath.Join(dir, "none.npy"))
			})
			moved++
		}
	}
	assert.Equal(t, 22, moved, "the ONNX operators, each with '<U' and '|S' data")
}
