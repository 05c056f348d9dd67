//go:build cgo

package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/gpuscatter/gpuscatter/gpu"
	"github.com/gpuscatter/gpuscatter/internal/gpubench"
	"github.com/gpuscatter/gpuscatter/ops"
)

var warmCommand = &command{
	name:    "warm",
	summary: "compile the GPU pipelines of calls ahead of time, so that their first run does not wait",
	flags:   func() []flagSpec { return newWarmFlags().specs(new(gpuSettings)) },
	details: `Compiles the pipelines the Vulkan backend needs for run's call on these
inputs (read from their headers alone, as plan reads them), or for the
built-in workloads of bench (--workloads, at --scale), and keeps them
where a later process finds them: the first call of a new process then
does not wait for the compiler (on lavapipe, deterministic SE-sum-dup's
first call otherwise spends most of its time there). It warms the
pipelines of the call on host tensors and on resident tensors, in
--deterministic mode when given, compiling on every core. On a CPU
device (lavapipe), which compiles much of a pipeline only at its first
dispatch, it also runs each call once on zero-filled inputs of the same
shapes, which takes the call's memory and time once.

Where they are kept depends on the driver: the project's pipeline cache
file (in the user's cache folder, gpuscatter/), or, for drivers that put
no compiled code in it (Mesa's: lavapipe, radv, anv), the driver's own
shader cache (MESA_SHADER_CACHE_DIR, by default mesa_shader_cache in the
user's cache folder). The line warm prints says which. A second warm of
the same call in a later process with the same cache folder and device
compiles nothing and reports every pipeline there already; where the
driver's own cache is off (MESA_SHADER_CACHE_DISABLE), nothing outlives
the process, and the line says that a later process compiles them again.

Exit status: 0 on success; 1 for invalid input, a call the device cannot
run, or no Vulkan device; 2 for a malformed command line.
`,
	run: warmMain,
}

// warmFlags holds the parsed flags of the warm command: plan's call
// flags, and bench's --workloads and --scale.
type warmFlags struct {
	plan  *planFlags
	bench *benchFlags
}

func newWarmFlags() *warmFlags { return &warmFlags{plan: newPlanFlags(), bench: newBenchFlags()} }

// specs returns --workloads and --scale, then run's flags but --out and
// --backend, with --model; --device and --deterministic set g.
func (f *warmFlags) specs(g *gpuSettings) []flagSpec {
	specs := []flagSpec{
		f.bench.workloads.spec().with("LIST", "a comma list of bench's built-in workloads (case-insensitive) to warm, instead of a call", false),
		f.bench.scale.spec().with("F", "the workloads' size, as bench --scale (0 < F <= 1024); default 1", false),
	}
	for _, s := range f.plan.specs(g) {
		switch s.name {
		case "json", "facts", "in-place", "skip-bad-indices":
			continue
		case "op":
			s.required = false
			s.syn = "[--op NAME|--model FILE.onnx --data FILE.npy ...]"
		case "data", "updates":
			s.required = false
			s.syn = "-"
		}
		specs = append(specs, s)
	}
	return specs
}

// warmMain is the warm command: parse, plan the calls from their shapes,
// open the GPU backend, warm, print what was done.
func warmMain(ctx context.Context, c *cli, args []string) error {
	f := newWarmFlags()
	if err := parseFlags(args, f.specs(&c.gpu)); err != nil {
		return err
	}
	r := f.plan.run
	call := r.op.given || r.data.given || r.updates.given || r.indices.given || f.plan.model.given
	var plans []*ops.Plan
	switch {
	case f.bench.workloads.given && call:
		return usagef("--workloads and a call (--op, --data, ... or --model) are exclusive: warm one or the other")
	case f.bench.scale.given && !f.bench.workloads.given:
		return usagef("--scale applies to --workloads")
	case f.bench.workloads.given:
		ws, err := f.bench.builtins()
		if err != nil {
			return err
		}
		for _, w := range ws {
			p, err := ops.PrepareShapes(w.Shapes())
			if err != nil {
				return fmt.Errorf("workload %s: %w", w.Name, err)
			}
			plans = append(plans, p)
		}
	case call:
		var req ops.Request
		if f.plan.model.given {
			if err := r.modelExcludes(); err != nil {
				return err
			}
			load, err := modelRequest(ctx, r, f.plan.model.value, (*tensorArg).loadShape)
			if err != nil {
				return err
			}
			if req, err = load(); err != nil {
				return err
			}
		} else if err := f.plan.callShapes(&req); err != nil {
			return err
		}
		p, err := ops.PrepareShapes(req)
		if err != nil {
			return err
		}
		plans = append(plans, p)
	default:
		return usagef("nothing to warm: give run's flags (--op NAME --data FILE.npy ...), --model, or --workloads LIST")
	}
	b, err := openGPU(ctx, c.gpu, false)
	if err != nil {
		return gpuOpenError(err)
	}
	defer b.Close()
	g, ok := b.(*gpu.Backend)
	if !ok {
		return fmt.Errorf("backend %s does not compile pipelines", b.Name())
	}
	st, err := g.Warm(ctx, plans...)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(c.stdout, warmLine(st, len(plans), gpubench.Of(g).Device().Info().Name)); err != nil {
		return err
	}
	return g.Close()
}

// warmLine says what Warm did, in one line.
func warmLine(st gpu.WarmStats, calls int, device string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "warm: %d pipelines for %s on %q in %.2f s (%d compiled, %d there already", st.Pipelines, plural(calls, "call"),
		device, st.Took.Seconds(), st.Compiled, st.Pipelines-st.Compiled)
	if st.Ran > 0 {
		fmt.Fprintf(&sb, "; %s run once on zeros, as this device compiles at the first dispatch", plural(st.Ran, "call"))
	}
	sb.WriteString("); ")
	switch {
	case st.NotKept != "":
		fmt.Fprintf(&sb, "%s, so a later process compiles them again", st.NotKept)
	case st.CacheFile == "":
		sb.WriteString("the pipeline cache file is off")
	case st.DriverCache:
		fmt.Fprintf(&sb, "the driver keeps compiled code in its own shader cache (Mesa: MESA_SHADER_CACHE_DIR), not in %s (%d bytes: its header)",
			st.CacheFile, st.CacheBytes)
	default:
		fmt.Fprintf(&sb, "saved to %s (%d bytes)", st.CacheFile, st.CacheBytes)
	}
	return sb.String()
}
