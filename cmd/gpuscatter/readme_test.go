package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/bench"
	"github.com/gpuscatter/gpuscatter/internal/treetests"
)

// docPages returns the README and the pages of docs/ it links from its
// table of the manual, in that order, as paths relative to the
// repository's root: the order in which TestReadmeShellExamples runs
// their commands. Every page of docs/ must be in the table.
func docPages(t *testing.T) []string {
	t.Helper()
	treetests.Require(t)
	md, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, manual, ok := strings.Cut(string(md), "\n## The manual\n")
	require.True(t, ok, "README.md has a section The manual")
	pages := []string{"README.md"}
	for _, m := range regexp.MustCompile(`\]\((docs/[a-z0-9-]+\.md)\)`).FindAllStringSubmatch(manual, -1) {
		if !slices.Contains(pages, m[1]) {
			pages = append(pages, m[1])
		}
	}
	all, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	for _, f := range all {
		assert.Contains(t, pages, "docs/"+filepath.Base(f), "README.md links every page of docs/")
	}
	return pages
}

// docPage returns the text of page (a path from the repository's root).
func docPage(t *testing.T, page string) string {
	t.Helper()
	treetests.Require(t)
	md, err := os.ReadFile(filepath.Join("../..", page))
	require.NoError(t, err)
	return string(md)
}

// readmeCommand is one shell command of a README or docs block with what
// the page says it prints.
type readmeCommand struct {
	page   string // README.md or docs/NAME.md
	line   int    // of its first line in the page
	text   string // as written, continuation lines included
	stdout string // the output after "#" on its line, when it shows one
	stderr string // the "# gpuscatter: ..." line after it, when there is one
	exit   int    // the "(exit N" of that line, else 0
}

var exitNote = regexp.MustCompile(`\s+\(exit (\d+)[^)]*\)\s*$`)

// readmeShell returns the commands of the ```sh blocks of the README and
// the docs pages (docPages), in order, and the languages of all their
// blocks.
func readmeShell(t *testing.T) (cmds []readmeCommand, langs []string) {
	t.Helper()
	for _, page := range docPages(t) {
		c, l := pageShell(t, page)
		cmds, langs = append(cmds, c...), append(langs, l...)
	}
	return cmds, langs
}

// pageShell is readmeShell for one page.
func pageShell(t *testing.T, page string) (cmds []readmeCommand, langs []string) {
	t.Helper()
	lines := strings.Split(docPage(t, page), "\n")
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
			require.NotEmpty(t, cmds, "%s:%d: a comment before any command", page, i+1)
			c := &cmds[len(cmds)-1]
			note := strings.TrimPrefix(l, "# ")
			if m := exitNote.FindStringSubmatch(note); m != nil {
				c.exit, _ = strconv.Atoi(m[1])
				note = note[:len(note)-len(m[0])]
			}
			c.stderr = note
			continue
		}
		c := readmeCommand{page: page, line: i + 1}
		text := l
		// A command goes on while a line ends in a backslash or a quote is open.
		for strings.HasSuffix(text, "\\") || strings.Count(text, "'")%2 == 1 {
			i++
			require.Less(t, i, len(lines), "%s:%d: unterminated command", page, c.line)
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

// TestReadmeShellExamples runs every command of the ```sh blocks of the
// README and the docs pages as written, in order, in one empty directory
// with the built gpuscatter on PATH, and compares what it prints with
// what the page shows: the output after "    # ", the stderr line and
// exit status of a "# gpuscatter: ... (exit N)" line after it. Every
// other block is Go (examples_test.go) or text, which is illustrative.
func TestReadmeShellExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the README's examples")
	}
	cmds, langs := readmeShell(t)
	for _, lang := range langs {
		assert.Contains(t, []string{"sh", "go", "text"}, lang, "the pages' blocks are sh (run here), go or text")
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
			t.Logf("%s:%d: skipped, no libonnx-testdata", c.page, c.line)
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
		where := c.page + ":" + strconv.Itoa(c.line) + ": " + c.text
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
	// The failed run left no output, as the page says.
	assert.NoFileExists(t, filepath.Join(dir, "nd3.npy"))
	for _, f := range []string{"y.npy", "out.npy", "sum.npy", "o.npy", "mean.npy", "so.npy"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
}

// TestReadmeUsageIsTheTools: the usage block of docs/cli.md is the usage
// lines of 'gpuscatter help', which are generated from each command's
// flag table.
func TestReadmeUsageIsTheTools(t *testing.T) {
	_, block, ok := strings.Cut(docPage(t, "docs/cli.md"), "## Usage\n\n```text\n")
	require.True(t, ok, "docs/cli.md has a Usage block")
	block, _, _ = strings.Cut(block, "```")
	var want strings.Builder
	for _, c := range commands {
		for _, line := range strings.Split(c.usageLine(), "\n") {
			want.WriteString(strings.TrimPrefix(line, "  ") + "\n")
		}
	}
	assert.Equal(t, want.String(), block)
}

// TestReadmeEnvironmentTable: the table of environment variables of
// docs/development.md names every variable the code, the tests and the
// kit's scripts read (os.Getenv, os.LookupEnv, an Env constant, ${NAME}
// in a script), and no other.
func TestReadmeEnvironmentTable(t *testing.T) {
	_, section, ok := strings.Cut(docPage(t, "docs/development.md"), "## Environment variables\n")
	require.True(t, ok, "docs/development.md has an Environment variables section")
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
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
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
		assert.True(t, named[name], "%s is read (%v) but not in docs/development.md's table", name, files)
	}
	for _, name := range []string{"MESA_SHADER_CACHE_DIR", "MESA_SHADER_CACHE_DISABLE", "XDG_CACHE_HOME", "HOME", "GO", "FUZZTIME", "ONNX_NODE_TESTS"} {
		assert.True(t, named[name], "%s is not in docs/development.md's table", name)
	}
}

// TestReadmeBenchProgressExample: the example of bench's line off a
// terminal in docs/bench.md counts the workloads as the tool does.
func TestReadmeBenchProgressExample(t *testing.T) {
	text := strings.Join(strings.Fields(docPage(t, "docs/bench.md")), " ")
	m := regexp.MustCompile("`gpuscatter: bench \\[(\\d+)/(\\d+)\\] ([A-Za-z0-9-]+) on (cpu|gpu): median [0-9.]+ ms, [0-9.]+ GB/s, (resident [0-9.]+ ms, [0-9.]+x the cpu, )?verified bit for bit`").FindStringSubmatch(text)
	require.NotNil(t, m, "docs/bench.md has an example of bench's progress line")
	names := bench.Names()
	assert.Equal(t, strconv.Itoa(len(names)), m[2], "the number of workloads")
	i, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	if assert.True(t, i >= 1 && i <= len(names), m[0]) {
		assert.Equal(t, names[i-1], m[3], "workload %d", i)
	}
}

// TestMakeRunInstallsOnlyWhatRunningNeeds: the README's two commands
// install what each needs: make run the packages and modules, builds and
// runs the benchmark, and installs no test tool; make test installs
// gotestsum too, which its passes run.
func TestMakeRunInstallsOnlyWhatRunningNeeds(t *testing.T) {
	treetests.Require(t)
	dryRun := func(target string) string {
		cmd := exec.Command("make", "-n", "--no-print-directory", target)
		cmd.Dir = "../.."
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "make -n %s: %s", target, out)
		return string(out)
	}
	run := dryRun("run")
	assert.Contains(t, run, "mod download")
	assert.Contains(t, run, "build -buildvcs=auto -o bin/gpuscatter ./cmd/gpuscatter")
	assert.Contains(t, run, "bin/gpuscatter bench --json bin/bench.json")
	assert.NotContains(t, run, "gotestsum")
	test := dryRun("test")
	assert.Contains(t, test, "install gotest.tools/gotestsum@")
	assert.Contains(t, test, "bin/gotestsum --format testname")
}

// TestReadmeDebianPackages: docs/development.md lists the Debian packages
// make installs, DEB_PKGS of the Makefile, all of them and in their order.
func TestReadmeDebianPackages(t *testing.T) {
	treetests.Require(t)
	mk, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^DEB_PKGS\s*:=((?:.*\\\n)*.*)$`).FindSubmatch(mk)
	require.NotNil(t, m, "the Makefile sets DEB_PKGS")
	want := strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " "))
	require.Greater(t, len(want), 10, "DEB_PKGS: %q", m[1])

	_, list, ok := strings.Cut(docPage(t, "docs/development.md"), "`DEB_PKGS` in the Makefile)")
	require.True(t, ok, "docs/development.md lists DEB_PKGS")
	list, _, _ = strings.Cut(strings.TrimLeft(list[strings.Index(list, "\n"):], "\n"), "\n\n") // the list after the line
	var got []string
	for _, c := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(list, -1) {
		if regexp.MustCompile(`^[a-z0-9][a-z0-9.+-]+$`).MatchString(c[1]) { // a package name
			got = append(got, c[1])
		}
	}
	assert.Equal(t, want, got, "docs/development.md's packages, against DEB_PKGS")
}

// headingSlug is GitHub's anchor for a heading's text: lower case, every
// character but letters, digits, spaces, hyphens and underscores dropped,
// spaces made hyphens.
func headingSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markdownAnchors returns the anchors of md's headings, numbered as
// GitHub numbers repeats (-1, -2, ...), outside code blocks.
func markdownAnchors(md string) map[string]bool {
	anchors, seen := map[string]bool{}, map[string]int{}
	inBlock := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			inBlock = !inBlock
			continue
		}
		m := regexp.MustCompile(`^#{1,6} +(.*?) *#*$`).FindStringSubmatch(l)
		if inBlock || m == nil {
			continue
		}
		// Inline code and link markup leave their text.
		text := regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(m[1], "$1")
		slug := headingSlug(strings.ReplaceAll(text, "`", ""))
		if n := seen[slug]; n > 0 {
			anchors[slug+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// TestDocsLinks: every relative link of the repository's Markdown files
// (the README, docs/ and the design notes) names a file or folder that
// exists, and every #anchor, within the page or on another Markdown
// page, a heading of that page, by GitHub's slug.
func TestDocsLinks(t *testing.T) {
	treetests.Require(t)
	var pages []string
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "../.." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, pages, "../../docs/cli.md")
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		md, err := os.ReadFile(page)
		require.NoError(t, err)
		anchors[page] = markdownAnchors(string(md))
		return anchors[page]
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, page := range pages {
		md, err := os.ReadFile(page)
		require.NoError(t, err)
		inBlock := false
		for i, l := range strings.Split(string(md), "\n") {
			if strings.HasPrefix(l, "```") {
				inBlock = !inBlock
			}
			if inBlock {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				where := strings.TrimPrefix(page, "../../") + ":" + strconv.Itoa(i+1) + ": " + target
				file, anchor, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.Join(filepath.Dir(page), file)
					if _, err := os.Stat(dest); err != nil {
						assert.Fail(t, "a link to a missing file", where)
						continue
					}
				}
				if anchor != "" {
					if assert.True(t, strings.HasSuffix(dest, ".md"), "%s: an anchor on a page that is not Markdown", where) {
						assert.True(t, anchorsOf(dest)[anchor], "%s: no heading of %s has the anchor #%s", where, strings.TrimPrefix(dest, "../../"), anchor)
					}
				}
				checked++
			}
		}
	}
	assert.Greater(t, checked, 40, "the links checked")
}
