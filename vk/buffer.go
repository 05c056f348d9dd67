//go:build cgo

package vk

import (
	"fmt"
	"sync"
	"unsafe"

	vulkan "github.com/vulkan-go/vulkan"

	"github.com/gpuscatter/gpuscatter/internal/vkfault"
)

// Buffer is a storage buffer in device memory: on a device with unified
// memory (Device.UnifiedMemory) device-local memory that is mapped, so
// Upload and Download are plain copies; otherwise device-local memory the
// host cannot map, with Upload and Download staged through host-visible
// buffers. Upload and Download may be called from several goroutines at
// once; commands that use the buffer must not overlap with them.
type Buffer struct {
	d       *Device
	handle  vulkan.Buffer
	memory  vulkan.DeviceMemory
	size    uint64 // requested size
	alloc   uint64 // VkBuffer size: size rounded up to 4
	mapped  []byte // host view of the memory, nil when not host-visible
	staging bool   // device-internal upload or readback buffer, not registered
	kind    memKind
	bytes   uint64 // memory allocated for it (Device.Memory counts kindDevice's)
	pooled  bool   // returned to the pool by Release

	mu     sync.RWMutex
	closed bool
	idle   bool // waiting in the pool; guarded by d.mu

	// external: a view of a caller's VkBuffer (WrapBuffer), from byte
	// base on, which the Device never destroys; key is what its hazards
	// are tracked by, shared by every view of that VkBuffer.
	external bool
	base     uint64
	key      *Buffer
	refs     int // views sharing this key; guarded by d.mu
}

// Size returns the size in bytes requested at creation.
func (b *Buffer) Size() uint64 { return b.size }

// Mapped reports whether the buffer's memory is mapped into the process, in
// which case Upload and Download are plain memory copies.
func (b *Buffer) Mapped() bool { return b.mapped != nil }

const (
	storageUsage = vulkan.BufferUsageFlags(vulkan.BufferUsageStorageBufferBit |
		vulkan.BufferUsageTransferSrcBit | vulkan.BufferUsageTransferDstBit)
	stagingUsage = vulkan.BufferUsageFlags(vulkan.BufferUsageTransferSrcBit | vulkan.BufferUsageTransferDstBit)
)

// stagingChunk bounds the staging buffer, and so one transfer step. Tests
// lower it to exercise multi-step transfers.
var stagingChunk uint64 = 16 << 20

// NewBuffer creates a storage buffer of size bytes (usable as storage buffer
// and as transfer source and destination). size must not exceed
// Limits().MaxAllocationBytes; the contents are undefined.
func (d *Device) NewBuffer(size uint64) (b *Buffer, err error) {
	defer guard(&err)
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	return d.newBuffer(size)
}

func (d *Device) newBuffer(size uint64) (*Buffer, error) {
	if size == 0 {
		return nil, fmt.Errorf("vk: NewBuffer: size is zero")
	}
	if size > d.limits.MaxAllocationBytes {
		return nil, fmt.Errorf("%w: buffer of %d bytes exceeds the allocation limit of %d bytes", ErrUnsupported, size, d.limits.MaxAllocationBytes)
	}
	b, err := d.createBuffer(size, kindDevice)
	if err != nil && isOutOfMemory(err) && d.trimPool() > 0 {
		b, err = d.createBuffer(size, kindDevice)
	}
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		b.destroy()
		return nil, fmt.Errorf("%w: device", ErrClosed)
	}
	d.buffers[b] = struct{}{}
	d.mu.Unlock()
	return b, nil
}

func isOutOfMemory(err error) bool {
	re, ok := err.(*ResultError)
	return ok && re.Is(ErrOutOfMemory)
}

// createBuffer creates, allocates, binds and (for kindUpload and
// kindReadback, and kindDevice with unified memory) maps a buffer of kind;
// on failure it releases whatever it created. Buffers of kindUpload and
// kindReadback are not registered with the device (the caller destroys
// them) and serve only as transfer source and destination.
func (d *Device) createBuffer(size uint64, kind memKind) (b *Buffer, err error) {
	staging := kind != kindDevice
	b = &Buffer{d: d, size: size, alloc: (size + 3) &^ 3, staging: staging, kind: kind}
	defer func() {
		if err != nil {
			b.release()
			b = nil
		}
	}()
	defer guard(&err) // first, so that the release above sees the error
	usage := storageUsage
	addrUsage, allocNext := d.addressUsage() // address.go
	if staging {
		usage, allocNext = stagingUsage, nil
	} else {
		usage |= addrUsage
	}
	ci := vulkan.BufferCreateInfo{
		SType:       vulkan.StructureTypeBufferCreateInfo,
		Size:        vulkan.DeviceSize(b.alloc),
		Usage:       usage,
		SharingMode: vulkan.SharingModeExclusive,
	}
	var h vulkan.Buffer
	r := vulkan.CreateBuffer(d.handle, &ci, nil, &h)
	ci.Free()
	if err := check("vkCreateBuffer", r); err != nil {
		return b, err
	}
	b.handle = h
	d.track("VkBuffer", 1)
	if !staging {
		owners.Store(bufferHandle(h), d)
	}

	var req vulkan.MemoryRequirements
	vulkan.GetBufferMemoryRequirements(d.handle, h, &req)
	req.Deref()
	req.Free()

	typ := chooseMemoryType(d.phys.types, d.phys.heaps, req.MemoryTypeBits, kind, d.unified)
	if typ < 0 {
		return b, fmt.Errorf("%w: no suitable memory type for a buffer (type bits %#x)", ErrUnsupported, req.MemoryTypeBits)
	}
	if uint64(req.Size) > d.phys.maxAlloc {
		return b, fmt.Errorf("%w: buffer needs %d bytes, more than maxMemoryAllocationSize %d", ErrUnsupported, req.Size, d.phys.maxAlloc)
	}
	ai := vulkan.MemoryAllocateInfo{
		SType:           vulkan.StructureTypeMemoryAllocateInfo,
		PNext:           allocNext,
		AllocationSize:  req.Size,
		MemoryTypeIndex: uint32(typ),
	}
	if err := d.reserveAllocation(); err != nil {
		ai.Free()
		return b, err
	}
	var mem vulkan.DeviceMemory
	r = d.allocateMemory(&ai, &mem)
	ai.Free()
	if err := check("vkAllocateMemory", r); err != nil {
		return b, err
	}
	b.memory = mem
	b.bytes = uint64(req.Size)
	if kind == kindDevice {
		d.held.Add(b.bytes)
	}
	d.track("VkDeviceMemory", 1)
	if err := check("vkBindBufferMemory", d.faulty(vkfault.Bind, func() vulkan.Result { return vulkan.BindBufferMemory(d.handle, h, mem, 0) })); err != nil {
		return b, err
	}
	if d.phys.types[typ].flags&memStaging == memStaging && (staging || d.unified) {
		var ptr unsafe.Pointer
		if err := check("vkMapMemory", d.faulty(vkfault.Map, func() vulkan.Result {
			return vulkan.MapMemory(d.handle, mem, 0, vulkan.DeviceSize(vulkan.WholeSize), 0, &ptr)
		})); err != nil {
			return b, err
		}
		b.mapped = unsafe.Slice((*byte)(ptr), b.alloc)
	}
	return b, nil
}

// allocateMemory allocates memory as ai asks, in the allocation that
// reserveAllocation counted, which it gives back when the call fails or
// the binding panics.
func (d *Device) allocateMemory(ai *vulkan.MemoryAllocateInfo, mem *vulkan.DeviceMemory) (r vulkan.Result) {
	r = vulkan.ErrorOutOfHostMemory
	defer func() {
		if r != vulkan.Success {
			d.allocs.Add(-1)
		}
	}()
	return d.faulty(vkfault.Allocate, func() vulkan.Result { return vulkan.AllocateMemory(d.handle, ai, nil, mem) })
}

// reserveAllocation counts one more live memory allocation. At the
// device's limit (maxMemoryAllocationCount) it first destroys the idle
// pooled buffers, and fails, wrapping ErrOutOfMemory, if that frees none.
func (d *Device) reserveAllocation() error {
	limit := int64(d.limits.MaxAllocations)
	for trimmed := false; ; trimmed = true {
		n := d.allocs.Add(1)
		if n <= limit {
			return nil
		}
		d.allocs.Add(-1)
		if trimmed || d.trimPool() == 0 {
			return fmt.Errorf("%w: %d device memory allocations are alive, the device's limit (maxMemoryAllocationCount %d): close tensors or buffers first",
				ErrOutOfMemory, n-1, limit)
		}
	}
}

// release destroys the Vulkan objects of b once the device is done with
// them (Device.park). The caller makes sure it runs once and that no work
// it waited for successfully uses b.
func (b *Buffer) release() { b.d.park(b.releaseNow) }

// releaseNow destroys the Vulkan objects of b; the device is idle with
// respect to b.
func (b *Buffer) releaseNow() {
	d := b.d
	if b.external {
		d.unwrap(b)
		return
	}
	if b.mapped != nil {
		vulkan.UnmapMemory(d.handle, b.memory)
		b.mapped = nil
	}
	if b.handle != nil {
		if !b.staging {
			owners.Delete(bufferHandle(b.handle))
		}
		vulkan.DestroyBuffer(d.handle, b.handle, nil)
		b.handle = nil
		d.track("VkBuffer", -1)
	}
	if b.memory != nil {
		vulkan.FreeMemory(d.handle, b.memory, nil)
		b.memory = nil
		d.allocs.Add(-1)
		if b.kind == kindDevice {
			d.held.Add(-b.bytes)
		}
		d.track("VkDeviceMemory", -1)
	}
}

// destroy closes b once, waiting for Upload and Download in progress.
func (b *Buffer) destroy() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	b.release()
}

// Close destroys the buffer. It is idempotent. Commands using the buffer
// must have completed.
func (b *Buffer) Close() error {
	if b == nil {
		return nil
	}
	if !b.d.enterClose() {
		return nil
	}
	defer b.d.leave()
	b.close()
	return nil
}

// close unregisters and destroys b; the caller has entered the device.
func (b *Buffer) close() {
	d := b.d
	if !b.staging {
		d.mu.Lock()
		delete(d.buffers, b)
		if b.idle {
			d.removeIdle(b)
		}
		d.mu.Unlock()
	}
	b.destroy()
}

// checkRange validates [offset, offset+n) against the buffer.
func (b *Buffer) checkRange(op string, offset, n uint64) error {
	if offset > b.size || n > b.size-offset {
		return fmt.Errorf("vk: %s: range [%d, %d+%d) is outside the buffer of %d bytes", op, offset, offset, n, b.size)
	}
	return nil
}

// use enters the device and read-locks b for an operation op on
// [offset, offset+n), once b is open and the range lies within it; the
// caller runs release when done.
func (b *Buffer) use(op string, offset, n uint64) (release func(), err error) {
	if err := b.d.enter(); err != nil {
		return nil, err
	}
	b.mu.RLock()
	release = func() {
		b.mu.RUnlock()
		b.d.leave()
	}
	if b.closed {
		err = fmt.Errorf("%w: buffer", ErrClosed)
	} else {
		err = b.checkRange(op, offset, n)
	}
	if err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// Upload copies src into the buffer at offset.
func (b *Buffer) Upload(offset uint64, src []byte) (err error) {
	defer guard(&err)
	release, err := b.use("Upload", offset, uint64(len(src)))
	if err != nil {
		return err
	}
	defer release()
	if len(src) == 0 {
		return nil
	}
	if b.mapped != nil {
		copy(b.mapped[offset:], src)
		b.d.counts.pieces.Add(1)
		return nil
	}
	return b.d.stagedCopy(b, offset, src, true)
}

// Download copies len(dst) bytes from the buffer at offset into dst.
func (b *Buffer) Download(offset uint64, dst []byte) (err error) {
	defer guard(&err)
	release, err := b.use("Download", offset, uint64(len(dst)))
	if err != nil {
		return err
	}
	defer release()
	if len(dst) == 0 {
		return nil
	}
	if b.mapped != nil {
		copy(dst, b.mapped[offset:])
		b.d.counts.pieces.Add(1)
		return nil
	}
	return b.d.stagedCopy(b, offset, dst, false)
}

// Acquire returns a buffer of exactly size bytes from the device's pool, or
// a new one when none is free. Give it back with Release. Reusing buffers
// avoids allocating (and first-touching) fresh memory on repeated runs.
func (d *Device) Acquire(size uint64) (b *Buffer, err error) {
	defer guard(&err)
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	d.mu.Lock()
	if list := d.idle[size]; len(list) > 0 {
		b := list[len(list)-1]
		d.idle[size] = list[:len(list)-1]
		if len(d.idle[size]) == 0 {
			delete(d.idle, size)
		}
		b.idle = false
		d.mu.Unlock()
		return b, nil
	}
	d.mu.Unlock()
	b, err = d.newBuffer(size)
	if err != nil {
		return nil, err
	}
	b.pooled = true
	return b, nil
}

// Release returns a buffer obtained from Acquire to the pool; the caller
// must not use it afterwards. For a buffer from NewBuffer, or once the
// device is closed, it is Close. Releasing twice is harmless.
func (b *Buffer) Release() error {
	if b == nil {
		return nil
	}
	d := b.d
	if !d.enterClose() {
		return nil
	}
	defer d.leave()
	if !b.pooled {
		b.close()
		return nil
	}
	b.mu.RLock()
	closed := b.closed
	b.mu.RUnlock()
	d.mu.Lock()
	if closed || d.closed {
		d.mu.Unlock()
		b.close()
		return nil
	}
	if !b.idle {
		b.idle = true
		d.idle[b.size] = append(d.idle[b.size], b)
	}
	d.mu.Unlock()
	return nil
}

// removeIdle drops b from the idle lists; d.mu is held.
func (d *Device) removeIdle(b *Buffer) {
	list := d.idle[b.size]
	for i, x := range list {
		if x == b {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(d.idle, b.size)
	} else {
		d.idle[b.size] = list
	}
	b.idle = false
}

// TrimPool destroys every idle pooled buffer and returns how many it
// destroyed.
func (d *Device) TrimPool() int {
	if !d.enterClose() {
		return 0
	}
	defer d.leave()
	return d.trimPool()
}

func (d *Device) trimPool() int {
	d.mu.Lock()
	var victims []*Buffer
	for _, list := range d.idle {
		for _, b := range list {
			b.idle = false
			delete(d.buffers, b)
			victims = append(victims, b)
		}
	}
	d.idle = map[uint64][]*Buffer{}
	d.mu.Unlock()
	for _, b := range victims {
		b.destroy()
	}
	return len(victims)
}

// PooledBuffers returns the number of idle buffers in the pool.
func (d *Device) PooledBuffers() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, list := range d.idle {
		n += len(list)
	}
	return n
}

// stagingSlots is the number of slots in the staging ring: while the device
// copies one piece, the host fills or drains another.
const stagingSlots = 3

// stageSlot is one slot of the staging ring: a command buffer with its
// pool, a fence, and a staging buffer per direction, each created on first
// use and grown as transfers need.
type stageSlot struct {
	pool     vulkan.CommandPool
	cmd      vulkan.CommandBuffer
	fence    vulkan.Fence
	up, down *Buffer // kindUpload and kindReadback staging buffers
	pending  bool    // submitted and not yet waited for
	at, n    uint64  // the piece of a download it holds: buffer offset, bytes
}

// transfer holds the staging ring, created on first use and guarded by
// d.xferMu. Between transfers no slot is pending.
type transfer struct {
	slots [stagingSlots]stageSlot
}

// ensureTransfer creates the ring's command buffers and fences.
func (d *Device) ensureTransfer() (err error) {
	if d.xfer != nil {
		return nil
	}
	d.xfer = &transfer{}
	defer func() {
		if err != nil {
			d.destroyTransfer()
		}
	}()
	for i := range d.xfer.slots {
		s := &d.xfer.slots[i]
		if s.pool, err = d.newCommandPool(); err != nil {
			return err
		}
		if s.cmd, err = d.newCommandBuffer(s.pool); err != nil {
			return err
		}
		if s.fence, err = d.newFence(); err != nil {
			return err
		}
	}
	return nil
}

// stage returns the slot's staging buffer for the direction, of at least
// need bytes, replacing a smaller one; the slot is not pending.
func (d *Device) stage(s *stageSlot, upload bool, need uint64) (*Buffer, error) {
	p, kind := &s.down, kindReadback
	if upload {
		p, kind = &s.up, kindUpload
	}
	if *p != nil && (*p).size >= need {
		return *p, nil
	}
	if *p != nil {
		(*p).destroy()
		*p = nil
	}
	b, err := d.createBuffer(need, kind)
	if err != nil {
		return nil, err
	}
	*p = b
	return b, nil
}

// destroyTransfer destroys the ring once the device is done with it
// (park); no slot may be pending.
func (d *Device) destroyTransfer() {
	x := d.xfer
	if x == nil {
		return
	}
	d.xfer = nil
	d.park(func() { d.destroyRing(x) })
}

// destroyRing destroys the staging ring x.
func (d *Device) destroyRing(x *transfer) {
	for i := range x.slots {
		s := &x.slots[i]
		for _, b := range []*Buffer{s.up, s.down} {
			if b != nil {
				b.destroy()
			}
		}
		if s.fence != nil {
			vulkan.DestroyFence(d.handle, s.fence, nil)
			d.track("VkFence", -1)
		}
		if s.pool != nil {
			vulkan.DestroyCommandPool(d.handle, s.pool, nil)
			d.track("VkCommandPool", -1)
		}
	}
}

// stagedCopy moves data between host memory and b through the staging
// ring, one chunk per submission.
func (d *Device) stagedCopy(b *Buffer, offset uint64, data []byte, upload bool) error {
	at := 0
	return d.staged(b, offset, uint64(len(data)), upload, func(stage []byte) (int, error) {
		var n int
		if upload {
			n = copy(stage, data[at:])
		} else {
			n = copy(data[at:], stage)
		}
		at += n
		return n, nil
	})
}
