package examples_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/gpuscatter/gpuscatter"

// isInternal reports whether import path p is an internal package, which
// no program outside its parent can import.
func isInternal(p string) bool {
	return strings.HasPrefix(p, "internal/") || strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal") || p == "internal"
}

// TestPublicAPINamesNoInternalPackage: no exported name of the module's
// public packages (every package outside internal/ but the commands)
// has in its type, fields, parameters, results, methods or embedded
// types a type of an internal package, which a user could not name:
// test plumbing stays out of the API (vk.Options once had a field of
// type *vkfault.Plan). It reads the packages' export data, as the
// compiler does, through go list.
func TestPublicAPINamesNoInternalPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the module's packages for their export data")
	}
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Name}}\t{{.Module}}", module+"/...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	exports := map[string]string{}
	var public []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		require.Len(t, f, 4, sc.Text())
		exports[f[0]] = f[1]
		rel, ours := strings.CutPrefix(f[0], module+"/")
		if f[0] == module {
			rel, ours = "", true
		}
		if ours && f[2] != "main" && f[1] != "" && !isInternal(rel) { // a folder of tests alone has no export data
			public = append(public, f[0])
		}
	}
	require.NoError(t, sc.Err())
	sort.Strings(public)
	for _, want := range []string{"gpu", "vk", "ops", "cpuref", "tensor", "cost", "npy", "onnx", "hostmem", "atomicfile", "bench"} {
		require.Contains(t, public, module+"/"+want, "the public packages go list found")
	}

	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	for _, path := range public {
		pkg, err := imp.Import(path)
		require.NoError(t, err, path)
		for _, leak := range internalInAPI(pkg) {
			assert.Fail(t, "the public API names an internal package", "%s: %s", path, leak)
		}
	}
}

// internalInAPI returns, for each exported object of pkg whose API names
// a type of an internal package, a line saying where.
func internalInAPI(pkg *types.Package) []string {
	var leaks []string
	seen := map[types.Type]bool{}
	var walk func(where string, typ types.Type)
	walk = func(where string, typ types.Type) {
		if typ == nil || seen[typ] {
			return
		}
		seen[typ] = true
		defer delete(seen, typ)
		switch t := typ.(type) {
		case *types.Named:
			if p := t.Obj().Pkg(); p != nil && isInternal(strings.TrimPrefix(p.Path(), module+"/")) {
				leaks = append(leaks, where+" has type "+types.TypeString(t, nil))
				return
			}
			for i := 0; i < t.TypeArgs().Len(); i++ {
				walk(where, t.TypeArgs().At(i))
			}
		case *types.Alias:
			walk(where, types.Unalias(t))
		case *types.Pointer:
			walk(where, t.Elem())
		case *types.Slice:
			walk(where, t.Elem())
		case *types.Array:
			walk(where, t.Elem())
		case *types.Map:
			walk(where, t.Key())
			walk(where, t.Elem())
		case *types.Chan:
			walk(where, t.Elem())
		case *types.Signature:
			for i := 0; i < t.Params().Len(); i++ {
				walk(where+" parameter "+t.Params().At(i).Name(), t.Params().At(i).Type())
			}
			for i := 0; i < t.Results().Len(); i++ {
				walk(where+" result", t.Results().At(i).Type())
			}
			for i := 0; i < t.TypeParams().Len(); i++ {
				walk(where+" type parameter", t.TypeParams().At(i).Constraint())
			}
		case *types.Struct:
			for i := 0; i < t.NumFields(); i++ {
				if f := t.Field(i); f.Exported() || f.Embedded() {
					walk(where+"."+f.Name(), f.Type())
				}
			}
		case *types.Interface:
			for i := 0; i < t.NumEmbeddeds(); i++ {
				walk(where+" embedded", t.EmbeddedType(i))
			}
			for i := 0; i < t.NumExplicitMethods(); i++ {
				if m := t.ExplicitMethod(i); m.Exported() {
					walk(where+"."+m.Name(), m.Type())
				}
			}
		case *types.Union:
			for i := 0; i < t.Len(); i++ {
				walk(where, t.Term(i).Type())
			}
		case *types.TypeParam:
			walk(where, t.Constraint())
		}
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.TypeName:
			typ := o.Type()
			if named, ok := typ.(*types.Named); ok {
				walk(name, named.Underlying())
				for i := 0; i < named.TypeParams().Len(); i++ {
					walk(name+" type parameter", named.TypeParams().At(i).Constraint())
				}
				for i := 0; i < named.NumMethods(); i++ {
					if m := named.Method(i); m.Exported() {
						walk(name+"."+m.Name(), m.Type())
					}
				}
			} else {
				walk(name, typ)
			}
		default:
			walk(name, obj.Type())
		}
	}
	return leaks
}
