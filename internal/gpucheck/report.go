//go:build cgo

package gpucheck

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/opstest"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// Row is the outcome of one operator on one path.
type Row struct {
	Path    string  `json:"path"`
	Op      string  `json:"op"` // "-" for checks of the path as a whole (opening, closing, validation)
	Cases   int     `json:"cases"`
	Passed  int     `json:"passed"`
	Failed  int     `json:"failed"`
	Skipped int     `json:"skipped,omitempty"`
	Seconds float64 `json:"seconds"`
	// First is the first mismatching element, when a failure was one.
	First *opstest.Mismatch `json:"first_mismatch,omitempty"`
	// FirstError is the first failure's message.
	FirstError string `json:"first_error,omitempty"`
	// Validation holds the validation layer's messages of the row, each
	// a failed case (closeAndCheck), in the order reported.
	Validation []string `json:"validation_messages,omitempty"`
	// Refused counts the cases the backend refused for lack of a device
	// feature that the call needs (Refusal): neither passed nor failed.
	Refused int `json:"refused,omitempty"`
	// RefusedFor names the features the refusals named, in the order
	// first met, comma-separated.
	RefusedFor string `json:"refused_for,omitempty"`
}

// Report collects the rows of a run. It implements opstest.T through Root;
// its methods may be called from several goroutines.
type Report struct {
	mu    sync.Mutex
	rows  map[[2]string]*Row
	order [][2]string
	// OnCase, when set, is called after each case ends (for a progress
	// line); it must not call back into the Report while it runs.
	OnCase func()
	// Ops, when not empty, names the only operator versions whose cases
	// run (Config.Operators); the suites skip the others
	// (opstest.CaseFilter). The checks of a path as a whole still run.
	Ops []string
}

// NewReport returns an empty report.
func NewReport() *Report { return &Report{rows: map[[2]string]*Row{}} }

// Root returns the opstest.T at the top of a run: its subtests are the
// paths.
func (r *Report) Root() opstest.T { return &rec{rep: r} }

// Rows returns the rows: the paths in the order they ran, the operators of
// each path sorted by name ("-" first).
func (r *Report) Rows() []Row {
	r.mu.Lock()
	defer r.mu.Unlock()
	rank := map[string]int{}
	out := make([]Row, 0, len(r.order))
	for _, k := range r.order {
		if _, ok := rank[k[0]]; !ok {
			rank[k[0]] = len(rank)
		}
		out = append(out, *r.rows[k])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if a, b := rank[out[i].Path], rank[out[j].Path]; a != b {
			return a < b
		}
		return out[i].Op < out[j].Op
	})
	return out
}

// Totals returns the number of cases, failures and refusals so far.
func (r *Report) Totals() (cases, failed, refused int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, row := range r.rows {
		cases += row.Cases
		failed += row.Failed
		refused += row.Refused
	}
	return cases, failed, refused
}

// row returns the row of op on path, making it. r.mu is held.
func (r *Report) row(path, op string) *Row {
	k := [2]string{path, op}
	if row, ok := r.rows[k]; ok {
		return row
	}
	row := &Row{Path: path, Op: op}
	r.rows[k] = row
	r.order = append(r.order, k)
	return row
}

// rec is one subtest. Subtests run one at a time, each on a goroutine of
// its own so that FailNow can end it with runtime.Goexit, as in package
// testing.
type rec struct {
	rep    *Report
	name   string
	path   string // the first element of name
	failed bool

	op          string // the current case's operator; "" before the first
	start       time.Time
	caseFailed  bool
	caseRefused bool
}

func (t *rec) Helper()      {}
func (t *rec) Name() string { return t.name }

func (t *rec) Logf(format string, args ...any) {}

func (t *rec) Errorf(format string, args ...any) {
	if t.op == "" {
		t.begin("-")
	}
	t.failed, t.caseFailed = true, true
	t.rep.mu.Lock()
	defer t.rep.mu.Unlock()
	row := t.rep.row(t.path, t.op)
	msg := fmt.Sprintf(format, args...)
	if row.FirstError == "" {
		row.FirstError = t.name + ": " + firstLines(msg, 6)
	}
	if m, ok := strings.CutPrefix(msg, validationPrefix); ok {
		row.Validation = append(row.Validation, m)
	}
}

func (t *rec) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	t.FailNow()
}

func (t *rec) FailNow() {
	t.failed = true
	runtime.Goexit()
}

func (t *rec) Skipf(format string, args ...any) {
	t.rep.mu.Lock()
	if t.op != "" {
		t.rep.row(t.path, t.op).Skipped++
	}
	t.rep.mu.Unlock()
	runtime.Goexit()
}

// Refused takes err, the backend's refusal of req, as the outcome of the
// current case when Refusal accepts it (opstest.RefusalReporter): the
// case counts as refused, and its row names the feature.
func (t *rec) Refused(req ops.Request, err error) bool {
	feature, ok := Refusal(req, err)
	if !ok {
		return false
	}
	if t.op == "" {
		t.BeginCase(req)
	}
	t.caseRefused = true
	t.rep.mu.Lock()
	defer t.rep.mu.Unlock()
	row := t.rep.row(t.path, t.op)
	if !slices.Contains(strings.Split(row.RefusedFor, ", "), feature) {
		if row.RefusedFor != "" {
			row.RefusedFor += ", "
		}
		row.RefusedFor += feature
	}
	return true
}

// Refusal returns the device feature for lack of which a backend refused
// req with err, and whether check takes the refusal as one: err wraps a
// gpu.FeatureError, and a refusal for a feature names one the call needs:
// shaderFloat64 only for a float64 sum, sub, prod or mean
// (gpu.Float64Arithmetic), shaderInt64 only for those or for a call with
// more than 2^31 elements, updates or indices (the 32-bit baseline's
// positions). Any other error is a failure.
func Refusal(req ops.Request, err error) (feature string, ok bool) {
	var fe *gpu.FeatureError
	if !errors.As(err, &fe) {
		return "", false
	}
	switch fe.Feature {
	case "shaderFloat64", "shaderInt64":
		p, perr := ops.PrepareShapes(req)
		if perr != nil {
			return fe.Feature, false
		}
		if gpu.Float64Arithmetic(p.DType, p.Reduction) {
			return fe.Feature, true
		}
		const narrow = 1 << 31
		out, _ := tensor.NumElements(p.Shape)
		wide := p.NumUpdates() > narrow || p.NumIndices() > narrow || out > narrow
		return fe.Feature, fe.Feature == "shaderInt64" && wide
	}
	return fe.Feature, true
}

// Run runs f as a subtest on a goroutine of its own and waits for it.
func (t *rec) Run(name string, f func(opstest.T)) bool {
	c := &rec{rep: t.rep, name: name, path: t.path}
	if t.name != "" {
		c.name = t.name + "/" + name
	} else {
		c.path = name
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer c.end()
		defer func() {
			if v := recover(); v != nil {
				c.Errorf("panic: %v", v)
			}
		}()
		f(c)
	}()
	<-done
	if c.failed {
		t.failed = true
	}
	return !c.failed
}

// Wants reports whether req is a case of one of the report's Ops, or
// whether Ops is empty (opstest.CaseFilter).
func (t *rec) Wants(req ops.Request) bool {
	if len(t.rep.Ops) == 0 {
		return true
	}
	o, err := ops.Lookup(req.Op)
	return err == nil && slices.Contains(t.rep.Ops, o.Name)
}

// BeginCase ends the current case and starts one for req.
func (t *rec) BeginCase(req ops.Request) {
	op := "-" // a request of no real operator (the validation table's) checks the path
	if o, err := ops.Lookup(req.Op); err == nil {
		op = o.Name // requests spell names in any case
	}
	t.begin(op)
}

// Mismatch keeps m as the first mismatch of the current case's row.
func (t *rec) Mismatch(m opstest.Mismatch) {
	if t.op == "" {
		t.begin(m.Op)
	}
	t.rep.mu.Lock()
	defer t.rep.mu.Unlock()
	row := t.rep.row(t.path, t.op)
	if row.First == nil {
		row.First = &m
	}
}

// begin ends the current case, if any, and starts one of op.
func (t *rec) begin(op string) {
	t.end()
	t.op, t.start, t.caseFailed, t.caseRefused = op, time.Now(), false, false
}

// end counts the current case, if any, in its row.
func (t *rec) end() {
	if t.op == "" {
		return
	}
	t.rep.mu.Lock()
	row := t.rep.row(t.path, t.op)
	row.Cases++
	switch {
	case t.caseFailed:
		row.Failed++
	case t.caseRefused:
		row.Refused++
	default:
		row.Passed++
	}
	row.Seconds += time.Since(t.start).Seconds()
	t.rep.mu.Unlock()
	t.op = ""
	if t.rep.OnCase != nil {
		t.rep.OnCase()
	}
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}

// Refusing returns t, a T of go test (opstest.WrapT), taking the refusals
// that Refusal accepts as outcomes (logged) instead of failures: so that
// `go test ./gpu` passes on a device that lacks a feature some calls
// need, exactly where the backend refuses them by design. Any other error
// fails as before.
func Refusing(t opstest.T) opstest.T { return refusingT{t} }

type refusingT struct{ opstest.T }

func (t refusingT) Run(name string, f func(opstest.T)) bool {
	return t.T.Run(name, func(c opstest.T) { f(refusingT{c}) })
}

func (t refusingT) Refused(req ops.Request, err error) bool {
	feature, ok := Refusal(req, err)
	if ok {
		t.Logf("refused: the device lacks %s: %v", feature, err)
	}
	return ok
}
