package opstest

import (
	"errors"
	"testing"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// T is what the suites report to: a *testing.T through WrapT, or a runner
// outside go test (package internal/gpucheck, behind `gpuscatter check`). Its
// methods mean what testing.T's do; FailNow and Fatalf end the current
// subtest, and Run runs f as a subtest and reports whether it passed.
type T interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	FailNow()
	Skipf(format string, args ...any)
	Run(name string, f func(t T)) bool
}

// CaseReporter is implemented by a T that counts cases: the suites call
// BeginCase before checking each request, so that failures that follow
// are counted against it.
type CaseReporter interface {
	BeginCase(req ops.Request)
}

// CaseFilter is implemented by a T that checks only some cases (gpuscatter
// check --match with an operator's name): Wants reports whether req is one
// of them. The suites skip the others before running them, so that they
// are neither run nor counted.
type CaseFilter interface {
	Wants(req ops.Request) bool
}

// MismatchReporter is implemented by a T that records where a result first
// differs from the reference's: the suites call Mismatch before reporting
// such a failure.
type MismatchReporter interface {
	Mismatch(m Mismatch)
}

// Mismatch is the first element at which a result differs from the
// reference's.
type Mismatch struct {
	Op        string `json:"op"`
	DType     string `json:"dtype"`
	Reduction string `json:"reduction"`
	Position  []int  `json:"position,omitempty"` // coordinates in the output; nil for a shape or dtype mismatch
	Want      string `json:"expected"`
	Got       string `json:"got"`
}

// RefusalReporter is implemented by a T that takes a backend's refusal of
// a request for lack of a device feature as an outcome of its own, not a
// failure: the suites call Refused with the backend's error when it wraps
// ops.ErrUnsupported, and go on to the next case when it returns true (it
// then counts the case as refused); when it returns false, the error fails
// the case as any other would. A device without shaderFloat64, for
// example, refuses float64 sum, sub, prod and mean.
type RefusalReporter interface {
	Refused(req ops.Request, err error) bool
}

// Refused reports whether t takes err, the backend's outcome for req, as
// a refusal (RefusalReporter); the suites, and those built on them, call
// it before judging an error.
func Refused(t T, req ops.Request, err error) bool {
	r, ok := t.(RefusalReporter)
	return ok && errors.Is(err, ops.ErrUnsupported) && r.Refused(req, err)
}

// WrapT returns t as a T.
func WrapT(t *testing.T) T { return testingT{t} }

// testingT adapts *testing.T to T.
type testingT struct{ *testing.T }

func (t testingT) Run(name string, f func(T)) bool {
	return t.T.Run(name, func(t *testing.T) { f(testingT{t}) })
}

// BeginCase reports whether t wants req checked (CaseFilter), and, when it
// does, tells t, when it counts cases, that req is checked next
// (CaseReporter). The suites, and those built on them, call it before each
// request and skip the request where it returns false.
func BeginCase(t T, req ops.Request) bool {
	if f, ok := t.(CaseFilter); ok && !f.Wants(req) {
		return false
	}
	if c, ok := t.(CaseReporter); ok {
		c.BeginCase(req)
	}
	return true
}

// reportMismatch tells t, when it records mismatches, where got first
// differs from want for req. It does nothing when they are Same.
func reportMismatch(t T, req ops.Request, got, want *tensor.Tensor) {
	m, ok := t.(MismatchReporter)
	if !ok {
		return
	}
	mm, found := FirstMismatch(req, got, want)
	if found {
		m.Mismatch(mm)
	}
}

// FirstMismatch returns the first element (in row-major order) at which got
// differs from want as DiffFor counts differences for req's reduction,
// described with req's operator, dtype and reduction; found is false when
// there is none.
func FirstMismatch(req ops.Request, got, want *tensor.Tensor) (m Mismatch, found bool) {
	m = Mismatch{Op: req.Op, Reduction: req.Reduction}
	if op, err := ops.Lookup(req.Op); err == nil {
		m.Op = op.Name // requests spell names in any case
	}
	if req.Reduction == "" {
		m.Reduction = "none"
	}
	if req.Data != nil {
		m.DType = req.Data.DType.String()
	}
	switch {
	case got == nil || want == nil:
		if got == want {
			return m, false
		}
		m.Got, m.Want = FormatTensor(got), FormatTensor(want)
		return m, true
	case got.DType != want.DType || !tensor.SameShape(got.Shape, want.Shape) || got.Check() != nil:
		m.Got = got.DType.String() + tensor.FormatShape(got.Shape)
		m.Want = want.DType.String() + tensor.FormatShape(want.Shape)
		return m, true
	}
	r := ReductionOf(req)
	nanEqual := r != ops.Min && r != ops.Max // DiffFor's rule
	for i := 0; i < want.Len(); i++ {
		if !elemEqual(got, want, i, nanEqual) {
			m.Position = unravel(i, want.Shape)
			m.Got, m.Want = formatElem(got, i), formatElem(want, i)
			return m, true
		}
	}
	return m, false
}
