//go:build cgo

package gpu

import (
	"math"

	"github.com/gpuscatter/gpuscatter/ops"
	"github.com/gpuscatter/gpuscatter/shaders"
	"github.com/gpuscatter/gpuscatter/tensor"
	"github.com/gpuscatter/gpuscatter/vk"
)

// callPlan is everything one call of an ops.Plan does on the device,
// worked out from the plan's shapes and the device's facts without
// touching the device: its job, the device tensors by slot with their
// sizes, the parameter buffer's layout, the push constants and the passes
// in order. Backend.Needs reports it; the recorder lowers it into
// commands as it stands.
type callPlan struct {
	p *ops.Plan
	j *job
	f facts
	// shift is log2 of the chunk size of the call's tensors.
	shift uint
	// sizes are the bytes of the tensors by slot: T_OUT ... T_OWNER, and
	// T_ACC ... T_LIST with a reduction.
	sizes []uint64
	// host are the bytes moved to the device: data, updates, indices.
	host [3]uint64
	// flags is the kernels' specialization (FLAG_*).
	flags uint32
	// params is the parameter buffer up to the error word: the parameter
	// array, the list of the reduction tensors' tables, then every
	// tensor's chunk addresses (zero here) at tableAt; errAt is the error
	// word's byte offset.
	params  []uint64
	tableAt []uint32
	errAt   uint64
	// push is the push-constant block every pass starts from; the
	// parameter buffer's address is the recorder's to fill in.
	push   push
	passes []pass
	// more are the in-order fold's passes after its first, one per
	// further segment of the longest list the shapes allow. An Execute,
	// or a batch's last call, records only as many as the longest list
	// the first fold pass found needs, in a second submission and only
	// when one is longer than a segment (call.further); a batch's other
	// calls have them all in passes, since later calls may read their
	// output.
	more []pass
	// reduction is the path of a reduction (Stats.Reduction): empty for
	// reduction none and for plans without updates.
	reduction string
}

// passKind is what a pass records.
type passKind uint8

const (
	// passDispatch runs a kernel.
	passDispatch passKind = iota
	// passFill zeroes tensor slot.
	passFill
	// passCopyData copies a resident data tensor into the output.
	passCopyData
	// passCopyRuns moves a Slice plan's contiguous runs with copy regions.
	passCopyRuns
)

// pass is one pass of a call: commands followed by a timestamp named
// label (none when label is empty).
type pass struct {
	label string
	kind  passKind
	slot  int // passFill
	// A dispatch: kernel key over n positions, run per invocation. args,
	// when not nil, replace the hot words (the reduce and sort kernels'
	// arguments); seg is the walk's or the fold's segment. chain is the
	// most steps an invocation walks or folds in order (0 for passes that
	// do not). local is the kernel's workgroup size (split sets it).
	key shaders.Key
	// words, when not 0, specialises the kernel's workgroup memory
	// (shaders.Variant.WithPrivateWords): the workgroup-memory scatter.
	words      uint32
	n          uint64
	run        uint32
	local      uint32
	args       []uint32
	seg        uint32
	chain      uint64
	dispatches []dispatch
	// copies are passCopyRuns' regions by pair of chunks.
	copies []chunkCopy
	// read and written are the device bytes the pass moves: at most
	// what its invocations can read and write from the plan's counts
	// (the index values decide how many targets an update really meets,
	// and how long a slot's list is).
	read, written uint64
	// atomics is the atomics the pass issues at most: one per update
	// of an atomic reduction's scatter, one per index of a resolve that
	// claims owner words or counts slots.
	atomics uint64
	// once: a fill of the owner words that the backend records only when
	// the words are not kept clear already (callPlan.keepsOwners); the
	// plan's figures leave it out.
	once bool
	// strided: each invocation takes one position at a time, its
	// workgroup striding over them (the workgroup-memory scatter, the
	// last-writer table's resolve), not runs.
	strided bool
}

// positions returns the positions a dispatch pass's invocations handle
// (0 for other passes): one each, or, where each walks or folds in order
// up to chain of them, at most that many, and at most the updates, which
// every walk or fold takes once in all.
func (ps *pass) positions(updates uint64) uint64 {
	if ps.kind != passDispatch {
		return 0
	}
	if ps.chain == 0 {
		return ps.n
	}
	return min(ps.n*ps.chain, max(updates, ps.n))
}

// chunkCopy is one copy command: regions from chunk src of the updates to
// chunk dst of the output.
type chunkCopy struct {
	src, dst int
	regions  []vk.CopyRegion
}

// planCall plans an Execute call of p on a device with facts f.
func (f *facts) planCall(p *ops.Plan) (*callPlan, error) {
	j, err := f.planJob(p)
	if err != nil {
		return nil, err
	}
	pl := &callPlan{p: p, j: j, f: *f}
	if j.updates > 0 {
		// Strings move as 32-bit handles.
		size := uint64(4)
		if p.DType != tensor.String {
			size = uint64(p.DType.Size())
		} else if uint64(p.Data.Len())+uint64(p.Updates.Len()) > math.MaxUint32 {
			return nil, unsupported(p, "more than 2^32 strings in data and updates")
		}
		pl.host[0], pl.host[1] = size*uint64(p.Data.Len()), size*uint64(p.Updates.Len())
	}
	if j.kind != shaders.Slice && p.Indices != nil {
		pl.host[2] = uint64(p.Indices.Len() * p.Indices.DType.Size())
	}
	pl.shift = f.callShift(pl.host[0])
	pl.sizes = []uint64{pl.host[0], pl.host[1], pl.host[2], 4 * j.normWords(), 4 * j.owners}
	if j.red != nil {
		extra := j.red.tensorSizes()
		pl.sizes = append(pl.sizes, extra[:]...)
		if j.updates > 0 {
			pl.reduction = j.red.describe(j)
		}
	}
	if err := pl.layout(); err != nil {
		return nil, err
	}
	if err := pl.planPasses(); err != nil {
		return nil, err
	}
	return pl, nil
}

// hostOnly reports whether the call has nothing to check or move on the
// device: its result is data.
func (pl *callPlan) hostOnly() bool {
	return pl.j.updates == 0 && pl.j.resolve == 0 && pl.j.checks == 0
}

// chunks returns the number of chunks of tensor slot i.
func (pl *callPlan) chunks(i int) int {
	return len(chunkSizes(pl.sizes[i], pl.shift))
}

// layout works out the parameter buffer, the flags and the push
// constants from the tensors' sizes.
func (pl *callPlan) layout() error {
	j := pl.j
	words := append([]uint64(nil), j.params...)
	if j.red != nil {
		// The table offsets of T_ACC ... go in a list at params[P_XT].
		words[pXT] = uint64(len(words))
		words = append(words, make([]uint64, len(pl.sizes)-tAcc)...)
	}
	pl.flags = j.flags | flagOneChunk
	if pl.keepsOwners() {
		pl.flags |= flagKeepClear
	}
	pl.tableAt = make([]uint32, len(pl.sizes))
	for i := range pl.sizes {
		n := pl.chunks(i)
		if n > 1 {
			pl.flags &^= flagOneChunk
		}
		pl.tableAt[i] = uint32(8 * len(words))
		words = append(words, make([]uint64, n)...)
		if i >= tAcc {
			words[int(words[pXT])+i-tAcc] = uint64(pl.tableAt[i])
		}
	}
	pl.params = words
	pl.errAt = 8 * uint64(len(words))
	if pl.paramBytes() > 1<<pl.f.maxShift {
		return unsupported(pl.p, "the chunk tables need %d bytes, more than one buffer of %d bytes, the device's allocation limit", pl.paramBytes(), uint64(1)<<pl.f.maxShift)
	}
	t := pl.tableAt
	pl.push = push{
		outT: t[tOut], updT: t[tUpd], idxT: t[tIdx], normT: t[tNorm], ownerT: t[tOwner],
		errAt: uint32(pl.errAt), shift: uint32(pl.shift), errShift: j.errShift, run: pl.f.run,
	}
	if j.posBits == 32 {
		pl.push.hot = j.hot()
		if j.red != nil {
			pl.push.hot[pXT] = uint32(words[pXT])
		}
	}
	return nil
}

// paramBytes returns the size of the parameter buffer: the words and the
// error word.
func (pl *callPlan) paramBytes() uint64 {
	return pl.errAt + 8
}

// resident adapts an Execute plan to a batch call on resident tensors:
// the output, updates and indices take io bytes as they are, and when
// copyData is not 0 a copy of that many bytes of data into the output
// comes first.
func (pl *callPlan) resident(io [3]uint64, copyData uint64) error {
	copy(pl.sizes, io[:])
	if copyData > 0 {
		pl.passes = append([]pass{{label: "copy", kind: passCopyData, read: copyData, written: copyData}}, pl.passes...)
	}
	return pl.layout()
}
