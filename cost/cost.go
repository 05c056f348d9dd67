// Package cost estimates how long a scatter call takes on each backend,
// from figures measured once on the machine: the device's transfer,
// copy, dispatch and per-element rates (Device) and the CPU backend's
// rates by kind of work (CPU). It holds the figures and the arithmetic
// only; each backend says what work a call is (gpu.Estimate,
// cpuref.WorkOf), and cmd/gpuscatter's --backend auto runs each call where
// the estimate is lower.
//
// The estimates are for choosing and for reading a plan, not promises:
// on lavapipe nearly every bench workload at the quick size falls within
// 2x of the measured time (skewed keys, whose hot target's atomics queue,
// below it); on SwiftShader the smallest calls and those whose resolve
// pass dominates come out at 0.2-0.5 of it; and a device that runs other
// work at the same time is slower.
package cost

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Device holds a Vulkan device's figures: vk.Device.Measure measures the
// transfers, the copy and the submission; gpu.Backend.Figures the
// per-dispatch, per-element and per-atomic times with the backend's own
// kernels. A --facts file carries them as its "measured" object, with the
// host's CPU figures in CPU.
type Device struct {
	// UploadGBps and DownloadGBps are host-to-device and device-to-host
	// transfers through the path the backend uses (the mapping on unified
	// memory, else staging buffers and copy commands), in 10^9 bytes per
	// second.
	UploadGBps   float64 `json:"upload_gbps"`
	DownloadGBps float64 `json:"download_gbps"`
	// CopyGBps is a device-to-device copy command, in bytes read and
	// written per second: the rate a pass that streams its bytes runs at,
	// at best.
	CopyGBps float64 `json:"copy_gbps"`
	// SubmitWaitUs is one submission of a trivial command and the wait
	// for its fence, in microseconds.
	SubmitWaitUs float64 `json:"submit_wait_us"`
	// DispatchUs is what each compute dispatch adds to a submission
	// beyond its work and its launch (recording, the barrier after it),
	// in microseconds.
	DispatchUs float64 `json:"dispatch_us,omitempty"`
	// LaunchUs is the device time of a dispatch with almost no work, in
	// microseconds: what the device's timestamps around a pass hold
	// beyond the pass's work for each of its dispatches (starting the
	// invocations and waiting for the last; measured on a small
	// SliceScatter: on lavapipe 14-45 µs, on SwiftShader 48-74; what a
	// small call's passes take beyond it is their kinds' figures and
	// their occupancy). 0 where it was not measured.
	LaunchUs float64 `json:"launch_us,omitempty"`
	// ExecuteUs is what a host call (an Execute of host tensors) adds
	// beyond its transfers at the measured rates, its submission and its
	// passes: the call's device buffers, descriptors and parameters, and
	// the small copies' own cost, in microseconds (on lavapipe about 100
	// to 200). 0 where it was not measured.
	ExecuteUs float64 `json:"execute_us,omitempty"`
	// ElementNs is the device time per position a kernel handles
	// (moving one element or unit), at full occupancy, in nanoseconds;
	// a pass takes the longer of its positions at this rate and its
	// bytes at CopyGBps. A position's time varies with its width and
	// its kernel (gpu.Backend.Figures measures a narrow and a wide pass
	// and takes their geometric mean).
	ElementNs float64 `json:"element_ns,omitempty"`
	// AtomicNs is what one global atomic adds to a position whose
	// invocation's neighbours target unrelated addresses (one index per
	// atomic), in nanoseconds, measured with 16 updates on each target
	// as a reduction folds duplicates.
	AtomicNs float64 `json:"atomic_ns,omitempty"`
	// RunAtomicNs is what one global atomic adds to a position where
	// each invocation's atomics fall on the consecutive units of a row
	// (Pass.RunAtomics), in nanoseconds, measured as AtomicNs is (on
	// lavapipe, on distinct targets, 15-18 ns per position against 29-36
	// where each atomic has an index of its own). 0 where it was not
	// measured (an older measurement); those atomics then take AtomicNs.
	RunAtomicNs float64 `json:"run_atomic_ns,omitempty"`
	// CompileMs is what compiling one pipeline adds to the first call
	// that uses it, in milliseconds: creating it and, on a device that
	// compiles at the first dispatch (lavapipe), that dispatch's extra
	// time. 0 where it was not measured (the probe's pipelines were
	// compiled before); an estimate then leaves compilation out.
	CompileMs float64 `json:"compile_ms,omitempty"`
	// ConcurrentGroups is how many workgroups of a pass the device runs
	// at once, as its time shows it: a dispatch of fewer workgroups
	// leaves the rest of the device idle and takes as long as this many
	// would (measured as the device time of a lone workgroup's
	// SliceScatter against the same positions at full occupancy; on
	// lavapipe and SwiftShader about their threads, on a discrete GPU
	// its multiprocessors times the workgroups each holds, up to the
	// probe's 512). 0 or 1: every pass is taken at full occupancy.
	ConcurrentGroups float64 `json:"concurrent_groups,omitempty"`
	// Passes holds the figures of the kinds of pass whose time the
	// per-element and per-atomic figures do not predict (PassKind),
	// measured with the backend's own kernels; nil where they were not
	// measured (an older measurement, or a device without timestamps):
	// an estimate then takes those passes at ElementNs and AtomicNs.
	Passes *PassFigures `json:"passes,omitempty"`
	// ProbeBytes is the size of the transfers measured.
	ProbeBytes uint64 `json:"probe_bytes"`
	// CPU holds the figures of the CPU backend on the same machine, what
	// --backend auto weighs the device against; nil where they were not
	// measured.
	CPU *CPU `json:"cpu,omitempty"`
}

// PassKind is a kind of pass whose time a figure of its own predicts
// (Device.Passes): one whose invocations loop, sort or wait on each
// other, which neither its bytes nor its positions at ElementNs follow.
type PassKind uint8

const (
	// PassPlain is every other pass: bytes at CopyGBps, positions at
	// ElementNs, atomics at AtomicNs.
	PassPlain PassKind = iota
	// PassRadix is a pass of the in-order fold's radix sort: the digit
	// count and the scatter by digit.
	PassRadix
	// PassFold is the in-order fold of each slot's sorted list.
	PassFold
	// PassBucket is the bucketed fold: a workgroup per bucket of slots,
	// folding in workgroup memory.
	PassBucket
	// PassResolve is a resolve pass that reads, checks and normalises
	// the indices into positions (on SwiftShader 2-4 times a position of
	// a SliceScatter).
	PassResolve
	// PassTable is the last-writer table's resolve: one workgroup that
	// clears a table in workgroup memory and claims it across barriers.
	PassTable
	// PassHot is an atomic scatter that first counts each workgroup's
	// hot targets in workgroup memory (the census) and folds them there.
	PassHot
	// PassIndexed is a scatter of reduction none whose every position
	// reads its target from the resolved indices (ScatterND's rows,
	// ScatterElements' elements, TensorScatter's cache lines), not a
	// gather or a slice: on SwiftShader about 3 times a position of a
	// SliceScatter.
	PassIndexed
)

// PassFigures holds a figure per kind of pass (PassKind).
type PassFigures struct {
	Radix  PassFigure `json:"radix"`
	Fold   PassFigure `json:"fold"`
	Bucket PassFigure `json:"bucket"`
	// Resolve, Table, Hot and Indexed may be zero: a measurement from
	// before they were (package gpu measures a kept set without
	// ConcurrentGroups, which came with them, again); those passes then
	// take the plain figures.
	Resolve PassFigure `json:"resolve,omitempty"`
	Table   PassFigure `json:"table,omitempty"`
	Hot     PassFigure `json:"hot,omitempty"`
	Indexed PassFigure `json:"indexed,omitempty"`
}

// PassFigure is the device time of a kind of pass: PositionNs per
// position its kernel handles, InvocationNs per invocation that has
// work (each invocation's setup, its share of its workgroup's barriers
// and of its workgroup memory) and DispatchNs per dispatch beyond its
// launch (what a workgroup that clears and claims a table in workgroup
// memory pays whatever its work: on SwiftShader about 0.45 ms), in
// nanoseconds. All 0: not measured.
type PassFigure struct {
	PositionNs   float64 `json:"position_ns"`
	InvocationNs float64 `json:"invocation_ns"`
	DispatchNs   float64 `json:"dispatch_ns,omitempty"`
	// KeyNs is what each update on a call's most frequent target
	// (Pass.Hottest) adds, in nanoseconds: measured for the hot-target
	// census and the bucketed fold on targets drawn from a Zipf law.
	KeyNs float64 `json:"key_ns,omitempty"`
}

// of returns the figure of kind k, nil where there is none.
func (f *PassFigures) of(k PassKind) *PassFigure {
	if f == nil {
		return nil
	}
	var p *PassFigure
	switch k {
	case PassRadix:
		p = &f.Radix
	case PassFold:
		p = &f.Fold
	case PassBucket:
		p = &f.Bucket
	case PassResolve:
		p = &f.Resolve
	case PassTable:
		p = &f.Table
	case PassHot:
		p = &f.Hot
	case PassIndexed:
		p = &f.Indexed
	default:
		return nil
	}
	if p.PositionNs == 0 && p.InvocationNs == 0 && p.DispatchNs == 0 && p.KeyNs == 0 {
		return nil
	}
	return p
}

// CPU holds the CPU backend's figures (cpuref.Measure).
type CPU struct {
	// Threads is the number of threads the CPU backend ran on.
	Threads int `json:"threads"`
	// CopyGBps is a parallel memory copy, in bytes read and written per
	// second: the output's starting copy of data.
	CopyGBps float64 `json:"copy_gbps"`
	// MoveGBps is the rate at which whole rows of updates are moved
	// (ScatterUpdate, ScatterND of rows, SliceScatter, TensorScatter), in
	// bytes of CPUWork.MoveBytes per second.
	MoveGBps float64 `json:"move_gbps"`
	// ElementNs is the time per update element of a reduction-none call
	// of single elements (ScatterElements, ScatterND of elements), in
	// nanoseconds.
	ElementNs float64 `json:"element_ns"`
	// ReduceNs is the time per update element folded by a reduction, in
	// nanoseconds.
	ReduceNs float64 `json:"reduce_ns"`
	// Fold holds the two folds of a float reduction onto single elements
	// of a large out (ScatterElements, ScatterND of elements), measured
	// at a few sizes of out, smallest first: what the CPU backend chooses
	// between call by call (FoldPoint). Empty where they were not
	// measured (an older measurement); the CPU backend then measures
	// them itself.
	Fold []FoldPoint `json:"fold,omitempty"`
}

// FoldPoint holds the times of the CPU backend's two folds of a float32
// sum onto an out of OutBytes bytes, each a call's time less its copy of
// data: Ns per update plus OutNs per element of out (what reaching each
// element costs once: its first miss, and for the binned fold the copy
// of its bin). The serial fold walks the updates in order in one thread
// (or, where the CPU backend can, in two, each folding a half of out),
// each straight into out; the binned fold partitions them by range of
// out on every thread and then folds range by range. Both give the same
// bits; which is faster depends on whether out's random accesses stay in
// the caches.
type FoldPoint struct {
	OutBytes    uint64  `json:"out_bytes"`
	SerialNs    float64 `json:"serial_ns"`
	SerialOutNs float64 `json:"serial_out_ns,omitempty"`
	BinnedNs    float64 `json:"binned_ns"`
	BinnedOutNs float64 `json:"binned_out_ns,omitempty"`
}

// MaxFoldPoints bounds the points of CPU.Fold.
const MaxFoldPoints = 16

// FoldMs returns the estimated times, in milliseconds, of folding n
// updates onto an out of outLen elements of outBytes bytes with the
// serial and with the binned fold, from c.Fold: each term interpolated
// between the two points around outBytes, linearly in the logarithm of
// the size, and the first point's below them all. ok is false where c
// has no fold figures or outBytes lies above the largest point: those
// the figures do not speak for.
func (c *CPU) FoldMs(outBytes, outLen, n uint64) (serial, binned float64, ok bool) {
	f := c.Fold
	if len(f) == 0 || outBytes > f[len(f)-1].OutBytes {
		return 0, 0, false
	}
	i := 0
	for i < len(f)-1 && f[i+1].OutBytes < outBytes {
		i++
	}
	a, b, w := f[i], f[i], 0.0
	if i+1 < len(f) && outBytes > a.OutBytes {
		b = f[i+1]
		w = math.Log(float64(outBytes)/float64(a.OutBytes)) / math.Log(float64(b.OutBytes)/float64(a.OutBytes))
	}
	at := func(x, y float64) float64 { return x + w*(y-x) }
	t := func(ns, outNs float64) float64 { return (float64(n)*ns + float64(outLen)*outNs) / 1e6 }
	serial = t(at(a.SerialNs, b.SerialNs), at(a.SerialOutNs, b.SerialOutNs))
	binned = t(at(a.BinnedNs, b.BinnedNs), at(a.BinnedOutNs, b.BinnedOutNs))
	return serial, binned, true
}

// ErrFigures is matched by every error of Check.
var ErrFigures = errors.New("cost: invalid figures")

// The physical bounds of the figures (Device.Check and CPU.Check): what
// any measurement on any machine gives, with room to spare, so that a
// figure outside them is a damaged or doctored file, or a broken clock,
// and is measured again rather than used.
const (
	// MinGBps and MaxGBps bound every rate, in 10^9 bytes per second:
	// from 1 MB/s, below any memory or bus a device is reached through,
	// to 100 TB/s, beyond any memory or cache (HBM reaches 8 TB/s, the
	// largest on-die caches about 20 TB/s, and a 32 MiB probe fits in
	// some of those caches).
	MinGBps, MaxGBps = 1e-3, 1e5
	// MinElementNs and MaxElementNs bound the times per element, per
	// atomic and per folded element, in nanoseconds: from 0.1 ps (10^13
	// elements a second, beyond any device's memory; a discrete GPU's
	// streaming pass is about 1 ps) to 1 ms (the probe's 2M elements
	// would take over half an hour).
	MinElementNs, MaxElementNs = 1e-4, 1e6
	// MinUs and MaxUs bound a submission's and a dispatch's time, in
	// microseconds: from 1 ns, the least a measurement reports, to 10 s.
	MinUs, MaxUs = 1e-3, 1e7
	// MinCompileMs and MaxCompileMs bound the time a pipeline's
	// compilation adds, in milliseconds: from 1 µs to 5 minutes.
	MinCompileMs, MaxCompileMs = 1e-3, 3e5
	// MaxProbeBytes bounds ProbeBytes: 1 TiB (the probe is 32 MiB).
	MaxProbeBytes = 1 << 40
	// MaxConcurrentGroups bounds ConcurrentGroups (from 1): 2^20
	// workgroups, beyond any device's multiprocessors times the
	// workgroups each holds.
	MaxConcurrentGroups = 1 << 20
	// MaxThreads bounds CPU.Threads.
	MaxThreads = 1 << 16
)

// Check reports the first figure of d that a measurement cannot give,
// naming its JSON field: one that is not finite, or outside its physical
// bounds (the constants above):
//
//   - upload_gbps, download_gbps, copy_gbps: 1e-3 to 1e5 GB/s (1 MB/s
//     to 100 TB/s);
//   - submit_wait_us: 1e-3 to 1e7 µs (1 ns to 10 s);
//   - dispatch_us, execute_us, launch_us: 0 (not measured) or 1e-3 to
//     1e7 µs;
//   - element_ns, atomic_ns, run_atomic_ns: 0 (not measured) or 1e-4
//     to 1e6 ns (0.1 ps to 1 ms);
//   - compile_ms: 0 (not measured) or 1e-3 to 3e5 ms (1 µs to 5
//     minutes);
//   - concurrent_groups: 0 (not measured) or 1 to 2^20;
//   - passes, when present: each kind's position_ns and invocation_ns 0
//     (not measured) or 1e-4 to 1e6 ns, as element_ns, and its
//     dispatch_ns 0 or 1e-4 ns to 10 s, its key_ns as element_ns;
//   - probe_bytes: 1 to 2^40;
//   - cpu, when present: as CPU.Check (its fold figures may be absent:
//     an older measurement; the CPU backend then measures its own).
//
// The dispatch, element and atomic figures may be absent (0: an older
// measurement); an estimate then leaves them out. A kept measurement that
// fails Check is measured again (vk.Device.MeasuredFigures), and a
// --facts file whose figures fail it is refused.
func (d *Device) Check() error {
	for _, f := range []struct {
		name   string
		v      float64
		zero   bool
		lo, hi float64
	}{
		{"upload_gbps", d.UploadGBps, false, MinGBps, MaxGBps},
		{"download_gbps", d.DownloadGBps, false, MinGBps, MaxGBps},
		{"copy_gbps", d.CopyGBps, false, MinGBps, MaxGBps},
		{"submit_wait_us", d.SubmitWaitUs, false, MinUs, MaxUs},
		{"dispatch_us", d.DispatchUs, true, MinUs, MaxUs},
		{"execute_us", d.ExecuteUs, true, MinUs, MaxUs},
		{"launch_us", d.LaunchUs, true, MinUs, MaxUs},
		{"element_ns", d.ElementNs, true, MinElementNs, MaxElementNs},
		{"atomic_ns", d.AtomicNs, true, MinElementNs, MaxElementNs},
		{"run_atomic_ns", d.RunAtomicNs, true, MinElementNs, MaxElementNs},
		{"compile_ms", d.CompileMs, true, MinCompileMs, MaxCompileMs},
		{"concurrent_groups", d.ConcurrentGroups, true, 1, MaxConcurrentGroups},
	} {
		if err := checkFigure(f.name, f.v, f.zero, f.lo, f.hi); err != nil {
			return err
		}
	}
	if f := d.Passes; f != nil {
		for _, k := range []struct {
			name string
			p    PassFigure
		}{{"radix", f.Radix}, {"fold", f.Fold}, {"bucket", f.Bucket}, {"resolve", f.Resolve}, {"table", f.Table}, {"hot", f.Hot}, {"indexed", f.Indexed}} {
			if err := checkFigure("passes."+k.name+".position_ns", k.p.PositionNs, true, MinElementNs, MaxElementNs); err != nil {
				return err
			}
			if err := checkFigure("passes."+k.name+".invocation_ns", k.p.InvocationNs, true, MinElementNs, MaxElementNs); err != nil {
				return err
			}
			if err := checkFigure("passes."+k.name+".dispatch_ns", k.p.DispatchNs, true, MinElementNs, MaxUs*1e3); err != nil {
				return err
			}
			if err := checkFigure("passes."+k.name+".key_ns", k.p.KeyNs, true, MinElementNs, MaxElementNs); err != nil {
				return err
			}
		}
	}
	if d.ProbeBytes == 0 || d.ProbeBytes > MaxProbeBytes {
		return fmt.Errorf("%w: probe_bytes is %d; want 1 to %d", ErrFigures, d.ProbeBytes, uint64(MaxProbeBytes))
	}
	if d.CPU != nil {
		return d.CPU.Check()
	}
	return nil
}

// Complete reports whether d holds every figure an estimate needs: the
// kernel figures and the CPU's. ExecuteUs and RunAtomicNs may be 0 (not
// measured: a host call then adds nothing of its own, and atomics along
// rows cost AtomicNs), as in a documented profile; package gpu measures
// a kept set without them again.
func (d *Device) Complete() bool {
	return d.Check() == nil && d.DispatchUs > 0 && d.ElementNs > 0 && d.CPU != nil
}

// Check reports the first figure of c that a measurement cannot give,
// naming its JSON field: threads 1 to 65536; copy_gbps and move_gbps
// 1e-3 to 1e5 GB/s; element_ns and reduce_ns 1e-4 to 1e6 ns (the bounds
// of Device.Check); fold at most 16 points (MaxFoldPoints), their
// out_bytes 1 to 2^40 and increasing, serial_ns and binned_ns 1e-4 to
// 1e6 ns, serial_out_ns and binned_out_ns 0 or 1e-4 to 1e6 ns.
func (c *CPU) Check() error {
	if err := c.checkRates(); err != nil {
		return err
	}
	if len(c.Fold) > MaxFoldPoints {
		return fmt.Errorf("%w: cpu.fold has %d points; want at most %d", ErrFigures, len(c.Fold), MaxFoldPoints)
	}
	for i, f := range c.Fold {
		if f.OutBytes == 0 || f.OutBytes > MaxProbeBytes || i > 0 && f.OutBytes <= c.Fold[i-1].OutBytes {
			return fmt.Errorf("%w: cpu.fold[%d].out_bytes is %d; want 1 to %d, above the point before", ErrFigures, i, f.OutBytes, uint64(MaxProbeBytes))
		}
		for _, v := range []struct {
			name string
			v    float64
			zero bool
		}{{"serial_ns", f.SerialNs, false}, {"serial_out_ns", f.SerialOutNs, true}, {"binned_ns", f.BinnedNs, false}, {"binned_out_ns", f.BinnedOutNs, true}} {
			if err := checkFigure(fmt.Sprintf("cpu.fold[%d].%s", i, v.name), v.v, v.zero, MinElementNs, MaxElementNs); err != nil {
				return err
			}
		}
	}
	return nil
}

// Complete reports whether c holds every figure a measurement of this
// version gives: Check passes and the fold figures are there.
func (c *CPU) Complete() bool { return c.Check() == nil && len(c.Fold) > 0 }

func (c *CPU) checkRates() error {
	if c.Threads < 1 || c.Threads > MaxThreads {
		return fmt.Errorf("%w: cpu.threads is %d; want 1 to %d", ErrFigures, c.Threads, MaxThreads)
	}
	for _, f := range []struct {
		name   string
		v      float64
		lo, hi float64
	}{
		{"copy_gbps", c.CopyGBps, MinGBps, MaxGBps}, {"move_gbps", c.MoveGBps, MinGBps, MaxGBps},
		{"element_ns", c.ElementNs, MinElementNs, MaxElementNs}, {"reduce_ns", c.ReduceNs, MinElementNs, MaxElementNs},
	} {
		if err := checkFigure("cpu."+f.name, f.v, false, f.lo, f.hi); err != nil {
			return err
		}
	}
	return nil
}

// checkFigure checks that v is finite and within [lo, hi], or 0 where
// zeroOK.
func checkFigure(name string, v float64, zeroOK bool, lo, hi float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%w: %s is %v", ErrFigures, name, v)
	case v < 0, v == 0 && !zeroOK:
		return fmt.Errorf("%w: %s is %v; want a positive figure", ErrFigures, name, v)
	case v == 0:
		return nil
	case v < lo || v > hi:
		return fmt.Errorf("%w: %s is %v; want %v to %v, what a measurement can give", ErrFigures, name, v, lo, hi)
	}
	return nil
}

// Part is one term of an estimate: what it is the time of, and the time.
type Part struct {
	Name string  `json:"name"`
	Ms   float64 `json:"ms"`
}

// Estimate is a call's estimated time on one backend, with what it is
// made of. The zero Estimate means none could be made (Known is false).
type Estimate struct {
	Ms    float64 `json:"ms"`
	Parts []Part  `json:"parts"`
}

// Known reports whether e is an estimate rather than its absence.
func (e Estimate) Known() bool { return e.Parts != nil }

func (e *Estimate) add(name string, ms float64) {
	if e.Parts == nil {
		e.Parts = []Part{}
	}
	if ms == 0 {
		return
	}
	e.Parts = append(e.Parts, Part{name, ms})
	e.Ms += ms
}

// String formats e as "12.3 ms (transfers 10.1, passes 2.0, ...)".
func (e Estimate) String() string {
	if !e.Known() {
		return "no estimate"
	}
	s := fmt.Sprintf("%.3g ms", e.Ms)
	for i, p := range e.Parts {
		sep := ", "
		if i == 0 {
			sep = " ("
		}
		s += fmt.Sprintf("%s%s %.3g", sep, p.Name, p.Ms)
	}
	if len(e.Parts) > 0 {
		s += ")"
	}
	return s
}

// Pass is the work of one pass of a call on the device.
type Pass struct {
	// Bytes is the device memory the pass reads and writes.
	Bytes uint64
	// Positions is the positions its kernel handles (0 for copy and fill
	// commands); Atomics the global atomics it issues, at most, of which
	// RunAtomics fall on the consecutive units of a row, an invocation's
	// next atomic on the next word (Device.RunAtomicNs).
	Positions, Atomics, RunAtomics uint64
	// Invocations is the invocations that have positions to handle, in
	// Groups workgroups (0: not known, taken as a full device);
	// Dispatches the compute dispatches it records, each LaunchUs; Kind
	// the kind of pass, which a figure of its own may time
	// (Device.Passes).
	Invocations, Groups uint64
	Dispatches          int
	Kind                PassKind
	// Hottest is the updates that meet the call's most frequent target,
	// where the plan knows it (a hot-target census's scatter or a
	// bucketed fold of indices on the host), each PassFigure.KeyNs more:
	// in workgroup memory they queue on one address, and one workgroup
	// folds the hottest slot's list. 0: not known.
	Hottest uint64
	// Checks is the index positions the pass reads and checks itself
	// where no resolve pass does it first (an atomic scatter of a host
	// call that reads the raw indices), each at the resolve's figure
	// (Passes.Resolve), where it was measured.
	Checks uint64
}

// GPUWork is a call's work on the device (gpu.Backend's plan of it).
type GPUWork struct {
	// UploadBytes and DownloadBytes move between host and device (0 and
	// 0 for a call on resident tensors).
	UploadBytes, DownloadBytes uint64
	// Submits is the submissions and waits; Dispatches the compute
	// dispatches over all passes; HostCalls the host calls (Execute of
	// host tensors: 0 for calls on resident tensors), each ExecuteUs.
	Submits, Dispatches, HostCalls int
	Passes                         []Pass
	// Compiles is the pipelines the call compiles first that have no
	// compile time kept of their own or of their class, each CompileMs;
	// CompileKeptMs the kept compile times of the others, in
	// milliseconds (gpu.Backend.CompileWork).
	Compiles      int
	CompileKeptMs float64
}

// Estimate estimates w on the device d: the transfers at their measured
// rates, each pass the longer of its bytes at the copy rate and its
// positions and atomics at the element and atomic rates (a pass is bound
// by memory or by its invocations), or, for a kind of pass with a
// figure of its own (Device.Passes), its positions, invocations and
// dispatches at that figure's, either over its occupancy (Occupancy),
// each dispatch adding its launch (LaunchUs); each dispatch, each
// submission and each host call at theirs.
func (d *Device) Estimate(w GPUWork) Estimate {
	var e Estimate
	e.add("upload", ms(float64(w.UploadBytes)/(d.UploadGBps*1e9)))
	e.add("download", ms(float64(w.DownloadBytes)/(d.DownloadGBps*1e9)))
	var passes float64
	for _, p := range w.Passes {
		passes += d.PassMs(p)
	}
	e.add("passes", passes)
	e.add("dispatches", float64(w.Dispatches)*d.DispatchUs/1e3)
	e.add("host calls", float64(w.HostCalls)*d.ExecuteUs/1e3)
	e.add("submits", float64(w.Submits)*d.SubmitWaitUs/1e3)
	e.add("compile", float64(w.Compiles)*d.CompileMs+w.CompileKeptMs)
	return e
}

// PassMs returns the estimated device time of the pass p, in
// milliseconds, as Estimate's "passes" part adds it up: the longer of
// its bytes at CopyGBps and its positions and atomics at ElementNs and
// AtomicNs (RunAtomicNs for its RunAtomics), or, for a kind of pass with
// a figure of its own (Device.Passes), its positions, invocations,
// dispatches and hottest target's updates at that figure's; in either
// case its Checks at the resolve's figure are added to the work. That
// time is multiplied by its Occupancy, and LaunchUs is added for each
// of its dispatches. What each dispatch adds to the submission beyond
// that (DispatchUs) is left out: PassMs is the time the device's
// timestamps around the pass hold.
func (d *Device) PassMs(p Pass) float64 {
	mem := float64(p.Bytes) / (d.CopyGBps * 1e9)
	run := d.RunAtomicNs
	if run == 0 {
		run = d.AtomicNs
	}
	runs := min(p.RunAtomics, p.Atomics)
	var checks float64 // ns
	if f := d.Passes.of(PassResolve); f != nil {
		checks = float64(p.Checks) * f.PositionNs
	}
	work := (float64(p.Positions)*d.ElementNs + float64(p.Atomics-runs)*d.AtomicNs + float64(runs)*run + checks) * 1e-9
	if f := d.Passes.of(p.Kind); f != nil {
		work = (float64(p.Positions)*f.PositionNs + float64(p.Invocations)*f.InvocationNs + float64(p.Dispatches)*f.DispatchNs +
			float64(p.Hottest)*f.KeyNs + checks) * 1e-9
	}
	return ms(max(mem, work)*d.Occupancy(p)) + float64(p.Dispatches)*d.LaunchUs/1e3
}

// Occupancy returns what a pass's work takes beyond its time at full
// occupancy because its dispatches have fewer workgroups each than the
// device runs at once (ConcurrentGroups over the workgroups per
// dispatch), at least 1: the figures are times at full occupancy.
func (d *Device) Occupancy(p Pass) float64 {
	if d.ConcurrentGroups <= 1 || p.Groups == 0 || p.Dispatches <= 0 {
		return 1
	}
	per := float64(p.Groups) / float64(p.Dispatches)
	return max(d.ConcurrentGroups/per, 1)
}

// CPUWork is a call's work on the CPU backend (cpuref.WorkOf).
type CPUWork struct {
	// CopyBytes is the output's starting copy of data, in bytes read and
	// written (0 in place).
	CopyBytes uint64
	// MoveBytes is the bytes of the runs of updates moved whole (rows of
	// a reduction-none call, and the float32 row sums folded a row at a
	// time), each with what its partly written cache lines cost
	// (cpuref.WorkOf says which).
	MoveBytes uint64
	// Elements is the update elements a reduction-none call of single
	// elements scatters; Reduced those a reduction folds.
	Elements, Reduced uint64
	// FoldUpdates is those of Reduced that the CPU backend folds serially
	// or binned as its fold figures choose (CPU.Fold; cpuref.WorkOf says
	// which calls), onto FoldOutLen elements of an out of FoldOutBytes
	// bytes (the size the figures are read at); 0 where none is.
	FoldUpdates, FoldOutLen, FoldOutBytes uint64
}

// Estimate estimates w on the CPU backend c: the copy, the moves, the
// elements and the reduced elements at their rates, but for
// w.FoldUpdates, which where c's fold figures speak for the out's size
// (CPU.FoldMs) take the faster of the two folds' times, as the CPU
// backend chooses on c.Threads workers ("fold serial" or "fold binned"),
// and are otherwise reduced elements too.
func (c *CPU) Estimate(w CPUWork) Estimate {
	var e Estimate
	e.add("copy", ms(float64(w.CopyBytes)/(c.CopyGBps*1e9)))
	e.add("move", ms(float64(w.MoveBytes)/(c.MoveGBps*1e9)))
	e.add("elements", float64(w.Elements)*c.ElementNs/1e6)
	reduced := w.Reduced
	if w.FoldUpdates > 0 && w.FoldUpdates <= reduced {
		if serial, binned, ok := c.FoldMs(w.FoldOutBytes, w.FoldOutLen, w.FoldUpdates); ok {
			reduced -= w.FoldUpdates
			if serial < binned {
				e.add("fold serial", serial)
			} else {
				e.add("fold binned", binned)
			}
		}
	}
	e.add("reduce", float64(reduced)*c.ReduceNs/1e6)
	return e
}

func ms(s float64) float64 { return s * 1e3 }

// Repeat returns the work of n calls of w: one submission each, or, with
// batched, one submission for all of them (a resident batch); the first
// compiles what w compiles.
func (w GPUWork) Repeat(n int, batched bool) GPUWork {
	r := GPUWork{UploadBytes: w.UploadBytes * uint64(n), DownloadBytes: w.DownloadBytes * uint64(n),
		Submits: w.Submits * n, Dispatches: w.Dispatches * n, HostCalls: w.HostCalls * n, Compiles: w.Compiles,
		CompileKeptMs: w.CompileKeptMs}
	if batched {
		r.Submits = min(w.Submits, 1)
	}
	for _, p := range w.Passes {
		r.Passes = append(r.Passes, Pass{Bytes: p.Bytes * uint64(n), Positions: p.Positions * uint64(n), Atomics: p.Atomics * uint64(n),
			RunAtomics: p.RunAtomics * uint64(n), Invocations: p.Invocations * uint64(n), Groups: p.Groups * uint64(n),
			Dispatches: p.Dispatches * n, Kind: p.Kind, Hottest: p.Hottest * uint64(n),
			Checks: p.Checks * uint64(n)})
	}
	return r
}

// Repeat returns the work of n calls of w: the folds' updates and
// elements n times over, onto an out of the same size.
func (w CPUWork) Repeat(n int) CPUWork {
	k := uint64(n)
	return CPUWork{CopyBytes: w.CopyBytes * k, MoveBytes: w.MoveBytes * k, Elements: w.Elements * k, Reduced: w.Reduced * k,
		FoldUpdates: w.FoldUpdates * k, FoldOutLen: w.FoldOutLen * k, FoldOutBytes: w.FoldOutBytes}
}

// Clone returns a copy of d that shares no memory with it (its pass and
// CPU figures copied too).
func (d Device) Clone() Device {
	if d.Passes != nil {
		p := *d.Passes
		d.Passes = &p
	}
	if d.CPU != nil {
		c := *d.CPU
		c.Fold = slices.Clone(c.Fold)
		d.CPU = &c
	}
	return d
}
