// Command gen compiles every variant of the gpuscatter compute shaders with
// glslc and writes the SPIR-V files and the Go table that describes them:
//
//	<dir>/spv/<variant>.spv
//	<dir>/variants_gen.go
//
// where <dir> is the shaders package directory. Run it through
// `go generate ./shaders` (or `go run ./shaders/gen` from the module root).
// Flags: -dir names the shaders directory (default: "." when it holds
// src/common.glsl, else "shaders"), -out writes the output elsewhere (the
// up-to-date test in package shaders uses it), -glslc names the compiler.
//
// A variant is one source (src/<family>.comp) compiled with one set of
// macros; the table records each variant's key, file, workgroup size and
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
	"sort"
	"strings"
	"sync"
)

// localSize is the workgroup size of every kernel. Large groups suit CPU
// devices (one group runs on one thread, in SIMD batches) and are a
// multiple of every GPU's subgroup size.
const localSize = 256

// variant is one compilation of one source.
type variant struct {
	family   string // "resolve", "scatter" or "gather"
	kind     string // "block", "element", "slice"
	elem     int    // scatter, gather: element size in bytes
	index    int    // resolve: index element size in bytes
	signed   bool   // resolve: signed index type
	red      string // scatter, gather: reduction ("none")
	posBits  int    // 32 or 64
	name     string
	defines  []string
	localX   uint32
	pushSize uint32
}

// kinds maps kind names to their GLSL macro and Go constant.
var kinds = map[string][2]string{
	"block":   {"KIND_BLOCK", "Block"},
	"element": {"KIND_ELEMENT", "Element"},
	"slice":   {"KIND_SLICE", "Slice"},
}

// reductions maps reduction names to their GLSL macro and Go constant.
var reductions = map[string][2]string{
	"none": {"RED_NONE", "RedNone"},
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
		for _, kind := range []string{"block", "element"} {
			for _, ib := range []int{1, 2, 4, 8} {
				for _, signed := range []bool{false, true} {
					v := &variant{family: "resolve", kind: kind, index: ib, signed: signed, posBits: pos}
					v.name = fmt.Sprintf("resolve-%s-%s-p%d", kind, indexName(ib, signed), pos)
					sgn := 0
					if signed {
						sgn = 1
					}
					v.defines = []string{"KIND=" + kinds[kind][0], fmt.Sprintf("INDEX_BYTES=%d", ib), fmt.Sprintf("INDEX_SIGNED=%d", sgn)}
					out = append(out, v)
				}
			}
		}
		for _, eb := range []int{1, 2, 4, 8, 16} {
			v := &variant{family: "gather", kind: "block", elem: eb, red: "none", posBits: pos}
			v.name = fmt.Sprintf("gather-block-e%d-none-p%d", eb, pos)
			v.defines = []string{fmt.Sprintf("ELEM_BYTES=%d", eb)}
			out = append(out, v)
		}
		for _, kind := range []string{"block", "element", "slice"} {
			for _, eb := range []int{1, 2, 4, 8, 16} {
				for _, red := range []string{"none"} {
					v := &variant{family: "scatter", kind: kind, elem: eb, red: red, posBits: pos}
					v.name = fmt.Sprintf("scatter-%s-e%d-%s-p%d", kind, eb, red, pos)
					v.defines = []string{"KIND=" + kinds[kind][0], fmt.Sprintf("ELEM_BYTES=%d", eb), "REDUCTION=" + reductions[red][0]}
					out = append(out, v)
				}
			}
		}
	}
	for _, v := range out {
		v.defines = append(v.defines, fmt.Sprintf("POS_BITS=%d", v.posBits), fmt.Sprintf("LOCAL_SIZE=%d", localSize))
	}
	return out
}

func main() {
	dir := flag.String("dir", "", "the shaders package directory (default: . or ./shaders)")
	out := flag.String("out", "", "where to write spv/ and variants_gen.go (default: -dir)")
	glslc := flag.String("glslc", "glslc", "the glslc compiler")
	flag.Parse()
	if *dir == "" {
		*dir = "."
		if _, err := os.Stat(filepath.Join("src", "common.glsl")); err != nil {
			*dir = "shaders"
		}
	}
	if *out == "" {
		*out = *dir
	}
	if err := run(*dir, *out, *glslc); err != nil {
		fmt.Fprintln(os.Stderr, "shaders/gen:", err)
		os.Exit(1)
	}
}

func run(dir, out, glslc string) error {
	src := filepath.Join(dir, "src")
	spvDir := filepath.Join(out, "spv")
	if err := os.MkdirAll(spvDir, 0o755); err != nil {
		return err
	}
	vs := allVariants()
	// Compile on every CPU; each variant writes only its own fields.
	errs := make([]error, len(vs))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				errs[i] = compile(vs[i], src, spvDir, glslc)
			}
		}()
	}
	for i := range vs {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
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

// compile runs glslc for v and reads the workgroup and push-constant sizes
// back from the SPIR-V.
func compile(v *variant, src, spvDir, glslc string) error {
	file := filepath.Join(spvDir, v.name+".spv")
	args := []string{"--target-env=vulkan1.2", "-O", "-Werror"}
	for _, d := range v.defines {
		args = append(args, "-D"+d)
	}
	args = append(args, "-o", file, filepath.Join(src, v.family+".comp"))
	cmd := exec.Command(glslc, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", glslc, strings.Join(args, " "), err, stderr.String())
	}
	code, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	info, err := inspect(code)
	if err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	if info.localSize != [3]uint32{localSize, 1, 1} {
		return fmt.Errorf("%s: workgroup size %v, want [%d 1 1]", file, info.localSize, localSize)
	}
	v.localX, v.pushSize = info.localSize[0], info.pushSize
	return nil
}

// table renders variants_gen.go.
func table(vs []*variant) ([]byte, error) {
	sorted := append([]*variant(nil), vs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	var b bytes.Buffer
	b.WriteString("// Code generated by \"go run ./gen\" from src/*.comp; DO NOT EDIT.\n\n")
	b.WriteString("package shaders\n\n")
	b.WriteString("// variants lists every compiled variant, sorted by name.\n")
	b.WriteString("var variants = [...]Variant{\n")
	for _, v := range sorted {
		fam := map[string]string{"resolve": "Resolve", "scatter": "Scatter", "gather": "Gather"}[v.family]
		key := fmt.Sprintf("Family: %s, Kind: %s, PosBits: %d", fam, kinds[v.kind][1], v.posBits)
		if v.family == "resolve" {
			key += fmt.Sprintf(", IndexBytes: %d, IndexSigned: %t", v.index, v.signed)
		} else {
			key += fmt.Sprintf(", ElemBytes: %d, Reduction: %s", v.elem, reductions[v.red][1])
		}
		fmt.Fprintf(&b, "\t{Key: Key{%s}, Name: %q, File: %q, LocalSize: [3]uint32{%d, 1, 1}, PushConstantSize: %d},\n",
			key, v.name, "spv/"+v.name+".spv", v.localX, v.pushSize)
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
