//go:build cgo

package vk

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync/atomic"
	"time"
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"
)

// Binding attaches a buffer range to one storage-buffer binding.
type Binding struct {
	Buffer *Buffer
	// Offset must be a multiple of Limits().MinStorageBufferOffsetAlignment.
	Offset uint64
	// Range is the number of bytes bound; 0 means the rest of the buffer.
	// It must not exceed Limits().MaxBindingBytes.
	Range uint64
}

// Timing is the time between two consecutive timestamps of a Sequence: from
// the start of the command buffer (or the previous Timestamp) to the
// Timestamp called Label.
type Timing struct {
	Label    string        `json:"label"`
	Duration time.Duration `json:"ns"`
}

type seqState int

const (
	seqEmpty     seqState = iota // nothing recorded
	seqRecording                 // command buffer begun
	seqReady                     // command buffer ended; may be (re)submitted
	seqPending                   // submitted, completion not yet observed
)

const (
	descriptorSetsPerPool = 64
	queriesPerPool        = 64
)

// Sequence records compute commands into one command buffer and submits
// them. A Sequence is used by one goroutine at a time; different Sequences
// may be used concurrently. A command that accesses a buffer written by an
// earlier one, or writes one read by an earlier one, is separated from it
// by an automatic compute/transfer memory barrier, so each command sees
// the results of the ones before it; commands on distinct buffers are not
// separated and may overlap (a plain Dispatch counts as accessing every
// buffer; see DispatchUses). The end of the sequence makes every write
// visible to Download and to later sequences. Buffers and pipelines used
// by recorded commands must stay open until the Sequence is Reset or
// closed.
type Sequence struct {
	d     *Device
	pool  vulkan.CommandPool
	cmd   vulkan.CommandBuffer
	fence vulkan.Fence

	descPools []descriptorPool
	descPool  int // index of the pool being allocated from

	queryPools []vulkan.QueryPool
	labels     []string // label of timestamp i+1; timestamp 0 is the start
	stamps     uint32   // timestamps recorded, the start included

	state        seqState
	commands     int
	hz           hazards
	timings      []Timing
	timestamps   bool
	period       float64
	validBitMask uint64
	closed       bool

	// uploads and readbacks hold the bytes of Upload and ReadBack;
	// recording counts Resets, so that a ReadBack of an earlier recording
	// is refused; ran: the last Start completed (Wait returned nil).
	uploads, readbacks hostArea
	recording          uint64
	ran                bool

	// progress is the host-visible word that the device sets to each
	// mark's number as it reaches it (Mark), made on the first Mark;
	// marks counts the marks recorded since the last Reset, and expect
	// is the longest step that Expect announced.
	progress *Buffer
	marks    uint32
	expect   time.Duration

	// foreign: cmd is a command buffer the caller is recording
	// (RecordInto); the Sequence never begins, ends or submits it.
	foreign bool
	// wait and signal are the timeline semaphores of the next Start
	// (StartWith).
	wait, signal []SemaphoreValue
}

// NewSequence creates an empty Sequence.
func (d *Device) NewSequence() (s *Sequence, err error) {
	defer guard(&err)
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	s = &Sequence{d: d, timestamps: d.info.Capabilities.Timestamps, period: float64(d.info.Capabilities.TimestampPeriod),
		readbacks: hostArea{readback: true}}
	if bits := d.info.Capabilities.TimestampValidBits; bits >= 64 {
		s.validBitMask = ^uint64(0)
	} else {
		s.validBitMask = 1<<bits - 1
	}
	defer func() {
		if err != nil {
			s.release()
			s = nil
		}
	}()
	if s.pool, err = d.newCommandPool(); err != nil {
		return s, err
	}
	if s.cmd, err = d.newCommandBuffer(s.pool); err != nil {
		return s, err
	}
	if s.fence, err = d.newFence(); err != nil {
		return s, err
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return s, fmt.Errorf("%w: device", ErrClosed)
	}
	d.sequences[s] = struct{}{}
	d.mu.Unlock()
	return s, nil
}

// release destroys the Vulkan objects of s once the device is done with
// them (Device.park).
func (s *Sequence) release() { s.d.park(s.releaseNow) }

// releaseNow destroys the Vulkan objects of s; the device must be done
// with them.
func (s *Sequence) releaseNow() {
	d := s.d
	if s.progress != nil {
		s.progress.destroy()
		s.progress = nil
	}
	s.uploads.release()
	s.readbacks.release()
	for _, qp := range s.queryPools {
		vulkan.DestroyQueryPool(d.handle, qp, nil)
		d.track("VkQueryPool", -1)
	}
	s.queryPools = nil
	for _, dp := range s.descPools {
		vulkan.DestroyDescriptorPool(d.handle, dp.handle, nil)
		d.track("VkDescriptorPool", -1)
	}
	s.descPools = nil
	if s.fence != nil {
		vulkan.DestroyFence(d.handle, s.fence, nil)
		s.fence = nil
		d.track("VkFence", -1)
	}
	if s.pool != nil {
		vulkan.DestroyCommandPool(d.handle, s.pool, nil)
		s.pool = nil
		s.cmd = nil
		d.track("VkCommandPool", -1)
	}
}

// destroy waits for pending work and releases s once.
func (s *Sequence) destroy() {
	if s.closed {
		return
	}
	s.closed = true
	if s.state == seqPending {
		_ = s.d.waitFence(context.Background(), s.fence, s.watch())
	}
	s.release()
}

// Close waits for submitted work to finish and destroys the Sequence. It is
// idempotent.
func (s *Sequence) Close() (err error) {
	defer guard(&err)
	if s == nil {
		return nil
	}
	d := s.d
	if !d.enterClose() {
		return nil
	}
	defer d.leave()
	d.mu.Lock()
	_, owned := d.sequences[s]
	delete(d.sequences, s)
	d.mu.Unlock()
	if !owned {
		// Already closed, by the caller or by Device.Close.
		return nil
	}
	s.destroy()
	return nil
}

// enter starts an operation on s; see Device.enter.
func (s *Sequence) enter() error {
	if err := s.d.enter(); err != nil {
		return err
	}
	if s.closed {
		s.d.leave()
		return fmt.Errorf("%w: sequence", ErrClosed)
	}
	return nil
}

// begin makes sure the command buffer is recording.
func (s *Sequence) begin() error {
	switch s.state {
	case seqRecording:
		return nil
	case seqPending, seqReady:
		return fmt.Errorf("vk: sequence was submitted; call Reset before recording again")
	}
	if s.foreign {
		s.state = seqRecording
		s.commands = 0
		s.hz.reset()
		return nil
	}
	bi := vulkan.CommandBufferBeginInfo{SType: vulkan.StructureTypeCommandBufferBeginInfo}
	r := vulkan.BeginCommandBuffer(s.cmd, &bi)
	bi.Free()
	if err := check("vkBeginCommandBuffer", r); err != nil {
		return err
	}
	s.state = seqRecording
	s.commands = 0
	s.hz.reset()
	s.stamps = 0
	s.labels = s.labels[:0]
	if s.timestamps {
		if err := s.writeTimestamp(); err != nil {
			return err
		}
	}
	return nil
}

// beforeCommand starts recording and separates a command that may access
// any buffer, at any compute or transfer stage, from every command since
// the last barrier; later commands wait for it. Commands that know their
// buffers call track instead (see hazard.go).
func (s *Sequence) beforeCommand() error {
	return s.trackAll(allCompute)
}

// afterCommand counts a recorded command.
func (s *Sequence) afterCommand() {
	s.commands++
}

// Barrier records a compute/transfer to compute/transfer memory barrier
// unless one is already in place. Commands that depend on each other are
// separated automatically, so calling it is never required.
func (s *Sequence) Barrier() error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.d.leave()
	if err := s.begin(); err != nil {
		return err
	}
	if s.hz.recorded {
		s.d.memoryBarrier(s.cmd, allCompute, allCompute, writeAccess, allAccess)
		s.hz.barriers++
		s.hz.clear()
	}
	return nil
}

func (s *Sequence) checkBuffer(b *Buffer) error {
	if b == nil {
		return fmt.Errorf("vk: nil buffer")
	}
	if b.d != s.d {
		return fmt.Errorf("vk: buffer belongs to another device")
	}
	b.mu.RLock()
	closed := b.closed
	b.mu.RUnlock()
	if closed {
		return fmt.Errorf("%w: buffer", ErrClosed)
	}
	return nil
}

// Dispatch records a dispatch of p over groups workgroups with the given
// buffer bindings (one per pipeline binding, in order) and push constants
// (exactly PushConstantSize bytes). The dispatch may access any buffer
// (through device addresses, say), so it waits for every command recorded
// before it and every later command waits for it; DispatchUses declares
// what a dispatch accesses instead.
func (s *Sequence) Dispatch(p *Pipeline, bindings []Binding, push []byte, groups [3]uint32) error {
	return s.dispatch(p, bindings, push, groups, nil)
}

// dispatch records a dispatch that accesses its bindings and the buffers
// of uses, or any buffer when uses is nil.
func (s *Sequence) dispatch(p *Pipeline, bindings []Binding, push []byte, groups [3]uint32, uses *Uses) (err error) {
	defer guard(&err)
	if err := s.enter(); err != nil {
		return err
	}
	defer s.d.leave()
	d := s.d
	if p == nil || p.d != d {
		return fmt.Errorf("vk: Dispatch: pipeline is nil or belongs to another device")
	}
	if p.isClosed() {
		return fmt.Errorf("%w: pipeline", ErrClosed)
	}
	if len(bindings) != p.spec.Bindings {
		return fmt.Errorf("vk: Dispatch: %d bindings given, pipeline has %d", len(bindings), p.spec.Bindings)
	}
	if uint32(len(push)) != p.spec.PushConstantSize {
		return fmt.Errorf("vk: Dispatch: %d push-constant bytes given, pipeline takes %d", len(push), p.spec.PushConstantSize)
	}
	for i, g := range groups {
		if g > d.limits.MaxWorkGroupCount[i] {
			return fmt.Errorf("%w: Dispatch: group count %d in dimension %d exceeds maxComputeWorkGroupCount %d",
				ErrUnsupported, g, i, d.limits.MaxWorkGroupCount[i])
		}
	}
	infos := make([]bufferRange, len(bindings))
	for i, bd := range bindings {
		if err := s.checkBuffer(bd.Buffer); err != nil {
			return fmt.Errorf("vk: Dispatch: binding %d: %w", i, err)
		}
		if bd.Offset%d.limits.MinStorageBufferOffsetAlignment != 0 {
			return fmt.Errorf("vk: Dispatch: binding %d: offset %d is not a multiple of minStorageBufferOffsetAlignment %d",
				i, bd.Offset, d.limits.MinStorageBufferOffsetAlignment)
		}
		if bd.Offset >= bd.Buffer.size {
			return fmt.Errorf("vk: Dispatch: binding %d: offset %d is outside the buffer of %d bytes", i, bd.Offset, bd.Buffer.size)
		}
		rng := bd.Range
		if rng == 0 {
			rng = bd.Buffer.size - bd.Offset
		}
		if rng > bd.Buffer.size-bd.Offset {
			return fmt.Errorf("vk: Dispatch: binding %d: range [%d, %d+%d) is outside the buffer of %d bytes",
				i, bd.Offset, bd.Offset, rng, bd.Buffer.size)
		}
		if rng > d.limits.MaxBindingBytes {
			return fmt.Errorf("%w: Dispatch: binding %d: range of %d bytes exceeds the binding limit of %d bytes",
				ErrUnsupported, i, rng, d.limits.MaxBindingBytes)
		}
		infos[i] = bufferRange{buffer: bd.Buffer.handle, offset: bd.Buffer.base + bd.Offset, size: rng}
	}

	if uses == nil {
		if err := s.trackAll(stageCompute); err != nil {
			return err
		}
	} else {
		for _, list := range [][]*Buffer{uses.Reads, uses.Writes} {
			for _, b := range list {
				if err := s.checkBuffer(b); err != nil {
					return fmt.Errorf("vk: Dispatch: uses: %w", err)
				}
			}
		}
		writes := uses.Writes
		if len(bindings) > 0 {
			writes = make([]*Buffer, 0, len(uses.Writes)+len(bindings))
			writes = append(writes, uses.Writes...)
			for _, bd := range bindings {
				writes = append(writes, bd.Buffer)
			}
		}
		if err := s.track(uses.Reads, writes, stageCompute); err != nil {
			return err
		}
	}
	vulkan.CmdBindPipeline(s.cmd, vulkan.PipelineBindPointCompute, p.pipeline)
	if len(infos) > 0 {
		set, err := s.allocateSet(p)
		if err != nil {
			return err
		}
		if err := d.writeStorageBuffers(set, infos); err != nil {
			return err
		}
		vulkan.CmdBindDescriptorSets(s.cmd, vulkan.PipelineBindPointCompute, p.layout, 0, 1,
			[]vulkan.DescriptorSet{set}, 0, nil)
	}
	if len(push) > 0 {
		vulkan.CmdPushConstants(s.cmd, p.layout, vulkan.ShaderStageFlags(vulkan.ShaderStageComputeBit), 0,
			uint32(len(push)), unsafe.Pointer(&push[0]))
	}
	vulkan.CmdDispatch(s.cmd, groups[0], groups[1], groups[2])
	s.afterCommand()
	return nil
}

// descriptorPool is a pool with its remaining capacity; the capacity is
// tracked here because drivers may or may not enforce it.
type descriptorPool struct {
	handle      vulkan.DescriptorPool
	sets        uint32 // capacity
	descriptors uint32
	usedSets    uint32
	usedDescs   uint32
}

// allocateSet allocates a descriptor set for p, adding a pool when the
// current ones are exhausted.
func (s *Sequence) allocateSet(p *Pipeline) (vulkan.DescriptorSet, error) {
	d := s.d
	need := uint32(p.spec.Bindings)
	for {
		if s.descPool < len(s.descPools) {
			dp := &s.descPools[s.descPool]
			if dp.usedSets >= dp.sets || dp.usedDescs+need > dp.descriptors {
				s.descPool++
				continue
			}
			set, r := d.allocateSet(dp.handle, p.dsl)
			switch r {
			case vulkan.Success:
				dp.usedSets++
				dp.usedDescs += need
				return set, nil
			case vulkan.ErrorOutOfPoolMemory, vulkan.ErrorFragmentedPool:
				s.descPool++
				continue
			default:
				return nil, check("vkAllocateDescriptorSets", r)
			}
		}
		perSet := need
		if perSet < 8 {
			perSet = 8
		}
		dp := descriptorPool{sets: descriptorSetsPerPool, descriptors: descriptorSetsPerPool * perSet}
		var r vulkan.Result
		dp.handle, r = d.createDescriptorPool(dp.sets, dp.descriptors)
		if err := check("vkCreateDescriptorPool", r); err != nil {
			return nil, err
		}
		d.track("VkDescriptorPool", 1)
		s.descPools = append(s.descPools, dp)
		s.descPool = len(s.descPools) - 1
	}
}

// Fill records filling size bytes at offset with the 32-bit value. offset
// and size must be multiples of 4; size 0 fills to the end of the buffer.
func (s *Sequence) Fill(b *Buffer, offset, size uint64, value uint32) (err error) {
	defer guard(&err)
	if err := s.enter(); err != nil {
		return err
	}
	defer s.d.leave()
	if err := s.checkBuffer(b); err != nil {
		return err
	}
	if offset%4 != 0 || size%4 != 0 {
		return fmt.Errorf("vk: Fill: offset %d and size %d must be multiples of 4", offset, size)
	}
	fill := vulkan.DeviceSize(size)
	if size == 0 {
		if offset >= b.size {
			return fmt.Errorf("vk: Fill: offset %d is outside the buffer of %d bytes", offset, b.size)
		}
		fill = vulkan.DeviceSize(vulkan.WholeSize)
		if b.external {
			// A view of the caller's buffer ends where the view does.
			fill = vulkan.DeviceSize(b.alloc - offset)
		}
	} else if err := b.checkRange("Fill", offset, size); err != nil {
		return err
	}
	if err := s.track(nil, []*Buffer{b}, stageTransfer); err != nil {
		return err
	}
	vulkan.CmdFillBuffer(s.cmd, b.handle, vulkan.DeviceSize(b.base+offset), fill, value)
	s.afterCommand()
	return nil
}

// Copy records copying size bytes from src at srcOff to dst at dstOff. The
// regions must not overlap when src and dst are the same buffer.
func (s *Sequence) Copy(src *Buffer, srcOff uint64, dst *Buffer, dstOff uint64, size uint64) error {
	return s.CopyRegions(src, dst, []CopyRegion{{SrcOffset: srcOff, DstOffset: dstOff, Size: size}})
}

// CopyRegion is one region of CopyRegions: Size bytes from SrcOffset in the
// source to DstOffset in the destination. It has VkBufferCopy's layout.
type CopyRegion struct {
	SrcOffset, DstOffset, Size uint64
}

// CopyRegions records one copy command of several regions from src to dst,
// which a device runs as one operation: cheaper than a Copy per region,
// which the sequence separates with barriers. Every region must be
// non-empty and lie within both buffers; when src and dst are the same
// buffer, no source region may overlap a destination region.
func (s *Sequence) CopyRegions(src, dst *Buffer, regions []CopyRegion) (err error) {
	defer guard(&err)
	if err := s.enter(); err != nil {
		return err
	}
	defer s.d.leave()
	if err := s.checkBuffer(src); err != nil {
		return err
	}
	if err := s.checkBuffer(dst); err != nil {
		return err
	}
	if len(regions) == 0 || len(regions) > math.MaxUint32 {
		return fmt.Errorf("vk: Copy: %d regions", len(regions))
	}
	for i, r := range regions {
		if r.Size == 0 {
			return fmt.Errorf("vk: Copy: region %d: size is zero", i)
		}
		if err := src.checkRange("Copy source", r.SrcOffset, r.Size); err != nil {
			return fmt.Errorf("region %d: %w", i, err)
		}
		if err := dst.checkRange("Copy destination", r.DstOffset, r.Size); err != nil {
			return fmt.Errorf("region %d: %w", i, err)
		}
	}
	if src == dst && regionsOverlap(regions) {
		return fmt.Errorf("vk: Copy: source and destination regions overlap")
	}
	if err := s.track([]*Buffer{src}, []*Buffer{dst}, stageTransfer); err != nil {
		return err
	}
	s.d.copyBuffers(s.cmd, src, dst, regions)
	s.afterCommand()
	return nil
}

// regionsOverlap reports whether a source region of regions overlaps a
// destination region.
func regionsOverlap(regions []CopyRegion) bool {
	type span struct {
		lo, hi uint64
		dst    bool
	}
	spans := make([]span, 0, 2*len(regions))
	for _, r := range regions {
		spans = append(spans, span{r.SrcOffset, r.SrcOffset + r.Size, false}, span{r.DstOffset, r.DstOffset + r.Size, true})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	// Sweep: the furthest end seen so far of each side.
	var end [2]uint64
	var seen [2]bool
	for _, sp := range spans {
		side, other := 0, 1
		if sp.dst {
			side, other = 1, 0
		}
		if seen[other] && sp.lo < end[other] {
			return true
		}
		if !seen[side] || sp.hi > end[side] {
			end[side], seen[side] = sp.hi, true
		}
	}
	return false
}

// writeTimestamp records the next timestamp, adding a query pool when the
// current ones are full.
func (s *Sequence) writeTimestamp() error {
	d := s.d
	n := s.stamps
	pool := int(n / queriesPerPool)
	if pool == len(s.queryPools) {
		ci := vulkan.QueryPoolCreateInfo{
			SType:      vulkan.StructureTypeQueryPoolCreateInfo,
			QueryType:  vulkan.QueryTypeTimestamp,
			QueryCount: queriesPerPool,
		}
		var qp vulkan.QueryPool
		r := vulkan.CreateQueryPool(d.handle, &ci, nil, &qp)
		ci.Free()
		if err := check("vkCreateQueryPool", r); err != nil {
			return err
		}
		d.track("VkQueryPool", 1)
		s.queryPools = append(s.queryPools, qp)
	}
	if n%queriesPerPool == 0 {
		vulkan.CmdResetQueryPool(s.cmd, s.queryPools[pool], 0, queriesPerPool)
	}
	vulkan.CmdWriteTimestamp(s.cmd, vulkan.PipelineStageBottomOfPipeBit, s.queryPools[pool], n%queriesPerPool)
	s.stamps++
	return nil
}

// Timestamp records a timestamp after all previous commands. After Submit,
// Timings reports the time from the previous timestamp (or the start of the
// sequence) to this one under label. It fails with ErrUnsupported when the
// compute queue has no timestamps.
func (s *Sequence) Timestamp(label string) (err error) {
	defer guard(&err)
	if err := s.enter(); err != nil {
		return err
	}
	defer s.d.leave()
	if !s.timestamps {
		return fmt.Errorf("%w: the compute queue does not support timestamps", ErrUnsupported)
	}
	if err := s.begin(); err != nil {
		return err
	}
	if err := s.writeTimestamp(); err != nil {
		return err
	}
	s.labels = append(s.labels, label)
	return nil
}

// end closes the command buffer with a barrier that makes every write
// visible to the host and to later submissions.
func (s *Sequence) end() error {
	s.d.memoryBarrier(s.cmd, allCompute, allCompute|hostStage, writeAccess, allAccess|hostAccess)
	if err := check("vkEndCommandBuffer", vulkan.EndCommandBuffer(s.cmd)); err != nil {
		return err
	}
	s.state = seqReady
	return nil
}

// Submit submits the recorded commands and waits for them to complete:
// Start, then Wait. The wait polls ctx: when ctx is done first, Submit
// returns ctx.Err() while the device finishes the work in the background
// (a later Wait, Submit, Reset or Close waits for it). A Sequence may be
// submitted again without Reset to repeat the same commands. Submitting an
// empty Sequence does nothing.
func (s *Sequence) Submit(ctx context.Context) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	return s.Wait(ctx)
}

// Start submits the recorded commands to the device's queue and returns
// without waiting for them: one queue submission, no fence wait. Wait (or
// Done) observes their completion; until then the buffers they use must
// stay open and unchanged by the host. Submissions on one Device run in
// the order they were started, and the end of each makes its writes
// visible to the ones after it. Starting an empty Sequence does nothing;
// starting one still pending first waits for it.
func (s *Sequence) Start(ctx context.Context) (err error) {
	defer guard(&err)
	if err := s.enter(); err != nil {
		return err
	}
	defer s.d.leave()
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.foreign {
		return errForeign
	}
	switch s.state {
	case seqEmpty:
		return nil
	case seqRecording:
		if err := s.end(); err != nil {
			return err
		}
	case seqPending:
		if err := s.d.waitFence(ctx, s.fence, s.watch()); err != nil {
			return err
		}
		s.state = seqReady
	}
	s.timings = nil
	s.ran = false
	if s.progress != nil {
		// The host's write before the submission is visible to it.
		atomic.StoreUint32((*uint32)(unsafe.Pointer(&s.progress.mapped[0])), 0)
	}
	wait, signal := s.wait, s.signal
	s.wait, s.signal = nil, nil
	if err := s.d.queueSubmitWith(s.cmd, s.fence, wait, signal); err != nil {
		return err
	}
	s.state = seqPending
	return nil
}

// Wait waits for the commands of the last Start to complete and reads
// their timestamps (Timings); it returns at once when none are pending.
// The wait polls ctx: when ctx is done first, Wait returns ctx.Err() and
// the commands stay pending (wait again, or Reset or Close the Sequence).
func (s *Sequence) Wait(ctx context.Context) (err error) {
	defer guard(&err)
	if err := s.enter(); err != nil {
		return err
	}
	defer s.d.leave()
	if s.state != seqPending {
		return nil
	}
	if err := s.d.waitFence(ctx, s.fence, s.watch()); err != nil {
		return err
	}
	s.state = seqReady
	s.ran = true
	return s.readTimestamps()
}

// Pending reports whether commands were started and their completion not
// yet observed by Wait.
func (s *Sequence) Pending() bool { return s.state == seqPending }

// readTimestamps converts the completed timestamps into Timings.
func (s *Sequence) readTimestamps() error {
	if s.stamps < 2 {
		return nil
	}
	ts := make([]uint64, s.stamps)
	for i := 0; i*queriesPerPool < int(s.stamps); i++ {
		first := i * queriesPerPool
		count := int(s.stamps) - first
		if count > queriesPerPool {
			count = queriesPerPool
		}
		r := vulkan.GetQueryPoolResults(s.d.handle, s.queryPools[i], 0, uint32(count), uint(8*count),
			unsafe.Pointer(&ts[first]), 8, vulkan.QueryResultFlags(vulkan.QueryResult64Bit|vulkan.QueryResultWaitBit))
		s.d.noteResult(r)
		if err := check("vkGetQueryPoolResults", r); err != nil {
			return err
		}
	}
	s.timings = make([]Timing, len(s.labels))
	for i, label := range s.labels {
		ticks := (ts[i+1] - ts[i]) & s.validBitMask
		s.timings[i] = Timing{Label: label, Duration: time.Duration(float64(ticks) * s.period)}
	}
	return nil
}

// Timings returns the timestamp intervals of the last completed Submit.
func (s *Sequence) Timings() []Timing {
	return append([]Timing(nil), s.timings...)
}

// Len returns the number of commands recorded since the last Reset.
func (s *Sequence) Len() int { return s.commands }

// Reset waits for submitted work and clears the Sequence for recording new
// commands.
func (s *Sequence) Reset() (err error) {
	defer guard(&err)
	if err := s.enter(); err != nil {
		return err
	}
	defer s.d.leave()
	d := s.d
	if s.state == seqPending {
		if err := d.waitFence(context.Background(), s.fence, s.watch()); err != nil {
			return err
		}
	}
	if s.foreign {
		return errForeign
	}
	if err := check("vkResetCommandPool", vulkan.ResetCommandPool(d.handle, s.pool, 0)); err != nil {
		return err
	}
	for i := range s.descPools {
		dp := &s.descPools[i]
		if err := check("vkResetDescriptorPool", vulkan.ResetDescriptorPool(d.handle, dp.handle, 0)); err != nil {
			return err
		}
		dp.usedSets, dp.usedDescs = 0, 0
	}
	s.descPool = 0
	s.uploads.reset()
	s.readbacks.reset()
	s.recording++
	s.ran = false
	s.state = seqEmpty
	s.commands = 0
	s.hz.reset()
	s.stamps = 0
	s.labels = s.labels[:0]
	s.timings = nil
	s.marks = 0
	s.expect = 0
	return nil
}

// progressBytes is the size of a Sequence's progress buffer.
const progressBytes = 16

// Mark records a progress mark: once every command recorded before it
// has completed, the device writes the mark's number where the host
// sees it. A wait for the Sequence counts the device as stopped (a
// StallError) only when it reaches no further mark for the device's
// timeout (Options.DeviceTimeout), or for the step Expect announced where
// that is longer: a Sequence of any length completes as long as each of
// its steps, from one mark to the next, does. Without marks the whole
// Sequence is one step. A mark costs an execution barrier and a 4-byte
// fill, and adds no dependency between the commands around it.
func (s *Sequence) Mark() (err error) {
	defer guard(&err)
	if err := s.enter(); err != nil {
		return err
	}
	defer s.d.leave()
	if err := s.begin(); err != nil {
		return err
	}
	d := s.d
	if s.progress == nil {
		b, err := d.createBuffer(progressBytes, kindReadback)
		if err != nil {
			return err
		}
		if b.mapped == nil {
			b.destroy()
			return fmt.Errorf("%w: no host-visible memory for the progress word", ErrUnsupported)
		}
		s.progress = b
	}
	s.marks++
	transfer := vulkan.PipelineStageFlags(vulkan.PipelineStageTransferBit)
	transferWrite := vulkan.AccessFlags(vulkan.AccessTransferWriteBit)
	// After everything before (the earlier mark's fill included), then
	// visible to the host.
	d.memoryBarrier(s.cmd, allCompute, transfer, writeAccess, transferWrite)
	vulkan.CmdFillBuffer(s.cmd, s.progress.handle, 0, 4, s.marks)
	d.memoryBarrier(s.cmd, transfer, hostStage, transferWrite, vulkan.AccessFlags(vulkan.AccessHostReadBit))
	return nil
}

// Marks returns the number of marks recorded since the last Reset.
func (s *Sequence) Marks() int { return int(s.marks) }

// Expect announces that one step of the recorded work (from one Mark to
// the next, or all of it without marks) may take up to step on this
// device, so that waits for it count the device as stopped only after the
// longer of step and the device's timeout without progress. The longest
// step announced since the last Reset counts.
func (s *Sequence) Expect(step time.Duration) {
	if step > s.expect {
		s.expect = step
	}
}

// watch is what waits for s know of its progress (waitFence).
func (s *Sequence) watch() *watch {
	w := &watch{step: s.expect}
	if s.marks > 0 && s.progress != nil {
		word := (*uint32)(unsafe.Pointer(&s.progress.mapped[0]))
		w.progress = func() uint32 { return atomic.LoadUint32(word) }
	}
	return w
}
