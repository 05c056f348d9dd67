package treetests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListNamesRealTests: every entry names a test function of its
// package, once, in a package whose tests the kit ships.
func TestListNamesRealTests(t *testing.T) {
	tests, err := List()
	require.NoError(t, err)
	require.NotEmpty(t, tests)
	kitPackages := map[string]bool{"vk": true, "gpu": true, "cmd/gpuscatter": true} // kit/build.sh
	seen := map[string]bool{}
	for _, x := range tests {
		assert.True(t, kitPackages[x.Package], "%s: %s is not a package of the kit", x.Name, x.Package)
		assert.False(t, seen[x.Name], "%s is listed twice", x.Name)
		seen[x.Name] = true
		files, err := filepath.Glob(filepath.Join("..", "..", filepath.FromSlash(x.Package), "*_test.go"))
		require.NoError(t, err)
		decl := regexp.MustCompile(`(?m)^func ` + x.Name + `\(t \*testing\.T\) \{$`)
		found := false
		for _, f := range files {
			src, err := os.ReadFile(f)
			require.NoError(t, err)
			found = found || decl.Match(src)
		}
		assert.True(t, found, "%s %s: no such test function", x.Package, x.Name)
	}
}

// TestRequire fails a test that is not listed and passes one that is.
func TestRequire(t *testing.T) {
	tests, err := List()
	require.NoError(t, err)
	listed := &recorder{name: tests[0].Name + "/sub"}
	Require(listed)
	assert.False(t, listed.failed, listed.msg)
	unlisted := &recorder{name: "TestSomethingElse"}
	Require(unlisted)
	assert.True(t, unlisted.failed)
	assert.Contains(t, unlisted.msg, "TestSomethingElse needs the source tree or the Go toolchain")
}

func TestListErrors(t *testing.T) {
	defer func(l string) { list = l }(list)
	list = "# comment\n\nvk TestA glslc\nvk TestB\n"
	_, err := List()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `tests.txt:4: "vk TestB"`)
	list = "vk TestA glslc and cc\n"
	tests, err := List()
	require.NoError(t, err)
	assert.Equal(t, []Test{{"vk", "TestA", "glslc and cc"}}, tests)
}

// recorder is a testing.TB that records a Fatal instead of stopping.
type recorder struct {
	testing.TB
	name   string
	failed bool
	msg    string
}

func (r *recorder) Name() string { return r.name }
func (r *recorder) Helper()      {}
func (r *recorder) Fatal(args ...any) {
	r.failed, r.msg = true, fmt.Sprint(args...)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
}
