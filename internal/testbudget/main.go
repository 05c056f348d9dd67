// Command testbudget reads the event stream of `go test -json` (the file
// gotestsum writes with --jsonfile) and prints, for each test binary, its
// time against its timeout, slowest first, with the tests that took most
// of it:
//
//	go run ./internal/testbudget -timeout 15m bin/test-unit.json
//
// A binary past half its timeout is marked OVER HALF: on a slower or busier
// machine it is the next to time out. The command fails only on input it
// cannot read; the marks are for people (make test prints them after the
// tests).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is the part of test2json's TestEvent that the budget reads.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
}

// binary is one test binary's figures.
type binary struct {
	Package string
	Seconds float64
	Failed  bool
	// Slowest are its slowest top-level tests, slowest first.
	Slowest []test
}

type test struct {
	Name    string
	Seconds float64
}

// read returns the binaries of the stream r, slowest first. A package that
// started but never ended (the stream cut off, a timeout panic) has no
// figure and is left out.
func read(r io.Reader) ([]binary, error) {
	byPkg := map[string]*binary{}
	tests := map[string][]test{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 || b[0] != '{' {
			continue // a line go test printed outside the stream
		}
		var e event
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if e.Action != "pass" && e.Action != "fail" && e.Action != "skip" {
			continue
		}
		switch {
		case e.Test == "":
			byPkg[e.Package] = &binary{Package: e.Package, Seconds: e.Elapsed, Failed: e.Action == "fail"}
		case !strings.Contains(e.Test, "/"):
			tests[e.Package] = append(tests[e.Package], test{Name: e.Test, Seconds: e.Elapsed})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := make([]binary, 0, len(byPkg))
	for pkg, b := range byPkg {
		ts := tests[pkg]
		sort.SliceStable(ts, func(i, j int) bool { return ts[i].Seconds > ts[j].Seconds })
		b.Slowest = ts[:min(len(ts), 3)]
		out = append(out, *b)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Seconds != out[j].Seconds {
			return out[i].Seconds > out[j].Seconds
		}
		return out[i].Package < out[j].Package
	})
	return out, nil
}

// report writes the table of bins against timeout and returns how many are
// past half of it.
func report(w io.Writer, title string, bins []binary, timeout time.Duration) int {
	over := 0
	total := 0.0
	fmt.Fprintf(w, "%s: each test binary's time against its timeout of %s\n", title, timeout)
	for _, b := range bins {
		total += b.Seconds
		share := b.Seconds / timeout.Seconds()
		mark := ""
		if share > 0.5 {
			mark = "  OVER HALF"
			over++
		}
		if b.Failed {
			mark += "  (failed)"
		}
		var slow []string
		for _, t := range b.Slowest {
			if t.Seconds >= 1 {
				slow = append(slow, fmt.Sprintf("%s %.0f s", t.Name, t.Seconds))
			}
		}
		fmt.Fprintf(w, "  %-48s %7.1f s  %5.1f%%%s", strings.TrimPrefix(b.Package, "github.com/gpuscatter/gpuscatter/"), b.Seconds, 100*share, mark)
		if len(slow) > 0 {
			fmt.Fprintf(w, "  [%s]", strings.Join(slow, ", "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  %-48s %7.1f s  (the binaries' times added; they run two at a time)\n", "total", total)
	if over > 0 {
		fmt.Fprintf(w, "%s: %d test binaries past half their timeout: split or shorten their tests before they time out on a slower machine\n", title, over)
	}
	return over
}

func main() {
	timeout := flag.Duration("timeout", 15*time.Minute, "the -timeout the binaries ran under")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: testbudget [-timeout D] FILE.json...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	for _, name := range flag.Args() {
		if err := run(os.Stdout, name, *timeout); err != nil {
			fmt.Fprintln(os.Stderr, "testbudget:", err)
			os.Exit(1)
		}
	}
}

func run(w io.Writer, name string, timeout time.Duration) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	bins, err := read(f)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(bins) == 0 {
		return fmt.Errorf("%s: %w", name, errNoBinary)
	}
	report(w, name, bins, timeout)
	return nil
}

var errNoBinary = errors.New("no test binary ended in the stream")
