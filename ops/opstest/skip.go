package opstest

import (
	"context"
	"errors"
	"math/rand"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// SkipBadRequest returns a RandomRequest with SkipBadIndices set and one to
// three of its indices out of range (for a linear TensorScatter-24, write
// indices), drawn from every operator that takes indices; the output
// holds the updates of the valid indices and the call reports the first
// bad one (ops.Request.SkipBadIndices).
func SkipBadRequest(rng *rand.Rand, cfg Config) ops.Request {
	for {
		req := RandomRequest(rng, cfg)
		op, err := ops.Lookup(req.Op)
		if err != nil {
			panic(err)
		}
		spoiled := false
		for range 1 + rng.Intn(3) {
			spoiled = badIndex(rng, op, &req) || spoiled
		}
		if spoiled {
			req.SkipBadIndices = true
			return req
		}
	}
}

// skipGroup is the conformance group SkipBadIndices: requests from
// SkipBadRequest, run into a new output (ops.Run), into an output with
// guard regions (which must stay untouched) and in place, must give
// Naive's result and error text; a valid request with the opt-in must give
// the plain result.
func skipGroup(t T, b ops.Backend, random int) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(conformanceSeed + 7))
	for i := range random {
		req := SkipBadRequest(rng, Config{})
		if i%8 == 7 {
			req = RandomRequest(rng, Config{})
			req.SkipBadIndices = true
		}
		if !BeginCase(t, req) {
			continue
		}
		want, werr := Naive(cloneRequest(req))
		if want == nil {
			t.Errorf("case %d: Naive gives no result: %v\n%s", i, werr, Describe(req))
			continue
		}
		bad := werr != nil
		if bad && !errors.Is(werr, ops.ErrIndexRange) {
			t.Errorf("case %d: Naive: %v\n%s", i, werr, Describe(req))
			continue
		}
		before := cloneRequest(req)
		got, err := ops.Run(ctx, b, req)
		requireInputsEqual(t, before, req, "a call with SkipBadIndices")
		if Refused(t, req, err) {
			continue
		}
		if !checkSkipped(t, i, "", req, got, err, want, werr) {
			continue
		}

		// Into an output with guard regions around it: nothing is written
		// outside it.
		if req.Data.DType != tensor.String {
			if p, perr := ops.Prepare(req); perr == nil {
				out, guardOK := guardedOutput(p)
				err := b.Execute(ctx, p, out)
				checkSkipped(t, i, " (guarded output)", req, out, err, want, werr)
				if !guardOK() {
					t.Errorf("case %d: %s wrote outside the output buffer\n%s", i, b.Name(), Describe(req))
				}
			}
		}

		// In place: out is data's storage.
		data := req.Data.Clone()
		r := req
		r.Data = data
		p, perr := ops.Prepare(r)
		if perr != nil {
			t.Errorf("case %d: Prepare: %v", i, perr)
			continue
		}
		out := &tensor.Tensor{DType: data.DType, Shape: data.Shape, Data: data.Data, Strings: data.Strings, StringFormat: data.StringFormat}
		err = b.Execute(ctx, p, out)
		if errors.Is(err, ops.ErrUnsupported) && !bad {
			continue // a backend that does not run in place (InPlace says so)
		}
		checkSkipped(t, i, " in place", req, out, err, want, werr)
	}
}

// checkSkipped compares a run's outcome with Naive's and reports whether
// they agree.
func checkSkipped(t T, i int, how string, req ops.Request, got *tensor.Tensor, err error, want *tensor.Tensor, werr error) bool {
	t.Helper()
	switch {
	case werr == nil && err != nil:
		t.Errorf("case %d%s: a valid request with SkipBadIndices fails: %v\n%s", i, how, err, Describe(req))
		return false
	case werr != nil && err == nil:
		t.Errorf("case %d%s: a bad index is not reported (want %v)\n%s", i, how, werr, Describe(req))
		return false
	case werr != nil && err.Error() != werr.Error():
		t.Errorf("case %d%s: error %q, want %q\n%s", i, how, err, werr, Describe(req))
		return false
	case got == nil:
		t.Errorf("case %d%s: no output with the error %v\n%s", i, how, err, Describe(req))
		return false
	}
	if d := DiffFor(ReductionOf(req), got, want); d != "" {
		reportMismatch(t, req, got, want)
		t.Errorf("case %d%s: the updates of the valid indices differ: %s\n%s", i, how, d, Describe(req))
		return false
	}
	return true
}
