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
//                 KIND_CACHE: one invocation per write index of a linear
//                 TensorScatter; it checks the index and writes nothing.
//                 (An invocation handles pc.run consecutive positions.)
//   INDEX_BYTES   1, 2, 4 or 8: the index element size.
//   INDEX_SIGNED  1 for int8 ... int64, 0 for uint8 ... uint64.
//
// Indices are read as 32-bit words, so devices need no 8- or 16-bit storage.
// A bad index never faults or clamps: the invocation lowers the error word
// to (its first bad position >> errShift) and claims or counts nothing for
// it; the host then finds the exact first bad position and reports it.

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

// normalise maps index v into a dimension of size s, counting from the
// end when it is negative, and reports whether it was in range. It does not
// branch: on CPU devices a divergent branch per index (and an atomic inside
// one) costs several times the index's load.
bool normalise(inout int64_t v, bool exact, int64_t s) {
	int64_t lo = (FLAGS & FLAG_NEGATIVE) != 0u ? -s : 0l;
	bool ok = exact && v >= lo && v < s;
	v += v < 0l ? s : 0l;
	return ok;
}

// noBad is the bad position of a run with no bad index.
const uint64_t noBad = 0xFFFFFFFFFFFFFFFFul;

// resolveOne resolves position p: a tuple (BLOCK) or an index (ELEMENT).
// It returns the position of the first bad index element it met, or
// noBad. The normalised value of a bad index is garbage: no pass reads it
// once the error word is set.
uint64_t resolveOne(pos_t p) {
#if KIND == KIND_BLOCK
	// The tuple's components sit at p*k ... p*k+k-1.
	uint k = uint(param(P_TUPLE));
	uint at = uint(param(P_TUPLE_AT));
	uint64_t row = 0ul;
	uint64_t bad = noBad;
	for (uint c = 0u; c < k; c++) {
		uint64_t pos = uint64_t(p) * uint64_t(k) + uint64_t(c);
		bool exact;
		int64_t v = readIndex(pos, exact);
		int64_t s = int64_t(param(at + c));
		if (!normalise(v, exact, s)) {
			bad = min(bad, pos);
		}
		row = row * uint64_t(s) + uint64_t(v);
	}
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
	bool exact;
	int64_t v = readIndex(uint64_t(p), exact);
	bool ok = normalise(v, exact, int64_t(param(P_ROWS)));
	if ((FLAGS & (FLAG_OWNER | FLAG_COUNT | FLAG_TARGET)) == 0u) {
		Word(addressOf(T_NORM, u32Offset(p))).w = uint(v);
		return ok ? noBad : uint64_t(p);
	}
	if (!ok) {
		return uint64_t(p);
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
#elif KIND == KIND_CACHE
	// TensorScatter-24, linear mode: 0 <= w and w + sequence_length <=
	// max_sequence_length.
	bool exact;
	int64_t v = readIndex(uint64_t(p), exact);
	return v >= 0l && v <= int64_t(param(P_ROWS) - param(P_J)) ? noBad : uint64_t(p);
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
