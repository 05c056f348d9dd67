package opstest

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/ops/examples"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// conformanceSeed fixes the random requests of RunConformance, so that every
// backend runs the same ones and a failure reproduces.
const conformanceSeed = 20240615

// RunConformance runs the shared suite on the backend newBackend returns.
// newBackend is called once per group of subtests; it may skip t (no
// device) and should register the backend's Close with t.Cleanup.
//
// Groups: Examples (every spec example, bit for bit), Contract
// (ContractCases, the README's rules worked out by hand), Validation (the
// ValidationCases table through ops.Run), IndexErrors (out-of-range indices:
// the error text, and an output filled with a sentinel pattern that must be
// left alone or hold a copy of data, never a partial scatter),
// BadRequests (RandomBadRequest: sentinel and text as Naive words them),
// UnchangedInputs, InPlace (out sharing data's storage), GuardRegions
// (bytes around the output buffer), WrongOutput, SkipBadIndices (bad
// indices skipped with the opt-in, into a new output and in place),
// RandomVsNaive, and Close.
func RunConformance(t *testing.T, newBackend func(t *testing.T) ops.Backend) {
	Conformance(WrapT(t), func(t T) ops.Backend { return newBackend(t.(testingT).T) }, DefaultRandom)
}

// DefaultRandom is the number of random requests RunConformance checks in
// the UnchangedInputs, InPlace and GuardRegions groups; BadRequests runs
// twice as many and RandomVsNaive three times as many.
const DefaultRandom = 100

// TB is the part of T (and of *testing.T) that the assertion helpers use.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	FailNow()
}

// Conformance is RunConformance reporting to t, with random sizing the
// groups of random requests (DefaultRandom is RunConformance's size).
// newBackend is called once per group; the caller closes the backends it
// returns.
func Conformance(t T, newBackend func(t T) ops.Backend, random int) {
	ctx := context.Background()

	t.Run("Examples", func(t T) {
		b := newBackend(t)
		for _, ex := range examples.All() {
			t.Run(ex.Name, func(t T) {
				if !BeginCase(t, ex.Request) {
					return
				}
				got, err := ops.Run(ctx, b, ex.Request)
				if Refused(t, ex.Request, err) {
					return
				}
				require.NoError(t, err, ex.Source)
				if d := DiffExact(got, ex.Want); d != "" {
					reportMismatch(t, ex.Request, got, ex.Want)
					t.Errorf("%s on %s: %s\nsource: %s\nrequest: %s", ex.Name, b.Name(), d, ex.Source, Describe(ex.Request))
				}
			})
		}
	})

	t.Run("Contract", func(t T) {
		b := newBackend(t)
		for _, ex := range ContractCases() {
			t.Run(ex.Name, func(t T) {
				if !BeginCase(t, ex.Request) {
					return
				}
				got, err := ops.Run(ctx, b, ex.Request)
				if Refused(t, ex.Request, err) {
					return
				}
				require.NoError(t, err, ex.Source)
				if d := DiffFor(ReductionOf(ex.Request), got, ex.Want); d != "" {
					reportMismatch(t, ex.Request, got, ex.Want)
					t.Errorf("%s on %s: %s\nrule: %s\nrequest: %s", ex.Name, b.Name(), d, ex.Source, Describe(ex.Request))
				}
			})
		}
	})

	t.Run("Validation", func(t T) {
		b := newBackend(t)
		for _, c := range ValidationCases() {
			t.Run(c.Name, func(t T) {
				if !BeginCase(t, c.Request) {
					return
				}
				got, err := ops.Run(ctx, b, c.Request)
				if c.Err == nil && Refused(t, c.Request, err) {
					return
				}
				if c.Err != nil {
					RequireCaseError(t, c, err)
					return
				}
				require.NoError(t, err)
				want, err := Naive(c.Request)
				require.NoError(t, err)
				if d := DiffFor(ReductionOf(c.Request), got, want); d != "" {
					reportMismatch(t, c.Request, got, want)
					t.Errorf("%s: %s\nrequest: %s", b.Name(), d, Describe(c.Request))
				}
			})
		}
	})

	t.Run("IndexErrors", func(t T) {
		b := newBackend(t)
		for _, c := range indexErrorRequests() {
			t.Run(c.Name, func(t T) {
				if !BeginCase(t, c.Request) {
					return
				}
				checkIndexError(t, ctx, b, c)
			})
		}
	})

	t.Run("BadRequests", func(t T) {
		b := newBackend(t)
		rng := rand.New(rand.NewSource(conformanceSeed))
		for i := 0; i < 2*random; i++ {
			req, sentinel := RandomBadRequest(rng, Config{})
			if !BeginCase(t, req) {
				continue
			}
			_, err := ops.Run(ctx, b, req)
			_, want := Naive(req)
			require.ErrorIs(t, want, sentinel, "Naive: case %d: %s", i, Describe(req))
			if !assert.ErrorIs(t, err, sentinel, "case %d: %s", i, Describe(req)) {
				continue
			}
			var e *ops.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, want.Error(), err.Error(), "case %d: %s", i, Describe(req))
		}
	})

	t.Run("UnchangedInputs", func(t T) {
		b := newBackend(t)
		for i, req := range sampleRequests(random, true) {
			if !BeginCase(t, req) {
				continue
			}
			before := cloneRequest(req)
			_, _ = ops.Run(ctx, b, req)
			requireInputsEqual(t, before, req, fmt.Sprintf("request %d", i))
		}
	})

	t.Run("InPlace", func(t T) {
		b := newBackend(t)
		for i, req := range sampleRequests(random, false) {
			if !BeginCase(t, req) {
				continue
			}
			want, werr := Naive(req)
			data := req.Data.Clone()
			r := req
			r.Data = data
			p, err := ops.Prepare(r)
			require.NoError(t, err)
			out := &tensor.Tensor{DType: data.DType, Shape: data.Shape, Data: data.Data, Strings: data.Strings}
			err = b.Execute(ctx, p, out)
			if Refused(t, req, err) {
				if d := DiffExact(out, req.Data); d != "" {
					t.Errorf("request %d: a refused in-place run changed data: %s\n%s", i, d, Describe(req))
				}
				continue
			}
			if errors.Is(err, ops.ErrUnsupported) {
				t.Skipf("%s does not run in place: %v", b.Name(), err)
			}
			if werr != nil {
				require.Error(t, err, "request %d: %s", i, Describe(req))
				assert.Equal(t, werr.Error(), err.Error())
				if d := DiffExact(out, req.Data); d != "" {
					t.Errorf("request %d: a failed in-place run changed data: %s\n%s", i, d, Describe(req))
				}
				continue
			}
			require.NoError(t, err, "request %d: %s", i, Describe(req))
			if d := DiffFor(ReductionOf(req), out, want); d != "" {
				reportMismatch(t, req, out, want)
				t.Errorf("request %d in place: %s\n%s", i, d, Describe(req))
			}
		}
	})

	t.Run("GuardRegions", func(t T) {
		b := newBackend(t)
		for i, req := range sampleRequests(random, false) {
			if req.Data.DType == tensor.String {
				continue
			}
			if !BeginCase(t, req) {
				continue
			}
			p, err := ops.Prepare(req)
			require.NoError(t, err)
			out, guardOK := guardedOutput(p)
			err = b.Execute(ctx, p, out)
			want, werr := Naive(req)
			switch {
			case Refused(t, req, err):
			case werr != nil:
				require.Error(t, err)
			default:
				require.NoError(t, err, "request %d: %s", i, Describe(req))
				if d := DiffFor(ReductionOf(req), out, want); d != "" {
					reportMismatch(t, req, out, want)
					t.Errorf("request %d: %s\n%s", i, d, Describe(req))
				}
			}
			if !guardOK() {
				t.Errorf("request %d: %s wrote outside the output buffer\n%s", i, b.Name(), Describe(req))
			}
		}
	})

	t.Run("WrongOutput", func(t T) {
		b := newBackend(t)
		ex := examples.All()[0]
		if !BeginCase(t, ex.Request) {
			return
		}
		p, err := ops.Prepare(ex.Request)
		require.NoError(t, err)
		require.ErrorIs(t, b.Execute(ctx, p, nil), ops.ErrOutput)
		wrongShape, _ := tensor.New(p.DType, []int{p.Shape[0] + 1})
		require.ErrorIs(t, b.Execute(ctx, p, wrongShape), ops.ErrOutput)
		wrongType, _ := tensor.New(tensor.Float64, p.Shape)
		require.ErrorIs(t, b.Execute(ctx, p, wrongType), ops.ErrOutput)
	})

	t.Run("SkipBadIndices", func(t T) {
		skipGroup(t, newBackend(t), random)
	})

	t.Run("RandomVsNaive", func(t T) {
		b := newBackend(t)
		runPairs(t, conformanceSeed, 3*random, Config{}, b.Name(), func(req ops.Request) (*tensor.Tensor, error) {
			return ops.Run(ctx, b, req)
		}, "naive", Naive)
	})

	t.Run("Close", func(t T) {
		b := newBackend(t)
		assert.NotEmpty(t, b.Name())
		require.NoError(t, b.Close())
		require.NoError(t, b.Close(), "Close must be idempotent")
	})
}

// RequireCaseError asserts that err is what validation case c expects: it
// wraps c.Err, is an *ops.Error whose Input is c.Input, names that input in
// its message by the operator's name for it (ops.Op.InputName), and has
// exactly the text c.Msg when that is set.
func RequireCaseError(t TB, c ValidationCase, err error) {
	t.Helper()
	require.ErrorIs(t, err, c.Err, "%s\nrequest: %s", c.Name, Describe(c.Request))
	var e *ops.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, c.Input, e.Input, "the error names the wrong input: %v", err)
	name := c.Input
	if op, lerr := ops.Lookup(c.Request.Op); lerr == nil {
		name = op.InputName(c.Input)
	}
	assert.True(t, strings.Contains(e.Msg, name), "the message does not name %q: %v", name, err)
	if c.Msg != "" {
		assert.Equal(t, c.Msg, err.Error())
	}
}

// indexErrorRequests: the AtExecute rows of the table, then random requests
// with one index out of range, whose text Naive words.
func indexErrorRequests() []ValidationCase {
	var cs []ValidationCase
	for _, c := range ValidationCases() {
		if c.AtExecute {
			cs = append(cs, c)
		}
	}
	rng := rand.New(rand.NewSource(conformanceSeed))
	for len(cs) < 150 {
		req := RandomRequest(rng, Config{})
		op, _ := ops.Lookup(req.Op)
		if badIndex(rng, op, &req) {
			cs = append(cs, ValidationCase{Name: fmt.Sprintf("random-%d-%s", len(cs), op.Name), Request: req,
				Err: ops.ErrIndexRange, Input: "indices", AtExecute: true})
		}
	}
	return cs
}

// checkIndexError runs a request with an out-of-range index on an output
// filled with a sentinel pattern and inside guard regions: the error must be
// the one Naive gives (and c.Msg when set), and out must hold either the
// pattern or a copy of data.
func checkIndexError(t T, ctx context.Context, b ops.Backend, c ValidationCase) {
	t.Helper()
	before := cloneRequest(c.Request)
	p, err := ops.Prepare(c.Request)
	require.NoError(t, err, "Prepare must accept it: index values are checked at execution")
	_, want := Naive(c.Request)
	require.Error(t, want, "Naive accepts %s", Describe(c.Request))
	var out *tensor.Tensor
	guardOK := func() bool { return true }
	if p.DType == tensor.String {
		out, _ = tensor.New(p.DType, p.Shape)
		for i := range out.Strings {
			out.Strings[i] = "\xffsentinel"
		}
	} else {
		out, guardOK = guardedOutput(p)
	}
	pattern := out.Clone()
	err = b.Execute(ctx, p, out)
	if Refused(t, c.Request, err) {
		// Refused before any work: out untouched.
		assert.True(t, tensor.Equal(out, pattern), "out changed by a refused call")
		assert.True(t, guardOK(), "%s wrote outside the output buffer", b.Name())
		requireInputsEqual(t, before, c.Request, c.Name)
		return
	}
	RequireCaseError(t, c, err)
	assert.Equal(t, want.Error(), err.Error(), "the text must be the reference's")
	if !tensor.Equal(out, pattern) && !tensor.Equal(out, c.Request.Data) {
		t.Errorf("out after a failed run is neither untouched nor a copy of data:\n  out:  %s\n  data: %s",
			FormatTensor(out), FormatTensor(c.Request.Data))
	}
	assert.True(t, guardOK(), "%s wrote outside the output buffer", b.Name())
	requireInputsEqual(t, before, c.Request, c.Name)
}

// guardedOutput returns an output tensor for p whose payload sits between
// two guard regions inside a larger buffer, and a function reporting whether
// the guards are intact. The payload is filled with a sentinel pattern.
func guardedOutput(p *ops.Plan) (*tensor.Tensor, func() bool) {
	const guard = 64
	n, _ := tensor.NumElements(p.Shape)
	size := n * p.DType.Size()
	buf := make([]byte, size+2*guard)
	for i := range buf {
		buf[i] = byte(0xA5 ^ i)
	}
	out := &tensor.Tensor{DType: p.DType, Shape: append([]int(nil), p.Shape...), Data: buf[guard : guard+size : guard+size]}
	if size == 0 {
		out.Data = []byte{}
	}
	return out, func() bool {
		for i := 0; i < guard; i++ {
			if buf[i] != byte(0xA5^i) || buf[guard+size+i] != byte(0xA5^(guard+size+i)) {
				return false
			}
		}
		return true
	}
}

// sampleRequests returns the spec example requests and n random requests
// (with bad ones mixed in when withBad).
func sampleRequests(n int, withBad bool) []ops.Request {
	var reqs []ops.Request
	for _, ex := range examples.All() {
		reqs = append(reqs, ex.Request)
	}
	rng := rand.New(rand.NewSource(conformanceSeed + 1))
	for i := 0; i < n; i++ {
		if withBad && i%4 == 3 {
			req, _ := RandomBadRequest(rng, Config{})
			reqs = append(reqs, req)
			continue
		}
		reqs = append(reqs, RandomRequest(rng, Config{}))
	}
	return reqs
}

func requireInputsEqual(t TB, before, after ops.Request, what string) {
	t.Helper()
	b, a := inputsOf(before), inputsOf(after)
	require.Equal(t, len(b), len(a))
	for i := range b {
		if d := DiffExact(a[i].t, b[i].t); d != "" {
			t.Errorf("%s: input %s changed: %s\n%s", what, b[i].name, d, Describe(before))
		}
	}
}
