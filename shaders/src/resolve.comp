#version 460
// resolve.comp: reads raw indices, checks each against the range its
// operator version allows, writes the normalised values and, when
// duplicates are possible, claims the targets for the last update
// (FLAG_OWNER, reduction none) or counts the updates each slot receives
// (FLAG_COUNT, reductions: mean, use_init_val = false and the in-order
// fold need the counts). With FLAG_DIRECT (a reduction whose scatter reads
// the raw indices itself) it only checks them.
//
// Variant macros (besides common.glsl's):
//   KIND          KIND_BLOCK: one invocation per index tuple of TUPLE
//                 components (ScatterUpdate: tuples of 1; ScatterNDUpdate
//                 and ScatterND: indices.shape[-1]); the value written is
//                 the row number sum(idx_c * rowstride_c).
//                 KIND_ELEMENT: one invocation per index; the value written
//                 is the index normalised to [0, s-1].
//                 (An invocation handles pc.run consecutive positions.)
//   INDEX_BYTES   1, 2, 4 or 8: the index element size.
//   INDEX_SIGNED  1 for int8 ... int64, 0 for uint8 ... uint64.
//
// index.glsl reads and checks the indices. A bad index never faults or
// clamps: the invocation lowers the error word to (its first bad position
// >> errShift) and claims or counts nothing for it.

#include "common.glsl"
#include "index.glsl"

// resolveOne resolves position p: a tuple (BLOCK) or an index (ELEMENT).
// It returns the position of the first bad index element it met, or
// noBad. The normalised value of a bad index is garbage: no pass reads it
// once the error word is set.
uint64_t resolveOne(pos_t p) {
	uint64_t bad;
	uint64_t v = indexAt(p, bad);
	if ((FLAGS & FLAG_DIRECT) != 0u) {
		// The scatter reads the raw indices itself: only check them.
		return bad;
	}
#if KIND == KIND_BLOCK
	uint64_t row = v;
	Word(addressOf(T_NORM, u32Offset(p))).w = uint(row);
	if (bad != noBad) {
		return bad;
	}
	if ((FLAGS & FLAG_OWNER) != 0u) {
		atomicMax(Word(addressOf(T_OWNER, row * 4ul)).w, uint(p) + 1u);
	} else if ((FLAGS & FLAG_COUNT) != 0u) {
		atomicAdd(Word(addressOf(T_OWNER, row * 4ul)).w, 1u);
	}
	return noBad;
#elif KIND == KIND_ELEMENT
	if ((FLAGS & (FLAG_OWNER | FLAG_COUNT | FLAG_TARGET)) == 0u) {
		Word(addressOf(T_NORM, u32Offset(p))).w = uint(v);
		return bad;
	}
	if (bad != noBad) {
		return bad;
	}
	pos_t o, j, k;
	split(p, o, j, k);
	pos_t t = target(o, k, uint(v));
	// The in-order fold sorts updates by target (which then fits 32 bits).
	Word(addressOf(T_NORM, u32Offset(p))).w = (FLAGS & FLAG_TARGET) != 0u ? uint(t) : uint(v);
	if ((FLAGS & FLAG_OWNER) != 0u) {
		atomicMax(Word(addressOf(T_OWNER, u32Offset(t))).w, uint(j) + 1u);
	} else if ((FLAGS & FLAG_COUNT) != 0u) {
		atomicAdd(Word(addressOf(T_OWNER, u32Offset(t))).w, 1u);
	}
	return noBad;
#else
#error resolve.comp: unknown KIND
#endif
}

void main() {
	pos_t p = firstPosition();
	uint64_t end = runEnd(p);
	if (uint64_t(p) >= end) {
		return;
	}
	loadChunks();
	// One atomic per run at most: the run's first bad position.
	uint64_t bad = noBad;
	for (; uint64_t(p) < end; p++) {
		bad = min(bad, resolveOne(p));
	}
	if (bad != noBad) {
		atomicMin(Word(errorAddress()).w, uint(bad >> pc.errShift));
	}
}
