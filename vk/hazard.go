//go:build cgo

package vk

import (
	"fmt"

	vulkan "github.com/vulkan-go/vulkan"
)

// Stages of the commands a Sequence records, for hazard tracking.
const (
	stageTransfer = vulkan.PipelineStageFlags(vulkan.PipelineStageTransferBit)
	stageCompute  = vulkan.PipelineStageFlags(vulkan.PipelineStageComputeShaderBit)
)

// Uses declares the buffers a dispatch reads and writes besides its
// bindings, typically through buffer device addresses, which a Sequence
// cannot see. A buffer both read and written belongs in Writes (listing it
// in both is fine too).
type Uses struct {
	Reads, Writes []*Buffer
}

// hazards tracks the buffer accesses of a Sequence's commands since its
// last pipeline barrier, so that a barrier is recorded only before a
// command that conflicts with one of them: one that reads or writes a
// buffer written since the barrier (read-after-write, write-after-write)
// or writes a buffer read since it (write-after-read).
//
// Every barrier has all compute and transfer work after it in its second
// scope, with every shader and transfer access, so whatever came before a
// barrier is ordered before, and visible to, every later command; only the
// commands since the last barrier need tracking. Its first scope is the
// stages of those commands, and its access scope their writes (reads need
// no availability, only the execution dependency).
type hazards struct {
	reads, writes map[*Buffer]struct{}
	// everything: a command of unknown accesses (a plain Dispatch) was
	// recorded since the barrier; every buffer counts as written.
	everything bool
	recorded   bool // any command since the barrier
	stages     vulkan.PipelineStageFlags
	writeMask  vulkan.AccessFlags
	barriers   int // barriers recorded between commands since the last reset
}

// reset forgets every access and the barrier count, for a new recording.
func (h *hazards) reset() {
	h.clear()
	h.barriers = 0
}

// clear forgets the accesses since the last barrier, after a new one.
func (h *hazards) clear() {
	clear(h.reads)
	clear(h.writes)
	h.everything, h.recorded = false, false
	h.stages, h.writeMask = 0, 0
}

// conflicts reports whether a command reading reads and writing writes (or
// touching every buffer, with all) must wait for the commands since the
// last barrier.
func (h *hazards) conflicts(reads, writes []*Buffer, all bool) bool {
	if !h.recorded {
		return false
	}
	if all || h.everything {
		return all || len(reads) > 0 || len(writes) > 0
	}
	for _, b := range reads {
		if _, ok := h.writes[b.hazardKey()]; ok {
			return true
		}
	}
	for _, b := range writes {
		if _, ok := h.writes[b.hazardKey()]; ok {
			return true
		}
		if _, ok := h.reads[b.hazardKey()]; ok {
			return true
		}
	}
	return false
}

// note adds a command's accesses at stage (stageTransfer, stageCompute or
// both).
func (h *hazards) note(reads, writes []*Buffer, all bool, stage vulkan.PipelineStageFlags) {
	h.recorded = true
	h.stages |= stage
	if all {
		h.everything = true
	}
	if all || len(writes) > 0 {
		h.writeMask |= writeAccessOf(stage)
	}
	if h.everything {
		// Every buffer counts as written: no need to list them.
		return
	}
	if h.reads == nil {
		h.reads = map[*Buffer]struct{}{}
		h.writes = map[*Buffer]struct{}{}
	}
	for _, b := range reads {
		h.reads[b.hazardKey()] = struct{}{}
	}
	for _, b := range writes {
		h.writes[b.hazardKey()] = struct{}{}
	}
}

// writeAccessOf returns the write accesses of the stages in stage.
func writeAccessOf(stage vulkan.PipelineStageFlags) vulkan.AccessFlags {
	var a vulkan.AccessFlags
	if stage&stageTransfer != 0 {
		a |= vulkan.AccessFlags(vulkan.AccessTransferWriteBit)
	}
	if stage&stageCompute != 0 {
		a |= vulkan.AccessFlags(vulkan.AccessShaderWriteBit)
	}
	return a
}

// barrier records a pipeline barrier from the commands since the last one
// to everything after it, and clears the tracking.
func (s *Sequence) barrier() {
	h := &s.hz
	src := h.stages
	if src == 0 {
		src = allCompute
	}
	s.d.memoryBarrier(s.cmd, src, allCompute, h.writeMask, allAccess)
	h.barriers++
	h.clear()
}

// track is the hazard-tracking hook of every command a Sequence records:
// it starts recording if needed, records a barrier when the command about
// to be recorded, which reads reads and writes writes at stage
// (stageTransfer or stageCompute), conflicts with a command since the last
// barrier, and notes its accesses. Call it just before recording the
// command (and afterCommand after it). A buffer both read and written goes
// in writes.
func (s *Sequence) track(reads, writes []*Buffer, stage vulkan.PipelineStageFlags) error {
	return s.trackAccess(reads, writes, false, stage)
}

// trackAll is track for a command that may access any buffer: it waits for
// everything since the last barrier, and everything after it waits for it.
func (s *Sequence) trackAll(stage vulkan.PipelineStageFlags) error {
	return s.trackAccess(nil, nil, true, stage)
}

func (s *Sequence) trackAccess(reads, writes []*Buffer, all bool, stage vulkan.PipelineStageFlags) error {
	if err := s.begin(); err != nil {
		return err
	}
	if s.hz.conflicts(reads, writes, all) {
		s.barrier()
	}
	s.hz.note(reads, writes, all, stage)
	return nil
}

// Barriers returns the number of pipeline barriers recorded between the
// commands of the sequence since it was last Reset: those its hazard
// tracking placed and those of Barrier, not the one that ends it.
func (s *Sequence) Barriers() int { return s.hz.barriers }

// DispatchUses is Dispatch for a dispatch that accesses, besides its
// bindings (each counted as read and written), exactly the buffers uses
// declares. Where Dispatch waits for every command recorded before it and
// makes every later command wait for it, a DispatchUses waits only for
// earlier commands that wrote a buffer it accesses, or read one it writes,
// and later commands wait for it only on the same terms; independent
// commands may overlap on the device.
func (s *Sequence) DispatchUses(p *Pipeline, bindings []Binding, push []byte, groups [3]uint32, uses Uses) error {
	for i, b := range uses.Reads {
		if b == nil {
			return fmt.Errorf("vk: DispatchUses: read %d: nil buffer", i)
		}
	}
	for i, b := range uses.Writes {
		if b == nil {
			return fmt.Errorf("vk: DispatchUses: write %d: nil buffer", i)
		}
	}
	return s.dispatch(p, bindings, push, groups, &uses)
}
