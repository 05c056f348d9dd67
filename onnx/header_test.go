package onnx

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/tensor"
)

// writeFile writes b to a new .pb file and returns its path.
func writeFile(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.pb")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

// TestReadHeaderFileIsReadFilesShape: the header of every tensor, raw or
// in a typed field, of every dtype, is the dtype and shape ReadFile
// reads.
func TestReadHeaderFileIsReadFilesShape(t *testing.T) {
	seed := uint64(11)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	var tensors []*tensor.Tensor
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Int64, tensor.Bool, tensor.Float16, tensor.BFloat16, tensor.Uint8, tensor.Complex128} {
		for _, shape := range [][]int{{}, {0}, {3, 2}, {2, 1, 4}} {
			tensors = append(tensors, randomTensor(rng, dt, shape))
		}
	}
	tensors = append(tensors, must(tensor.FromStrings([]int{2}, []string{"a", "bc"})))
	for i, x := range tensors {
		path := writeFile(t, must(Marshal(x)))
		h, err := ReadHeaderFile(path)
		require.NoError(t, err, "tensor %d", i)
		assert.Equal(t, Header{DType: x.DType, Shape: x.Shape}, h, "tensor %d", i)
	}
}

// TestReadHeaderFileRefusesWhatReadFileRefuses: a malformed TensorProto
// fails the header read with ReadFile's error, except for values out of
// their type's range in a typed field, which only reading them finds.
func TestReadHeaderFileRefusesWhatReadFileRefuses(t *testing.T) {
	for _, c := range badCases() {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, marshal(t, c.tp))
			_, want := ReadFile(path)
			require.Error(t, want)
			_, err := ReadHeaderFile(path)
			if strings.Contains(c.msg, "out of range") {
				assert.NoError(t, err, "the values are not read")
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, c.kind)
			assert.Equal(t, want.Error(), err.Error())
		})
	}
	// A raw_data longer than the file, and a missing file.
	b := must(Marshal(tensor.MustFromSlice([]int{4}, []float32{1, 2, 3, 4})))
	path := writeFile(t, b[:len(b)-3])
	_, want := ReadFile(path)
	_, err := ReadHeaderFile(path)
	require.Error(t, err)
	assert.Equal(t, want.Error(), err.Error())
	_, err = ReadHeaderFile(filepath.Join(t.TempDir(), "missing.pb"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
