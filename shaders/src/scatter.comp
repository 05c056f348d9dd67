#version 460
// scatter.comp: one position per update unit u = (o*J + j)*Inner + k (an
// element, or several for contiguous runs; see gpu/plan.go). It finds the
// output unit the update lands on and applies it. An invocation handles
// pc.run consecutive positions.
//
// Variant macros (besides common.glsl's):
//   KIND        KIND_BLOCK (ScatterUpdate, ScatterNDUpdate, ScatterND),
//               KIND_ELEMENT (ScatterElementsUpdate, Scatter,
//               ScatterElements) or KIND_SLICE (SliceScatter).
//   ELEM_BYTES  the unit size: 1, 2, 4, 8 or 16. With reduction none, data
//               movement depends only on the size, so every dtype of that
//               size shares the kernel (strings move as 32-bit handles).
//   REDUCTION   RED_NONE. Reductions will be further variants of this
//               source: they replace apply() and drop the owner test.
//
// With reduction none and duplicate targets the last update in index order
// wins (the contract's order): resolve.comp stored j+1 of the last update
// for every slot in the owner words, and only that update writes.

#include "common.glsl"

#ifndef REDUCTION
#define REDUCTION RED_NONE
#endif
#if REDUCTION != RED_NONE
#error scatter.comp: only reduction none has kernels
#endif

#if ELEM_BYTES < 4
// storeSub writes the low ELEM_BYTES*8 bits of v at byte offset o of the
// output, inside its 32-bit word: other invocations may be writing the
// word's other bytes at the same time, so both steps are atomic. The first
// clears the bits of this element that v does not set, the second sets
// those it does.
void storeSub(uint64_t o, uint v) {
	uint bit = uint(o & 3ul) * 8u;
	uint mask = ((1u << (ELEM_BYTES * 8)) - 1u) << bit;
	uint64_t a = addressOf(T_OUT, o & ~3ul);
	uint bits = (v << bit) & mask;
	atomicAnd(Word(a).w, bits | ~mask);
	atomicOr(Word(a).w, bits);
}
#endif

// apply copies update u onto output element t.
void apply(pos_t u, pos_t t) {
#if ELEM_BYTES == 16
	Word4(addressOf(T_OUT, uint64_t(t) * 16ul)).v = Word4(addressOf(T_UPD, uint64_t(u) * 16ul)).v;
#elif ELEM_BYTES == 8
	Word2(addressOf(T_OUT, uint64_t(t) * 8ul)).v = Word2(addressOf(T_UPD, uint64_t(u) * 8ul)).v;
#elif ELEM_BYTES == 4
	Word(addressOf(T_OUT, uint64_t(t) * 4ul)).w = loadWord(T_UPD, uint64_t(u) * 4ul);
#else
	uint64_t s = uint64_t(u) * uint64_t(ELEM_BYTES);
	uint w = loadWord(T_UPD, s & ~3ul);
	storeSub(uint64_t(t) * uint64_t(ELEM_BYTES), w >> (uint(s & 3ul) * 8u));
#endif
}

// scatterOne applies the update at position u.
void scatterOne(pos_t u) {
#if KIND == KIND_SLICE
	apply(u, pos_t(param(S_BASE)) + affine(u, uint(param(S_NDIMS)), S_DIMS_AT));
#else
	pos_t o, j, k;
	split(u, o, j, k);
#if KIND == KIND_BLOCK
	uint v = Word(addressOf(T_NORM, u32Offset(j))).w;
	if ((pc.flags & FLAG_OWNER) != 0u && owner(pos_t(v)) != uint(j) + 1u) {
		return;
	}
	apply(u, target(o, k, v));
#elif KIND == KIND_ELEMENT
	uint v = Word(addressOf(T_NORM, u32Offset(u))).w;
	pos_t t = target(o, k, v);
	if ((pc.flags & FLAG_OWNER) != 0u && owner(t) != uint(j) + 1u) {
		return;
	}
	apply(u, t);
#else
#error scatter.comp: unknown KIND
#endif
#endif
}

void main() {
	pos_t u = firstPosition();
	uint64_t end = runEnd(u);
	if (uint64_t(u) >= end) {
		return;
	}
#if KIND != KIND_SLICE
	// Nothing is written once a bad index was found: the host discards the
	// output then, and the normalised values of bad indices are garbage.
	if (errorSet()) {
		return;
	}
#endif
	loadChunks();
	for (; uint64_t(u) < end; u++) {
		scatterOne(u);
	}
}
