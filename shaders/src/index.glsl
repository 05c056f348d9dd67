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

// sext64 sign-extends x to 64 bits.
idx_t sext64(int x) {
	return makeIdx(uint(x), uint(x >> 31));
}

// readIndex returns the index at flat position pos of indices. exact is
// false for a uint64 above the int64 range (always out of range).
idx_t readIndex(count_t pos, out bool exact) {
	exact = true;
	if (INDEX_BYTES == 8) {
		off_t o = offsetOf(pos, 8u);
		uint lo = loadWord(T_IDX, o);
		uint hi = loadWord(T_IDX, offAdd(o, 4u));
		if (INDEX_SIGNED == 0) {
			exact = hi < 0x80000000u;
		}
		return makeIdx(lo, hi);
	}
	if (INDEX_BYTES == 4) {
		uint w = loadWord(T_IDX, offsetOf(pos, 4u));
		if (INDEX_SIGNED != 0) {
			return sext64(int(w));
		}
		return makeIdx(w, 0u);
	}
	off_t o = offsetOf(pos, uint(INDEX_BYTES));
	uint w = loadWord(T_IDX, offAlign4(o));
	int bit = int(offLow(o) & 3u) * 8;
	if (INDEX_SIGNED != 0) {
		return sext64(bitfieldExtract(int(w), bit, INDEX_BYTES * 8));
	}
	return makeIdx(bitfieldExtract(w, bit, INDEX_BYTES * 8), 0u);
}

// normalise maps index v into a dimension of size s, counting from the
// end when it is negative, and reports whether it was in range. It does not
// branch: on CPU devices a divergent branch per index (and an atomic inside
// one) costs several times the index's load.
bool normalise(inout idx_t v, bool exact, idx_t s) {
#if INT64
	int64_t lo = (FLAGS & FLAG_NEGATIVE) != 0u ? -s : 0l;
	bool ok = exact && v >= lo && v < s;
	v += v < 0l ? s : 0l;
#else
	// Every operand first, so that the compiler selects rather than
	// branches (a call on the right of && or ?: makes it branch).
	idx_t neg = sNeg(s);
	idx_t lo = (FLAGS & FLAG_NEGATIVE) != 0u ? neg : idx_t(0);
	bool above = !sLess(v, lo), below = sLess(v, s), negative = sNegative(v);
	idx_t wrapped = sAdd(v, s);
	bool ok = exact && above && below;
	v = negative ? wrapped : v;
#endif
	return ok;
}

// noBad is the bad position of a run with no bad index.
#if INT64
const count_t noBad = 0xFFFFFFFFFFFFFFFFul;
#else
const count_t noBad = 0xFFFFFFFFu;
#endif

// indexAt returns the normalised index of position p: for KIND_BLOCK the
// row that index tuple p addresses (sum of idx_c * rowstride_c over its
// components), for KIND_ELEMENT index p normalised to [0, P_ROWS), for
// KIND_CACHE write index p as it is (checked for linear mode). bad is
// the position of the first bad index element it read, or noBad; the value
// of a bad index is garbage.
count_t indexAt(pos_t p, out count_t bad) {
	bad = noBad;
#if KIND == KIND_BLOCK
	// The tuple's components sit at p*k ... p*k+k-1.
	uint k = uint(param(P_TUPLE));
	uint at = uint(param(P_TUPLE_AT));
	count_t row = count_t(0);
	for (uint c = 0u; c < k; c++) {
		count_t pos = count_t(p) * count_t(k) + count_t(c);
		bool exact;
		idx_t v = readIndex(pos, exact);
		idx_t s = idx_t(param64(at + c));
		if (!normalise(v, exact, s)) {
			bad = min(bad, pos);
		}
		row = row * idxLow(s) + idxLow(v);
	}
	return row;
#elif KIND == KIND_ELEMENT
	bool exact;
	idx_t v = readIndex(count_t(p), exact);
	if (!normalise(v, exact, idx_t(param64(P_ROWS)))) {
		bad = count_t(p);
	}
	return idxLow(v);
#elif KIND == KIND_CACHE
	// TensorScatter-24, linear mode: write index p must hold 0 <= w and
	// w + sequence_length (P_J) <= max_sequence_length (P_ROWS).
	bool exact;
	idx_t v = readIndex(count_t(p), exact);
	idx_t last = sAdd(idx_t(param64(P_ROWS)), sNeg(idx_t(param64(P_J))));
	bool negative = sNegative(v), beyond = sLess(last, v);
	if (!exact || negative || beyond) {
		bad = count_t(p);
	}
	return idxLow(v);
#else
#error index.glsl: indices apply to KIND_BLOCK, KIND_ELEMENT and KIND_CACHE
#endif
}
