package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gpuscatter/gpuscatter/atomicfile"
	"github.com/gpuscatter/gpuscatter/cost"
)

// WriteTable writes the report as an aligned text table: a header naming
// the devices, one row per workload and backend (a single line for a
// workload skipped on every backend), the device phases under the rows
// that have them, and a footer saying how the figures are computed.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d timed runs after %d warm-up per workload and backend; times are the wall time of Execute.\n", r.Repeats, r.Warmups)
	seen := map[string]bool{}
	for _, x := range r.Results {
		if seen[x.Backend] {
			continue
		}
		seen[x.Backend] = true
		dev := x.Device
		if dev == "cpu" {
			dev = fmt.Sprintf("%s (%d threads)", r.CPU, r.Threads)
		}
		fmt.Fprintf(&b, "%-4s %s\n", x.Backend+":", dev)
	}
	b.WriteByte('\n')

	head := []string{"workload", "backend", "median ms", "min ms", "max ms", "device ms", "MB/pass", "memcpy ms", "GB/s", "memcpy GB/s", "of memcpy", "speedup", "verified", "max diff"}
	rows := [][]string{head}
	notes := map[int][]string{} // row -> lines printed under it
	spans := map[int]string{}   // row -> text spanning the numeric columns
	for i := 0; i < len(r.Results); i++ {
		x := r.Results[i]
		if x.Skipped != "" && strings.HasPrefix(x.Skipped, "skipped:") && r.allSkipped(i) {
			spans[len(rows)] = x.Skipped
			rows = append(rows, []string{x.Workload, "", ""})
			for i+1 < len(r.Results) && r.Results[i+1].Workload == x.Workload {
				i++
			}
			continue
		}
		switch {
		case x.Skipped != "":
			spans[len(rows)] = x.Skipped
			rows = append(rows, []string{x.Workload, x.Backend})
			continue
		case x.Error != "":
			spans[len(rows)] = "error: " + x.Error
			rows = append(rows, []string{x.Workload, x.Backend})
			continue
		}
		// The bytes one pass must move, and the time a memory copy of as
		// many bytes takes: the floor the median is measured against.
		floor := "-"
		if x.MemcpyGBps > 0 {
			floor = ms(time.Duration(float64(x.Bytes) / x.MemcpyGBps))
		}
		row := []string{x.Workload, x.Backend, ms(x.Median), ms(x.Min), ms(x.Max), "-",
			mb(x.Bytes), floor, fixed(x.GBps, 2, 2), fixed(x.MemcpyGBps, 2, 2),
			fixed(100*x.FractionOfMemcpy, 0, 1) + "%", "-", verdict(x), diffText(x.Comparison.MaxAbsDiff)}
		if x.DeviceTime > 0 {
			row[5] = ms(x.DeviceTime)
		}
		if x.Speedup > 0 {
			row[11] = times(x.Speedup)
		}
		if len(x.Phases) > 0 {
			parts := make([]string, len(x.Phases))
			for j, ph := range x.Phases {
				parts[j] = ph.Name + " " + ms(ph.Duration) + " ms"
			}
			notes[len(rows)] = append(notes[len(rows)], "phases: "+strings.Join(parts, ", "))
		}
		if x.DeviceCopyTime > 0 {
			notes[len(rows)] = append(notes[len(rows)], fmt.Sprintf("device copy of the same traffic: %s ms; device time is %s that",
				ms(x.DeviceCopyTime), times(x.DeviceOverCopy)))
		}
		if x.ResidentTime > 0 && x.Calls > 1 {
			notes[len(rows)] = append(notes[len(rows)], fmt.Sprintf("in place on inputs resident on the device: %d calls in one batch, %s ms per batch, %s ms per call, %s the cpu",
				x.Calls, ms(x.ResidentTime), ms(x.ResidentTime/time.Duration(x.Calls)), times(r.speedupOf(x.Workload, x.ResidentTime))))
			if x.Submits > 0 {
				notes[len(rows)] = append(notes[len(rows)], fmt.Sprintf("host round trips per batch: %d submits, %d waits, %d transfer pieces",
					x.Submits, x.Waits, x.TransferPieces))
			}
		} else if x.ResidentTime > 0 {
			notes[len(rows)] = append(notes[len(rows)], fmt.Sprintf("in place on inputs resident on the device: %s ms per call (no host transfers), %s the cpu",
				ms(x.ResidentTime), times(r.speedupOf(x.Workload, x.ResidentTime))))
		}
		if x.PlanPasses > 0 {
			verbs := "passes read and write"
			if x.PlanPasses == 1 {
				verbs = "pass reads and writes"
			}
			dispatches := "dispatches"
			if x.PlanDispatches == 1 {
				dispatches = "dispatch"
			}
			notes[len(rows)] = append(notes[len(rows)], fmt.Sprintf("plan: %d %s %s MB on the device in %d %s, %s the one-pass bytes; %s MB of device memory",
				x.PlanPasses, verbs, mb(x.PlanBytes), x.PlanDispatches, dispatches,
				times(float64(x.PlanBytes)/float64(max(x.OnePassBytes, 1))), mb(x.PlanMemory)))
		}
		if x.ResidentPlanned {
			dispatches := "dispatches"
			if x.ResidentDispatches == 1 {
				dispatches = "dispatch"
			}
			notes[len(rows)] = append(notes[len(rows)], fmt.Sprintf("plan in place on resident tensors: %s MB on the device in %d %s, %s the one-pass bytes",
				mb(x.ResidentPlanBytes), x.ResidentDispatches, dispatches, times(float64(x.ResidentPlanBytes)/float64(max(x.OnePassBytes, 1)))))
		}
		if x.Estimated {
			what := "on the device" + estimateRatio(x.Estimate, x.Median)
			if x.ResidentEstimate > 0 && x.ResidentTime > 0 && (x.ResidentTime != x.Median || x.ResidentEstimate != x.Estimate) {
				// (A decode row is its resident batch: one estimate.)
				what += fmt.Sprintf(", %s ms resident%s", ms(x.ResidentEstimate), estimateRatio(x.ResidentEstimate, x.ResidentTime))
			}
			notes[len(rows)] = append(notes[len(rows)], fmt.Sprintf("estimate: %s ms %s, %s ms on the cpu; --backend auto runs the host calls on the %s",
				ms(x.Estimate), what, ms(x.CPUEstimate), x.AutoChoice))
		}
		if x.Counted {
			hottest := ""
			if x.HottestUpdates > 0 && x.AtomicsMaxAddress > 0 {
				hottest = fmt.Sprintf(", 1/%.1f of the hottest target's %d updates", float64(x.HottestUpdates)/float64(x.AtomicsMaxAddress), x.HottestUpdates)
			}
			notes[len(rows)] = append(notes[len(rows)], fmt.Sprintf("atomics: %d global atomics in one call, at most %d on one element%s",
				x.AtomicsIssued, x.AtomicsMaxAddress, hottest))
		}
		if x.Tolerance > 0 {
			notes[len(rows)] = append(notes[len(rows)], verifiedNote(x))
		}
		rows = append(rows, row)
	}

	width := make([]int, len(head))
	for ri, row := range rows {
		for c, cell := range row {
			if _, ok := spans[ri]; ok && c >= 2 {
				continue
			}
			width[c] = max(width[c], len(cell))
		}
	}
	for ri, row := range rows {
		var line strings.Builder
		for c, cell := range row {
			if c > 0 {
				line.WriteString("  ")
			}
			if c < 2 {
				fmt.Fprintf(&line, "%-*s", width[c], cell) // text columns align left
			} else {
				fmt.Fprintf(&line, "%*s", width[c], cell)
			}
		}
		if s, ok := spans[ri]; ok {
			if len(row) < 2 {
				fmt.Fprintf(&line, "  %-*s", width[1], "")
			}
			line.WriteString("  " + s)
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
		indent := strings.Repeat(" ", width[0]+width[1]+4)
		for _, n := range notes[ri] {
			b.WriteString(indent + n + "\n")
		}
	}
	fmt.Fprintf(&b, "\nMB/pass: the bytes one pass must move, 2 x data (read, then written) + updates + indices; memcpy ms: the time\n")
	b.WriteString("a memory copy takes to move as many bytes, the floor for the median. plan: the backend's passes worked\n")
	b.WriteString("out before running, with the device bytes they read and write in all (data's copy into the output aside),\n")
	b.WriteString("against the one-pass bytes: indices and updates read once, each element the call may change read and written once.\n")
	fmt.Fprintf(&b, "GB/s: MB/pass over the median time. memcpy: a parallel copy of %s\n", formatBytes(r.MemcpyBytes))
	fmt.Fprintf(&b, "(or of the data, when larger) over %d goroutines, in GB/s read plus written. verified: every timed output\n", r.Threads)
	b.WriteString("equals the cpu's bit for bit (any NaN equals any NaN); the cpu's own timed outputs equal its first.\n")
	b.WriteString("device ms: the passes' time on the device by its timestamps, host transfers and submission aside.\n")
	b.WriteString("speedup: the cpu's median over the backend's. max diff: the largest difference from the cpu's output;\n")
	b.WriteString("an unordered float reduction is checked within a tolerance relative to the sum of the magnitudes\n")
	b.WriteString("folded into each element; the note under its row says whether it was verified bit for bit or needed\n")
	b.WriteString("the tolerance (and how many elements did), so a max diff above the tolerance there is not a failure.\n")
	for _, x := range r.Results {
		if x.FractionOfMemcpy > 1 {
			b.WriteString("Above 100% of memcpy, a backend moved less than the traffic counts: the cpu skips the ScatterUpdate-3\n" +
				"updates that a later one overwrites, and inputs small enough for the caches are read from them.\n")
			break
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// allSkipped reports whether every result of the workload of result i was
// skipped for the same reason.
func (r *Report) allSkipped(i int) bool {
	name, why := r.Results[i].Workload, r.Results[i].Skipped
	for _, x := range r.Results {
		if x.Workload == name && x.Skipped != why {
			return false
		}
	}
	return true
}

// ms renders a duration in milliseconds with about four significant
// digits, and at least two below a millisecond: 0.00025, never 0.000.
func ms(d time.Duration) string {
	v := float64(d) / 1e6
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	case v >= 10:
		return fmt.Sprintf("%.2f", v)
	}
	return fixed(v, 3, 2)
}

// mb renders n bytes in MB (10^6 bytes), with at least two significant
// digits: 0.0031, never 0.0.
func mb(n int64) string { return fixed(float64(n)/1e6, 1, 2) }

// times renders a ratio such as a speedup: 2.50x, 0.0031x.
func times(v float64) string { return fixed(v, 2, 2) + "x" }

// fixed renders v with minDec decimals, or with more where those would
// not show sig significant digits, so that a figure that is not zero
// never prints as zero (0.000 ms, 0.0 MB) and the table's columns keep
// their decimals otherwise.
func fixed(v float64, minDec, sig int) string {
	dec := minDec
	if v != 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
		dec = max(dec, sig-1-int(math.Floor(math.Log10(math.Abs(v)))))
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// verifiedNote says how a row that a tolerance applied to was verified:
// bit for bit where no element needed it; else within it, with the
// elements that did; "checked within" it where the row failed.
func verifiedNote(x Result) string {
	switch {
	case x.BitForBit():
		return "verified bit for bit"
	case x.Verified:
		return fmt.Sprintf("verified within %g of the sum of magnitudes: %s differ from the cpu's bits",
			x.Tolerance, plural(x.Comparison.Tolerated, "element", "elements"))
	}
	return fmt.Sprintf("checked within %g of the sum of magnitudes", x.Tolerance)
}

// plural returns n and the noun in the number n takes.
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func verdict(x Result) string {
	if x.Verified {
		return "yes"
	}
	return fmt.Sprintf("NO: %d differ", x.Comparison.Mismatches)
}

func diffText(d float64) string {
	switch {
	case d == 0:
		return "0"
	case math.IsInf(d, 0):
		return "inf"
	}
	return strconv.FormatFloat(d, 'g', 3, 64)
}

// jsonReport is the file WriteJSON writes.
type jsonReport struct {
	Tool           string  `json:"tool"`
	Command        string  `json:"command,omitempty"`
	Started        string  `json:"started"`
	ElapsedS       float64 `json:"elapsed_s"`
	Interrupted    bool    `json:"interrupted,omitempty"`
	CPU            string  `json:"cpu"`
	Threads        int     `json:"threads"`
	Scale          float64 `json:"scale,omitempty"`
	Seed           uint64  `json:"seed"`
	Repeats        int     `json:"repeats"`
	Warmups        int     `json:"warmups"`
	Tolerance      float64 `json:"tolerance"`
	MemcpyMinBytes int64   `json:"memcpy_min_bytes"`
	// Figures are the device figures of the backends that estimate,
	// by backend label.
	Figures map[string]*cost.Device `json:"figures,omitempty"`
	Results []jsonResult            `json:"results"`
}

type jsonResult struct {
	Workload           string      `json:"workload"`
	Description        string      `json:"description"`
	Backend            string      `json:"backend"`
	Device             string      `json:"device"`
	MedianMS           float64     `json:"median_ms"`
	MinMS              float64     `json:"min_ms"`
	MaxMS              float64     `json:"max_ms"`
	TimesMS            []float64   `json:"times_ms"`
	DeviceMS           float64     `json:"device_ms"`
	Phases             []jsonPhase `json:"phases"`
	PhaseEstimates     []jsonPhase `json:"phase_estimates,omitempty"`
	DeviceCopyMS       float64     `json:"device_copy_ms,omitempty"`
	DeviceOverCopy     float64     `json:"device_over_copy,omitempty"`
	ResidentMS         float64     `json:"resident_ms,omitempty"`
	ResidentBytes      int64       `json:"resident_bytes,omitempty"`
	Calls              int         `json:"calls,omitempty"`
	PerCallMS          float64     `json:"per_call_ms,omitempty"`
	ResidentCallMS     float64     `json:"resident_per_call_ms,omitempty"`
	Submits            int         `json:"submits,omitempty"`
	Waits              int         `json:"waits,omitempty"`
	TransferPieces     int         `json:"transfer_pieces,omitempty"`
	PlanPasses         int         `json:"plan_passes,omitempty"`
	Dispatches         *int        `json:"dispatches,omitempty"`
	PlanBytes          int64       `json:"plan_bytes,omitempty"`
	PlanMemory         int64       `json:"plan_memory,omitempty"`
	OnePassBytes       int64       `json:"one_pass_bytes"`
	ResidentPlanBytes  int64       `json:"resident_plan_bytes,omitempty"`
	ResidentDispatches *int        `json:"resident_dispatches,omitempty"`
	EstimateMS         *float64    `json:"estimate_ms,omitempty"`
	EstimateRatio      *float64    `json:"estimate_over_measured,omitempty"`
	ResidentEstimateMS *float64    `json:"resident_estimate_ms,omitempty"`
	ResidentRatio      *float64    `json:"resident_estimate_over_measured,omitempty"`
	EstimateOff        bool        `json:"estimate_off,omitempty"`
	CPUEstimateMS      *float64    `json:"cpu_estimate_ms,omitempty"`
	AutoChoice         string      `json:"auto_choice,omitempty"`
	HottestUpdates     int64       `json:"hottest_updates,omitempty"`
	AtomicsIssued      *uint64     `json:"atomics_issued,omitempty"`
	AtomicsMaxAddress  *uint64     `json:"atomics_max_address,omitempty"`
	Plan               string      `json:"plan,omitempty"`
	Bytes              int64       `json:"bytes"`
	GBps               float64     `json:"gbps"`
	MemcpyGBps         float64     `json:"memcpy_gbps"`
	FractionOfMemcpy   float64     `json:"fraction_of_memcpy"`
	Speedup            float64     `json:"speedup,omitempty"`
	Verified           bool        `json:"verified"`
	MaxAbsDiff         *float64    `json:"max_abs_diff"`
	Mismatches         int64       `json:"mismatches"`
	Tolerated          int64       `json:"tolerated"`
	BitForBit          bool        `json:"bit_for_bit"`
	Tolerance          float64     `json:"tolerance"`
	Skipped            string      `json:"skipped,omitempty"`
	Error              string      `json:"error,omitempty"`
}

type jsonPhase struct {
	Name string  `json:"name"`
	MS   float64 `json:"ms"`
}

func msOf(d time.Duration) float64 { return float64(d) / 1e6 }

// speedupOf returns the reference's median time on workload over d (0
// when there is none).
func (r *Report) speedupOf(workload string, d time.Duration) float64 {
	for _, x := range r.Results {
		if x.Workload == workload && x.Median > 0 && d > 0 {
			return x.Median.Seconds() / d.Seconds()
		}
	}
	return 0
}

// EstimateLow and EstimateHigh bound the ratio of an estimate to the
// measured median that the bench takes as a fair estimate
// (Result.EstimateOff): within 2x either way.
const EstimateLow, EstimateHigh = 0.5, 2.0

// EstimateOff reports whether an estimate of est is outside
// [EstimateLow, EstimateHigh] of the measured time got; false where
// either is unknown (0).
func EstimateOff(est, got time.Duration) bool {
	if est <= 0 || got <= 0 {
		return false
	}
	q := est.Seconds() / got.Seconds()
	return q < EstimateLow || q > EstimateHigh
}

// estimateRatio formats the estimate est against the measured got as
// " (0.88 of the measured)", flagged "OUTSIDE 0.5-2" where EstimateOff;
// "" where either is unknown.
func estimateRatio(est, got time.Duration) string {
	if est <= 0 || got <= 0 {
		return ""
	}
	flag := ""
	if EstimateOff(est, got) {
		flag = fmt.Sprintf(", OUTSIDE %g-%g", EstimateLow, EstimateHigh)
	}
	return fmt.Sprintf(" (%.2f of the measured%s)", est.Seconds()/got.Seconds(), flag)
}

// ratioOf returns est over got, nil where either is unknown.
func ratioOf(est, got time.Duration) *float64 {
	if est <= 0 || got <= 0 {
		return nil
	}
	q := est.Seconds() / got.Seconds()
	return &q
}

// MarshalJSON encodes the report as WriteJSON writes it: figures (the
// device figures of the backends that estimate, by label: Report.Figures),
// then per workload and
// backend the fields workload, description, backend ("cpu", "gpu"),
// device, median_ms, min_ms, max_ms, times_ms, device_ms (0 when the
// backend does not time its device), phases ([] likewise), device_copy_ms
// and device_over_copy (device backends that time a device copy),
// resident_ms and resident_bytes (backends that keep inputs on the device;
// the bytes that call moves: indices and updates read, one data element
// written per update), calls, per_call_ms and resident_per_call_ms
// (workloads of several calls per execution: their number, and median_ms
// and resident_ms over it), submits, waits and transfer_pieces (the host
// round trips of the last resident batch of such a workload, on backends
// that run batches), plan_passes, dispatches, plan_bytes and plan_memory,
// one_pass_bytes (ops.Plan.OnePassBytes per call), resident_dispatches and
// resident_plan_bytes (the call planned in place on resident tensors:
// ResidentPlanner), estimate_ms, cpu_estimate_ms and auto_choice (the
// estimates of backends that make them, Estimator: on the device as the
// row measures it, on the CPU, and "cpu" or "gpu", where --backend auto
// runs the host calls), estimate_over_measured (estimate_ms over
// median_ms), resident_estimate_ms and resident_estimate_over_measured
// (the device's estimate of the resident call, over resident_ms),
// estimate_off (either ratio outside [EstimateLow, EstimateHigh]),
// hottest_updates (the most updates that meet one
// target, where every index names one target: Result.HottestUpdates),
// atomics_issued and atomics_max_address (with --count-atomics, on
// backends that count them: the global atomics of one call and the most
// on one output element)
// (backends that work out their passes before running: the passes, their
// compute dispatches, the device bytes they read and write in all, the
// device memory) and plan (the backend's
// description of the call: path, tensors, passes), bytes, gbps,
// memcpy_gbps, fraction_of_memcpy, speedup (other backends only), verified,
// max_abs_diff (null when infinite), mismatches, tolerance (the relative
// bound allowed; 0: bit for bit), tolerated (the elements whose bits
// differ that the tolerance accepted), bit_for_bit (verified with none),
// and skipped or error when set.
func (r *Report) MarshalJSON() ([]byte, error) {
	jr := jsonReport{
		Tool: "gpuscatter bench", Command: r.Command, Started: r.Started.UTC().Format(time.RFC3339),
		ElapsedS: r.Elapsed.Seconds(), Interrupted: r.Interrupted, CPU: r.CPU, Threads: r.Threads, Scale: r.Scale, Seed: r.Seed,
		Repeats: r.Repeats, Warmups: r.Warmups, Tolerance: r.Tolerance, MemcpyMinBytes: r.MemcpyBytes,
		Figures: r.Figures, Results: []jsonResult{},
	}
	for _, x := range r.Results {
		j := jsonResult{
			Workload: x.Workload, Description: x.Description, Backend: x.Backend, Device: x.Device,
			MedianMS: msOf(x.Median), MinMS: msOf(x.Min), MaxMS: msOf(x.Max), TimesMS: []float64{},
			DeviceMS: msOf(x.DeviceTime), Phases: []jsonPhase{}, Bytes: x.Bytes,
			DeviceCopyMS: msOf(x.DeviceCopyTime), DeviceOverCopy: x.DeviceOverCopy, ResidentMS: msOf(x.ResidentTime), ResidentBytes: x.ResidentBytes,
			PlanPasses: x.PlanPasses, PlanBytes: x.PlanBytes, PlanMemory: x.PlanMemory, Plan: x.Plan, OnePassBytes: x.OnePassBytes,
			GBps: x.GBps, MemcpyGBps: x.MemcpyGBps, FractionOfMemcpy: x.FractionOfMemcpy, Speedup: x.Speedup,
			Verified: x.Verified, Mismatches: x.Comparison.Mismatches, Tolerance: x.Tolerance,
			Tolerated: x.Comparison.Tolerated, BitForBit: x.BitForBit(),
			Skipped: x.Skipped, Error: x.Error,
			Submits: x.Submits, Waits: x.Waits, TransferPieces: x.TransferPieces, HottestUpdates: x.HottestUpdates,
		}
		if x.Planned {
			d := x.PlanDispatches
			j.Dispatches = &d
		}
		if x.ResidentPlanned {
			d := x.ResidentDispatches
			j.ResidentDispatches, j.ResidentPlanBytes = &d, x.ResidentPlanBytes
		}
		if x.Counted {
			n, m := x.AtomicsIssued, x.AtomicsMaxAddress
			j.AtomicsIssued, j.AtomicsMaxAddress = &n, &m
		}
		if x.Estimated {
			e, c := msOf(x.Estimate), msOf(x.CPUEstimate)
			j.EstimateMS, j.CPUEstimateMS, j.AutoChoice = &e, &c, x.AutoChoice
			j.EstimateRatio = ratioOf(x.Estimate, x.Median)
			if x.ResidentEstimate > 0 {
				re := msOf(x.ResidentEstimate)
				j.ResidentEstimateMS, j.ResidentRatio = &re, ratioOf(x.ResidentEstimate, x.ResidentTime)
			}
			j.EstimateOff = EstimateOff(x.Estimate, x.Median) || EstimateOff(x.ResidentEstimate, x.ResidentTime)
		}
		if x.Calls > 1 {
			j.Calls = x.Calls
			j.PerCallMS = msOf(x.Median) / float64(x.Calls)
			j.ResidentCallMS = msOf(x.ResidentTime) / float64(x.Calls)
		}
		for _, t := range x.Times {
			j.TimesMS = append(j.TimesMS, msOf(t))
		}
		for _, ph := range x.Phases {
			j.Phases = append(j.Phases, jsonPhase{Name: ph.Name, MS: msOf(ph.Duration)})
		}
		for _, ph := range x.PhaseEstimates {
			j.PhaseEstimates = append(j.PhaseEstimates, jsonPhase{Name: ph.Name, MS: msOf(ph.Duration)})
		}
		if d := x.Comparison.MaxAbsDiff; !math.IsInf(d, 0) && !math.IsNaN(d) {
			j.MaxAbsDiff = &d
		}
		jr.Results = append(jr.Results, j)
	}
	return json.MarshalIndent(jr, "", "  ")
}

// WriteJSON writes the report as indented JSON to path, atomically (see
// WriteFileAtomic).
func (r *Report) WriteJSON(path string) error {
	b, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// WriteFileAtomic writes a file through write with atomicfile.Write: the
// file appears at path only once it is complete, and on any failure path is
// left as it was with nothing else left behind.
func WriteFileAtomic(path string, write func(w io.Writer) error) error {
	return atomicfile.Write(context.Background(), path, write)
}
