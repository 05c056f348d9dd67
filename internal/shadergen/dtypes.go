package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// tensorDType returns the tensor.DType of a reduction kernel's element type.
func (dt *dtype) tensorDType() tensor.DType {
	t, err := tensor.ParseDType(dt.goName)
	if err != nil {
		panic("shadergen: " + err.Error())
	}
	return t
}

// shaderKind returns the kernels' kind ("block", "element", "slice") of an
// operator kind.
func shaderKind(k ops.Kind) string {
	switch k {
	case ops.KindAxis, ops.KindND:
		return "block"
	case ops.KindElements:
		return "element"
	case ops.KindCache:
		return "cache"
	}
	return "slice"
}

// kindReductions lists, in the order of ops.Reduction, the reductions that
// some operator of the kernels' kind takes on dt, as package ops states
// them (Op.Reductions, Reduction.Accepts).
func kindReductions(kind string, dt *dtype) []string {
	t := dt.tensorDType()
	taken := map[ops.Reduction]bool{}
	for _, op := range ops.All() {
		if shaderKind(op.Kind) != kind {
			continue
		}
		for _, r := range op.Reductions {
			if r != ops.None && r.Accepts(t) {
				taken[r] = true
			}
		}
	}
	var out []string
	for _, r := range abiReductions {
		if taken[r] {
			out = append(out, r.String())
		}
	}
	return out
}

// foldReductions lists the reductions the reduce kernels of dt run: every
// one but none that dt takes.
func foldReductions(dt *dtype) []string {
	var out []string
	for _, r := range abiReductions {
		if r != ops.None && r.Accepts(dt.tensorDType()) {
			out = append(out, r.String())
		}
	}
	return out
}

// glslDTypes renders the element types of the reduction kernels (DT_*,
// numbered in the order of dtypes from 1) and, for the variant's DTYPE,
// NEUTRAL_BITS(r): ops.Reduction.NeutralBits, the bits an element starts
// from under reduction r when use_init_val is false.
func glslDTypes(b *bytes.Buffer) {
	b.WriteString("\n// Element types of the reduction kernels (the DTYPE macro of a variant).\n")
	for i, dt := range dtypes {
		fmt.Fprintf(b, "#define %s %d\n", dt.macro, i+1)
	}
	b.WriteString("\n// NEUTRAL_BITS(r): the bits an element of DTYPE starts from under\n" +
		"// reduction r when use_init_val is false (ops.Reduction.NeutralBits).\n#ifdef DTYPE\n")
	for i, dt := range dtypes {
		t := dt.tensorDType()
		// lit writes a value as a literal: 32-bit, 64-bit, or the low or
		// high word of a 64-bit one.
		lit := func(v uint64, form string) string {
			switch form {
			case "lo":
				return fmt.Sprintf("0x%Xu", uint32(v))
			case "hi":
				return fmt.Sprintf("0x%Xu", uint32(v>>32))
			case "ul":
				return fmt.Sprintf("0x%Xul", v)
			}
			return fmt.Sprintf("0x%Xu", v)
		}
		neutral := func(form string) string {
			expr := lit(ops.None.NeutralBits(t), form)
			for j := len(abiReductions) - 1; j >= 0; j-- {
				if r := abiReductions[j]; r != ops.None {
					expr = fmt.Sprintf("(r) == RED_%s ? %s : %s", strings.ToUpper(r.String()), lit(r.NeutralBits(t), form), expr)
				}
			}
			return expr
		}
		kw := "#elif"
		if i == 0 {
			kw = "#if"
		}
		if dt.size == 8 {
			fmt.Fprintf(b, "%s DTYPE == %s && INT64\n#define NEUTRAL_BITS(r) (%s)\n", kw, dt.macro, neutral("ul"))
			// Without INT64 (common.glsl) a uvec2 of the words, each word
			// chosen on its own: Mesa's drivers mis-evaluate a
			// specialization-constant select of vectors, which took the
			// high word from the wrong operand.
			fmt.Fprintf(b, "#elif DTYPE == %s\n#define NEUTRAL_BITS(r) uvec2(%s, %s)\n", dt.macro, neutral("lo"), neutral("hi"))
			continue
		}
		fmt.Fprintf(b, "%s DTYPE == %s\n#define NEUTRAL_BITS(r) (%s)\n", kw, dt.macro, neutral("u"))
	}
	b.WriteString("#endif\n#endif\n")
}
