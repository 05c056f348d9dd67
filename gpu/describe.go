//go:build cgo

package gpu

import (
	"fmt"
	"strings"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// path names the way the call runs: "data" (nothing to do on the device),
// "resolve" (no updates: the indices are checked only), the reduction's
// path (Stats.Reduction), or for reduction none "copy" (copy regions),
// "walk", "gather", "owner" (owner words), "table" (the last-writer
// table in workgroup memory), "later" (updates look at the
// later ones along J) or "scatter" (updates cannot collide).
func (pl *callPlan) path() string {
	j := pl.j
	switch {
	case pl.hostOnly():
		return "data"
	case j.updates == 0:
		return "resolve"
	case pl.reduction != "":
		return pl.reduction
	case j.copies:
		return "copy"
	case j.walk:
		return "walk"
	case j.gather:
		return "gather"
	case j.flags&flagOwner != 0:
		return "owner"
	case j.flags&flagTable != 0:
		return "table"
	case j.flags&flagLater != 0:
		return "later"
	}
	return "scatter"
}

// String describes the call: its operator and path, its tensors, and
// every pass with its kernel, positions, run, invocations, arguments and
// dispatches.
func (pl *callPlan) String() string {
	var sb strings.Builder
	p, j := pl.p, pl.j
	fmt.Fprintf(&sb, "%s %v%s", p.Op.Name, p.DType, tensor.FormatShape(p.Shape))
	if p.Reduction != ops.None {
		fmt.Fprintf(&sb, " reduction %s", p.ReductionName())
	}
	fmt.Fprintf(&sb, ": %s, ", pl.path())
	switch {
	case j.direct && j.check:
		sb.WriteString("indices checked by resolve and read raw by the scatter, ")
	case j.direct:
		sb.WriteString("indices checked by the scatter, ")
	}
	fmt.Fprintf(&sb, "%d-bit positions, ", j.posBits)
	if j.noInt64 {
		sb.WriteString("32-bit baseline (no shaderInt64), ")
	}
	fmt.Fprintf(&sb, "%d-byte units, chunks of 2^%d bytes, flags %#x\n", j.elemBytes, pl.shift, pl.flags)
	// The bytes each tensor takes on the device, as PlanNeeds.Tensors
	// lists them.
	var ts []string
	for _, t := range pl.tensorNeeds() {
		ts = append(ts, fmt.Sprintf("%s %d", t.Name, t.Bytes))
	}
	if len(ts) == 0 {
		sb.WriteString("  tensors: none\n")
	} else {
		fmt.Fprintf(&sb, "  tensors: %s bytes\n", strings.Join(ts, ", "))
	}
	for i := range pl.passes {
		fmt.Fprintf(&sb, "  %2d %s\n", i+1, pl.passes[i].String())
	}
	if len(pl.more) > 0 {
		what := "the longest list the first fold finds"
		if pl.j.red != nil && pl.j.red.bucket {
			what = "the bucket the first fold leaves with the most updates"
		}
		fmt.Fprintf(&sb, "  then up to %d further fold passes of %d positions, as many as %s needs\n",
			len(pl.more), pl.more[0].n, what)
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// String describes one pass.
func (ps *pass) String() string {
	label := ps.label
	if label == "" {
		label = "-"
	}
	switch ps.kind {
	case passFill:
		if ps.once {
			return fmt.Sprintf("%-13s fill %s, on their first use only: every call leaves them clear", label, tensorNames[ps.slot])
		}
		return fmt.Sprintf("%-13s fill %s", label, tensorNames[ps.slot])
	case passCopyData:
		return fmt.Sprintf("%-13s copy data into the output, %d bytes", label, ps.read)
	case passCopyRuns:
		n := 0
		for _, c := range ps.copies {
			n += len(c.regions)
		}
		return fmt.Sprintf("%-13s %d copy commands, %d regions, %d bytes", label, len(ps.copies), n, ps.read)
	}
	plural := "es"
	if len(ps.dispatches) == 1 {
		plural = ""
	}
	s := fmt.Sprintf("%-13s %s: %d positions, run %d, %d invocations, %d dispatch%s", label, variantName(ps), ps.n, ps.run,
		ps.invocations(), len(ps.dispatches), plural)
	if len(ps.dispatches) > 0 {
		s += fmt.Sprintf(" %v", ps.dispatches[0].groups)
	}
	if ps.args != nil {
		s += fmt.Sprintf(", args %v", ps.args)
	}
	if ps.chain > 0 {
		s += fmt.Sprintf(", segment %d of at most %d steps", ps.seg, ps.chain)
	}
	return s
}
