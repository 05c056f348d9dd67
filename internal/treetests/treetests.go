// Package treetests names, in one list, the tests that need the source
// tree (README.md, testdata compiled by glslc or cc) or the Go toolchain
// (go build): the tests the qualification kit, which ships test binaries
// without either, must skip. The list is tests.txt in this folder;
// kit/build.sh copies it into the kit, whose run.sh skips exactly the
// tests it names, and each of those tests calls Require, so a test that
// starts to need the tree without being listed fails in the normal go
// test run, and kit/kit_test.go, which runs the kit outside the tree with
// every test, fails on one that needs it without calling Require.
package treetests

import (
	_ "embed"
	"fmt"
	"strings"
	"testing"
)

//go:embed tests.txt
var list string

// Test is one entry of the list.
type Test struct {
	Package string // the package's folder, e.g. "cmd/gpuscatter"
	Name    string // the top-level test function, e.g. "TestBinary"
	Needs   string // what it needs of the tree or the toolchain
}

// List returns the tests of tests.txt, in its order. A malformed line is
// an error naming it.
func List() ([]Test, error) {
	var out []Test
	for i, line := range strings.Split(list, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 || !strings.HasPrefix(f[1], "Test") {
			return nil, fmt.Errorf("treetests: tests.txt:%d: %q: want PACKAGE TestName WHAT IT NEEDS", i+1, line)
		}
		out = append(out, Test{Package: f[0], Name: f[1], Needs: strings.Join(f[2:], " ")})
	}
	return out, nil
}

// Require fails t unless its top-level test is in the list: a test that
// needs the source tree or the Go toolchain calls it first (or a helper
// it calls does, such as the one that builds the command).
func Require(t testing.TB) {
	t.Helper()
	name, _, _ := strings.Cut(t.Name(), "/")
	tests, err := List()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range tests {
		if x.Name == name {
			return
		}
	}
	t.Fatalf("%s needs the source tree or the Go toolchain, which the qualification kit lacks: list it in internal/treetests/tests.txt so that the kit skips it", name)
}
