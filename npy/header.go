package npy

import (
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"github.com/gpuscatter/gpuscatter/tensor"
)

// ErrFormat is wrapped by every error about a malformed file: bad magic, an
// unknown version, a header that is not the dict literal NumPy writes, or a
// payload whose length contradicts the header.
var ErrFormat = errors.New("npy: malformed file")

// ErrUnsupported is wrapped by every error about a valid NPY file (or a
// tensor) that this package does not handle: object arrays, structured,
// void and datetime dtypes, long doubles, and bfloat16 on write.
var ErrUnsupported = errors.New("npy: unsupported array")

const (
	magic = "\x93NUMPY"
	// maxHeaderLen caps the header length field before the header is read.
	maxHeaderLen = 1 << 20
	// maxRank caps the number of dimensions. NumPy itself stops at 64; the
	// cap keeps any shape's canonical header well under maxHeaderLen, so
	// every file Read accepts can be written back.
	maxRank = 32768
	// align is the multiple of bytes at which the payload starts.
	align = 64
)

// npyError is the error type of this package: a message that names what is
// wrong, the sentinel it wraps and, for file functions, the path.
type npyError struct {
	kind error
	path string
	msg  string
}

func (e *npyError) Error() string {
	if e.path != "" {
		return "npy: " + e.path + ": " + e.msg
	}
	return "npy: " + e.msg
}

func (e *npyError) Unwrap() error { return e.kind }

func formatErr(format string, args ...any) error {
	return &npyError{kind: ErrFormat, msg: fmt.Sprintf(format, args...)}
}

func unsupportedErr(format string, args ...any) error {
	return &npyError{kind: ErrUnsupported, msg: fmt.Sprintf(format, args...)}
}

// wrapErr returns err, from the reader, writer or file system, saying what
// was being done; errors.Is still sees err.
func wrapErr(err error, format string, args ...any) error {
	return &npyError{kind: err, msg: fmt.Sprintf(format, args...) + ": " + err.Error()}
}

// withPath returns err naming path.
func withPath(path string, err error) error {
	if err == nil {
		return nil
	}
	var ne *npyError
	if errors.As(err, &ne) && ne.path == "" {
		c := *ne
		c.path = path
		return &c
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return fmt.Errorf("npy: %w", err)
	}
	return fmt.Errorf("npy: %s: %w", path, err)
}

// header is the parsed header dict.
type header struct {
	descr   string
	fortran bool
	shape   []int
}

// hparser parses the header dict: a Python dict literal with the keys
// 'descr', 'fortran_order' and 'shape', whose values are a string, a bool
// and a tuple of non-negative integers.
type hparser struct {
	s   []byte
	pos int
}

func (p *hparser) fail(format string, args ...any) error {
	return formatErr("header: %s at offset %d (%s)", fmt.Sprintf(format, args...), p.pos, p.near())
}

// near describes the text at the current position for error messages.
func (p *hparser) near() string {
	if p.pos >= len(p.s) {
		return "end of header"
	}
	rest := p.s[p.pos:]
	if len(rest) > 24 {
		return "near " + strconv.Quote(string(rest[:24])) + "..."
	}
	return "near " + strconv.Quote(string(rest))
}

func (p *hparser) space() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r', '\f':
			p.pos++
		default:
			return
		}
	}
}

func (p *hparser) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *hparser) eat(c byte) bool {
	if p.pos < len(p.s) && p.s[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// str parses a single- or double-quoted string. The only escapes taken are
// \\, \' and \".
func (p *hparser) str(what string) (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", p.fail("expected a quoted string for %s", what)
	}
	start := p.pos
	p.pos++
	var b []byte
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == q:
			p.pos++
			return string(b), nil
		case c == '\\':
			if p.pos+1 < len(p.s) {
				switch e := p.s[p.pos+1]; e {
				case '\\', '\'', '"':
					b = append(b, e)
					p.pos += 2
					continue
				}
			}
			return "", p.fail("unsupported escape in string for %s", what)
		case c == '\n' || c == '\r':
			return "", p.fail("string for %s is not closed before the end of the line", what)
		default:
			b = append(b, c)
			p.pos++
		}
	}
	p.pos = start
	return "", p.fail("string for %s is not closed", what)
}

func (p *hparser) boolean() (bool, error) {
	for _, w := range [...]struct {
		lit string
		v   bool
	}{{"True", true}, {"False", false}} {
		end := p.pos + len(w.lit)
		if end <= len(p.s) && string(p.s[p.pos:end]) == w.lit && (end == len(p.s) || !isWordByte(p.s[end])) {
			p.pos = end
			return w.v, nil
		}
	}
	return false, p.fail("'fortran_order' must be True or False")
}

// dim parses dimension i of the shape: a decimal integer without leading
// zeros, optionally with the 'L' suffix that Python 2 wrote.
func (p *hparser) dim(i int) (int, error) {
	start := p.pos
	neg := p.eat('-')
	digits := p.pos
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	lit := string(p.s[digits:p.pos])
	if lit == "" {
		p.pos = start
		return 0, p.fail("expected an integer for shape dimension %d", i)
	}
	p.eat('L')
	if p.pos < len(p.s) && isWordByte(p.s[p.pos]) {
		p.pos = start
		return 0, p.fail("shape dimension %d is not a plain integer", i)
	}
	if len(lit) > 1 && lit[0] == '0' {
		p.pos = start
		return 0, p.fail("shape dimension %d (%s) has a leading zero", i, lit)
	}
	v, err := strconv.ParseInt(lit, 10, 0)
	if err != nil {
		p.pos = start
		return 0, p.fail("shape dimension %d (%s) is too large", i, lit)
	}
	if neg && v != 0 {
		p.pos = start
		return 0, p.fail("shape dimension %d is negative (-%s)", i, lit)
	}
	return int(v), nil
}

// tuple parses the shape: (), (n,) or (n, m, ...) with an optional
// trailing comma.
func (p *hparser) tuple() ([]int, error) {
	if !p.eat('(') {
		return nil, p.fail("'shape' must be a tuple such as (2, 3)")
	}
	shape := []int{}
	comma := false
	for {
		p.space()
		if p.eat(')') {
			if len(shape) == 1 && !comma {
				p.pos--
				return nil, p.fail("'shape' (%d) is an integer, not a tuple; a one-dimensional shape is written (%d,)", shape[0], shape[0])
			}
			return shape, nil
		}
		if len(shape) > 0 && !comma {
			return nil, p.fail("expected ',' or ')' in 'shape'")
		}
		if len(shape) == maxRank {
			return nil, unsupportedErr("header: 'shape' has more than %d dimensions", maxRank)
		}
		d, err := p.dim(len(shape))
		if err != nil {
			return nil, err
		}
		shape = append(shape, d)
		p.space()
		comma = p.eat(',')
	}
}

// parseHeader parses the header dict literal.
func parseHeader(b []byte) (header, error) {
	p := &hparser{s: b}
	var h header
	keys := [...]string{"descr", "fortran_order", "shape"}
	var seen [len(keys)]bool
	p.space()
	if !p.eat('{') {
		return h, p.fail("expected '{' to open the header dict")
	}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		keyPos := p.pos
		key, err := p.str("a dict key")
		if err != nil {
			return h, err
		}
		k := -1
		for i, name := range keys {
			if key == name {
				k = i
			}
		}
		if k < 0 {
			p.pos = keyPos
			return h, p.fail("unknown key %q (want 'descr', 'fortran_order' and 'shape')", key)
		}
		if seen[k] {
			p.pos = keyPos
			return h, p.fail("duplicate key %q", key)
		}
		seen[k] = true
		p.space()
		if !p.eat(':') {
			return h, p.fail("expected ':' after key %q", key)
		}
		p.space()
		switch k {
		case 0:
			if c := p.peek(); c == '[' || c == '{' {
				return h, unsupportedErr("header: structured dtype ('descr' lists fields); only plain dtypes are supported")
			}
			h.descr, err = p.str("'descr'")
		case 1:
			h.fortran, err = p.boolean()
		case 2:
			h.shape, err = p.tuple()
		}
		if err != nil {
			return h, err
		}
		p.space()
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			break
		}
		return h, p.fail("expected ',' or '}' after the value of %q", key)
	}
	p.space()
	if p.pos != len(p.s) {
		return h, p.fail("unexpected data after the header dict")
	}
	var missing []string
	for i, name := range keys {
		if !seen[i] {
			missing = append(missing, "'"+name+"'")
		}
	}
	if missing != nil {
		return h, formatErr("header: dict lacks key %s", strings.Join(missing, " and "))
	}
	return h, nil
}

// dtypeSpec is a parsed descr.
type dtypeSpec struct {
	dt    tensor.DType
	elem  int  // bytes per element in the file
	unit  int  // byte-swap unit: one scalar, a complex component or a U code unit
	swap  bool // the payload is big-endian
	kind  byte // 'U' or 'S' for strings, else 0
	width int  // string width in code units
}

// parseSize parses the item size of a descr.
func parseSize(s string) (int, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > tensor.MaxBytes {
		return 0, false
	}
	return int(n), true
}

// parseDescr maps a descr such as '<f4' onto a tensor dtype.
func parseDescr(s string) (dtypeSpec, error) {
	var d dtypeSpec
	if s == "" {
		return d, formatErr("header: 'descr' is empty")
	}
	order, rest := byte('='), s
	switch s[0] {
	case '<', '>', '|', '=':
		order, rest = s[0], s[1:]
	}
	if rest == "" {
		return d, formatErr("descr %q has no type code", s)
	}
	kind, size := rest[0], rest[1:]
	switch kind {
	case 'O':
		return d, unsupportedErr("descr %q is an object array (pickled Python objects), which is not supported", s)
	case 'V':
		return d, unsupportedErr("descr %q is a void (raw record) dtype, which is not supported", s)
	case 'M', 'm':
		return d, unsupportedErr("descr %q is a datetime or timedelta dtype, which is not supported", s)
	}
	n, ok := parseSize(size)
	if !ok {
		return d, formatErr("descr %q has a malformed item size %q", s, size)
	}
	d.elem, d.unit = n, n
	switch kind {
	case 'b':
		if n == 1 {
			d.dt = tensor.Bool
		}
	case 'i':
		d.dt = map[int]tensor.DType{1: tensor.Int8, 2: tensor.Int16, 4: tensor.Int32, 8: tensor.Int64}[n]
	case 'u':
		d.dt = map[int]tensor.DType{1: tensor.Uint8, 2: tensor.Uint16, 4: tensor.Uint32, 8: tensor.Uint64}[n]
	case 'f':
		switch n {
		case 2:
			d.dt = tensor.Float16
		case 4:
			d.dt = tensor.Float32
		case 8:
			d.dt = tensor.Float64
		case 10, 12, 16:
			return d, unsupportedErr("descr %q is an extended-precision float (long double), which is not supported", s)
		}
	case 'c':
		switch n {
		case 8:
			d.dt, d.unit = tensor.Complex64, 4
		case 16:
			d.dt, d.unit = tensor.Complex128, 8
		case 20, 24, 32:
			return d, unsupportedErr("descr %q is an extended-precision complex (long double), which is not supported", s)
		}
	case 'U', 'S':
		if n == 0 {
			return d, formatErr("descr %q is a zero-width string dtype", s)
		}
		d.dt, d.kind, d.width = tensor.String, kind, n
		if kind == 'U' {
			if n > tensor.MaxBytes/4 {
				return d, formatErr("descr %q: a string of %d code points is larger than 1 TiB", s, n)
			}
			d.elem, d.unit = 4*n, 4
		} else {
			d.unit = 1
		}
	default:
		return d, formatErr("descr %q has unknown type code %q", s, kind)
	}
	if d.dt == tensor.Invalid {
		return d, formatErr("descr %q: type code %q does not come in %d-byte items", s, kind, n)
	}
	d.swap = order == '>' && d.unit > 1
	return d, nil
}

// layout is everything the header says about the payload.
type layout struct {
	header
	spec   dtypeSpec
	count  int   // number of elements
	size   int   // payload bytes
	offset int64 // bytes before the payload
}

// pyShape formats a shape the way Python prints a tuple, without spaces:
// (), (3,), (2,3).
func pyShape(shape []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(d))
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// exactProduct returns the product of shape and factor as a decimal string.
func exactProduct(shape []int, factor int) string {
	p := big.NewInt(int64(factor))
	for _, d := range shape {
		p.Mul(p, big.NewInt(int64(d)))
	}
	return p.String()
}

// newLayout checks the header's shape and dtype and sizes the payload.
func newLayout(h header, offset int64) (*layout, error) {
	spec, err := parseDescr(h.descr)
	if err != nil {
		return nil, err
	}
	l := &layout{header: h, spec: spec, offset: offset}
	n, err := tensor.NumElements(h.shape)
	if err != nil {
		count := exactProduct(h.shape, 1)
		if count == "0" {
			// A zero dimension after dimensions that already multiply
			// past the limit.
			return nil, formatErr("header shape %s is not a valid tensor shape: %v", pyShape(h.shape), err)
		}
		return nil, formatErr("header claims shape %s of %s (%s elements, %s bytes), more than the 2^40-element tensor limit",
			pyShape(h.shape), h.descr, count, exactProduct(h.shape, spec.elem))
	}
	hi, lo := bits.Mul64(uint64(n), uint64(spec.elem))
	if hi != 0 || lo > tensor.MaxBytes {
		return nil, formatErr("header claims shape %s of %s (%s bytes), more than the %d-byte tensor limit",
			pyShape(h.shape), h.descr, exactProduct(h.shape, spec.elem), uint64(tensor.MaxBytes))
	}
	l.count, l.size = n, int(lo)
	return l, nil
}

// claim describes the payload the header promises, for error messages.
func (l *layout) claim() string {
	return fmt.Sprintf("header claims shape %s of %s (%d bytes)", pyShape(l.shape), l.descr, l.size)
}

// encodeHeader returns the preamble and padded header dict for descr and
// shape: version 1.0 when it fits, else 2.0.
func encodeHeader(descr string, shape []int) []byte {
	var d strings.Builder
	d.WriteString("{'descr': '")
	d.WriteString(descr)
	d.WriteString("', 'fortran_order': False, 'shape': (")
	for i, n := range shape {
		if i > 0 {
			d.WriteString(", ")
		}
		d.WriteString(strconv.Itoa(n))
	}
	if len(shape) == 1 {
		d.WriteByte(',')
	}
	d.WriteString("), }")
	dict := d.String()

	major, prefix := byte(1), 10
	hlen := len(dict) + 1 // the closing newline
	pad := (align - (prefix+hlen)%align) % align
	if hlen+pad > 0xffff {
		major, prefix = 2, 12
		pad = (align - (prefix+hlen)%align) % align
	}
	total := hlen + pad
	out := make([]byte, 0, prefix+total)
	out = append(out, magic...)
	out = append(out, major, 0)
	if major == 1 {
		out = append(out, byte(total), byte(total>>8))
	} else {
		out = append(out, byte(total), byte(total>>8), byte(total>>16), byte(total>>24))
	}
	out = append(out, dict...)
	for range pad {
		out = append(out, ' ')
	}
	return append(out, '\n')
}
