//go:build cgo

package gpu

// Owner words (shaders/src/resolve.comp) are 4 bytes per slot of the
// output: an element call of reduction none whose updates may collide
// claims each target with atomicMax(owner, j+1), and the scatter writes
// the update whose j+1 owns its target. Clearing them before every call
// would be a pass sized to the output however few the updates; instead
// the update that owns a target clears its word after writing (the
// others never write), so a call that completes leaves every word 0, and
// the backend keeps such tensors for the next call (callPlan.keepsOwners).
// Only a new tensor, or one a failed call used (a bad index stops the
// scatter; a lost device stops everything), is cleared first.

// maxClearOwners bounds the owner tensors kept clear between calls.
const maxClearOwners = 2

// clearOwners is an owner-word tensor of chunks of 2^shift bytes whose
// first clear bytes are all 0.
type clearOwners struct {
	t     *devTensor
	shift uint
	clear uint64
}

// takeClearOwners returns a kept owner tensor for size bytes of owner
// words in chunks of 2^shift bytes whose words are clear, with the bytes
// of it that are, or nil; b.mu is held.
func (b *Backend) takeClearOwners(size uint64, shift uint) (*devTensor, uint64) {
	for i, c := range b.clear {
		if c.shift == shift && c.clear >= size && len(c.t.bufs) == len(chunkSizes(size, shift)) {
			b.clear = append(b.clear[:i], b.clear[i+1:]...)
			return c.t, c.clear
		}
	}
	return nil, 0
}

// keepClearOwners keeps t, an owner tensor of chunks of 2^shift bytes
// whose first clear bytes a completed call left 0, for a later call,
// giving back the smallest kept one beyond maxClearOwners; b.mu is held.
func (b *Backend) keepClearOwners(t *devTensor, shift uint, clear uint64) {
	b.clear = append(b.clear, clearOwners{t, shift, clear})
	if len(b.clear) <= maxClearOwners {
		return
	}
	small := 0
	for i, c := range b.clear {
		if c.clear < b.clear[small].clear {
			small = i
		}
	}
	b.releaseTensor(b.clear[small].t)
	b.clear = append(b.clear[:small], b.clear[small+1:]...)
}

// dropClearOwners gives back the kept owner tensors; b.mu is held.
func (b *Backend) dropClearOwners() {
	for _, c := range b.clear {
		b.releaseTensor(c.t)
	}
	b.clear = nil
}

// ownersLeftClear returns the owner tensors of f's calls that f left
// clear, with the bytes of each that are: all of them once f completed
// without error (every call's scatter ran and cleared what its resolve
// claimed), none otherwise.
func (b *Backend) ownersLeftClear(f *flight) map[*devTensor]clearOwners {
	if !f.done || f.err != nil {
		return nil
	}
	kept := map[*devTensor]clearOwners{}
	for _, c := range f.calls {
		if !c.plan.keepsOwners() || len(c.tensors) <= tOwner {
			continue
		}
		t := c.tensors[tOwner]
		kept[t] = clearOwners{t, c.plan.shift, max(c.plan.sizes[tOwner], c.ownersClear)}
	}
	return kept
}
