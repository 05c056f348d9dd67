package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"unicode/utf8"
	"unsafe"

	"github.com/gpuscatter/gpuscatter/hostmem"
	"github.com/gpuscatter/gpuscatter/tensor"
)

const (
	// firstChunk is the first buffer Read allocates for a payload of
	// unknown availability; later chunks double up to maxChunk.
	firstChunk = 1 << 20
	maxChunk   = 64 << 20
)

// Read reads one .npy array from r and returns it as a row-major tensor.
//
// Read consumes exactly the array: it stops at the end of the payload, so
// arrays written back to back can be read in turn. Because the length of r
// is unknown, the payload buffer grows in bounded chunks as data arrives and
// a header that promises more than r holds fails with ErrFormat without a
// large allocation.
func Read(r io.Reader) (*tensor.Tensor, error) {
	l, err := readHeader(r)
	if err != nil {
		return nil, err
	}
	data, err := readChunked(r, l)
	if err != nil {
		return nil, err
	}
	return l.build(data)
}

// ReadFile reads the .npy file at path. The payload size the header claims
// must equal the rest of the file exactly (a short file or trailing bytes is
// ErrFormat), which is checked before any payload memory is allocated; the
// payload is then read in one piece straight into Tensor.Data. Something
// that is not a regular file (a pipe, a device) is read as Read reads a
// stream. Errors name path.
func ReadFile(path string) (*tensor.Tensor, error) {
	t, err := readFile(path)
	if err != nil {
		return nil, withPath(path, err)
	}
	return t, nil
}

func readFile(path string) (*tensor.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return Read(f)
	}
	l, err := readHeader(f)
	if err != nil {
		return nil, err
	}
	if follow := st.Size() - l.offset; follow != int64(l.size) {
		if follow > int64(l.size) {
			return nil, formatErr("%s but %d bytes follow (%d trailing bytes)", l.claim(), follow, follow-int64(l.size))
		}
		return nil, formatErr("%s but only %d bytes follow", l.claim(), follow)
	}
	if err := hostmem.Check(l.need()); err != nil {
		return nil, err
	}
	data := make([]byte, l.size)
	if n, err := io.ReadFull(f, data); err != nil {
		return nil, payloadErr(l, n, err)
	}
	var extra [1]byte
	if n, _ := f.Read(extra[:]); n > 0 {
		return nil, formatErr("%s but the file grew past them while being read", l.claim())
	}
	return l.build(data)
}

// need is the memory reading the payload takes at its peak: the payload,
// and what build makes from it (strings, or a transposed copy).
func (l *layout) need() uint64 {
	n := uint64(l.size)
	switch {
	case l.spec.dt == tensor.String:
		n += uint64(l.count)*16 + uint64(l.size)
	case l.fortran && len(l.shape) > 1:
		n += uint64(l.size)
	}
	return n
}

// ioErr turns an error from the underlying reader into one of ours: an early
// end of data is ErrFormat with the given message; any other error is
// returned wrapped, saying where reading stopped.
func ioErr(err error, where string, format string, args ...any) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return formatErr(format, args...)
	}
	return wrapErr(err, "reading the %s", where)
}

func payloadErr(l *layout, n int, err error) error {
	return ioErr(err, "payload", "%s but only %d bytes follow", l.claim(), n)
}

// readHeader reads the magic, version and header dict, and checks what the
// header says.
func readHeader(r io.Reader) (*layout, error) {
	var pre [12]byte
	n, err := io.ReadFull(r, pre[:8])
	if m := min(n, len(magic)); string(pre[:m]) != magic[:m] {
		if string(pre[:min(n, 4)]) == "PK\x03\x04" {
			return nil, formatErr("bad magic %q: this is a zip archive (.npz?), not an .npy file", pre[:n])
		}
		return nil, formatErr("bad magic %q: not an .npy file (want %q)", pre[:m], magic)
	}
	if err != nil {
		if n == 0 && err == io.EOF {
			return nil, formatErr("empty input: no .npy magic")
		}
		return nil, ioErr(err, "magic", "input ends after %d bytes, inside the 8-byte magic and version", n)
	}
	major, minor := pre[6], pre[7]
	var hlen, lenBytes int
	switch {
	case major == 1 && minor == 0:
		lenBytes = 2
	case (major == 2 || major == 3) && minor == 0:
		lenBytes = 4
	default:
		return nil, formatErr("unknown format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}
	if n, err := io.ReadFull(r, pre[8:8+lenBytes]); err != nil {
		return nil, ioErr(err, "header length", "input ends inside the %d-byte header length field (%d bytes of it present)", lenBytes, n)
	}
	if lenBytes == 2 {
		hlen = int(binary.LittleEndian.Uint16(pre[8:]))
	} else {
		v := binary.LittleEndian.Uint32(pre[8:])
		if v > maxHeaderLen {
			return nil, formatErr("header length %d is over the %d-byte limit", v, maxHeaderLen)
		}
		hlen = int(v)
	}
	if hlen == 0 {
		return nil, formatErr("header length is 0: no header dict")
	}
	hdr := make([]byte, hlen)
	if n, err := io.ReadFull(r, hdr); err != nil {
		return nil, ioErr(err, "header", "input ends inside the header: its length field says %d bytes but only %d follow", hlen, n)
	}
	if major == 3 && !utf8.Valid(hdr) {
		return nil, formatErr("version 3.0 header is not valid UTF-8")
	}
	h, err := parseHeader(hdr)
	if err != nil {
		return nil, err
	}
	return newLayout(h, int64(8+lenBytes+hlen))
}

// readChunked reads the payload from a stream of unknown length. Chunks
// start at firstChunk and double up to maxChunk, so memory grows with the
// data that actually arrives, not with what the header claims.
func readChunked(r io.Reader, l *layout) ([]byte, error) {
	if l.size <= firstChunk {
		data := make([]byte, l.size)
		if n, err := io.ReadFull(r, data); err != nil {
			return nil, payloadErr(l, n, err)
		}
		return data, nil
	}
	var chunks [][]byte
	got, step := 0, firstChunk
	for got < l.size {
		// The header is not trusted: memory is checked as data arrives.
		if err := hostmem.Check(uint64(min(step, l.size-got))); err != nil {
			return nil, err
		}
		c := make([]byte, min(step, l.size-got))
		n, err := io.ReadFull(r, c)
		got += n
		if err != nil {
			return nil, payloadErr(l, got, err)
		}
		chunks = append(chunks, c)
		step = min(2*step, maxChunk)
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	if err := hostmem.Check(uint64(l.size)); err != nil {
		return nil, err
	}
	data := make([]byte, 0, l.size)
	for i, c := range chunks {
		data = append(data, c...)
		chunks[i] = nil
	}
	return data, nil
}

// build turns the raw payload into a row-major tensor: strings are decoded,
// big-endian data is swapped in place, bools are normalised to 0/1 and
// Fortran-order data is transposed.
func (l *layout) build(data []byte) (*tensor.Tensor, error) {
	t := &tensor.Tensor{DType: l.spec.dt, Shape: l.shape}
	transpose := l.fortran && len(l.shape) > 1 && l.count > 0
	if l.spec.dt == tensor.String {
		var s []string
		var err error
		if l.spec.kind == 'U' {
			s, err = decodeUnicode(data, l.count, l.spec.width, l.spec.swap)
		} else {
			s, err = decodeBytes(data, l.count, l.spec.width)
		}
		if err != nil {
			return nil, err
		}
		if transpose {
			dst := make([]string, len(s))
			fortranToC(dst, s, l.shape)
			s = dst
		}
		t.Strings = s
		t.StringFormat = tensor.StringFormat{Bytes: l.spec.kind == 'S', Width: l.spec.width}
		return t, nil
	}
	if l.spec.swap {
		swapBytes(data, l.spec.unit)
	}
	if l.spec.dt == tensor.Bool {
		for i, b := range data {
			if b > 1 {
				data[i] = 1
			}
		}
	}
	if transpose {
		dst := make([]byte, len(data))
		switch l.spec.elem {
		case 1:
			fortranToC(dst, data, l.shape)
		case 2:
			fortranToC(as[uint16](dst), as[uint16](data), l.shape)
		case 4:
			fortranToC(as[uint32](dst), as[uint32](data), l.shape)
		case 8:
			fortranToC(as[uint64](dst), as[uint64](data), l.shape)
		case 16:
			fortranToC(as[[2]uint64](dst), as[[2]uint64](data), l.shape)
		default:
			panic(fmt.Sprintf("npy: no transpose for %d-byte elements", l.spec.elem))
		}
		data = dst
	}
	t.Data = data
	return t, nil
}

// as views b as a []T; len(b) must be a multiple of the size of T.
func as[T any](b []byte) []T {
	var z T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(z)))
}

// swapBytes reverses the byte order of every unit-byte scalar in b.
func swapBytes(b []byte, unit int) {
	switch unit {
	case 2:
		s := as[uint16](b)
		for i, v := range s {
			s[i] = bits.ReverseBytes16(v)
		}
	case 4:
		s := as[uint32](b)
		for i, v := range s {
			s[i] = bits.ReverseBytes32(v)
		}
	case 8:
		s := as[uint64](b)
		for i, v := range s {
			s[i] = bits.ReverseBytes64(v)
		}
	}
}

// fortranToC copies src, the elements of an array of the given shape in
// column-major order, into dst in row-major order. Every dimension is
// positive.
func fortranToC[T any](dst, src []T, shape []int) {
	rank := len(shape)
	cs := tensor.Strides(shape)
	coord := make([]int, rank)
	n0, s0 := shape[0], cs[0]
	off := 0
	// src runs with axis 0 fastest: copy one axis-0 line at a time, then
	// advance the coordinates of the remaining axes.
	for i := 0; i < len(src); i += n0 {
		d := off
		for _, v := range src[i : i+n0] {
			dst[d] = v
			d += s0
		}
		for k := 1; k < rank; k++ {
			coord[k]++
			off += cs[k]
			if coord[k] < shape[k] {
				break
			}
			off -= coord[k] * cs[k]
			coord[k] = 0
		}
	}
}

// decodeUnicode decodes n fixed-width UTF-32 strings of width code units,
// dropping trailing NULs.
func decodeUnicode(data []byte, n, width int, big bool) ([]string, error) {
	out := make([]string, n)
	order := binary.ByteOrder(binary.LittleEndian)
	if big {
		order = binary.BigEndian
	}
	stride := 4 * width
	var buf []byte
	for i := range out {
		el := data[i*stride : (i+1)*stride]
		end := width
		for end > 0 && order.Uint32(el[4*(end-1):]) == 0 {
			end--
		}
		buf = buf[:0]
		for j := range end {
			c := order.Uint32(el[4*j:])
			switch {
			case c < utf8.RuneSelf:
				buf = append(buf, byte(c))
			case c > utf8.MaxRune || c >= 0xD800 && c <= 0xDFFF:
				return nil, formatErr("string element %d holds 0x%X at code unit %d, which is not a Unicode scalar value", i, c, j)
			default:
				buf = utf8.AppendRune(buf, rune(c))
			}
		}
		out[i] = string(buf)
	}
	return out, nil
}

// decodeBytes decodes n fixed-width byte strings, dropping trailing NULs.
// They are bytes, as numpy's 'S' type holds them: a Go string carries any
// bytes, and valid UTF-8 or not, they are written back unchanged.
func decodeBytes(data []byte, n, width int) ([]string, error) {
	out := make([]string, n)
	for i := range out {
		el := data[i*width : (i+1)*width]
		end := width
		for end > 0 && el[end-1] == 0 {
			end--
		}
		out[i] = string(el[:end])
	}
	return out, nil
}
