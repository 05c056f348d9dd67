// scatter.comp: one position per update unit u = (o*J + j)*Inner + k (an
// element, or several for contiguous runs; see gpu/plan.go). It finds the
// output unit the update lands on and applies it. An invocation handles
// pc.run consecutive positions.
//
// Variant macros (besides common.glsl's):
//   KIND        KIND_BLOCK (ScatterUpdate, ScatterNDUpdate, ScatterND),
//               KIND_ELEMENT (ScatterElementsUpdate, Scatter,
//               ScatterElements), KIND_SLICE (SliceScatter) or KIND_CACHE
//               (TensorScatter).
//   ELEM_BYTES  the unit size: 1, 2, 4, 8 or 16. With reduction none, data
//               movement depends only on the size, so every dtype of that
//               size shares the kernel (strings move as 32-bit handles).
//   DTYPE       (reductions only) the data type, DT_BOOL ... DT_F64; the
//               reduction is specialization constant RED and the atomics
//               ATOMICS_NATIVE (see reduce.glsl). Without DTYPE the kernel
//               moves units of ELEM_BYTES (reduction none).
//
// With reduction none and duplicate targets the last update in index order
// wins (the contract's order): resolve.comp stored j+1 of the last update
// for every slot in the owner words, and only that update writes; or it
// marked every other update's index NO_ROW (FLAG_TABLE); or, for
// plans with at most LATER_MAX positions along the index dimension
// (FLAG_LATER), an update writes unless a later one has the same index
// (laterWins), which needs no owner words; or, for
// ELEMENT plans with many columns (FLAG_WALK), each invocation walks one
// column's updates in index order and no owner words are needed. The walk
// serves reductions too: each column folds its updates in index order,
// as the CPU reference does, with no atomics.
//
// A reduction's scatter reads the normalised indices resolve.comp wrote,
// or with FLAG_DIRECT reads and checks the raw indices itself (index.glsl),
// skipping a bad one and lowering the error word to its position as
// resolve does: the host then discards the output, which is the backend's
// own (Execute), or a resolve pass checked them before (resident calls).
//
// KIND_CACHE rows never collide within a call (a prefix's sequence is at
// most the axis long), so every update is a plain move: no owner words, no
// resolve pass in circular mode or without write_indices, where every
// write index is valid. In linear mode with at most LATER_MAX batch
// entries (FLAG_CHECK_ALL) each invocation checks them all before it
// writes, so that one dispatch finds a bad one and writes nothing; with
// more, resolve.comp checks them in a pass before.
//
// With a reduction every update is folded into its target atomically, so
// the fold order is the device's: exact for integers, bool, min and max,
// rounded differently from the index order for float sum, sub, prod and
// mean (gpu/doc.go bounds the difference; reduce.comp folds in order
// where that is wanted). With FLAG_PRIVATE (outputs that fit workgroup
// memory, many updates per output) each workgroup first folds a large
// share of the updates into its own copy of the output in workgroup
// memory, then folds each element it touched into the output: one global
// atomic per element and workgroup instead of one per update, which keeps
// updates that pile onto few targets from serialising on them.

#include "common.glsl"

#ifdef DTYPE
#include "reduce.glsl"
#include "index.glsl"
#endif

#ifndef DTYPE
#if ELEM_BYTES < 4
// storeSub writes the low ELEM_BYTES*8 bits of v at byte offset o of the
// output, inside its 32-bit word: other invocations may be writing the
// word's other bytes at the same time, so both steps are atomic. The first
// clears the bits of this element that v does not set, the second sets
// those it does.
void storeSub(off_t o, uint v) {
	uint bit = (offLow(o) & 3u) * 8u;
	uint mask = ((1u << (ELEM_BYTES * 8)) - 1u) << bit;
	addr_t a = addressOf(T_OUT, offAlign4(o));
	uint bits = (v << bit) & mask;
	atomicAnd(Word(a).w, bits | ~mask);
	atomicOr(Word(a).w, bits);
}
#endif

// apply copies update u onto output element t.
void apply(pos_t u, pos_t t) {
#if ELEM_BYTES == 16
	Word4(addressOf(T_OUT, offsetOf(count_t(t), 16u))).v = Word4(addressOf(T_UPD, offsetOf(count_t(u), 16u))).v;
#elif ELEM_BYTES == 8
	Word2(addressOf(T_OUT, offsetOf(count_t(t), 8u))).v = Word2(addressOf(T_UPD, offsetOf(count_t(u), 8u))).v;
#elif ELEM_BYTES == 4
	Word(addressOf(T_OUT, offsetOf(count_t(t), 4u))).w = loadWord(T_UPD, offsetOf(count_t(u), 4u));
#else
	off_t s = offsetOf(count_t(u), uint(ELEM_BYTES));
	uint w = loadWord(T_UPD, offAlign4(s));
	storeSub(offsetOf(count_t(t), uint(ELEM_BYTES)), w >> ((offLow(s) & 3u) * 8u));
#endif
}
#else
// badSeen is the first bad index position this invocation met
// (FLAG_DIRECT), or noBad; main lowers the error word to it.
count_t badSeen = noBad;

// The index tuple of the last BLOCK update checked (FLAG_DIRECT): the
// updates of a tuple are consecutive positions, so a run reads and checks
// each tuple once.
bool tupleSeen = false;
pos_t tupleJ;
uint tupleV;
bool tupleOk;

// targetOf sets t to the output element update u lands on and returns
// true; with FLAG_DIRECT it reads and checks the raw index itself and,
// for a bad one, returns false and lowers badSeen instead.
bool targetOf(pos_t u, out pos_t t) {
	pos_t o, j, k;
	split(u, o, j, k);
#if KIND == KIND_BLOCK
	uint v;
	if ((FLAGS & FLAG_DIRECT) != 0u) {
		if (!tupleSeen || tupleJ != j) {
			count_t bad;
			tupleV = uint(indexAt(j, bad));
			tupleOk = bad == noBad;
			badSeen = min(badSeen, bad);
			tupleSeen = true;
			tupleJ = j;
		}
		v = tupleV;
		if (!tupleOk) {
			return false;
		}
	} else {
		v = Word(addressOf(T_NORM, u32Offset(j))).w;
		if (skipped(v)) {
			return false;
		}
	}
#elif KIND == KIND_ELEMENT
	uint v;
	if ((FLAGS & FLAG_DIRECT) != 0u) {
		count_t bad;
		v = uint(indexAt(u, bad));
		if (bad != noBad) {
			badSeen = min(badSeen, bad);
			return false;
		}
	} else {
		v = Word(addressOf(T_NORM, u32Offset(u))).w;
		if (skipped(v)) {
			return false;
		}
	}
#else
#error scatter.comp: reductions apply to KIND_BLOCK and KIND_ELEMENT
#endif
	t = target(o, k, v);
	return true;
}

// reportBad lowers the error word to the first bad index position this
// invocation met (FLAG_DIRECT).
void reportBad() {
	if (badSeen != noBad) {
		atomicMin(Word(errorAddress()).w, uint(badSeen >> pc.errShift));
	}
}

// updateAt returns update u as the step folds it in: negated for sub
// (bool sub is XOR and takes it as it is).
E_T updateAt(pos_t u) {
	E_T x = loadElem(T_UPD, u);
#if DTYPE != DT_BOOL
	if (RED == RED_SUB) {
		x = negate(x);
	}
#endif
	return x;
}

// reduceOne folds update u into the output.
void reduceOne(pos_t u) {
	pos_t t;
	if (!targetOf(u, t)) {
		return;
	}
	E_T x = updateAt(u);
#if MEAN_ACC64
	if (RED == RED_MEAN) {
		accAdd(t, value64(x));
		return;
	}
#endif
	applyGlobal(t, x);
}

// foldOwned folds update u into output element t, which no other
// invocation updates (FLAG_WALK: a column's targets are its own): a plain
// read-modify-write, in the order the column is walked. (1- and 2-byte
// elements still write their bits of the word atomically: the word's
// other bytes belong to other columns.)
void foldOwned(pos_t u, pos_t t) {
	E_T x = updateAt(u);
#if MEAN_ACC64
	if (RED == RED_MEAN) {
		accAdd(t, value64(x));
		return;
	}
#endif
	storeElem(t, combine(loadElem(T_OUT, t), x));
}

#if ELEM_BYTES <= 4 && DTYPE != DT_BOOL
// The workgroup's copy of the output (FLAG_PRIVATE): element e at byte
// e*ELEM_BYTES, as in memory.
shared uint priv[PRIV_WORDS];

#define PER_WORD (4 / ELEM_BYTES)

// applyPrivate folds x into element e of the workgroup's copy.
void applyPrivate(uint e, E_T x) {
	uint w = e / uint(PER_WORD);
	uint bit = (e % uint(PER_WORD)) * uint(ELEM_BITS);
#if ATOMICS_NATIVE && DTYPE == DT_F32
	// Float32 min and max keep keys in workgroup memory, ordered as
	// combine orders values, NaNs included (keyOf; scatterPrivate
	// converts them back). A key the element's already beats costs one
	// load.
	if (RED == RED_MIN) {
		uint k = keyOf(x);
		if (k < priv[w]) {
			atomicMin(priv[w], k);
		}
		return;
	}
	if (RED == RED_MAX) {
		uint k = keyOf(x);
		if (k > priv[w]) {
			atomicMax(priv[w], k);
		}
		return;
	}
#endif
#if ATOMICS_NATIVE && IS_INT && ELEM_BYTES == 4
	// Workgroup atomics on 32-bit integers are core (signed min and max
	// would need an int array: they take the loop).
	if (RED == RED_SUM || RED == RED_SUB) {
		atomicAdd(priv[w], x);
		return;
	}
#if !IS_SIGNED
	if (RED == RED_MIN) {
		atomicMin(priv[w], x);
		return;
	}
	if (RED == RED_MAX) {
		atomicMax(priv[w], x);
		return;
	}
#endif
#endif
	uint old = priv[w];
	for (;;) {
		uint cur = (old >> bit) & E_MASK;
		uint nv = combine(cur, x);
		if (nv == cur) {
			return;
		}
		uint prev = atomicCompSwap(priv[w], old, (old & ~(E_MASK << bit)) | (nv << bit));
		if (prev == old) {
			return;
		}
		old = prev;
	}
}

// scatterPrivate: this workgroup takes tiles g, g+G, g+2G, ... of
// LOCAL_SIZE*run updates each (G workgroups, one 1-D dispatch from
// position 0), folds them into priv, and then the elements priv changed
// into the output. Its loops are bounded: the host picks G so that a
// workgroup takes at most max(tile, 16*outputs) updates (gpu/reduce.go,
// privateShare), and outputs fit PRIV_WORDS words, so the tile loop runs
// at most 1 + 16*4*PRIV_WORDS/tile times; the other two run at most
// PRIV_WORDS*4/LOCAL_SIZE times.
// groupErr is the error word as invocation 0 of the workgroup read it.
shared uint groupErr;

// groupErrorSet is errorSet for the whole workgroup: invocation 0 reads the
// word once and every invocation takes its answer, so that all of them
// take the same branch before a barrier. (Each reading the word itself
// could differ: a FLAG_DIRECT scatter's other workgroups lower it while
// this one starts.) Every invocation must call it.
bool groupErrorSet() {
	if (gl_LocalInvocationID.x == 0u) {
		groupErr = errorSet() ? 1u : 0u;
	}
	barrier();
	return groupErr != 0u;
}

// privIdentity returns the value an element of priv starts from: the
// reduction's identity, as a key for float32 min and max (applyPrivate).
E_T privIdentity() {
	E_T id = identity();
#if ATOMICS_NATIVE && DTYPE == DT_F32
	if (RED == RED_MIN || RED == RED_MAX) {
		id = keyOf(id);
	}
#endif
	return id;
}

// idWord returns a word of priv whose elements are all id.
uint idWord(E_T id) {
	uint w = id;
	for (uint i = 1u; i < uint(PER_WORD); i++) {
		w |= id << (i * uint(ELEM_BITS));
	}
	return w;
}

// clearPrivate sets the first elems elements of priv to id; every
// invocation of the workgroup takes part.
void clearPrivate(uint elems, E_T id) {
	uint idw = idWord(id);
	uint words = min((elems + uint(PER_WORD) - 1u) / uint(PER_WORD), PRIV_WORDS);
	for (uint w = gl_LocalInvocationID.x; w < words; w += uint(LOCAL_SIZE)) {
		priv[w] = idw;
	}
}

// flushPrivate folds element e of priv, unless it is still id, into
// output element t.
void flushPrivate(uint e, E_T id, pos_t t) {
	E_T x = (priv[e / uint(PER_WORD)] >> ((e % uint(PER_WORD)) * uint(ELEM_BITS))) & E_MASK;
	if (x == id) {
		return;
	}
#if ATOMICS_NATIVE && DTYPE == DT_F32
	if (RED == RED_MIN || RED == RED_MAX) {
		x = bitsOfKey(x);
	}
#endif
	applyGlobal(t, x);
}

void scatterPrivate() {
	uint lid = gl_LocalInvocationID.x;
	E_T id = privIdentity();
	uint outputs = uint(param(P_OUTPUTS));
	clearPrivate(outputs, id);
	barrier();
	uint n = uint(pc.end);
	uint tile = uint(LOCAL_SIZE) * RUN;
	for (uint b = gl_WorkGroupID.x * tile; b < n; b += gl_NumWorkGroups.x * tile) {
		// Neighbouring invocations take neighbouring updates.
		for (uint r = 0u; r < RUN; r++) {
			uint u = b + r * uint(LOCAL_SIZE) + lid;
			pos_t t;
			if (u < n && targetOf(pos_t(u), t)) {
				applyPrivate(uint(t), updateAt(pos_t(u)));
			}
		}
	}
	reportBad();
	barrier();
	for (uint e = lid; e < outputs; e += uint(LOCAL_SIZE)) {
		flushPrivate(e, id, pos_t(e));
	}
}

// The hot keys of a workgroup's tile (FLAG_HOT): a hash table of
// HOT_SLOTS slots in workgroup memory, at most a quarter full. Slot s
// holds a key (target + 1; 0: none), and word s of priv its count in the
// census; the keys seen HOT_MIN times or more there are the tile's hot
// keys, and then element s of priv folds every update of the tile that
// lands on slot s's key (PRIV_WORDS is at least HOT_SLOTS).
#define HOT_SLOTS (4 * LOCAL_SIZE)
#define HOT_PROBES 4u
#define HOT_MIN 3u
shared uint hotKey[HOT_SLOTS];
shared uint hotAny;

// hotSlot returns the slot of key among the hot keys, or HOT_SLOTS.
uint hotSlot(uint key) {
	uint s = mix32(key);
	for (uint i = 0u; i < HOT_PROBES; i++) {
		uint at = (s + i) & uint(HOT_SLOTS - 1);
		if (hotKey[at] == key) {
			return at;
		}
	}
	return uint(HOT_SLOTS);
}

// scatterHot is the atomic scatter with hot keys folded before they reach
// memory (FLAG_HOT). Updates that pile onto few targets (power-law
// targets: word frequencies, node degrees) would queue on those targets'
// atomics; instead each workgroup takes a census of its tile, the first
// update of each invocation's run, in the hash table, keeps the targets
// seen HOT_MIN times or more as its hot keys, folds every update that
// lands on a hot key into workgroup memory (applyPrivate: one workgroup
// atomic) and then each hot key's fold into the output: one global
// atomic per hot key and workgroup instead of one per update. The others
// take their global atomic as in main. A tile with no hot key (uniform
// targets) pays the census alone: the slots cleared, one probe sequence
// and two barriers (the invocation that brings a key to HOT_MIN raises
// hotAny, so no pass over the slots finds that none is hot). Every invocation reaches the barriers:
// one that has no positions takes part with none. The fold order differs
// from main's only where float sums round: the bound of gpu/DESIGN.md
// holds for any order. The loops over slots run HOT_SLOTS/LOCAL_SIZE
// times, the probes HOT_PROBES times, the run RUN times.
void scatterHot() {
	uint lid = gl_LocalInvocationID.x;
	for (uint s = lid; s < uint(HOT_SLOTS); s += uint(LOCAL_SIZE)) {
		hotKey[s] = 0u;
		priv[s] = 0u;
	}
	if (lid == 0u) {
		hotAny = 0u;
	}
	if (groupErrorSet()) {
		return; // uniform: the word lid 0 read for the workgroup
	}
	loadChunks();
	pos_t u0 = firstPosition();
	count_t end = runEnd(u0);
	pos_t t;
	if (count_t(u0) < end && targetOf(u0, t)) {
		uint key = uint(t) + 1u;
		uint s = mix32(key);
		for (uint i = 0u; i < HOT_PROBES; i++) {
			uint at = (s + i) & uint(HOT_SLOTS - 1);
			uint prev = atomicCompSwap(hotKey[at], 0u, key);
			if (prev == 0u || prev == key) {
				// The invocation that brings a key to HOT_MIN marks the
				// workgroup hot, so that a workgroup with no hot key
				// knows it after one barrier, without reading the slots.
				if (atomicAdd(priv[at], 1u) == HOT_MIN - 1u) {
					atomicOr(hotAny, 1u);
				}
				break;
			}
		}
	}
	barrier();
	if (hotAny == 0u) {
		// No hot key (uniform: every invocation reads the same word):
		// main's loop, with nothing in the way.
		for (pos_t u = u0; count_t(u) < end; u++) {
			reduceOne(u);
		}
		reportBad();
		return;
	}
	// Each invocation reads the counts of its slots, then makes the words
	// of the same numbers the identity (the elements of the first
	// HOT_SLOTS/PER_WORD words): no other invocation reads them.
	E_T id = privIdentity();
	uint idw = idWord(id);
	for (uint s = lid; s < uint(HOT_SLOTS); s += uint(LOCAL_SIZE)) {
		if (priv[s] < HOT_MIN) {
			hotKey[s] = 0u;
		}
		if (s < uint(HOT_SLOTS / PER_WORD)) {
			priv[s] = idw;
		}
	}
	barrier();
	for (pos_t u = u0; count_t(u) < end; u++) {
		if (!targetOf(u, t)) {
			continue;
		}
		E_T x = updateAt(u);
		uint s = hotSlot(uint(t) + 1u);
		if (s < uint(HOT_SLOTS)) {
			applyPrivate(s, x);
		} else {
			applyGlobal(t, x);
		}
	}
	reportBad();
	barrier();
	for (uint s = lid; s < uint(HOT_SLOTS); s += uint(LOCAL_SIZE)) {
		if (hotKey[s] != 0u) {
			flushPrivate(s, id, pos_t(hotKey[s] - 1u));
		}
	}
}
#endif
#endif

#if KIND == KIND_SLICE
// sliceRun applies the updates at positions [u, end). Update u lands on
// BASE + affine(u); the run steps along the innermost dimension and maps
// a position through affine only where it enters a new row (the divisions
// cost more than the move on CPU devices).
void sliceRun(pos_t u, count_t end) {
	pos_t base = pos_t(param(S_BASE));
	uint n = uint(param(S_NDIMS));
	pos_t size0 = n > 0u ? pos_t(param(S_DIMS_AT)) : pos_t(1);
	pos_t stride0 = n > 0u ? pos_t(param(S_DIMS_AT + 2u)) : pos_t(0);
	pos_t k0 = n > 0u ? u - udiv(u, param(S_DIMS_AT), param(S_DIMS_AT + 1u)) * size0 : pos_t(0);
	pos_t t = base + affine(u, n, S_DIMS_AT);
	for (;;) {
		apply(u, t);
		if (count_t(++u) >= end) {
			return;
		}
		if (++k0 == size0) {
			k0 = pos_t(0);
			t = base + affine(u, n, S_DIMS_AT);
		} else {
			t += stride0;
		}
	}
}
#else
#if KIND == KIND_ELEMENT
// walkColumn applies, in index order, segment pc.seg of the J updates of
// column c = o*Inner + k: positions u = (o*J + j)*Inner + k for j from
// pc.seg*SEGMENT to the segment's end (FLAG_WALK: positions are columns).
// Updates of different columns never land on the same element, so each
// column's last update in index order wins, or its updates fold in index
// order, without owner words or atomics. A column of more than SEGMENT
// updates is walked by one dispatch per segment, in order; the output
// (and T_ACC) carries the partial fold from one to the next.
void walkColumn(pos_t c) {
	pos_t inner = pos_t(param(P_INNER));
	pos_t o = udiv(c, param(P_INNER), param(P_MAGIC_INNER));
	pos_t k = c - o * inner;
	pos_t jn = pos_t(param(P_J));
	pos_t j0 = pos_t(pc.seg) * pos_t(SEGMENT);
	if (j0 >= jn) {
		return;
	}
	pos_t steps = min(jn - j0, pos_t(SEGMENT));
	pos_t first = target(o, k, 0u);
	pos_t vs = pos_t(param(P_VSTRIDE));
	pos_t u = (o * jn + j0) * inner + k;
	for (pos_t i = pos_t(0); i < steps; i++) {
		uint v = Word(addressOf(T_NORM, u32Offset(u))).w;
		if (!skipped(v)) {
			pos_t t = first + pos_t(v) * vs;
#ifdef DTYPE
			foldOwned(u, t);
#else
			apply(u, t);
#endif
		}
		u += inner;
	}
}
#endif

#if KIND == KIND_CACHE
// writeIndex returns write_indices[b] (int64).
idx_t writeIndex(pos_t b) {
	off_t o = offsetOf(count_t(b), 8u);
	return makeIdx(loadWord(T_IDX, o), loadWord(T_IDX, offAdd(o, 4u)));
}

// cacheStart returns batch entry b's first position along the axis of
// P_ROWS positions: 0 without write_indices; the write index in linear
// mode (checked before); in circular mode the write index modulo the
// axis, non-negative for any int64.
pos_t cacheStart(pos_t b) {
	if ((FLAGS & FLAG_ZERO_START) != 0u) {
		return pos_t(0);
	}
	idx_t w = writeIndex(b);
	if ((FLAGS & FLAG_CIRCULAR) == 0u) {
		return pos_t(idxLow(w));
	}
#if INT64
	uint64_t m = param(P_ROWS);
	if (w >= 0l) {
		return pos_t(uint64_t(w) % m);
	}
	uint64_t a = uint64_t(-(w + 1l)) + 1ul; // |w|, exact at the int64 minimum
	return pos_t((m - a % m) % m);
#else
	// m is at most 2^31 (the axis of an output of at most 2^31 units).
	uint m = param(P_ROWS);
	if (!sNegative(w)) {
		return umod64(w, m);
	}
	return (m - umod64(sNeg(w), m)) % m; // sNeg(w) is |w| as unsigned, exact at the minimum
#endif
}

// cacheValid reports whether batch entry b's write index is in range
// (FLAG_SKIP_BAD: the scatter checks each, and skips the rows of a bad
// one). Circular and absent write indices always are. The entry's first
// update, (o, j, k) = (b*P_VSTRIDE, 0, 0), lowers the error word at a bad
// one, so that one atomic reports it.
bool cacheValid(pos_t b, pos_t o, pos_t j, pos_t k) {
	if ((FLAGS & (FLAG_CIRCULAR | FLAG_ZERO_START)) != 0u) {
		return true;
	}
	idx_t w = writeIndex(b);
	idx_t hi = sAdd(idx_t(param64(P_ROWS)), sNeg(idx_t(param64(P_J))));
	if (!sNegative(w) && !sLess(hi, w)) {
		return true;
	}
	if (j == pos_t(0) && k == pos_t(0) && o == b * pos_t(param(P_VSTRIDE))) {
		atomicMin(Word(errorAddress()).w, uint(count_t(b) >> pc.errShift));
	}
	return false;
}

// cacheChecked reports whether every write index lies in the linear range
// [0, P_ROWS - P_J]; at the first that does not, it lowers the error word
// to its entry. FLAG_CHECK_ALL plans have at most LATER_MAX entries.
bool cacheChecked() {
	uint n = min(uint(param(P_TUPLE)), LATER_MAX);
	idx_t hi = sAdd(idx_t(param64(P_ROWS)), sNeg(idx_t(param64(P_J))));
	for (uint b = 0u; b < n; b++) {
		idx_t w = writeIndex(pos_t(b));
		if (sNegative(w) || sLess(hi, w)) {
			atomicMin(Word(errorAddress()).w, b >> pc.errShift);
			return false;
		}
	}
	return true;
}
#endif

// scatterOne applies the update at position u.
void scatterOne(pos_t u) {
#ifdef DTYPE
	reduceOne(u);
#else
	pos_t o, j, k;
	split(u, o, j, k);
#if KIND == KIND_BLOCK
	uint v = Word(addressOf(T_NORM, u32Offset(j))).w;
	if ((FLAGS & FLAG_TABLE) != 0u && v == NO_ROW || skipped(v)) {
		return;
	}
	if ((FLAGS & FLAG_OWNER) != 0u && owner(pos_t(v)) != uint(j) + 1u) {
		return;
	}
	if ((FLAGS & FLAG_LATER) != 0u && laterWins(j, j + pos_t(1), pos_t(1), v)) {
		return;
	}
	apply(u, target(o, k, v));
#elif KIND == KIND_ELEMENT
	uint v = Word(addressOf(T_NORM, u32Offset(u))).w;
	if ((FLAGS & FLAG_TABLE) != 0u && v == NO_ROW || skipped(v)) {
		return;
	}
	pos_t t = target(o, k, v);
	if ((FLAGS & FLAG_OWNER) != 0u && owner(t) != uint(j) + 1u) {
		return;
	}
	pos_t inner = pos_t(param(P_INNER));
	if ((FLAGS & FLAG_LATER) != 0u && laterWins(j, u + inner, inner, v)) {
		return;
	}
	apply(u, t);
	if ((FLAGS & FLAG_KEEP_CLEAR) != 0u) {
		// The owner clears its word: the others that claimed the target
		// never write, whether they read j+1 or 0, and the call leaves
		// every word clear for the next (the backend keeps them).
		Word(addressOf(T_OWNER, u32Offset(t))).w = 0u;
	}
#elif KIND == KIND_CACHE
	// Update (o, j, k) lands on (o*m + position)*Inner + k, position being
	// its batch entry's start plus j, wrapped in circular mode (start and
	// j are below m, so one subtraction does).
	pos_t m = pos_t(param(P_ROWS));
	pos_t b = udiv(o, param(P_VSTRIDE), param(P_ISTRIDE));
	if ((FLAGS & FLAG_SKIP_BAD) != 0u && !cacheValid(b, o, j, k)) {
		return;
	}
	pos_t pos = cacheStart(b) + j;
	if (pos >= m) {
		pos -= m;
	}
	apply(u, (o * m + pos) * pos_t(param(P_INNER)) + k);
#else
#error scatter.comp: unknown KIND
#endif
#endif
}
#endif

void main() {
#if defined(DTYPE) && ELEM_BYTES <= 4 && DTYPE != DT_BOOL
	if ((FLAGS & FLAG_PRIVATE) != 0u) {
		if (groupErrorSet()) {
			return;
		}
		loadChunks();
		scatterPrivate();
		return;
	}
	if ((FLAGS & FLAG_HOT) != 0u) {
		scatterHot();
		return;
	}
#endif
	pos_t u = firstPosition();
	count_t end = runEnd(u);
	if (count_t(u) >= end) {
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
#if KIND == KIND_CACHE
	if ((FLAGS & FLAG_CHECK_ALL) != 0u && !cacheChecked()) {
		return;
	}
#endif
#if KIND == KIND_SLICE
	sliceRun(u, end);
#else
#if KIND == KIND_ELEMENT
	if ((FLAGS & FLAG_WALK) != 0u) {
		for (; count_t(u) < end; u++) {
			walkColumn(u);
		}
		return;
	}
#endif
	for (; count_t(u) < end; u++) {
		scatterOne(u);
	}
#ifdef DTYPE
	reportBad();
#endif
#endif
}
