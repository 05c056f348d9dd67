package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/gpuscatter/gpuscatter/atomicfile"
	"github.com/gpuscatter/gpuscatter/npy"
	"github.com/gpuscatter/gpuscatter/onnx"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// parseIntList parses a comma-separated list of decimal integers such as
// "0,-1" or "2, 4, 6" into int64 values. Spaces around elements are
// allowed, a leading + or - is taken, and an empty or all-space string is
// the empty list. Every element must fit in an int64.
func parseIntList(s string) ([]int64, error) {
	if strings.TrimSpace(s) == "" {
		return []int64{}, nil
	}
	parts := strings.Split(s, ",")
	out := make([]int64, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("element %d of the comma list is empty", i+1)
		}
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return nil, fmt.Errorf("element %d (%s) does not fit in an int64", i+1, quoteShort(p))
			}
			return nil, fmt.Errorf("element %d (%s) is not a decimal integer; want a comma list such as 0,-1 or a path ending in .npy or .pb", i+1, quoteShort(p))
		}
		out = append(out, v)
	}
	return out, nil
}

// formatIntList is the inverse of parseIntList: "0,-1".
func formatIntList(vals []int64) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(parts, ",")
}

// isNPYPath reports whether s names a .npy file rather than an inline value.
func isNPYPath(s string) bool {
	return len(s) >= 4 && strings.EqualFold(s[len(s)-4:], ".npy")
}

// isPBPath reports whether s names an ONNX TensorProto (.pb) file.
func isPBPath(s string) bool {
	return len(s) >= 3 && strings.EqualFold(s[len(s)-3:], ".pb")
}

// isTensorPath reports whether s names a tensor file, .npy or .pb, rather
// than an inline value.
func isTensorPath(s string) bool { return isNPYPath(s) || isPBPath(s) }

// readTensorFile reads the tensor file at path: a TensorProto when the
// name ends in .pb, else an .npy file.
func readTensorFile(path string) (*tensor.Tensor, error) {
	if isPBPath(path) {
		return onnx.ReadFile(path)
	}
	return npy.ReadFile(path)
}

// writeTensorFile writes t to path atomically: a TensorProto when the name
// ends in .pb, else an .npy file. bfloat16 reaches only .pb files.
func writeTensorFile(ctx context.Context, path string, t *tensor.Tensor) error {
	if !isPBPath(path) {
		return npy.WriteFileContext(ctx, path, t)
	}
	b, err := onnx.Marshal(t) // before the file: a tensor that fails leaves none
	if err != nil {
		return err
	}
	return atomicfile.Write(ctx, path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// checkOutPath fails early, before any input is read or any work done,
// when the file --name writes could not be written at path: its directory
// is missing or not writable, it is a directory, or it is a file the user
// may not write (see atomicfile.Check). Write reports what is left, such
// as a full disk, at the end.
func checkOutPath(name, path string) error {
	err := atomicfile.Check(path)
	var pe *fs.PathError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe) && pe.Path == path:
		return fmt.Errorf("--%s %s: %w", name, path, pe.Err)
	case errors.As(err, &pe):
		// A folder on the way, or the target of a link.
		return fmt.Errorf("--%s %s: %s: %w", name, path, pe.Path, pe.Err)
	}
	return fmt.Errorf("--%s %s: %w", name, path, err)
}

// tensorArg is a flag whose value is a tensor: read from a .npy or .pb file, or,
// where the flag allows it, written inline (an integer, a comma list).
type tensorArg struct {
	name   string // flag name, without dashes
	path   string // the .npy file, when the value names one
	inline *tensor.Tensor
	given  bool
	// parseInline parses an inline value; nil means the value is always a
	// path, whatever its name.
	parseInline func(string) (*tensor.Tensor, error)
}

// set stores the flag's value: a path, or an inline tensor.
func (a *tensorArg) set(v string) error {
	a.given = true
	switch {
	case a.parseInline == nil:
		if v == "" {
			return errors.New("want the path of a .npy or .pb file")
		}
		a.path = v
		return nil
	case isTensorPath(v):
		a.path = v
		return nil
	}
	t, err := a.parseInline(v)
	if err != nil {
		return err
	}
	a.inline = t
	return nil
}

// load returns the flag's tensor, reading the file it names; nil when the
// flag was not given. A file error names the flag and the path.
func (a *tensorArg) load() (*tensor.Tensor, error) {
	switch {
	case !a.given:
		return nil, nil
	case a.inline != nil:
		return a.inline, nil
	}
	t, err := readTensorFile(a.path)
	if err != nil {
		return nil, fileError(a.name, a.path, err)
	}
	return t, nil
}

// spec returns the flag that sets a.
func (a *tensorArg) spec() flagSpec { return flagSpec{name: a.name, set: a.set} }

// parseIntScalar parses an inline --axis: one decimal integer, which
// becomes an int64 scalar.
func parseIntScalar(s string) (*tensor.Tensor, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return nil, errors.New("does not fit in an int64")
		}
		return nil, errors.New("want an integer or a path ending in .npy or .pb")
	}
	return tensor.Scalar(v), nil
}

// parseIntListTensor parses an inline comma list into an int64 1-D tensor.
func parseIntListTensor(s string) (*tensor.Tensor, error) {
	vals, err := parseIntList(s)
	if err != nil {
		return nil, err
	}
	return tensor.Ints(vals...), nil
}

// stringArg is a flag with a plain string value.
type stringArg struct {
	name  string
	value string
	given bool
	check func(string) error // optional
}

// spec returns the flag that sets a, after its check.
func (a *stringArg) spec() flagSpec {
	return flagSpec{name: a.name, set: func(v string) error {
		if a.check != nil {
			if err := a.check(v); err != nil {
				return err
			}
		}
		a.value, a.given = v, true
		return nil
	}}
}

// boolArg is a flag that takes true or false and remembers whether it was
// given, so that an absent flag stays distinguishable from its default.
type boolArg struct {
	name  string
	value *bool
}

// spec returns the flag that sets a from true or false (or 1, 0, t, f).
func (a *boolArg) spec() flagSpec {
	return flagSpec{name: a.name, set: func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("want true or false")
		}
		a.value = &b
		return nil
	}}
}

// switchSpec returns a boolean flag that sets *dst: --name alone means
// true, --name=B takes true or false (or 1, 0, t, f).
func switchSpec(name string, dst *bool, usage string) flagSpec {
	return flagSpec{name: name, boolean: true, usage: usage, set: func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("--%s=%q: want true or false", name, v)
		}
		*dst = b
		return nil
	}}
}

// fileError describes a failure to read or write the file path given to
// the flag called name: "--data x.npy: bad magic ...". The path appears
// once, after the flag, however often err repeats it.
func fileError(name, path string, err error) error {
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		// "npy: open x.npy: no such file or directory" -> "open: no such file or directory"
		msg = pe.Op + ": " + pe.Err.Error()
	} else {
		for _, p := range []string{"npy: ", "onnx: "} {
			if strings.HasPrefix(msg, p) {
				msg = strings.TrimPrefix(msg, p)
				msg = strings.TrimPrefix(msg, path+": ")
				msg = strings.TrimPrefix(msg, p)
			}
		}
	}
	return fmt.Errorf("--%s %s: %s", name, path, msg)
}
