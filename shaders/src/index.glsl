// index.glsl: reading and checking indices, shared by resolve.comp and by
// the scatter of reductions that read the raw indices themselves
// (FLAG_DIRECT: no resolve pass writes normalised ones first). It needs
// KIND and common.glsl.
//
// The index type is resolve.comp's variant macros INDEX_BYTES (1, 2, 4 or
// 8) and INDEX_SIGNED (0 or 1); a kernel without them takes it from the
// call's flags (FLAG_INDEX_2, FLAG_INDEX_4, FLAG_INDEX_8, none for 1 byte;
// FLAG_INDEX_SIGNED), a specialization constant the driver folds, so that
// the scatter needs no variant per index type. Indices are read as 32-bit
// words, so devices need no 8- or 16-bit storage. A bad index never faults
// or clamps: the caller lowers the error word to (its first bad position
// >> errShift) and the host then finds the exact first bad position and
// reports it.

#ifndef INDEX_BYTES
#define INDEX_BYTES ((FLAGS & FLAG_INDEX_8) != 0u ? 8 : (FLAGS & FLAG_INDEX_4) != 0u ? 4 : (FLAGS & FLAG_INDEX_2) != 0u ? 2 : 1)
#define INDEX_SIGNED ((FLAGS & FLAG_INDEX_SIGNED) != 0u ? 1 : 0)
#endif

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
	if (INDEX_BYTES == 8) {
		uint64_t o = pos * 8ul;
		uint lo = loadWord(T_IDX, o);
		uint hi = loadWord(T_IDX, o + 4ul);
		if (INDEX_SIGNED == 0) {
			exact = hi < 0x80000000u;
		}
		return int64_t(packUint2x32(uvec2(lo, hi)));
	}
	if (INDEX_BYTES == 4) {
		uint w = loadWord(T_IDX, pos * 4ul);
		if (INDEX_SIGNED != 0) {
			return sext64(int(w));
		}
		return int64_t(uint64_t(w));
	}
	uint64_t o = pos * uint64_t(INDEX_BYTES);
	uint w = loadWord(T_IDX, o & ~3ul);
	int bit = int(o & 3ul) * 8;
	if (INDEX_SIGNED != 0) {
		return sext64(bitfieldExtract(int(w), bit, INDEX_BYTES * 8));
	}
	return int64_t(uint64_t(bitfieldExtract(w, bit, INDEX_BYTES * 8)));
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

// indexAt returns the normalised index of position p: for KIND_BLOCK the
// row that index tuple p addresses (sum of idx_c * rowstride_c over its
// components), for KIND_ELEMENT index p normalised to [0, P_ROWS), for
// KIND_CACHE write index p as it is (checked for linear mode). bad is
// the position of the first bad index element it read, or noBad; the value
// of a bad index is garbage.
uint64_t indexAt(pos_t p, out uint64_t bad) {
	bad = noBad;
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
		if (!normalise(v, exact, s)) {
			bad = min(bad, pos);
		}
		row = row * uint64_t(s) + uint64_t(v);
	}
	return row;
#elif KIND == KIND_ELEMENT
	bool exact;
	int64_t v = readIndex(uint64_t(p), exact);
	if (!normalise(v, exact, int64_t(param(P_ROWS)))) {
		bad = uint64_t(p);
	}
	return uint64_t(v);
#elif KIND == KIND_CACHE
	// TensorScatter-24, linear mode: write index p must hold 0 <= w and
	// w + sequence_length (P_J) <= max_sequence_length (P_ROWS).
	bool exact;
	int64_t v = readIndex(uint64_t(p), exact);
	if (!exact || v < 0l || v > int64_t(param(P_ROWS) - param(P_J))) {
		bad = uint64_t(p);
	}
	return uint64_t(v);
#else
#error index.glsl: indices apply to KIND_BLOCK, KIND_ELEMENT and KIND_CACHE
#endif
}
