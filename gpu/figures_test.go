//go:build cgo

package gpu

import (
	"bufio"
	"bytes"
	"embed"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuscatter/gpuscatter/bench"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/vk"
)

// update rewrites testdata/plan_figures.txt from the planner: run
//
//	go test ./gpu -run TestPlanFigures -update
//
// after a change that lowers a cost, and commit the table with it.
var update = flag.Bool("update", false, "rewrite testdata/plan_figures.txt with the figures the planner gives")

// figuresFile is the table TestPlanFigures pins.
const figuresFile = "testdata/plan_figures.txt"

// figuresData holds the table and the device descriptions in the test
// binary, so that the qualification kit, which runs it outside the source
// tree, checks them too.
//
//go:embed testdata/plan_figures.txt testdata/facts/*.json
var figuresData embed.FS

// figureScales are the bench scales the table pins: the 0.25 and
// full size.
var figureScales = []float64{0.25, 1}

// planFigure is one row of the table: a bench workload planned for one
// device, in one mode, at one scale.
type planFigure struct {
	device, mode, scale, workload string
	passes, dispatches            int
	traffic                       uint64 // device bytes read and written
	ratio                         string // traffic over the workload's one-pass bytes (bench's bytes), %.2f
	memory                        uint64 // device memory
	err                           string // the planner's refusal, instead of the figures
}

// key names the row.
func (f planFigure) key() string {
	return f.device + " " + f.mode + " " + f.scale + " " + f.workload
}

// line is the row as the table writes it.
func (f planFigure) line() string {
	head := fmt.Sprintf("%-9s %-22s %-5s %-12s", f.device, f.mode, f.scale, f.workload)
	if f.err != "" {
		return head + " error " + f.err
	}
	return fmt.Sprintf("%s %6d %10d %14d %8s %12d", head, f.passes, f.dispatches, f.traffic, f.ratio, f.memory)
}

// parseFigure reads a row back.
func parseFigure(line string) (planFigure, error) {
	w := strings.Fields(line)
	if len(w) < 5 {
		return planFigure{}, fmt.Errorf("%q: too few fields", line)
	}
	f := planFigure{device: w[0], mode: w[1], scale: w[2], workload: w[3]}
	if w[4] == "error" {
		f.err = strings.Join(w[5:], " ")
		return f, nil
	}
	if len(w) != 9 {
		return planFigure{}, fmt.Errorf("%q: want 9 fields", line)
	}
	var err error
	num := func(s string) uint64 {
		n, e := strconv.ParseUint(s, 10, 64)
		if e != nil && err == nil {
			err = fmt.Errorf("%q: %w", line, e)
		}
		return n
	}
	f.passes, f.dispatches, f.traffic, f.ratio, f.memory = int(num(w[4])), int(num(w[5])), num(w[6]), w[7], num(w[8])
	return f, err
}

// figureDevices reads the device descriptions the table is planned for:
// lavapipe's, and a discrete GPU's (an NVIDIA H100's, as the kit's
// devices.json recorded it on that machine), each one element of
// 'gpuscatter devices --json'.
func figureDevices(t *testing.T) map[string]vk.DeviceInfo {
	devs := map[string]vk.DeviceInfo{}
	for _, name := range []string{"lavapipe", "discrete"} {
		b, err := figuresData.ReadFile("testdata/facts/" + name + ".json")
		require.NoError(t, err)
		info, err := vk.ParseDeviceInfo(b)
		require.NoError(t, err, name)
		devs[name] = info
	}
	return devs
}

// planFigures plans every bench workload for every device, mode and
// scale, in the table's order.
func planFigures(t *testing.T) []planFigure {
	devs := figureDevices(t)
	var out []planFigure
	for _, dev := range []string{"lavapipe", "discrete"} {
		for _, mode := range []string{"default", "deterministic", "default/in-place", "deterministic/in-place", "default/in-place/skip"} {
			opts := Options{Deterministic: strings.HasPrefix(mode, "deterministic")}
			planFor := PlanFor
			if strings.Contains(mode, "/in-place") {
				planFor = PlanInPlaceFor
			}
			for _, scale := range figureScales {
				ws, err := bench.Select(nil, scale, 1)
				require.NoError(t, err)
				for _, w := range ws {
					f := planFigure{device: dev, mode: mode, scale: strconv.FormatFloat(scale, 'g', -1, 64), workload: w.Name}
					req := w.Shapes()
					req.SkipBadIndices = strings.HasSuffix(mode, "/skip")
					p, err := ops.PrepareShapes(req)
					require.NoError(t, err, w.Name)
					n, err := planFor(devs[dev], opts, p)
					if err != nil {
						f.err = strings.ReplaceAll(err.Error(), "\n", " ")
					} else {
						f.passes, f.dispatches, f.traffic, f.memory = len(n.Passes), n.Dispatches, n.TrafficBytes, n.DeviceBytes
						f.ratio = fmt.Sprintf("%.2f", float64(n.TrafficBytes)/float64(max(n.OnePassBytes, 1)))
					}
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// figuresTable writes rows as the table file.
func figuresTable(rows []planFigure) []byte {
	var b bytes.Buffer
	b.WriteString("# The plan of every bench workload (one call of it), as PlanFor gives it for the\n")
	b.WriteString("# devices of testdata/facts, pinned by TestPlanFigures. After a change that\n")
	b.WriteString("# lowers a cost, regenerate it with\n")
	b.WriteString("#   go test ./gpu -run TestPlanFigures -update\n")
	b.WriteString("# mode: default or deterministic, Execute or in place on resident tensors\n")
	b.WriteString("# (PlanInPlaceFor, as a Run or Batch with Out = Data records the call), and\n")
	b.WriteString("# in place with SkipBadIndices (skip);\n")
	b.WriteString("# traffic: device bytes read and written; ratio: traffic over the one-pass\n")
	b.WriteString("# bytes (ops.Plan.OnePassBytes); memory: device bytes.\n")
	fmt.Fprintf(&b, "# %-7s %-22s %-5s %-12s %6s %10s %14s %8s %12s\n", "device", "mode", "scale", "workload", "passes", "dispatches", "traffic", "ratio", "memory")
	for _, r := range rows {
		b.WriteString(r.line() + "\n")
	}
	return b.Bytes()
}

// TestPlanFigures pins the plan figures of every bench workload (passes,
// dispatches, traffic and its ratio to the one-pass bytes, device
// memory) for lavapipe and for a discrete GPU, in both modes, at scales
// 0.25 and 1: a change that raises a cost fails here, naming the
// workload, device and figure; one that lowers a cost fails too until
// the table is regenerated (-update), so the table stays the record.
func TestPlanFigures(t *testing.T) {
	got := planFigures(t)
	if *update {
		require.NoError(t, os.WriteFile(figuresFile, figuresTable(got), 0o644))
		t.Logf("wrote %s: %d rows", figuresFile, len(got))
		return
	}
	f, err := figuresData.Open(figuresFile)
	require.NoError(t, err, "run go test ./gpu -run TestPlanFigures -update to write the table")
	defer f.Close()
	want := map[string]planFigure{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			row, err := parseFigure(line)
			require.NoError(t, err)
			want[row.key()] = row
		}
	}
	require.NoError(t, sc.Err())
	const regen = "go test ./gpu -run TestPlanFigures -update"
	for _, g := range got {
		w, ok := want[g.key()]
		if !assert.True(t, ok, "%s: not in %s; run %s", g.key(), figuresFile, regen) {
			continue
		}
		delete(want, g.key())
		if w.err != "" || g.err != "" {
			assert.Equal(t, w.err, g.err, "%s: the planner's refusal", g.key())
			continue
		}
		for _, c := range []struct {
			name       string
			want, have uint64
		}{
			{"passes", uint64(w.passes), uint64(g.passes)},
			{"dispatches", uint64(w.dispatches), uint64(g.dispatches)},
			{"traffic bytes", w.traffic, g.traffic},
			{"device memory bytes", w.memory, g.memory},
		} {
			switch {
			case c.have > c.want:
				t.Errorf("%s: %s rose from %d to %d (traffic ratio %s, was %s)", g.key(), c.name, c.want, c.have, g.ratio, w.ratio)
			case c.have < c.want:
				t.Errorf("%s: %s fell from %d to %d; record the lower cost with %s", g.key(), c.name, c.want, c.have, regen)
			}
		}
	}
	for k := range want {
		t.Errorf("%s: in %s but no longer a bench workload; run %s", k, figuresFile, regen)
	}
}

// TestInPlaceReductionsAtTheFloor: on the discrete profile at full size, a
// reduction in place on resident tensors (SE-sum-dup, SND-sum-dup,
// SND-max-i32) moves at most its Execute plan's bytes and its indices'
// once more (the check before any write reads them, the scatter reads
// them again as Execute's does), in 2 dispatches; with SkipBadIndices,
// Execute's bytes in 1 dispatch.
func TestInPlaceReductionsAtTheFloor(t *testing.T) {
	info := figureDevices(t)["discrete"]
	ws, err := bench.Select([]string{"SE-sum-dup", "SND-sum-dup", "SND-max-i32"}, 1, 1)
	require.NoError(t, err)
	for _, w := range ws {
		p, err := ops.PrepareShapes(w.Shapes())
		require.NoError(t, err, w.Name)
		ex, err := PlanFor(info, Options{}, p)
		require.NoError(t, err, w.Name)
		in, err := PlanInPlaceFor(info, Options{}, p)
		require.NoError(t, err, w.Name)
		idx := uint64(p.Indices.Len() * p.Indices.DType.Size())
		t.Logf("%s: Execute %d bytes in %d dispatches; in place %d bytes in %d dispatches; indices %d bytes",
			w.Name, ex.TrafficBytes, ex.Dispatches, in.TrafficBytes, in.Dispatches, idx)
		assert.LessOrEqual(t, in.TrafficBytes, ex.TrafficBytes+idx, w.Name)
		assert.Equal(t, 2, in.Dispatches, w.Name)

		// With SkipBadIndices: no pass before the scatter, which checks
		// the indices itself; Execute's traffic in one dispatch.
		req := w.Shapes()
		req.SkipBadIndices = true
		ps, err := ops.PrepareShapes(req)
		require.NoError(t, err, w.Name)
		skip, err := PlanInPlaceFor(info, Options{}, ps)
		require.NoError(t, err, w.Name)
		t.Logf("%s: in place with SkipBadIndices %d bytes in %d dispatches", w.Name, skip.TrafficBytes, skip.Dispatches)
		assert.Equal(t, ex.TrafficBytes, skip.TrafficBytes, w.Name)
		assert.Equal(t, 1, skip.Dispatches, w.Name)
	}
}
