//go:build cgo

package gpu

import (
	"fmt"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/tensor"
)

// PlanNeeds is what one Execute of a plan needs of the device, worked out
// from the plan's shapes before anything is allocated (Backend.Needs).
type PlanNeeds struct {
	// DeviceBytes is the device memory the call allocates, in pooled
	// buffers rounded up to their size classes: the sum of Tensors.
	DeviceBytes uint64
	// Tensors lists the call's device tensors with their bytes.
	Tensors []TensorNeed
	// Passes lists the passes the call records, in order, with the device
	// bytes each reads and writes (estimated from the plan's counts; the
	// index values decide how many targets an update really meets).
	Passes []PassNeed
	// TrafficBytes is the device bytes read and written over all Passes.
	TrafficBytes uint64
	// OnePassBytes is the traffic of a single pass that would read the
	// indices and the updates once and write each update's target once:
	// the least any plan of these shapes moves on the device.
	OnePassBytes uint64
	// HostBytes is what moves between host and device: data, updates and
	// indices up, the output down.
	HostBytes uint64
}

// TensorNeed is one device tensor of a call.
type TensorNeed struct {
	Name  string
	Bytes uint64
}

// PassNeed is one pass of a call: its label in Stats.Passes, and the
// device bytes it reads and writes.
type PassNeed struct {
	Name          string
	Read, Written uint64
}

// Needs returns what Execute of p needs of the device: the device memory
// of every tensor and the passes it runs. It allocates nothing; a caller
// can split work that does not fit before it fails. It returns the error
// Execute would give for a plan this backend cannot run.
func (b *Backend) Needs(p *ops.Plan) (PlanNeeds, error) {
	if b == nil {
		return PlanNeeds{}, closedPlanError(p)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return PlanNeeds{}, closedPlanError(p)
	}
	j, err := b.jobFor(p)
	if err != nil {
		return PlanNeeds{}, err
	}
	data, _, _ := hostSizes(p, j)
	saved := b.shift
	b.shift = b.callShift(data)
	defer func() { b.shift = saved }()
	return b.needs(p, j), nil
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

// hostSizes returns the byte sizes of the host images Execute moves to
// the device: data (into the output), updates, indices. Strings move as
// 32-bit handles.
func hostSizes(p *ops.Plan, j *job) (data, upd, idx uint64) {
	if j.updates > 0 {
		if p.DType == tensor.String {
			data, upd = 4*uint64(p.Data.Len()), 4*uint64(p.Updates.Len())
		} else {
			data, upd = payloadBytes(p.Data), payloadBytes(p.Updates)
		}
	}
	if j.kind != shaders.Slice && p.Indices != nil {
		idx = payloadBytes(p.Indices)
	}
	return data, upd, idx
}

// needs works out PlanNeeds for job j of p; b.mu is held.
func (b *Backend) needs(p *ops.Plan, j *job) PlanNeeds {
	var n PlanNeeds
	if j.updates == 0 && j.resolve == 0 {
		return n // Execute copies data on the host
	}
	data, upd, idx := hostSizes(p, j)
	sizes := []TensorNeed{
		{"output", data}, {"updates", upd}, {"indices", idx},
		{"normalised indices", 4 * j.resolve}, {"owner words", 4 * j.owners},
	}
	if r := j.red; r != nil {
		names := [numTensors - tAcc]string{"accumulators", "keys", "values", "keys 2", "values 2", "histograms", "scan", "list"}
		for i, s := range r.tensorSizes() {
			sizes = append(sizes, TensorNeed{names[i], s})
		}
	}
	chunks := 0
	for _, t := range sizes {
		if t.Bytes == 0 {
			continue
		}
		t.Bytes = tensorBytes(t.Bytes, b.shift)
		n.Tensors = append(n.Tensors, t)
		n.DeviceBytes += t.Bytes
		chunks += len(chunkSizes(t.Bytes, b.shift))
	}
	// The parameter buffer (newCall): the parameters, the list of the
	// reduction tensors' tables, every chunk address and the error word.
	words := uint64(len(j.params)+chunks) + 1
	if j.red != nil {
		words += numTensors - tAcc
	}
	params := TensorNeed{"parameters", tensorBytes(8*words, b.maxShift)}
	n.Tensors = append(n.Tensors, params)
	n.DeviceBytes += params.Bytes
	n.HostBytes = data + upd + idx
	if j.updates > 0 {
		n.HostBytes += data
	}
	n.Passes = b.passes(j)
	for _, ps := range n.Passes {
		n.TrafficBytes += ps.Read + ps.Written
	}
	e := uint64(j.elemBytes)
	n.OnePassBytes = idx + 2*j.updates*e
	return n
}

// passes lists the passes record records for j, with their estimated
// device traffic. It mirrors recorder.record.
func (b *Backend) passes(j *job) []PassNeed {
	var ps []PassNeed
	add := func(name string, read, written uint64) {
		ps = append(ps, PassNeed{name, read, written})
	}
	e := uint64(j.elemBytes)
	if j.owners > 0 {
		add("clear", 0, 4*j.owners)
	}
	if j.resolve > 0 {
		read, written := uint64(j.indexBytes)*j.indices, 4*j.resolve
		if j.flags&(flagOwner|flagCount) != 0 {
			read, written = read+4*j.resolve, written+4*j.resolve
		}
		add("resolve", read, written)
	}
	if j.updates == 0 {
		return ps
	}
	// The scatter of reduction none reads each update, its normalised
	// index and (with owners) its slot's owner word, and writes its target.
	scatter := func() {
		read := j.updates*e + 4*j.resolve
		if j.owners > 0 {
			read += 4 * j.resolve
		}
		switch {
		case j.gather:
			add("scatter", 4*j.owners+j.outputs*e, j.outputs*e)
		case j.walk:
			// One dispatch per segment of J; the updates split among them.
			segs := j.walkSegments()
			for s := uint64(0); s < segs; s++ {
				part := j.updates / segs
				if s == segs-1 {
					part = j.updates - part*(segs-1)
				}
				add("scatter", part*(e+4), part*e)
			}
		default:
			add("scatter", read, j.updates*e)
		}
	}
	r := j.red
	switch {
	case r == nil && j.copies:
		add("scatter", j.updates*e, j.updates*e)
	case r == nil:
		scatter()
	case r.ordered:
		scan := func(n uint64) {
			blk := groupSize * uint64(b.run)
			levels := []uint64{n}
			for last := n; last > blk; {
				last = ceilDiv(last, blk)
				levels = append(levels, last)
			}
			for _, l := range levels {
				add("scan", 4*l, 4*l+4*ceilDiv(l, blk))
			}
			for _, l := range levels[:len(levels)-1] {
				add("scan", 4*l+4*ceilDiv(l, blk), 4*l)
			}
		}
		scan(r.slots + 1)
		for pass := 0; pass < r.passes; pass++ {
			add("radix-count", 8*r.items, 64*r.tiles)
			scan(16 * r.tiles)
			add("radix-scatter", 8*r.items+64*r.tiles, 8*r.items)
		}
		for seg := uint64(0); seg < r.segments; seg++ {
			add("fold", j.updates*(e+4)+min(j.outputs, j.updates)*e, min(j.outputs, j.updates)*e)
		}
	default:
		if r.prepare {
			add("prepare", j.outputs*e, j.outputs*e+r.accBytes)
		}
		// Atomics read and write the target of every update.
		add("scatter", j.updates*(2*e+4)+4*j.resolve, j.updates*e)
		if r.finish {
			add("finish", j.outputs*e+r.accBytes+4*j.owners, j.outputs*e)
		}
	}
	return ps
}

// checkFits fails with an error wrapping ops.ErrOutOfMemory when the
// device has less free memory than n needs; b.mu is held.
func (b *Backend) checkFits(p *ops.Plan, n PlanNeeds) error {
	free := b.dev.Memory().Free()
	if b.budget != 0 {
		free = min(free, b.budget)
	}
	if n.DeviceBytes <= free {
		return nil
	}
	return &ops.Error{Op: p.Op.Name, Input: "data", Err: ops.ErrOutOfMemory,
		Msg: fmt.Sprintf("vulkan: needs %d MiB of device memory; the device has %d MiB free", ceilDiv(n.DeviceBytes, 1<<20), free>>20)}
}

// PlanTraffic returns, from Needs, the number of passes Execute of p
// runs, the device bytes they read and write in all, and the device
// memory the call takes (bench.TrafficPlanner).
func (b *Backend) PlanTraffic(p *ops.Plan) (passes int, traffic, memory uint64, err error) {
	n, err := b.Needs(p)
	if err != nil {
		return 0, 0, 0, err
	}
	return len(n.Passes), n.TrafficBytes, n.DeviceBytes, nil
}
