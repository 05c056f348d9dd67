package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/bench"
	"github.com/gpuscatter/gpuscatter/internal/treetests"
)

// readmeCommand is one shell command of a README block with what the
// README says it prints.
type readmeCommand struct {
	line   int    // of its first line in README.md
	text   string // as written, continuation lines included
	stdout string // the output after "#" on its line, when it shows one
	stderr string // the "# gpuscatter: ..." line after it, when there is one
	exit   int    // the "(exit N" of that line, else 0
}

var exitNote = regexp.MustCompile(`\s+\(exit (\d+)[^)]*\)\s*$`)

// readmeShell returns the commands of README.md's ```sh blocks, in order,
// and the languages of all its blocks.
func readmeShell(t *testing.T) (cmds []readmeCommand, langs []string) {
	t.Helper()
	treetests.Require(t)
	md, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	lines := strings.Split(string(md), "\n")
	inBlock, sh := false, false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "```") {
			if !inBlock {
				lang := strings.TrimPrefix(l, "```")
				langs = append(langs, lang)
				sh = lang == "sh"
			}
			inBlock = !inBlock
			continue
		}
		if !inBlock || !sh || strings.TrimSpace(l) == "" {
			continue
		}
		if strings.HasPrefix(l, "# ") {
			// What the command before it writes on stderr, and its status.
			require.NotEmpty(t, cmds, "README.md:%d: a comment before any command", i+1)
			c := &cmds[len(cmds)-1]
			note := strings.TrimPrefix(l, "# ")
			if m := exitNote.FindStringSubmatch(note); m != nil {
				c.exit, _ = strconv.Atoi(m[1])
				note = note[:len(note)-len(m[0])]
			}
			c.stderr = note
			continue
		}
		c := readmeCommand{line: i + 1}
		text := l
		// A command goes on while a line ends in a backslash or a quote is open.
		for strings.HasSuffix(text, "\\") || strings.Count(text, "'")%2 == 1 {
			i++
			require.Less(t, i, len(lines), "README.md:%d: unterminated command", c.line)
			text += "\n" + lines[i]
		}
		// "cmd    # [1 2 3]": what it prints.
		if k := strings.LastIndex(text, "    # "); k >= 0 && strings.Count(text[k:], "'")%2 == 0 {
			c.stdout = strings.TrimSpace(text[k+len("    # "):])
			text = strings.TrimRight(text[:k], " ")
		}
		c.text = text
		cmds = append(cmds, c)
	}
	return cmds, langs
}

// TestReadmeShellExamples runs every command of README.md's ```sh blocks
// as written, in order, in one empty directory with the built gpuscatter
// on PATH, and compares what it prints with what the README shows:
// the output after "    # ", the stderr line and exit status of a
// "# gpuscatter: ... (exit N)" line after it. Every other block of the
// README is Go (examples_test.go) or marked text.
func TestReadmeShellExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the README's examples")
	}
	cmds, langs := readmeShell(t)
	for _, lang := range langs {
		assert.Contains(t, []string{"sh", "go", "text"}, lang, "README.md blocks are sh (run here), go or text")
	}
	require.GreaterOrEqual(t, len(cmds), 15)

	// python3 with numpy: the one on PATH, else Debian's.
	python := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import numpy").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no python3 with numpy (Debian: python3-numpy, which make deps installs with python3-onnx)")
		}
		t.Skip("no python3 with numpy")
	}
	onnxData := "/usr/share/libonnx-testdata/data/node"
	_, err := os.Stat(onnxData)
	haveONNX := err == nil
	if !haveONNX && os.Getenv("CI") != "" {
		t.Fatal("no libonnx-testdata (make deps installs it)")
	}

	bin := filepath.Dir(buildBinary(t))
	if python != "python3" {
		abs, err := exec.LookPath(python)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(abs, filepath.Join(bin, "python3")))
	}
	checked := 0
	for _, c := range cmds {
		if c.stdout != "" || c.stderr != "" {
			checked++
		}
	}
	assert.GreaterOrEqual(t, checked, 6, "commands whose output the README shows")
	dir := t.TempDir()
	// The device descriptions of gpu/testdata/facts, where the README's
	// commands, run from the root of a clone, find them.
	facts, err := filepath.Glob("../../gpu/testdata/facts/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, facts)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "gpu", "testdata", "facts"), 0o755))
	for _, f := range facts {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "gpu", "testdata", "facts", filepath.Base(f)), b, 0o644))
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, c := range cmds {
		if strings.Contains(c.text, onnxData) && !haveONNX {
			t.Logf("README.md:%d: skipped, no libonnx-testdata", c.line)
			continue
		}
		cmd := exec.Command("sh", "-c", c.text)
		cmd.Dir, cmd.Env = dir, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		where := "README.md:" + strconv.Itoa(c.line) + ": " + c.text
		if !assert.Equal(t, c.exit, code, "%s\nstdout: %s\nstderr: %s", where, stdout.String(), stderr.String()) {
			continue
		}
		if c.stdout != "" {
			assert.Equal(t, c.stdout, strings.TrimSpace(stdout.String()), where)
		}
		if c.stderr != "" {
			assert.Equal(t, c.stderr, strings.TrimSpace(stderr.String()), where)
		}
	}
	// The failed run left no output, as the README says.
	assert.NoFileExists(t, filepath.Join(dir, "nd3.npy"))
	for _, f := range []string{"out.npy", "sum.npy", "o.npy", "mean.npy", "so.npy"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
}

// TestReadmeUsageIsTheTools: the README's usage block is the usage lines
// of 'gpuscatter help', which are generated from each command's flag
// table.
func TestReadmeUsageIsTheTools(t *testing.T) {
	treetests.Require(t)
	md, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, block, ok := strings.Cut(string(md), "### Usage\n\n```text\n")
	require.True(t, ok, "README.md has a Usage block")
	block, _, _ = strings.Cut(block, "```")
	var want strings.Builder
	for _, c := range commands {
		for _, line := range strings.Split(c.usageLine(), "\n") {
			want.WriteString(strings.TrimPrefix(line, "  ") + "\n")
		}
	}
	assert.Equal(t, want.String(), block)
}

// TestReadmeEnvironmentTable: the README's table of environment variables
// names every variable the code, the tests and the kit's scripts read
// (os.Getenv, os.LookupEnv, an Env constant, ${NAME} in a script), and
// no other.
func TestReadmeEnvironmentTable(t *testing.T) {
	treetests.Require(t)
	md, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(md), "### Environment variables\n")
	require.True(t, ok, "README.md has an Environment variables section")
	var table []string // the lines of the section's first table
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "|") {
			table = append(table, l)
		} else if len(table) > 0 {
			break
		}
	}
	require.NotEmpty(t, table)
	named := map[string]bool{}
	for _, row := range table {
		first := strings.Split(row, "|")[1] // the variable column
		for _, m := range regexp.MustCompile("`([A-Z][A-Z0-9_]+)`").FindAllStringSubmatch(first, -1) {
			named[m[1]] = true
		}
	}
	read := map[string][]string{} // variable -> files
	goRead := regexp.MustCompile(`(?:Getenv|LookupEnv)\("([A-Z][A-Z0-9_]+)"\)|(?:Env[A-Za-z]*|[A-Za-z]*Env) *= *"([A-Z][A-Z0-9_]+)"`)
	shRead := regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]+)`)
	err = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || strings.HasPrefix(d.Name(), ".") && path != "../..") {
			return filepath.SkipDir
		}
		var re *regexp.Regexp
		switch {
		case strings.HasSuffix(path, ".go"):
			re = goRead
		case strings.HasSuffix(path, ".sh"):
			re = shRead
		default:
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			for _, name := range m[1:] {
				if name != "" {
					read[name] = append(read[name], path)
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, read, "GPUSCATTER_VULKAN_LIBRARY", "the scan finds the variables")
	delete(read, "PATH") // the system's, read to find programs
	for name, files := range read {
		assert.True(t, named[name], "%s is read (%v) but not in the README's table", name, files)
	}
	for _, name := range []string{"MESA_SHADER_CACHE_DIR", "MESA_SHADER_CACHE_DISABLE", "XDG_CACHE_HOME", "HOME", "GO", "FUZZTIME", "ONNX_NODE_TESTS"} {
		assert.True(t, named[name], "%s is not in the README's table", name)
	}
}

// TestReadmeBenchProgressExample: the README's example of bench's line
// off a terminal counts the workloads as the tool does.
func TestReadmeBenchProgressExample(t *testing.T) {
	treetests.Require(t)
	md, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	text := strings.Join(strings.Fields(string(md)), " ")
	m := regexp.MustCompile("`gpuscatter: bench \\[(\\d+)/(\\d+)\\] ([A-Za-z0-9-]+) on (cpu|gpu): median [0-9.]+ ms, [0-9.]+ GB/s, (resident [0-9.]+ ms, [0-9.]+x the cpu, )?verified`").FindStringSubmatch(text)
	require.NotNil(t, m, "README.md has an example of bench's progress line")
	names := bench.Names()
	assert.Equal(t, strconv.Itoa(len(names)), m[2], "the number of workloads")
	i, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	if assert.True(t, i >= 1 && i <= len(names), m[0]) {
		assert.Equal(t, names[i-1], m[3], "workload %d", i)
	}
}

// TestReadmeDebianPackages: the README lists the Debian packages make
// installs, DEB_PKGS of the Makefile, all of them and in their order.
func TestReadmeDebianPackages(t *testing.T) {
	treetests.Require(t)
	mk, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^DEB_PKGS\s*:=((?:.*\\\n)*.*)$`).FindSubmatch(mk)
	require.NotNil(t, m, "the Makefile sets DEB_PKGS")
	want := strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " "))
	require.Greater(t, len(want), 10, "DEB_PKGS: %q", m[1])

	md, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, list, ok := strings.Cut(string(md), "`DEB_PKGS` in the Makefile)")
	require.True(t, ok, "README.md lists DEB_PKGS")
	list, _, _ = strings.Cut(strings.TrimLeft(list[strings.Index(list, "\n"):], "\n"), "\n\n") // the list after the line
	var got []string
	for _, c := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(list, -1) {
		if regexp.MustCompile(`^[a-z0-9][a-z0-9.+-]+$`).MatchString(c[1]) { // a package name
			got = append(got, c[1])
		}
	}
	assert.Equal(t, want, got, "README.md's packages, against DEB_PKGS")
}
