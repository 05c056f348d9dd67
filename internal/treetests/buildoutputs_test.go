package treetests

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// root is the repository's root, from this package's folder.
const root = "../.."

// git runs git in the repository's root and returns its standard output.
// Without git, or outside a checkout, the test skips, except under
// CI=true.
func git(t *testing.T, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no git")
		}
		t.Skip("no git")
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not a git checkout: %v", root, err)
		}
		t.Skipf("not a git checkout: %v", err)
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), stderr.String())
	return out
}

// objectMagic lists the first bytes of executables, object files and
// archives.
var objectMagic = []struct {
	what  string
	magic []byte
}{
	{"an ELF file", []byte("\x7fELF")},
	{"a Mach-O file", []byte{0xfe, 0xed, 0xfa, 0xce}},
	{"a Mach-O file", []byte{0xfe, 0xed, 0xfa, 0xcf}},
	{"a Mach-O file", []byte{0xce, 0xfa, 0xed, 0xfe}},
	{"a Mach-O file", []byte{0xcf, 0xfa, 0xed, 0xfe}},
	{"a universal Mach-O file", []byte{0xca, 0xfe, 0xba, 0xbe}},
	{"a PE (Windows) file", []byte("MZ")},
	{"an ar archive", []byte("!<arch>\n")},
}

// objectName matches the names of object files, libraries and binaries.
var objectName = regexp.MustCompile(`\.(o|a|so|so\.[0-9.]+|dylib|dll|exe|test)$`)

// buildOutput says why the tracked file name, with git mode mode and first
// bytes head, is a build output, or "" when it is not.
func buildOutput(name, mode string, head []byte) string {
	if objectName.MatchString(path.Base(name)) {
		return "an object file, library or binary by its name"
	}
	for _, m := range objectMagic {
		if bytes.HasPrefix(head, m.magic) {
			return m.what
		}
	}
	if mode == "100755" && !bytes.HasPrefix(head, []byte("#!")) {
		return "executable (mode 100755) but not a script (no #! line)"
	}
	return ""
}

// TestNoBuildOutputTracked: git tracks no build output: no executable or
// object file by its first bytes (ELF, Mach-O, PE, ar) or its name (.o,
// .a, .so, .test, ...), and no file with the executable bit that is not a
// script.
func TestNoBuildOutputTracked(t *testing.T) {
	out := git(t, "ls-files", "-s", "-z")
	checked := 0
	for _, entry := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		// "MODE OBJECT STAGE\tPATH"
		meta, name, ok := strings.Cut(entry, "\t")
		require.True(t, ok, "git ls-files -s: %q", entry)
		mode := strings.Fields(meta)[0]
		if mode == "120000" || mode == "160000" { // a symbolic link, a submodule
			continue
		}
		head := make([]byte, 8)
		f, err := os.Open(filepath.Join(root, filepath.FromSlash(name)))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		require.NoError(t, err)
		n, _ := f.Read(head)
		f.Close()
		checked++
		if why := buildOutput(name, mode, head[:n]); why != "" {
			t.Errorf("%s is tracked but is a build output: %s; git rm --cached it and let .gitignore cover it", name, why)
		}
	}
	assert.Greater(t, checked, 100, "the files git tracks")
}

func TestBuildOutputRule(t *testing.T) {
	for _, c := range []struct {
		name, mode string
		head       string
		want       bool
	}{
		{"shadergen", "100755", "\x7fELF\x02\x01\x01", true},
		{"tool", "100644", "\x7fELF\x02\x01\x01", true},
		{"tool", "100755", "\xcf\xfa\xed\xfe", true},
		{"tool.exe", "100644", "MZ\x90\x00", true},
		{"libx.a", "100644", "!<arch>\n", true},
		{"x/y.o", "100644", "", true},
		{"libvk.so.1", "100644", "", true},
		{"gpu.test", "100644", "", true},
		{"bin-like", "100755", "\x00\x01", true},
		{"kit/run.sh", "100755", "#!/bin/sh", false},
		{"main.go", "100644", "package ", false},
		{"shaders/x.spv", "100644", "\x03\x02\x23\x07", false},
	} {
		assert.Equal(t, c.want, buildOutput(c.name, c.mode, []byte(c.head)) != "", "%s %s", c.name, c.mode)
	}
}

// TestGitignoreCoversBuildOutputs: .gitignore covers what the build
// writes, the binary of every command (every folder of package main) where
// go build writes it, at the root or in its own folder, test binaries,
// object files and bin/ (the Makefile's and the kit's outputs), and no
// tracked file.
func TestGitignoreCoversBuildOutputs(t *testing.T) {
	ignored := func(p string) bool {
		t.Helper()
		cmd := exec.Command("git", "check-ignore", "--no-index", "-q", p)
		cmd.Dir = root
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return false
		}
		require.NoError(t, err, "git check-ignore %s", p)
		return true
	}
	var commands []string // the folders of package main
	mainPkg := regexp.MustCompile(`(?m)^package main$`)
	for _, f := range strings.Split(strings.TrimSpace(string(git(t, "ls-files", "*.go"))), "\n") {
		dir := path.Dir(f)
		if strings.Contains(f, "testdata/") || strings.HasSuffix(f, "_test.go") || slices.Contains(commands, dir) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		require.NoError(t, err)
		if mainPkg.Match(src) {
			commands = append(commands, dir)
		}
	}
	require.Contains(t, commands, "cmd/gpuscatter")
	require.Contains(t, commands, "internal/shadergen")
	for _, dir := range commands {
		name := path.Base(dir)
		for _, out := range []string{name, dir + "/" + name, name + ".test", dir + "/" + name + ".test"} {
			assert.True(t, ignored(out), "%s, the binary of %s, is not in .gitignore", out, dir)
		}
		assert.False(t, ignored(dir+"/main.go"), "%s's sources are ignored", dir)
	}
	for _, out := range []string{"bin/gpuscatter", "bin/gpuscatter-kit/tests/gpu.test", "bin/gotestsum", "gpu.test", "vk/x.o", "x.a", "libx.so", "cover.out"} {
		assert.True(t, ignored(out), "%s is not in .gitignore", out)
	}
	if both := strings.TrimSpace(string(git(t, "ls-files", "--cached", "--ignored", "--exclude-standard"))); both != "" {
		t.Errorf("tracked files that .gitignore covers (a build output to git rm --cached, or a pattern too wide):\n%s", both)
	}
}
