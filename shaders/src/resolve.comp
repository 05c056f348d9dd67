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
//                 KIND_CACHE: one invocation per write index of a linear
//                 TensorScatter; it checks the index and writes nothing.
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
// once the error word is set; with FLAG_SKIP_BAD it is NO_ROW, which the
// passes after skip.
count_t resolveOne(pos_t p) {
	count_t bad;
	count_t v = indexAt(p, bad);
	if ((FLAGS & FLAG_DIRECT) != 0u) {
		// The scatter reads the raw indices itself: only check them.
		return bad;
	}
	bool skip = (FLAGS & FLAG_SKIP_BAD) != 0u && bad != noBad;
#if KIND == KIND_BLOCK
	count_t row = v;
	Word(addressOf(T_NORM, u32Offset(p))).w = skip ? NO_ROW : uint(row);
	if (bad != noBad) {
		return bad;
	}
	if ((FLAGS & FLAG_OWNER) != 0u) {
		atomicMax(Word(addressOf(T_OWNER, offsetOf(row, 4u))).w, uint(p) + 1u);
	} else if ((FLAGS & FLAG_COUNT) != 0u) {
		atomicAdd(Word(addressOf(T_OWNER, offsetOf(row, 4u))).w, 1u);
	}
	return noBad;
#elif KIND == KIND_ELEMENT
	if ((FLAGS & (FLAG_OWNER | FLAG_COUNT | FLAG_TARGET)) == 0u) {
		Word(addressOf(T_NORM, u32Offset(p))).w = skip ? NO_ROW : uint(v);
		return bad;
	}
	if (bad != noBad) {
		if (skip) {
			Word(addressOf(T_NORM, u32Offset(p))).w = NO_ROW;
		}
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
#elif KIND == KIND_CACHE
	// A linear TensorScatter's write indices are only checked.
	return bad;
#else
#error resolve.comp: unknown KIND
#endif
}

#ifdef TABLE
// The last-writer table (FLAG_TABLE): one workgroup resolves every
// position, keeping for each slot (a BLOCK row, an ELEMENT target) the
// last update in index order in a hash table in workgroup memory, then
// writes each position's normalised index, or NO_ROW where a later update
// has the same slot. The scatter then writes the updates whose index is
// not NO_ROW, and no owner words (4 bytes per slot of the output) are
// cleared or claimed. Slot s's key (the slot + 1; 0 is free) is word s,
// its owner (j + 1 of its last update) word TABLE_SLOTS + s; the host
// gives at most TABLE_RUN*LOCAL_SIZE positions, fewer than TABLE_SLOTS, so
// that linear probing always finds a key's slot within TABLE_SLOTS probes.
#define TABLE_SLOTS (TABLE_WORDS / 2)

shared uint table[TABLE_WORDS];

// findSlot returns the slot of key: with claim, the free slot it takes
// when it has none yet.
uint findSlot(uint key, bool claim) {
	uint mask = uint(TABLE_SLOTS) - 1u;
	uint s = mix32(key) & mask;
	for (uint i = 0u; i < uint(TABLE_SLOTS); i++) {
		uint prev = claim ? atomicCompSwap(table[s], 0u, key) : table[s];
		if (prev == 0u || prev == key) {
			break;
		}
		s = (s + 1u) & mask;
	}
	return s;
}

void resolveTable() {
	uint lid = gl_LocalInvocationID.x;
	for (uint w = lid; w < uint(TABLE_WORDS); w += uint(LOCAL_SIZE)) {
		table[w] = 0u;
	}
	barrier();
	// Position p = lid + i*LOCAL_SIZE: its key, its normalised index, its
	// j + 1 (0 for a bad index).
	uint keys[TABLE_RUN], vals[TABLE_RUN], owners[TABLE_RUN];
	uint n = uint(pcEnd());
	count_t bad = noBad;
	for (uint i = 0u; i < uint(TABLE_RUN); i++) {
		uint p = lid + i * uint(LOCAL_SIZE);
		owners[i] = 0u;
		if (p >= n) {
			continue;
		}
		count_t b;
		count_t v = indexAt(pos_t(p), b);
		if (b != noBad) {
			bad = min(bad, b);
			if ((FLAGS & FLAG_SKIP_BAD) != 0u) {
				Word(addressOf(T_NORM, u32Offset(pos_t(p)))).w = NO_ROW;
			}
			continue;
		}
		vals[i] = uint(v);
#if KIND == KIND_BLOCK
		keys[i] = uint(v) + 1u;
		owners[i] = p + 1u;
#else
		pos_t o, j, k;
		split(pos_t(p), o, j, k);
		keys[i] = uint(target(o, k, uint(v))) + 1u;
		owners[i] = uint(j) + 1u;
#endif
	}
	// The claims come after every load of this invocation, so that its
	// loads are in flight together rather than one per claim.
	for (uint i = 0u; i < uint(TABLE_RUN); i++) {
		if (owners[i] != 0u) {
			atomicMax(table[uint(TABLE_SLOTS) + findSlot(keys[i], true)], owners[i]);
		}
	}
	barrier();
	for (uint i = 0u; i < uint(TABLE_RUN); i++) {
		uint p = lid + i * uint(LOCAL_SIZE);
		if (owners[i] == 0u) {
			continue; // no position, or a bad index: the scatter does nothing
		}
		bool wins = table[uint(TABLE_SLOTS) + findSlot(keys[i], false)] == owners[i];
		Word(addressOf(T_NORM, u32Offset(pos_t(p)))).w = wins ? vals[i] : NO_ROW;
	}
	if (bad != noBad) {
		atomicMin(Word(errorAddress()).w, uint(bad >> pc.errShift));
	}
}
#endif

void main() {
#ifdef TABLE
	// One workgroup: every invocation reaches the barriers.
	loadChunks();
	resolveTable();
#else
	pos_t p = firstPosition();
	count_t end = runEnd(p);
	if (count_t(p) >= end) {
		return;
	}
	loadChunks();
	// One atomic per run at most: the run's first bad position.
	count_t bad = noBad;
	for (; count_t(p) < end; p++) {
		bad = min(bad, resolveOne(p));
	}
	if (bad != noBad) {
		atomicMin(Word(errorAddress()).w, uint(bad >> pc.errShift));
	}
#endif
}
