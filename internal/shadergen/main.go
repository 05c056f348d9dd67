// Command gen compiles every variant of the gpuscatter compute shaders with
// glslc and writes the SPIR-V files and the Go table that describes them,
// and the interface the kernels share with the host code (abi.go), for
// both sides:
//
//	<dir>/spv/<variant>.spv
//	<dir>/variants_gen.go
//	<dir>/src/abi_gen.glsl
//	<dir>/abi_gen.go
//	<dir>/../gpu/abi_gen.go
//
// where <dir> is the shaders package directory. Run it through
// `go generate ./shaders` (or `go run ./internal/shadergen -dir shaders` from the module root).
// Flags: -dir names the shaders directory (default: "." when it holds
// src/common.glsl, else "shaders"), -out writes the output elsewhere (the
// up-to-date test in package shaders uses it; the sources are then
// compiled from a copy in <out>/src beside the fresh abi_gen.glsl, and
// gpu's file goes to <out>/gpu), -gpu names the gpu package directory,
// -glslc names the compiler.
//
// A variant is one source (src/<family>.comp) compiled with one set of
// macros, and for reduction kernels one set of specialization constants
// (the reduction; the workgroup memory of the accumulating scatter), so
// that one file serves several table entries; the table records each
// entry's key, file, specialization constants, workgroup size and
// push-constant size, the last two read back from the SPIR-V so that the
// table cannot disagree with the code.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

// variant is one compilation of one source. Reduction kernels take the
// reduction as a specialization constant, so one file serves several keys.
type variant struct {
	family   string // "resolve", "scatter", "gather", "reduce" or "sort"
	kind     string // "block", "element", "slice" ("" for reduce and sort)
	elem     int    // scatter, gather, reduce: element size in bytes
	index    int    // resolve: index element size in bytes
	signed   bool   // resolve: signed index type
	table    bool   // resolve: the workgroup-memory table (FLAG_TABLE)
	bucket   bool   // reduce: the bucketed fold (BUCKET), keys Private
	red      string // scatter, gather: reduction ("none" for moves)
	dtype    *dtype // scatter with a reduction, reduce
	atomics  string // scatter with a reduction: "cas", "native" or "int"
	stage    string // sort
	posBits  int    // 32 or 64
	noInt64  bool   // the 32-bit baseline (INT64=0, common.glsl)
	name     string // also the file name
	defines  []string
	keys     []specKey // the table entries of a reduction file
	localX   uint32
	pushSize uint32
	info     shaderInfo
}

// specKey is one table entry of a file compiled once for several
// reductions: the reduction, the workgroup-memory accumulation, and the
// specialization constants that select them.
type specKey struct {
	red     string
	private bool
	spec    []uint32
}

// enumByName maps the names of an enumeration of abi.go ("block",
// "radix-count", "sum") to its constants.
func enumByName(goType string) map[string]abiConst {
	m := map[string]abiConst{}
	for _, k := range abiGroupOf(goType).consts {
		m[abiName(k)] = k
	}
	return m
}

// kinds, reductions and stages are abi.go's enumerations by name.
var (
	kinds      = enumByName("Kind")
	reductions = enumByName("Reduction")
	stages     = enumByName("Stage")
)

// spec returns the specialization constants of a reduction variant: the
// reduction and the workgroup memory, at their IDs.
func spec(red string, privWords uint64) []uint32 {
	s := make([]uint32, max(abiValue("SPEC_RED"), abiValue("SPEC_PRIV_WORDS"))+1)
	s[abiValue("SPEC_RED")] = uint32(reductions[red].value)
	s[abiValue("SPEC_PRIV_WORDS")] = uint32(privWords)
	return s
}

// dtype is an element type of the reduction kernels.
type dtype struct {
	name   string // in file names
	goName string // tensor.DType constant
	macro  string // DT_* in src/reduce.glsl
	size   int
	// native lists the reductions whose ATOMICS_NATIVE variant differs
	// from the CAS one: where a device atomic computes the step exactly.
	native []string
}

var dtypes = []*dtype{
	{"bool", "Bool", "DT_BOOL", 1, nil},
	{"i8", "Int8", "DT_I8", 1, []string{"mean"}},
	{"u8", "Uint8", "DT_U8", 1, []string{"mean"}},
	{"i16", "Int16", "DT_I16", 2, []string{"mean"}},
	{"u16", "Uint16", "DT_U16", 2, []string{"mean"}},
	{"i32", "Int32", "DT_I32", 4, []string{"sum", "sub", "min", "max", "mean"}},
	{"u32", "Uint32", "DT_U32", 4, []string{"sum", "sub", "min", "max", "mean"}},
	{"i64", "Int64", "DT_I64", 8, []string{"sum", "sub", "min", "max", "mean"}},
	{"u64", "Uint64", "DT_U64", 8, []string{"sum", "sub", "min", "max", "mean"}},
	{"f16", "Float16", "DT_F16", 2, nil},
	{"bf16", "BFloat16", "DT_BF16", 2, nil},
	{"f32", "Float32", "DT_F32", 4, []string{"sum", "sub", "min", "max", "mean"}},
	{"f64", "Float64", "DT_F64", 8, []string{"sum", "sub", "mean"}},
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func indexName(bytes int, signed bool) string {
	if signed {
		return fmt.Sprintf("i%d", bytes*8)
	}
	return fmt.Sprintf("u%d", bytes*8)
}

// allVariants lists every variant, in a fixed order.
func allVariants() []*variant {
	var out []*variant
	for _, pos := range []int{32, 64} {
		for _, kind := range []string{"block", "element", "cache"} {
			for _, ib := range []int{1, 2, 4, 8} {
				for _, signed := range []bool{false, true} {
					if kind == "cache" && (ib != 8 || !signed) {
						continue // TensorScatter's write_indices are int64
					}
					v := &variant{family: "resolve", kind: kind, index: ib, signed: signed, posBits: pos}
					v.name = fmt.Sprintf("resolve-%s-%s-p%d", kind, indexName(ib, signed), pos)
					sgn := 0
					if signed {
						sgn = 1
					}
					v.defines = []string{"KIND=" + kinds[kind].glsl, fmt.Sprintf("INDEX_BYTES=%d", ib), fmt.Sprintf("INDEX_SIGNED=%d", sgn)}
					out = append(out, v)
					if pos == 32 && kind != "cache" {
						// The last-writer table (FLAG_TABLE), for 32-bit
						// positions; TensorScatter's rows never collide.
						tv := *v
						tv.table = true
						tv.name = fmt.Sprintf("resolve-%s-%s-table-p%d", kind, indexName(ib, signed), pos)
						tv.defines = append(append([]string(nil), v.defines...), "TABLE=1")
						out = append(out, &tv)
					}
				}
			}
		}
		for _, eb := range []int{1, 2, 4, 8, 16} {
			v := &variant{family: "gather", kind: "block", elem: eb, red: "none", posBits: pos}
			v.name = fmt.Sprintf("gather-block-e%d-none-p%d", eb, pos)
			v.defines = []string{fmt.Sprintf("ELEM_BYTES=%d", eb)}
			out = append(out, v)
		}
		for _, kind := range []string{"block", "element", "slice", "cache"} {
			for _, eb := range []int{1, 2, 4, 8, 16} {
				v := &variant{family: "scatter", kind: kind, elem: eb, red: "none", posBits: pos}
				v.name = fmt.Sprintf("scatter-%s-e%d-none-p%d", kind, eb, pos)
				v.defines = []string{"KIND=" + kinds[kind].glsl, fmt.Sprintf("ELEM_BYTES=%d", eb)}
				out = append(out, v)
			}
		}
		// Reductions: one file per kind, dtype and atomic path, the
		// reduction a specialization constant.
		for _, kind := range []string{"block", "element"} {
			for _, dt := range dtypes {
				for _, at := range []string{"cas", "native", "int"} {
					v := &variant{family: "scatter", kind: kind, elem: dt.size, dtype: dt, atomics: at, posBits: pos}
					for _, red := range kindReductions(kind, dt) {
						if at == "native" && !contains(dt.native, red) {
							continue
						}
						// float32 min and max on integer atomics, for
						// devices without float32 atomic add.
						if at == "int" && (dt.name != "f32" || (red != "min" && red != "max")) {
							continue
						}
						v.keys = append(v.keys, specKey{red: red, spec: spec(red, 1)})
						if dt.size <= 4 && dt.name != "bool" && red != "mean" {
							v.keys = append(v.keys, specKey{red: red, private: true, spec: spec(red, abiValue("PrivateWords"))})
						}
					}
					if len(v.keys) == 0 {
						continue
					}
					native := map[string]int{"cas": 0, "native": 1, "int": 2}[at]
					v.name = fmt.Sprintf("scatter-%s-%s-%s-p%d", kind, dt.name, at, pos)
					v.defines = []string{"KIND=" + kinds[kind].glsl, "DTYPE=" + dt.macro, fmt.Sprintf("ATOMICS_NATIVE=%d", native)}
					out = append(out, v)
				}
			}
		}
		for _, dt := range dtypes {
			v := &variant{family: "reduce", elem: dt.size, dtype: dt, posBits: pos}
			for _, red := range foldReductions(dt) {
				v.keys = append(v.keys, specKey{red: red, spec: spec(red, 1)})
			}
			v.name = fmt.Sprintf("reduce-%s-p%d", dt.name, pos)
			v.defines = []string{"DTYPE=" + dt.macro}
			out = append(out, v)
			if pos != 32 || dt.name == "bool" {
				continue
			}
			// The bucketed fold (BUCKET, reduce.comp): workgroup-memory
			// accumulators, in variants of their own so that the other
			// phases need none; 32-bit positions only, as the in-order
			// fold, and no mean, which keeps the slot-by-slot fold.
			bv := &variant{family: "reduce", elem: dt.size, dtype: dt, posBits: pos, bucket: true}
			for _, red := range foldReductions(dt) {
				if red != "mean" {
					bv.keys = append(bv.keys, specKey{red: red, private: true, spec: spec(red, 1)})
				}
			}
			bv.name = fmt.Sprintf("reduce-%s-p%d-bucket", dt.name, pos)
			bv.defines = []string{"DTYPE=" + dt.macro, "BUCKET=1"}
			out = append(out, bv)
		}
	}
	for _, st := range abiGroupOf("Stage").consts {
		v := &variant{family: "sort", stage: abiName(st), posBits: 32}
		v.name = "sort-" + v.stage
		v.defines = []string{fmt.Sprintf("STAGE=%d", st.value)}
		out = append(out, v)
	}
	// The 32-bit baseline (INT64=0) of every kernel that has one, for
	// devices without shaderInt64: 32-bit positions only.
	var baseline []*variant
	for _, v := range out {
		if v.posBits != 32 || !hasBaseline(v) {
			continue
		}
		b := *v
		b.noInt64 = true
		b.name += "-noi64"
		b.defines = append(slices.Clone(v.defines), "INT64=0")
		if v.dtype != nil && v.dtype.name == "f64" {
			// float64 arithmetic needs shaderInt64 (and shaderFloat64):
			// the baseline folds min and max only.
			b.keys = nil
			for _, k := range v.keys {
				if k.red == "min" || k.red == "max" {
					b.keys = append(b.keys, k)
				}
			}
		}
		baseline = append(baseline, &b)
	}
	out = append(out, baseline...)
	for _, v := range out {
		v.defines = append(v.defines, fmt.Sprintf("POS_BITS=%d", v.posBits))
	}
	return out
}

// hasBaseline reports whether v has a 32-bit baseline (INT64=0): every
// kernel but the atomic scatter of 8-byte elements, which a device
// without shaderInt64 has no atomics for (such reductions fold in order).
func hasBaseline(v *variant) bool {
	if v.family == "scatter" && v.dtype != nil {
		return v.dtype.size <= 4
	}
	return true
}

func main() {
	dir := flag.String("dir", "", "the shaders package directory (default: . or ./shaders)")
	out := flag.String("out", "", "where to write spv/, src/abi_gen.glsl, variants_gen.go and abi_gen.go (default: -dir)")
	gpu := flag.String("gpu", "", "where to write gpu's abi_gen.go (default: <dir>/../gpu, or <out>/gpu with -out)")
	glslc := flag.String("glslc", "glslc", "the glslc compiler")
	flag.Parse()
	if *dir == "" {
		*dir = "."
		if _, err := os.Stat(filepath.Join("src", "common.glsl")); err != nil {
			*dir = "shaders"
		}
	}
	if *gpu == "" {
		*gpu = filepath.Join(*dir, "..", "gpu")
		if *out != "" {
			*gpu = filepath.Join(*out, "gpu")
		}
	}
	if *out == "" {
		*out = *dir
	}
	if err := run(*dir, *out, *gpu, *glslc); err != nil {
		fmt.Fprintln(os.Stderr, "shadergen:", err)
		os.Exit(1)
	}
}

func run(dir, out, gpuDir, glslc string) error {
	if err := checkABI(abiGroups, abiPush); err != nil {
		return err
	}
	src, err := writeABI(dir, out, gpuDir)
	if err != nil {
		return err
	}
	spvDir := filepath.Join(out, "spv")
	if err := os.MkdirAll(spvDir, 0o755); err != nil {
		return err
	}
	vs := allVariants()
	if err := compileAll(vs, src, spvDir, glslc); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, v := range vs {
		keep[v.name+".spv"] = true
	}
	// Drop files of variants that no longer exist.
	entries, err := os.ReadDir(spvDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".spv") && !keep[e.Name()] {
			if err := os.Remove(filepath.Join(spvDir, e.Name())); err != nil {
				return err
			}
		}
	}
	code, err := table(vs)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "variants_gen.go"), code, 0o644)
}

// writeABI writes the interface files (abi.go) and returns the directory
// to compile the sources from: <dir>/src, or with a separate output a copy
// of it in <out>/src, so that the sources include the fresh abi_gen.glsl.
func writeABI(dir, out, gpuDir string) (string, error) {
	src := filepath.Join(out, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if filepath.Clean(out) != filepath.Clean(dir) {
		entries, err := os.ReadDir(filepath.Join(dir, "src"))
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			if e.IsDir() || e.Name() == "abi_gen.glsl" {
				continue
			}
			code, err := os.ReadFile(filepath.Join(dir, "src", e.Name()))
			if err != nil {
				return "", err
			}
			if err := os.WriteFile(filepath.Join(src, e.Name()), code, 0o644); err != nil {
				return "", err
			}
		}
	}
	if err := os.WriteFile(filepath.Join(src, "abi_gen.glsl"), glslABI(), 0o644); err != nil {
		return "", err
	}
	for pkg, path := range map[string]string{"shaders": filepath.Join(out, "abi_gen.go"), "gpu": filepath.Join(gpuDir, "abi_gen.go")} {
		code, err := goABI(pkg)
		if err != nil {
			return "", err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, code, 0o644); err != nil {
			return "", err
		}
	}
	return src, nil
}

// compileAll compiles every variant, a batch per CPU: one glslc process
// compiles many files, since each process first spends about a quarter of
// a second building glslang's built-in symbol tables, far more than a
// variant's compilation. A variant is a wrapper file in a scratch
// directory that holds the #version line, the variant's macros and an
// #include of src/<family>.comp (whose sources therefore carry no #version
// of their own); glslc -c writes <wrapper>.spv beside it, which moves to
// spvDir.
func compileAll(vs []*variant, src, spvDir, glslc string) error {
	work, err := os.MkdirTemp("", "shadergen")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	for _, v := range vs {
		var w strings.Builder
		w.WriteString(glslVersion + "\n")
		for _, d := range v.defines {
			name, value, _ := strings.Cut(d, "=")
			fmt.Fprintf(&w, "#define %s %s\n", name, value)
		}
		fmt.Fprintf(&w, "#include \"%s.comp\"\n", v.family)
		if err := os.WriteFile(filepath.Join(work, v.name+".comp"), []byte(w.String()), 0o644); err != nil {
			return err
		}
	}
	absSrc, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	batches := min(runtime.NumCPU(), len(vs))
	errs := make([]error, batches)
	var wg sync.WaitGroup
	for b := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"--target-env=vulkan1.2", "-O", "-Werror", "-I", absSrc, "-c"}
			for i := b; i < len(vs); i += batches {
				args = append(args, vs[i].name+".comp")
			}
			cmd := exec.Command(glslc, args...)
			cmd.Dir = work
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				errs[b] = fmt.Errorf("%s (in %s, the variants' wrapper files): %v\n%s", glslc, src, err, stderr.String())
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, v := range vs {
		from, to := filepath.Join(work, v.name+".comp.spv"), filepath.Join(spvDir, v.name+".spv")
		if os.Rename(from, to) != nil {
			// The scratch directory may be on another file system.
			if err := copyFile(from, to); err != nil {
				return err
			}
		}
		if err := inspectVariant(v, to); err != nil {
			return err
		}
	}
	return nil
}

// glslVersion is the #version line every variant's wrapper starts with.
const glslVersion = "#version 460"

// copyFile copies src to dst, for a rename across file systems.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// inspectVariant reads the workgroup and push-constant sizes of v back
// from its SPIR-V file and checks them, and the capabilities of the 32-bit
// baseline.
func inspectVariant(v *variant, file string) error {
	code, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	info, err := inspect(code)
	if err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	if want := [3]uint32{uint32(abiValue("LOCAL_SIZE")), 1, 1}; info.localSize != want {
		return fmt.Errorf("%s: workgroup size %v, want %v", file, info.localSize, want)
	}
	if offsets, size := pushLayout(); !slices.Equal(info.pushOffsets, offsets) || info.pushSize != size || size > abiPushMax {
		return fmt.Errorf("%s: push constants at %v (%d bytes), want %v (%d bytes, at most %d)", file, info.pushOffsets, info.pushSize, offsets, size, abiPushMax)
	}
	if v.noInt64 {
		for _, c := range info.caps {
			if name, ok := wideCaps[c]; ok {
				return fmt.Errorf("%s: the 32-bit baseline declares capability %s", file, name)
			}
		}
	}
	v.localX, v.pushSize, v.info = info.localSize[0], info.pushSize, info
	return nil
}

// entry is one line of the table.
type entry struct {
	name, key, file string
	spec            []uint32
	v               *variant
}

// table renders variants_gen.go.
func table(vs []*variant) ([]byte, error) {
	fam := map[string]string{"resolve": "Resolve", "scatter": "Scatter", "gather": "Gather", "reduce": "Reduce", "sort": "Sort"}
	var entries []entry
	for _, v := range vs {
		key := fmt.Sprintf("Family: %s, PosBits: %d", fam[v.family], v.posBits)
		if v.kind != "" {
			key = fmt.Sprintf("Family: %s, Kind: %s, PosBits: %d", fam[v.family], kinds[v.kind].goName, v.posBits)
		}
		switch {
		case v.family == "resolve":
			key += fmt.Sprintf(", IndexBytes: %d, IndexSigned: %t", v.index, v.signed)
			if v.table {
				key += ", Private: true"
			}
		case v.family == "sort":
			key += ", Stage: " + stages[v.stage].goName
		case v.dtype == nil:
			key += fmt.Sprintf(", ElemBytes: %d, Reduction: %s", v.elem, reductions[v.red].goName)
		}
		if v.noInt64 {
			key += ", NoInt64: true"
		}
		file := "spv/" + v.name + ".spv"
		if v.dtype == nil {
			entries = append(entries, entry{name: v.name, key: key, file: file, v: v})
			continue
		}
		for _, k := range v.keys {
			kk := key + fmt.Sprintf(", ElemBytes: %d, Reduction: %s, DType: tensor.%s", v.elem, reductions[k.red].goName, v.dtype.goName)
			name := v.name + ":" + k.red
			if v.atomics != "" {
				kk += ", Atomics: " + map[string]string{"cas": "CAS", "native": "Native", "int": "IntMinMax"}[v.atomics]
			}
			if k.private {
				kk += ", Private: true"
				if !v.bucket {
					name += ":private"
				}
			}
			entries = append(entries, entry{name: name, key: kk, file: file, spec: k.spec, v: v})
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var b bytes.Buffer
	b.WriteString("// Code generated by \"go run ../internal/shadergen\" from src/*.comp; DO NOT EDIT.\n\n")
	b.WriteString("package shaders\n\n")
	b.WriteString("import \"github.com/gpuscatter/gpuscatter/tensor\"\n\n")
	b.WriteString("// variants lists every compiled variant, sorted by name.\n")
	b.WriteString("var variants = [...]Variant{\n")
	for _, e := range entries {
		spec := ""
		if len(e.spec) > 0 {
			parts := make([]string, len(e.spec))
			for i, c := range e.spec {
				parts[i] = fmt.Sprint(c)
			}
			spec = ", SpecConstants: []uint32{" + strings.Join(parts, ", ") + "}"
		}
		fmt.Fprintf(&b, "\t{Key: Key{%s}, Name: %q, File: %q, LocalSize: [3]uint32{%d, 1, 1}, PushConstantSize: %d, SharedBytes: %d%s},\n",
			e.key, e.name, e.file, e.v.localX, e.v.pushSize, e.v.info.sharedBytes(e.spec), spec)
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
