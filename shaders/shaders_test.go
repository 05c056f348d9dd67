package shaders_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// TestGeneratedUpToDate runs the generator again into a temporary
// directory and requires the committed spv/ files, variants_gen.go and the
// interface files generated from internal/shadergen/abi.go
// (src/abi_gen.glsl, abi_gen.go, ../gpu/abi_gen.go) to be identical, so
// that a change to src/ or to the interface cannot ship without its
// SPIR-V and the other side's copy. It needs glslc (Debian package glslc);
// without it the test fails.
func TestGeneratedUpToDate(t *testing.T) {
	if _, err := exec.LookPath("glslc"); err != nil {
		t.Fatalf("glslc is needed to check the committed SPIR-V (Debian package glslc): %v", err)
	}
	tmp := t.TempDir()
	cmd := exec.Command("go", "run", "../internal/shadergen", "-dir", ".", "-out", tmp)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go run ../internal/shadergen: %s", out)

	version, _ := exec.Command("glslc", "--version").Output()
	hint := "run `go generate ./shaders` and commit the result (glslc here: " +
		strings.TrimSpace(strings.SplitN(string(version), "\n", 2)[0]) + ")"

	for committed, fresh := range map[string]string{
		"variants_gen.go":   "variants_gen.go",
		"abi_gen.go":        "abi_gen.go",
		"src/abi_gen.glsl":  "src/abi_gen.glsl",
		"../gpu/abi_gen.go": "gpu/abi_gen.go",
	} {
		want, err := os.ReadFile(filepath.Join(tmp, fresh))
		require.NoError(t, err)
		got, err := os.ReadFile(committed)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%s is stale: %s", committed, hint)
		assert.True(t, strings.HasPrefix(string(got), "// Code generated "), "%s: no generated-code header", committed)
	}

	fresh, err := filepath.Glob(filepath.Join(tmp, "spv", "*.spv"))
	require.NoError(t, err)
	committed, err := filepath.Glob(filepath.Join("spv", "*.spv"))
	require.NoError(t, err)
	names := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			out = append(out, filepath.Base(p))
		}
		return out
	}
	require.Equal(t, names(fresh), names(committed), "spv/ holds other files than the generator writes: %s", hint)
	for _, f := range fresh {
		a, err := os.ReadFile(f)
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join("spv", filepath.Base(f)))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), "%s differs from what src/ compiles to: %s", filepath.Base(f), hint)
	}
}

func TestEveryVariantIsEmbedded(t *testing.T) {
	all := shaders.All()
	require.NotEmpty(t, all)
	seen := map[shaders.Key]bool{}
	for _, v := range all {
		require.False(t, seen[v.Key], "key %+v appears twice", v.Key)
		seen[v.Key] = true
		code, err := v.SPIRV()
		require.NoError(t, err, v.Name)
		require.GreaterOrEqual(t, len(code), 20, v.Name)
		assert.Equal(t, []byte{0x03, 0x02, 0x23, 0x07}, code[:4], "%s: SPIR-V magic", v.Name)
		assert.Equal(t, [3]uint32{256, 1, 1}, v.LocalSize, v.Name)
		// One block for every kernel, within the 128 bytes every device
		// offers.
		assert.Equal(t, all[0].PushConstantSize, v.PushConstantSize, v.Name)
		assert.LessOrEqual(t, v.PushConstantSize, uint32(128), v.Name)
		got, err := shaders.Lookup(v.Key)
		require.NoError(t, err)
		assert.Equal(t, v, got)
		spec := v.Specialize(0xABC)
		require.Len(t, spec, shaders.FlagsConstant+1, v.Name)
		assert.Equal(t, uint32(0xABC), spec[shaders.FlagsConstant], v.Name)
		for i, c := range v.SpecConstants {
			assert.Equal(t, c, spec[i], "%s: constant %d", v.Name, i)
		}
	}
}

// TestVariantsCoverEveryCase checks the table has a kernel for every
// combination the backend asks for.
func TestVariantsCoverEveryCase(t *testing.T) {
	for _, pos := range []int{32, 64} {
		for _, kind := range []shaders.Kind{shaders.Block, shaders.Element} {
			for _, ib := range []int{1, 2, 4, 8} {
				for _, signed := range []bool{false, true} {
					_, err := shaders.Lookup(shaders.Key{Family: shaders.Resolve, Kind: kind, PosBits: pos, IndexBytes: ib, IndexSigned: signed})
					assert.NoError(t, err)
				}
			}
		}
		for _, kind := range []shaders.Kind{shaders.Block, shaders.Element, shaders.Slice} {
			for _, eb := range []int{1, 2, 4, 8, 16} {
				_, err := shaders.Lookup(shaders.Key{Family: shaders.Scatter, Kind: kind, PosBits: pos, ElemBytes: eb, Reduction: shaders.RedNone})
				assert.NoError(t, err)
			}
		}
		for _, eb := range []int{1, 2, 4, 8, 16} {
			_, err := shaders.Lookup(shaders.Key{Family: shaders.Gather, Kind: shaders.Block, PosBits: pos, ElemBytes: eb, Reduction: shaders.RedNone})
			assert.NoError(t, err)
		}
	}
	_, err := shaders.Lookup(shaders.Key{Family: shaders.Scatter, Kind: shaders.Slice, PosBits: 32, ElemBytes: 3})
	require.ErrorIs(t, err, shaders.ErrNoVariant)
}

// TestReductionVariantsCoverEveryCase checks that every reduction an
// operator takes has a CAS scatter kernel and an element-wise kernel for
// every numeric dtype and position width, that native ones exist where
// device atomics compute the step exactly, and that the reduction reaches
// the kernel as specialization constant 0.
func TestReductionVariantsCoverEveryCase(t *testing.T) {
	kindReds := map[shaders.Kind][]shaders.Reduction{
		shaders.Block:   {shaders.RedSum, shaders.RedSub, shaders.RedProd, shaders.RedMin, shaders.RedMax},
		shaders.Element: {shaders.RedSum, shaders.RedProd, shaders.RedMin, shaders.RedMax, shaders.RedMean},
	}
	for _, pos := range []int{32, 64} {
		for _, dt := range tensor.DTypes() {
			if !dt.IsNumeric() {
				continue
			}
			for kind, reds := range kindReds {
				for _, red := range reds {
					if red == shaders.RedMean && dt == tensor.Bool {
						continue
					}
					k := shaders.Key{Family: shaders.Scatter, Kind: kind, PosBits: pos, ElemBytes: dt.Size(), Reduction: red, DType: dt, Atomics: shaders.CAS}
					v, err := shaders.Lookup(k)
					if assert.NoError(t, err) {
						assert.Equal(t, []uint32{uint32(red), 1}, v.SpecConstants, v.Name)
					}
					k.Private = true
					_, err = shaders.Lookup(k)
					assert.Equal(t, dt.Size() <= 4 && dt != tensor.Bool && red != shaders.RedMean, err == nil, "%+v", k)
					k = shaders.Key{Family: shaders.Reduce, PosBits: pos, ElemBytes: dt.Size(), Reduction: red, DType: dt}
					_, err = shaders.Lookup(k)
					assert.NoError(t, err, "%+v", k)
				}
			}
			native := shaders.Key{Family: shaders.Scatter, Kind: shaders.Element, PosBits: pos, ElemBytes: dt.Size(), Reduction: shaders.RedSum, DType: dt, Atomics: shaders.Native}
			_, err := shaders.Lookup(native)
			want := dt == tensor.Int32 || dt == tensor.Uint32 || dt == tensor.Int64 || dt == tensor.Uint64 || dt == tensor.Float32 || dt == tensor.Float64
			assert.Equal(t, want, err == nil, "native sum on %v", dt)
		}
	}
	for _, s := range []shaders.Stage{shaders.RadixCount, shaders.RadixScatter, shaders.ScanUp, shaders.ScanDown} {
		_, err := shaders.Lookup(shaders.Key{Family: shaders.Sort, PosBits: 32, Stage: s})
		assert.NoError(t, err, s.String())
	}
}

// TestSPIRVValidates runs spirv-val (Debian package spirv-tools) on every
// SPIR-V file, which holds the kernels of one or more variants. Without
// spirv-val it fails under CI (CI set), where it is installed, and skips
// elsewhere.
func TestSPIRVValidates(t *testing.T) {
	if _, err := exec.LookPath("spirv-val"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("spirv-val not found; install Debian package spirv-tools")
		}
		t.Skip("spirv-val not found; install Debian package spirv-tools")
	}
	// Variants that differ only in their specialization constants share
	// a file: each file is validated once, under the names of its
	// variants.
	dir := t.TempDir()
	byFile := map[string][]string{}
	var files []shaders.Variant
	for _, v := range shaders.All() {
		if _, ok := byFile[v.File]; !ok {
			files = append(files, v)
		}
		byFile[v.File] = append(byFile[v.File], v.Name)
	}
	require.Less(t, len(files), len(shaders.All()), "no variants share a file")
	for _, v := range files {
		code, err := v.SPIRV()
		require.NoError(t, err)
		path := filepath.Join(dir, filepath.Base(v.File))
		require.NoError(t, os.WriteFile(path, code, 0o644))
		out, err := exec.Command("spirv-val", "--target-env", "vulkan1.2", path).CombinedOutput()
		assert.NoError(t, err, "%s (%s): %s", v.File, strings.Join(byFile[v.File], ", "), out)
	}
}

// TestReductionOf pins the conversion from ops.Reduction: every reduction
// an operator takes maps to the kernels' reduction of the same name and
// number (the number is what the kernels compare RED with), and one the
// kernels do not know maps to no variant.
func TestReductionOf(t *testing.T) {
	seen := map[ops.Reduction]bool{}
	for _, op := range ops.All() {
		for _, r := range op.Reductions {
			seen[r] = true
		}
	}
	require.Len(t, seen, 7)
	for r := range seen {
		got := shaders.ReductionOf(r)
		assert.Equal(t, r.String(), got.String(), "%v", r)
		assert.Equal(t, uint8(r), uint8(got), "%v", r)
	}
	bad := shaders.ReductionOf(ops.Reduction(200))
	assert.Equal(t, "reduction(255)", bad.String())
	_, err := shaders.Lookup(shaders.Key{Family: shaders.Reduce, PosBits: 32, ElemBytes: 4, Reduction: bad, DType: tensor.Float32})
	assert.ErrorIs(t, err, shaders.ErrNoVariant)
}
