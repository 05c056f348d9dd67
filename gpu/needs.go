//go:build cgo

package gpu

import (
	"fmt"
	"math/bits"

	"github.com/gpuscatter/gpuscatter/cost"
	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/vk"
)

// PlanNeeds is what one Execute of a plan needs of the device, worked out
// from the plan's shapes before anything is allocated (Backend.Needs).
type PlanNeeds struct {
	// DeviceBytes is the device memory the call allocates, in pooled
	// buffers rounded up to their size classes: the sum of Tensors.
	DeviceBytes uint64
	// Tensors lists the call's device tensors with their bytes.
	Tensors []TensorNeed
	// Path names the way the call runs: "data" (nothing runs on the
	// device), "resolve" (no updates: the indices are checked only), a
	// reduction's Stats.Reduction ("native", "cas", "native+private",
	// "walk", "ordered", ...), else "copy", "walk", "gather", "owner",
	// "later" or "scatter".
	Path string
	// Passes lists the passes the call records, in order, with their
	// dispatches, invocations and the device bytes each reads and writes
	// (at most what the plan's counts allow; the index values decide how
	// many targets an update really meets).
	Passes []PassNeed
	// Dispatches is the compute dispatches over all Passes.
	Dispatches int
	// TrafficBytes is the device bytes read and written over all Passes.
	TrafficBytes uint64
	// OnePassBytes is the least traffic any plan of these shapes moves
	// (ops.Plan.OnePassBytes): the indices and the updates read once, and
	// each output element the call may change read and written once.
	OnePassBytes uint64
	// HostBytes is what moves between host and device: data, updates and
	// indices up, the output down (0 for a call in place on resident
	// tensors: NeedsInPlace).
	HostBytes uint64
	// DownloadBytes is the part of HostBytes that is the output's
	// download; the rest is uploaded.
	DownloadBytes uint64
	// Submits is the submissions, each with its wait, the call takes
	// beyond those of staged transfers: 1, or 0 when nothing runs on the
	// device (an in-order fold whose lists run longer than a segment
	// adds one as it runs; see Stats.Submits).
	Submits int
	// DataCopyBytes is data's size on the device, what the output holds
	// before the passes run. Execute uploads data straight into the
	// output (part of HostBytes), so for every operator no pass copies it
	// and TrafficBytes, the passes' device bytes, leaves it out; a
	// resident call out of place (Run) copies it in a "copy" pass, which
	// its traffic counts, and one in place copies nothing.
	DataCopyBytes uint64
	// Plan describes the call as Execute records it: the path, the
	// tensors and every pass with its kernel, positions and arguments.
	Plan string
	// FirstClearBytes is the owner words the backend clears before the
	// first call of the plan (or one after a failed call): later calls
	// find them clear, as every call leaves them, and Passes and
	// TrafficBytes leave the clear out (callPlan.keepsOwners).
	FirstClearBytes uint64
	// Pipelines is the distinct compute pipelines the call uses
	// (Backend.Uncompiled tells how many are yet to be compiled).
	Pipelines int
	keys      []pipeKey
}

// TensorNeed is one device tensor of a call.
type TensorNeed struct {
	Name  string
	Bytes uint64
}

// PassNeed is one pass of a call: its label in Stats.Passes, its compute
// dispatches (0 for a fill or copy commands), the invocations that have
// work in them (its parallelism), and the device bytes it reads and
// writes.
type PassNeed struct {
	Name       string
	Dispatches int
	// Invocations is the invocations that have positions to handle, in
	// Groups workgroups.
	Invocations, Groups uint64
	Read, Written       uint64
	// Positions is the positions its kernels handle (elements or units
	// moved, folded or resolved); Atomics the atomics it issues at most,
	// in device or workgroup memory, of which RunAtomics fall on the
	// consecutive units of a row (a Block plan's scatter with rows of
	// several units: cost.Device.RunAtomicNs).
	Positions, Atomics, RunAtomics uint64
	// Hottest is the updates on the call's most frequent target, as a
	// sample of the index values on the host shows it, for a pass of the
	// hot-target census or of the bucketed fold (cost.Pass.Hottest); 0
	// where they are not known.
	Hottest uint64
	// Checks is the index positions the pass checks itself, without a
	// resolve pass (cost.Pass.Checks).
	Checks uint64
	// Kind is the kind of pass whose figure times it (cost.PassKind):
	// the in-order fold's radix passes, its fold, or the bucketed fold;
	// cost.PassPlain for the others.
	Kind cost.PassKind
}

// Needs tells, before anything runs, what Execute of p will take of the
// device, so that a caller can split work that does not fit: the device
// memory of every tensor and the passes it runs. It allocates nothing. It returns the error
// Execute would give for a plan this backend cannot run.
func (b *Backend) Needs(p *ops.Plan) (PlanNeeds, error) { return b.needs(p, false) }

// NeedsInPlace is Needs for the call a runtime makes on tensors resident
// on the device, with data as the output (a Run or Batch call whose Out
// is Data): the passes it records, and no host traffic and no copy of
// data. DeviceBytes counts the resident tensors too.
func (b *Backend) NeedsInPlace(p *ops.Plan) (PlanNeeds, error) { return b.needs(p, true) }

// needs is Needs, or NeedsInPlace with inPlace, on b's device now.
func (b *Backend) needs(p *ops.Plan, inPlace bool) (PlanNeeds, error) {
	if b == nil {
		return PlanNeeds{}, closedPlanError(p)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return PlanNeeds{}, closedPlanError(p)
	}
	// Execute's output is the backend's own; a resident call's is not.
	f := b.facts(!inPlace)
	return f.callNeeds(p, inPlace)
}

// Uncompiled returns how many of the pipelines of a call planned as n
// (Needs, NeedsInPlace or PlanFor for b's device) neither this backend nor
// an earlier process that kept the pipeline cache compiled on this device
// and driver (vk.Device.PipelineKnown): the first call waits for the
// compiler on each.
func (b *Backend) Uncompiled(n PlanNeeds) int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0
	}
	count := 0
	for _, k := range n.keys {
		if _, ok := b.pipes[k]; ok {
			continue
		}
		if spec, _, err := pipelineSpec(k); err != nil || !b.dev.PipelineKnown(spec) {
			count++
		}
	}
	return count
}

// runAtomics reports whether the atomics of ps fall on the consecutive
// units of rows: a Block plan's scatter whose index tuples each name a
// row of several units, an invocation's units one after another. The
// atomics of an Element plan's scatter, and of rows of one unit, each
// have an index of their own and an address unrelated to the next.
func (pl *callPlan) runAtomics(ps *pass) bool {
	j := pl.j
	return ps.kind == passDispatch && ps.key.Family == shaders.Scatter && j.kind == shaders.Block && !j.gather &&
		j.resolve > 0 && j.updates >= 2*j.resolve
}

// callNeeds plans p for a device with facts f, as Execute records it or,
// with inPlace, as a Batch records the call in place on resident tensors.
func (f *facts) callNeeds(p *ops.Plan, inPlace bool) (PlanNeeds, error) {
	pl, err := f.callFigures(p, inPlace)
	if err != nil {
		return PlanNeeds{}, err
	}
	n := pl.figures(inPlace)
	n.Plan = pl.String()
	return n, nil
}

// callFigures plans p as callNeeds does, without the plan's text.
func (f *facts) callFigures(p *ops.Plan, inPlace bool) (*callPlan, error) {
	if inPlace {
		return f.planResident(p)
	}
	return f.planCall(p)
}

// planResident plans p as a Batch lays the call out over resident
// tensors of its inputs' sizes, in place (no copy of data): from the
// shapes alone, as a Batch, which cannot read index values on the
// device, plans it (skewedIndices).
func (f *facts) planResident(p *ops.Plan) (*callPlan, error) {
	if p.Indices != nil && len(p.Indices.Data) > 0 {
		q, ix := *p, *p.Indices
		ix.Data = nil
		q.Indices = &ix
		p = &q
	}
	pl, err := f.planCall(p)
	if err != nil {
		return nil, err
	}
	if err := pl.resident([3]uint64{pl.host[0], pl.host[1], pl.host[2]}, 0); err != nil {
		return nil, err
	}
	return pl, nil
}

// tensorBytes returns the device memory a tensor of size bytes takes in
// chunks of 2^shift bytes (allocSize).
func tensorBytes(size uint64, shift uint) uint64 {
	var n uint64
	for _, c := range chunkSizes(size, shift) {
		n += allocSize(c, shift)
	}
	return n
}

// tensorNames name the tensor slots in PlanNeeds.Tensors.
var tensorNames = [numTensors]string{"output", "updates", "indices", "normalised indices", "owner words",
	"accumulators", "keys", "values", "keys 2", "values 2", "histograms", "scan", "list", "atomic counts"}

// tensorNeeds returns the call's device tensors with the bytes each
// takes, its parameter buffer last; none where Execute copies data on the
// host. needs and the plan's description both list them from here.
func (pl *callPlan) tensorNeeds() []TensorNeed {
	if pl.hostOnly() {
		return nil
	}
	var ts []TensorNeed
	for i, size := range pl.sizes {
		if size > 0 {
			ts = append(ts, TensorNeed{tensorNames[i], tensorBytes(size, pl.shift)})
		}
	}
	return append(ts, TensorNeed{"parameters", tensorBytes(pl.paramBytes(), pl.f.maxShift)})
}

// needs works out PlanNeeds from the call's plan: its tensors, parameter
// buffer and passes as the recorder lowers them.
func (pl *callPlan) needs() PlanNeeds {
	n := pl.figures(false)
	n.Plan = pl.String()
	return n
}

// figures is needs without the plan's text, which takes as long to
// format as a small call takes to run; inPlace: the call is in place on
// resident tensors, with no host transfers and no copy of data.
func (pl *callPlan) figures(inPlace bool) PlanNeeds {
	n := PlanNeeds{Path: pl.path()}
	if pl.hostOnly() {
		return n // Execute copies data on the host
	}
	n.Tensors = pl.tensorNeeds()
	for _, t := range n.Tensors {
		n.DeviceBytes += t.Bytes
	}
	data := pl.host[0]
	n.HostBytes = pl.hostBytes()
	n.DataCopyBytes = data
	if pl.j.updates > 0 {
		n.DownloadBytes = data
	}
	n.Submits = 1
	var pending PassNeed // unlabelled passes: timed with the next pass
	var hottest uint64   // hottestUpdates(pl.p), sampled once: haveHottest
	haveHottest := false
	for i := range pl.passes {
		ps := &pl.passes[i]
		if ps.once {
			n.FirstClearBytes += ps.written
			continue
		}
		pending.Dispatches += len(ps.dispatches)
		inv, groups := ps.withWork()
		pending.Invocations += inv
		pending.Groups += groups
		pending.Read += ps.read
		pending.Written += ps.written
		pending.Positions += ps.positions(pl.j.updates)
		pending.Atomics += ps.atomics
		if pl.runAtomics(ps) {
			pending.RunAtomics += ps.atomics
		}
		if ps.label == "" {
			continue
		}
		pending.Name = ps.label
		pending.Kind = pl.passKind(ps.label)
		if pending.Kind == cost.PassHot || pending.Kind == cost.PassBucket {
			if !haveHottest {
				hottest, haveHottest = hottestUpdates(pl.p), true
			}
			pending.Hottest = hottest
		}
		if ps.label == "scatter" && pl.j.direct && !pl.j.check {
			pending.Checks = pl.j.resolve // no resolve pass: the scatter checks them
		}
		n.Passes = append(n.Passes, pending)
		n.Dispatches += pending.Dispatches
		pending = PassNeed{}
	}
	n.TrafficBytes = pl.trafficBytes()
	n.OnePassBytes = pl.p.OnePassBytes()
	seen := map[pipeKey]bool{}
	for _, list := range [][]pass{pl.passes, pl.more} {
		for _, ps := range list {
			if k := ps.pipeKey(pl.flags); ps.kind == passDispatch && !seen[k] {
				seen[k] = true
				n.keys = append(n.keys, k)
			}
		}
	}
	n.Pipelines = len(n.keys)
	if inPlace {
		n.HostBytes, n.DownloadBytes, n.DataCopyBytes = 0, 0, 0
	}
	return n
}

// hostBytes is what an Execute of the call copies between host and
// device (PlanNeeds.HostBytes): data, updates and indices up, and the
// output, data's size, down where the call has updates.
func (pl *callPlan) hostBytes() uint64 {
	data, upd, idx := pl.host[0], pl.host[1], pl.host[2]
	n := data + upd + idx
	if pl.j.updates > 0 {
		n += data
	}
	return n
}

// trafficBytes is the device bytes the call's timed passes read and
// write (PlanNeeds.TrafficBytes, the sum of its Passes: an unlabelled
// pass counts with the next labelled one), the clear of the owner words
// the backend records only once left out.
func (pl *callPlan) trafficBytes() uint64 {
	var n, pending uint64
	for i := range pl.passes {
		ps := &pl.passes[i]
		if ps.once {
			continue
		}
		pending += ps.read + ps.written
		if ps.label != "" {
			n, pending = n+pending, 0
		}
	}
	return n
}

// passKind returns the kind of the call's pass labelled label.
func (pl *callPlan) passKind(label string) cost.PassKind {
	r := pl.j.red
	switch {
	case label == "resolve" && pl.j.flags&flagTable != 0:
		return cost.PassTable
	case label == "resolve":
		return cost.PassResolve
	case label == "scatter" && r != nil && r.hot:
		return cost.PassHot
	case label == "scatter" && r == nil && !pl.j.gather && !pl.j.copies && pl.j.kind != shaders.Slice:
		return cost.PassIndexed
	case r == nil || !r.ordered:
		return cost.PassPlain
	case label == "radix-count" || label == "radix-scatter":
		return cost.PassRadix
	case label == "fold" && r.bucket:
		return cost.PassBucket
	case label == "fold":
		return cost.PassFold
	}
	return cost.PassPlain
}

// CheckFits returns the error Execute of p, which needs n (Needs), would
// give before any work for lack of device memory: one wrapping
// ops.ErrOutOfMemory when the device has less memory free now than n
// takes; nil when the call fits.
func (b *Backend) CheckFits(p *ops.Plan, n PlanNeeds) error {
	if b == nil {
		return closedPlanError(p)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return closedPlanError(p)
	}
	return b.checkFits(p, n)
}

// CheckFitsFor is CheckFits on the device that info describes (PlanFor),
// opened afresh: the memory free is its largest device-local heap, as on a
// device that holds nothing yet.
func CheckFitsFor(info vk.DeviceInfo, p *ops.Plan, n PlanNeeds) error {
	return fits(p, n, vk.Memory{Heap: info.DeviceLocalMemory}.Free())
}

// checkFits fails with an error wrapping ops.ErrOutOfMemory when the
// device has less free memory than n needs; b.mu is held.
func (b *Backend) checkFits(p *ops.Plan, n PlanNeeds) error {
	free := func() (devFree, free uint64) {
		devFree = b.dev.Memory().Free()
		free = devFree
		if b.budget != 0 {
			free = min(free, b.budget)
		}
		return devFree, free
	}
	devFree, f := free()
	if n.DeviceBytes <= f {
		return nil
	}
	if len(b.clear) > 0 {
		// Owner words kept clear are a cache: give them back first.
		b.dropClearOwners()
		if devFree, f = free(); n.DeviceBytes <= f {
			return nil
		}
	}
	r := b.residentRounding()
	// The rounding of the resident tensors' buffers decides when the
	// call would fit in the memory they leave unused.
	r.decides = r.unused() > 0 && n.DeviceBytes <= devFree+r.unused() && (b.budget == 0 || n.DeviceBytes <= b.budget)
	return refusal(p, n, f, r)
}

// rounding is what the resident tensors of a backend hold beyond their
// data: buffers are sized in steps (allocSize), so a tensor of 1921 MiB
// in one buffer takes 2048 MiB.
type rounding struct {
	data, held uint64 // the tensors' bytes, and their buffers'
	step       uint64 // the largest step a buffer was rounded up by
	decides    bool   // the call would fit without the rounding
}

// unused returns the bytes of the buffers that hold no data.
func (r rounding) unused() uint64 { return r.held - min(r.data, r.held) }

// residentRounding returns the rounding of b's open resident tensors;
// b.mu is held.
func (b *Backend) residentRounding() rounding {
	var r rounding
	for t := range b.resident {
		if t.dev == nil {
			continue
		}
		for i, buf := range t.dev.bufs {
			if buf == nil || i >= len(t.dev.sizes) {
				continue
			}
			n, size := t.dev.sizes[i], buf.Size()
			r.data += n
			r.held += size
			if size > n {
				r.step = max(r.step, sizeStep(n))
			}
		}
	}
	return r
}

// sizeStep returns the step allocSize rounds a chunk of n bytes up by.
func sizeStep(n uint64) uint64 {
	if n <= minBuffer {
		return minBuffer
	}
	return uint64(1) << max(bits.Len64(n-1)-4, 0)
}

// fits is the rule of checkFits: a call fits when its device bytes are at
// most free.
func fits(p *ops.Plan, n PlanNeeds, free uint64) error {
	if n.DeviceBytes <= free {
		return nil
	}
	return refusal(p, n, free, rounding{})
}

// refusal is the error of a call that needs more device memory than the
// free bytes; where the rounding of the resident tensors' buffers decides
// (r.decides), it says how much of them is unused and the step.
func refusal(p *ops.Plan, n PlanNeeds, free uint64, r rounding) error {
	msg := fmt.Sprintf("vulkan: needs %s of device memory; the device has %s free", mibUp(n.DeviceBytes), mibDown(free))
	if r.decides {
		msg += fmt.Sprintf(": its resident tensors' %s of data take %s, as buffers are sized in steps of up to %s; "+
			"the %s they hold beyond the data is not free for a call", mibUp(r.data), mibUp(r.held), mibUp(r.step), mibDown(r.unused()))
	}
	return &ops.Error{Op: p.Op.Name, Input: "data", Err: ops.ErrOutOfMemory, Msg: msg}
}

// mibUp and mibDown write bytes in MiB, rounded up (what a call needs)
// or down (what is free).
func mibUp(bytes uint64) string { return fmt.Sprintf("%d MiB", ceilDiv(bytes, 1<<20)) }

func mibDown(bytes uint64) string { return fmt.Sprintf("%d MiB", bytes>>20) }
