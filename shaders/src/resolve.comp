#version 460
// resolve.comp: reads raw indices, checks each against the range its
// operator version allows, writes the normalised values and, when
// duplicates are possible, claims the targets for the last update
// (FLAG_OWNER, reduction none) or counts the updates each slot receives
// (FLAG_COUNT, reductions: mean, use_init_val = false and the in-order
// fold need the counts).
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
// Indices are read as 32-bit words, so devices need no 8- or 16-bit storage.
// A bad index never faults or clamps: the invocation lowers the error word
// to (its position >> errShift) and writes nothing else; the host then finds
// the exact first bad position and reports it.

#include "common.glsl"

// sext64 sign-extends x to 64 bits. It builds the high word itself:
// llvmpipe (Mesa 22.3) miscompiles int64_t(int) (OpSConvert), which turned
// -1 into a huge positive index.
int64_t sext64(int x) {
	return int64_t(packUint2x32(uvec2(uint(x), uint(x >> 31))));
}

// readIndex returns the index at flat position pos of indices. exact is
// false for a uint64 above the int64 range (always out of range).
int64_t readIndex(uint64_t pos, out bool exact) {
	exact = true;
#if INDEX_BYTES == 8
	uint64_t o = pos * 8ul;
	uint lo = loadWord(T_IDX, o);
	uint hi = loadWord(T_IDX, o + 4ul);
#if !INDEX_SIGNED
	exact = hi < 0x80000000u;
#endif
	return int64_t(packUint2x32(uvec2(lo, hi)));
#elif INDEX_BYTES == 4
	uint w = loadWord(T_IDX, pos * 4ul);
#if INDEX_SIGNED
	return sext64(int(w));
#else
	return int64_t(uint64_t(w));
#endif
#else
	uint64_t o = pos * uint64_t(INDEX_BYTES);
	uint w = loadWord(T_IDX, o & ~3ul);
	int bit = int(o & 3ul) * 8;
#if INDEX_SIGNED
	return sext64(bitfieldExtract(int(w), bit, INDEX_BYTES * 8));
#else
	return int64_t(uint64_t(bitfieldExtract(w, bit, INDEX_BYTES * 8)));
#endif
#endif
}

// check normalises index v into a dimension of size s, or reports position
// pos as bad and returns false.
bool check(inout int64_t v, bool exact, int64_t s, uint64_t pos) {
	int64_t lo = (pc.flags & FLAG_NEGATIVE) != 0u ? -s : 0l;
	if (!exact || v < lo || v >= s) {
		atomicMin(Word(errorAddress()).w, uint(pos >> pc.errShift));
		return false;
	}
	if (v < 0l) {
		v += s;
	}
	return true;
}

// resolveOne resolves position p: a tuple (BLOCK) or an index (ELEMENT).
void resolveOne(pos_t p) {
#if KIND == KIND_BLOCK
	// The tuple's components sit at p*k ... p*k+k-1.
	uint k = uint(param(P_TUPLE));
	uint at = uint(param(P_TUPLE_AT));
	uint64_t row = 0ul;
	for (uint c = 0u; c < k; c++) {
		uint64_t pos = uint64_t(p) * uint64_t(k) + uint64_t(c);
		bool exact;
		int64_t v = readIndex(pos, exact);
		int64_t s = int64_t(param(at + c));
		if (!check(v, exact, s, pos)) {
			return;
		}
		row = row * uint64_t(s) + uint64_t(v);
	}
	Word(addressOf(T_NORM, u32Offset(p))).w = uint(row);
	if ((pc.flags & FLAG_OWNER) != 0u) {
		atomicMax(Word(addressOf(T_OWNER, row * 4ul)).w, uint(p) + 1u);
	} else if ((pc.flags & FLAG_COUNT) != 0u) {
		atomicAdd(Word(addressOf(T_OWNER, row * 4ul)).w, 1u);
	}
#elif KIND == KIND_ELEMENT
	bool exact;
	int64_t v = readIndex(uint64_t(p), exact);
	if (!check(v, exact, int64_t(param(P_ROWS)), uint64_t(p))) {
		return;
	}
	if ((pc.flags & (FLAG_OWNER | FLAG_COUNT | FLAG_TARGET)) == 0u) {
		Word(addressOf(T_NORM, u32Offset(p))).w = uint(v);
		return;
	}
	pos_t o, j, k;
	split(p, o, j, k);
	pos_t t = target(o, k, uint(v));
	// The in-order fold sorts updates by target (which then fits 32 bits).
	Word(addressOf(T_NORM, u32Offset(p))).w = (pc.flags & FLAG_TARGET) != 0u ? uint(t) : uint(v);
	if ((pc.flags & FLAG_OWNER) != 0u) {
		atomicMax(Word(addressOf(T_OWNER, u32Offset(t))).w, uint(j) + 1u);
	} else if ((pc.flags & FLAG_COUNT) != 0u) {
		atomicAdd(Word(addressOf(T_OWNER, u32Offset(t))).w, 1u);
	}
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
	for (; uint64_t(p) < end; p++) {
		resolveOne(p);
	}
}
